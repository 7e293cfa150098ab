"""Hierarchical integer tuples (HTuple): an ``int`` or a (possibly nested) ``tuple`` of HTuples.

The helpers follow CuTe's ``int_tuple.hpp`` / ``stride.hpp``; every result is a plain int or nested tuple.
Integer division follows C++ (truncation toward zero), as CuTe's ``operator/`` does.
"""

from __future__ import annotations

from math import prod
from typing import Any

from algebra.core.errors import LayoutError, no_modes

#: Bounds on what the algebra accepts (the ops are symbolic; these only stop absurd input).
MAX_DEPTH = 24
MAX_MAGNITUDE = 1 << 62
MAX_LEAVES = 4096

IntTuple = Any  # int | tuple[IntTuple, ...]


def is_tuple(x: Any) -> bool:
    return type(x) is tuple


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def tdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    if b == 0:
        raise LayoutError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def ceil_div_int(a: int, b: int) -> int:
    """CuTe's ``ceil_div`` on integers: ``(a + b - 1) / b`` in C++ arithmetic."""
    return tdiv(a + b - 1, b)


def signum(a: int) -> int:
    return (a > 0) - (a < 0)


# --------------------------------------------------------------------------------------------- structure


def flatten(t: IntTuple) -> tuple:
    """The leaves of ``t`` in order, as a flat tuple (an int becomes a 1-tuple)."""
    if type(t) is not tuple:
        return (t,)
    for x in t:
        if type(x) is tuple:
            break
    else:
        return t
    out: list = []
    _flatten_into(t, out)
    return tuple(out)


def _flatten_into(t: tuple, out: list) -> None:
    for x in t:
        if type(x) is tuple:
            _flatten_into(x, out)
        else:
            out.append(x)


def rank(t: IntTuple) -> int:
    return len(t) if type(t) is tuple else 1


def depth(t: IntTuple) -> int:
    if type(t) is not tuple:
        return 0
    return 1 + max((depth(x) for x in t), default=0)


def product(t: IntTuple) -> int:
    """Product of all leaves (1 for an empty tuple)."""
    if type(t) is not tuple:
        return t
    return prod(flatten(t))


def product_each(t: IntTuple) -> tuple:
    return tuple(product(x) for x in t) if type(t) is tuple else (t,)


def wrap(t: IntTuple) -> tuple:
    return t if type(t) is tuple else (t,)


def unwrap(t: IntTuple) -> IntTuple:
    """Strip rank-1 tuple wrappers: ((4,),) -> 4."""
    while type(t) is tuple and len(t) == 1:
        t = t[0]
    return t


def repeat_like(t: IntTuple, x: Any) -> IntTuple:
    return tuple(repeat_like(e, x) for e in t) if type(t) is tuple else x


def unflatten(flat: tuple, profile: IntTuple) -> IntTuple:
    """Rebuild a tuple with the profile of ``profile`` from the flat sequence ``flat``."""
    it = iter(flat)

    def build(p):
        return tuple(build(e) for e in p) if type(p) is tuple else next(it)

    return build(profile)


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same hierarchical profile."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is not tuple and type(b) is not tuple


def weakly_congruent(a: IntTuple, b: IntTuple) -> bool:
    """Profile of ``a`` is a coarsening of the profile of ``b`` (a <= b)."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is not tuple


def compatible(a: IntTuple, b: IntTuple) -> bool:
    """Shape ``a`` is compatible with shape ``b``: equal sizes, and every coordinate of a is one of b."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is not tuple and a == product(b)


def weakly_compatible(a: IntTuple, b: IntTuple) -> bool:
    """``a`` can be refined to ``b`` where each leaf of a divides the size of the matching mode of b."""
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(weakly_compatible(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is not tuple and product(b) % a == 0


# --------------------------------------------------------------------------------------------- arithmetic


def prefix_product(shape: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product with the profile of ``shape`` (plain, shape-1 modes keep their stride)."""
    if type(shape) is tuple:
        out = []
        cur = init
        for s in shape:
            out.append(prefix_product(s, cur))
            cur *= product(s)
        return tuple(out)
    return init


def compact_major(shape: IntTuple, current: int = 1, left: bool = True) -> IntTuple:
    """CuTe's ``compact_major<LayoutLeft|LayoutRight>``: compact strides; static shape-1 modes get stride 0."""
    if type(shape) is int:  # one mode (``go`` below, without building it)
        return 0 if shape == 1 else current

    def go(s, cur):
        if type(s) is tuple:
            order = range(len(s)) if left else range(len(s) - 1, -1, -1)
            res = [None] * len(s)
            for i in order:
                res[i], cur = go(s[i], cur)
            return tuple(res), cur
        if s == 1:
            return 0, cur
        return cur, cur * s

    return go(shape, current)[0]


def compact_col_major(shape: IntTuple, current: int = 1) -> IntTuple:
    return compact_major(shape, current, left=True)


def compact_row_major(shape: IntTuple, current: int = 1) -> IntTuple:
    return compact_major(shape, current, left=False)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``shape_div``: elementwise for tuple/tuple, folded for tuple/int; the int/int case requires
    ``a % b == 0 or b % a == 0`` and returns ``ceil_div(a, b)``."""
    if type(a) is tuple or type(b) is tuple:
        return _fold(shape_div, a, b, pad=False)
    if b == 0 or a == 0 or not (a % b == 0 or b % a == 0):
        raise LayoutError(f"shape divisibility condition: neither of {a} and {b} divides the other")
    return ceil_div_int(a, b)


def ceil_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``ceil_div`` on HTuples (tuple/int folds the divisor across the modes of a)."""
    if type(a) is tuple or type(b) is tuple:
        return _fold(ceil_div, a, b, pad=True)
    return ceil_div_int(a, b)


def _fold(f: Any, a: IntTuple, b: IntTuple, pad: bool) -> IntTuple:
    """The division ``f`` on HTuples: elementwise for tuple/tuple (b padded with 1s to the rank of a where ``pad``),
    folded for tuple/int (each mode of a divided by what the modes before it left of b), by ``product(b)`` for
    int/tuple."""
    if type(a) is not tuple:
        return f(a, product(b))
    if type(b) is tuple:
        if len(a) < len(b) or (len(a) > len(b) and not pad):
            raise LayoutError(f"{f.__name__}: mismatched ranks {a} and {b}")
        return tuple(f(x, y) for x, y in zip(a, b + (1,) * (len(a) - len(b)), strict=True))
    out = []
    for x in a:
        out.append(f(x, b))
        b = f(b, x)
    return tuple(out)


def inner_product(a: IntTuple, b: IntTuple) -> Any:
    if type(a) is tuple and type(b) is tuple:
        if len(a) != len(b):
            raise LayoutError(f"inner_product: mismatched ranks {a} and {b}")
        return sum(inner_product(x, y) for x, y in zip(a, b, strict=True))
    return a * b


def evenly_divides(shape: IntTuple, tiler: IntTuple) -> bool:
    """True when the tiler divides the shape mode by mode (CuTe's ``evenly_divides`` on static values)."""
    if type(tiler) is tuple:
        sh = wrap(shape)
        return len(tiler) <= len(sh) and all(evenly_divides(s, t) for s, t in zip(sh, tiler, strict=False))
    return product(shape) == product(tiler) * product(ceil_div(shape, tiler))


# --------------------------------------------------------------------------------------------- coordinates


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> Any:
    """Map a coordinate to an index: the inner product of the natural coordinate with the stride.

    An integer coordinate into a tuple shape is split column-major; the last mode is not wrapped, so an index
    past the end extends along the last mode (as CuTe does). Default stride: compact column-major.
    """
    if stride is None:
        stride = prefix_product(shape)
    if (type(shape) is tuple) != (type(stride) is tuple) or type(shape) is tuple and len(shape) != len(stride):
        raise LayoutError(f"stride {to_str(stride)} is not congruent with shape {to_str(shape)} (mismatched ranks)")
    if shape == ():
        raise no_modes("crd2idx", "the shape ()")
    if type(crd) is tuple:
        if type(shape) is not tuple or len(crd) != len(shape):
            raise LayoutError(f"coordinate {to_str(crd)} does not match shape {to_str(shape)} (mismatched ranks)")
        total = 0
        for c, s, d in zip(crd, shape, stride, strict=True):
            total = total + crd2idx(c, s, d)
        return total
    if not is_int(crd):
        raise LayoutError(f"coordinate {crd!r} is not an integer")
    if type(shape) is tuple:
        total = 0
        for i in range(len(shape) - 1):  # C++'s divmod, as CuTe's: -3 into (2,4) is (-1,-1), not (1,-2)
            sz = product(shape[i])
            q = crd // sz if crd >= 0 and sz > 0 else tdiv(crd, sz)
            total = total + crd2idx(crd - sz * q, shape[i], stride[i])
            crd = q
        return total + crd2idx(crd, shape[-1], stride[-1])
    return crd * stride


def idx2crd(idx: IntTuple, shape: IntTuple, stride: IntTuple | None = None) -> IntTuple:
    """Map an index to the natural coordinate of ``shape``: ``(idx // stride) % shape`` at each leaf.

    Without a stride (CuTe's ``idx2crd(i, s)``): colexicographic, ``crd2idx(idx2crd(i, s), s) == i`` for every
    ``i >= 0``: an index past ``size(s)`` extends the last mode (at each level), and an int shape returns the index.
    """
    if type(idx) is not int and not all(is_int(x) for x in flatten(idx)):
        shown = to_str(idx).replace("None", "_")  # ``_`` (a whole mode, in a slice) parses as None
        raise LayoutError(f"idx2crd: the index must be an integer or a tuple of integers congruent with the shape "
                          f"{to_str(shape)}, got {shown}")
    if shape == ():
        raise no_modes("idx2crd", "the shape ()")
    if stride is None:
        return _idx2crd_cute(idx, shape)
    if type(stride) is tuple and shape != 1 and (type(shape) is not tuple or len(stride) != len(shape)) or (
            type(idx) is tuple and type(stride) is not tuple):  # CuTe: an int stride is compact over a tuple shape
        raise LayoutError(f"stride {to_str(stride)} is not congruent with shape {to_str(shape)} (mismatched ranks)")
    if type(idx) is tuple:
        if type(shape) is not tuple or len(idx) != len(shape):
            raise LayoutError(f"index {to_str(idx)} does not match shape {to_str(shape)} (mismatched ranks)")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride, strict=True))
    if type(shape) is tuple:
        if type(stride) is not tuple:
            stride = compact_col_major(shape, stride)
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride, strict=True))
    if shape == 1:
        return 0
    if stride == 0:  # CuTe divides by the stride: the program dies
        raise LayoutError(f"idx2crd: the mode {shape}:0 has stride 0, and the coordinate (index / stride) % shape "
                          "divides by it (CuTe's program dies of a division by zero)")
    q = tdiv(idx, stride)
    return q - shape * tdiv(q, shape)  # C++'s (idx / stride) % shape


def _idx2crd_cute(idx: IntTuple, shape: IntTuple) -> IntTuple:
    if type(idx) is tuple:
        if type(shape) is not tuple or len(idx) != len(shape):
            raise LayoutError(f"index {to_str(idx)} does not match shape {to_str(shape)} (mismatched ranks)")
        return tuple(_idx2crd_cute(i, s) for i, s in zip(idx, shape, strict=True))
    if type(shape) is not tuple:
        return idx
    out = []
    for s in shape[:-1]:  # C++'s divmod, as in crd2idx; the last mode takes the rest
        n = product(s)
        out.append(_idx2crd_cute(idx - n * tdiv(idx, n), s))
        idx = tdiv(idx, n)
    return (*out, _idx2crd_cute(idx, shape[-1])) if shape else ()


def coordinates(shape: IntTuple) -> list:
    """All natural coordinates of ``shape`` in column-major (1-D index) order."""
    return [idx2crd(i, shape) for i in range(product(shape))]


def to_str(t: IntTuple) -> str:
    """CuTe notation of an HTuple: ``(4,(2,4))``; no spaces. A ``None`` leaf (CuTe's ``_``) prints as ``_``."""
    if type(t) is tuple:  # the int leaves inline (one list, no generator frame)
        return "(" + ",".join([str(x) if type(x) is int else to_str(x) for x in t]) + ")"
    return "_" if t is None else str(t)


# --------------------------------------------------------------------------------------------- validation


def check_shape(x: Any, what: str = "shape", positive: bool = True, level: int = 0) -> IntTuple:
    """Validate a shape (positive ints) or, with ``positive`` False, a stride (ints, ScaledBasis or F2 leaves), of
    bounded depth and magnitude; return it as nested tuples."""
    if type(x) is tuple and len(x) <= MAX_LEAVES:
        for e in x:  # a flat tuple of ints in range: valid as it is
            if type(e) is not int or (positive and e <= 0) or not -MAX_MAGNITUDE <= e <= MAX_MAGNITUDE:
                break
        else:
            return x
    elif type(x) is int and (x > 0 if positive else True) and -MAX_MAGNITUDE <= x <= MAX_MAGNITUDE:
        return x
    if level > MAX_DEPTH:
        raise LayoutError(f"{what} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(x, list | tuple):
        if len(x) > MAX_LEAVES:
            raise LayoutError(f"{what} has more than {MAX_LEAVES} modes")
        return tuple(check_shape(e, what, positive, level + 1) for e in x)
    if is_int(x):
        if positive and x <= 0:
            raise LayoutError(f"{what} entries must be positive integers, got {x}")
        if abs(x) > MAX_MAGNITUDE:
            raise LayoutError(f"{what} entry {x} exceeds the magnitude cap 2^62")
        return x
    if not positive and (hasattr(x, "is_basis") or hasattr(x, "is_f2") or hasattr(x, "as_tuple")):
        return x  # a ScaledBasis, an ArithTuple (a sum of them) or an F2 element (``algebra.core.arith``)
    raise LayoutError(f"{what} entries must be integers, got {x!r}")


def check_stride(stride: Any, what: str = "stride") -> IntTuple:
    return check_shape(stride, what, positive=False)
