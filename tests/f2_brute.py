"""Brute-force post-conditions of composition, complement, right_inverse and left_inverse on F2-strided layouts
(bit-vector strides ``F9``: XOR sums, carry-less products) and swizzled tiles ``Sw<B,M,S> o O o L``.

Independent of the algebra's own checks: every layout is evaluated here from its shape and stride (CuTe's 1-D
coordinate, colexicographic, the last mode of each level taking the rest past the size; ``int * F2`` is a carry-less
product, a sum with an F2 term is a XOR), every swizzle from ``swizzle.hpp``'s formula, and each post-condition
(``cute/layout.hpp``, above ``complement``, ``right_inverse`` and ``left_inverse``) by enumerating the points.

``hunt(seed, n)`` draws ``n`` random inputs (shared-memory tiles: ``Sw<B,M,S>`` with B 1-3, M 3-4, rows of 16, 32, 64
or 128 bytes of 8-, 16- or 32-bit elements, K-major and MN-major, with their F2 forms; random F2 layouts: dependent
columns, broadcasts, int modes on bits of their own, shapes that are not powers of two, nesting) and returns the
failures (an answer that breaks its post-condition, a print that does not read back) and counts. A refusal is not a
failure here, except where the input is F2-linear and the op's exact F2 answer exists (``refusal_is_wrong``).
``tests/test_f2_bruteforce.py`` runs one seed; ``scripts/f2_hunt.py`` runs many.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import algebra as A

# --------------------------------------------------------------------------------------------- evaluation


def _clmul(a: int, b: int) -> int:
    out = 0
    t = 0
    while b >> t:
        if b >> t & 1:
            out ^= a << t
        t += 1
    return out


class V:
    """A value: an int (``f2`` False) or a bit vector (``f2`` True)."""

    __slots__ = ("v", "f2")

    def __init__(self, v: int, f2: bool = False) -> None:
        self.v, self.f2 = v, f2

    def __add__(self, o: V) -> V:
        if self.f2 or o.f2:
            if (not self.f2 and self.v < 0) or (not o.f2 and o.v < 0):
                raise ValueError("a negative int added to a bit vector")
            return V(self.v ^ o.v, True)
        return V(self.v + o.v)


def _leaf(c: int, d: Any) -> V:
    if isinstance(d, A.F2):
        return V(_clmul(c, int(d)), True)
    if type(d) is not int:
        raise TypeError(f"stride leaf {d!r}")
    return V(c * d)


def _size(shape: Any) -> int:
    if type(shape) is tuple:
        n = 1
        for s in shape:
            n *= _size(s)
        return n
    return shape


def _eval(shape: Any, stride: Any, idx: int) -> V:
    """CuTe's ``crd2idx(idx2crd(idx, shape), shape, stride)`` for the 1-D coordinate ``idx`` (also past the size)."""
    if type(shape) is not tuple:
        return _leaf(idx, stride)
    acc = V(0)
    for k, (s, d) in enumerate(zip(shape, stride, strict=True)):
        if k == len(shape) - 1:
            acc = acc + _eval(s, d, idx)
        else:
            n = _size(s)
            acc = acc + _eval(s, d, idx % n)
            idx //= n
    return acc


def sw(bms: A.Swizzle, x: int) -> int:
    """``Sw<B,M,S>(x)`` written out (``swizzle.hpp``)."""
    yyy = ((1 << bms.bits) - 1) << (bms.base + max(0, bms.shift))
    y = x & yyy
    return x ^ (y >> bms.shift if bms.shift >= 0 else y << -bms.shift)


def size_of(x: Any) -> int | None:
    """The size of a Layout or ``Sw o O o L``; None for ``L o O o Sw`` (a function on a domain) or a Swizzle."""
    if isinstance(x, A.Layout):
        return _size(x.shape)
    if isinstance(x, A.ComposedLayout) and not isinstance(x.layout_b, A.Swizzle):
        return size_of(x.layout_b)
    return None


_TABLES: dict = {}


def table(layout: A.Layout) -> list[int]:
    """``[L(i) for i < size(L)]``: int strides summed, F2 strides (and int 0) XORed as carry-less products, leaf by
    leaf; a mix of the two point by point (``_eval``: the nesting decides where a sum becomes a XOR)."""
    if (hit := _TABLES.get(id(layout))) is not None and hit[0] is layout:
        return hit[1]
    leaves = _leaves(layout.shape, layout.stride)
    f2 = [isinstance(d, A.F2) for _, d in leaves]
    out = [0]
    if not any(f2):
        for s, d in leaves:
            out = [o + c * d for c in range(s) for o in out]
    elif all(f2[k] or d == 0 for k, (_, d) in enumerate(leaves)):
        for s, d in leaves:
            cols = [_clmul(c, int(d)) for c in range(s)]
            out = [o ^ c for c in cols for o in out]
    else:
        out = [_point(layout, i) for i in range(_size(layout.shape))]
    if len(_TABLES) > 4096:
        _TABLES.clear()
    _TABLES[id(layout)] = (layout, out)
    return out


def _point(layout: A.Layout, i: int) -> int | None:
    """``L(i)``, None where a negative int meets a bit vector (no value: a composition leaves such points of B
    outside A's domain unconstrained)."""
    try:
        return _eval(layout.shape, layout.stride, i).v
    except ValueError:
        return None


def value(x: Any, i: int) -> int | None:
    """``x(i)`` as an int (a bit vector's bits), None where x is not defined."""
    if isinstance(x, A.Layout):
        t = table(x)
        return t[i] if 0 <= i < len(t) else _point(x, i)
    if isinstance(x, A.Swizzle):
        return sw(x, i)
    if isinstance(x, A.ComposedLayout):
        y = value(x.layout_b, i)
        if y is None:
            return None
        y = x.offset + y  # an F2 offset is its bits, the offset an int added to them
        if isinstance(x.layout_a, A.Swizzle):
            return sw(x.layout_a, y)
        if not 0 <= y < _size(x.layout_a.shape):
            return None  # L o O o Sw off its domain
        return value(x.layout_a, y)
    raise TypeError(f"cannot evaluate {x!r}")


def domain(x: Any) -> list[int]:
    """The 1-D inputs where x is defined: [0, size) for a layout or ``Sw o O o L``; for ``L o O o Sw``, the x below
    the swizzle's span (and L's) with ``0 <= O + Sw(x) < size(L)``."""
    n = size_of(x)
    if n is not None:
        return list(range(n))
    if isinstance(x, A.Swizzle):
        return list(range(1 << (x.base + x.bits + abs(x.shift))))
    inner = x.layout_b
    span = 1 << (inner.base + inner.bits + abs(inner.shift)) if isinstance(inner, A.Swizzle) else 0
    top = max(span, _size(x.layout_a.shape) + abs(x.offset))
    top = 1 << (top - 1).bit_length()
    return [v for v in range(top) if value(x, v) is not None]


def _has_f2(stride: Any) -> bool:
    if type(stride) is tuple:
        return any(_has_f2(d) for d in stride)
    return isinstance(stride, A.F2)


def _leaves(shape: Any, stride: Any) -> list[tuple[int, Any]]:
    if type(shape) is tuple:
        return [p for s, d in zip(shape, stride, strict=True) for p in _leaves(s, d)]
    return [(shape, stride)]


def f2_linear(layout: A.Layout) -> bool:
    """Every leaf of shape > 1: a power-of-two shape and an F2 stride, or a power-of-two int stride on bits no other
    int leaf uses (an int 0 is a broadcast). Then ``L(i)`` is the XOR of the columns of i's set bits."""
    used = 0
    for s, d in _leaves(layout.shape, layout.stride):
        if s == 1:
            continue
        if s & (s - 1):
            return False
        if isinstance(d, A.F2):
            continue
        if type(d) is not int or d < 0 or (d and d & (d - 1)):
            return False
        if d and used & ((s - 1) * d):
            return False
        used |= (s - 1) * d
    return True


# --------------------------------------------------------------------------------------------- post-conditions


def check_right_inverse(layout: Any, r: Any) -> str | None:
    """``L(R(i)) == i`` for every i of R's domain, ``R(i)`` in L's domain; for an F2-linear L, R covers the longest
    run [0, k) of L's offsets (the engine's promise)."""
    n = size_of(layout)
    dom = set(domain(layout))
    for i in domain(r):
        x = value(r, i)
        if x is None or x not in dom:
            return f"R({i}) = {x} is outside L's domain"
        if (y := value(layout, x)) != i:
            return f"L(R({i})) = L({x}) = {y}"
    if isinstance(layout, A.Layout) and _has_f2(layout.stride) and f2_linear(layout) and isinstance(r, A.Layout):
        image = {value(layout, j) for j in range(n)}
        k = 0
        while k in image:
            k += 1
        if size_of(r) != k:
            return f"size(R) = {size_of(r)}, but L's offsets run [0, {k})"
    return None


def check_left_inverse(layout: Any, r: Any) -> str | None:
    """``L(R(L(i))) == L(i)`` for every i of L's domain, ``R(L(i)) == i`` where L is injective."""
    pts = {i: value(layout, i) for i in domain(layout)}
    injective = len(set(pts.values())) == len(pts)
    for i, y in pts.items():
        if y is None or y < 0:
            continue  # a negative offset: R is not evaluated there
        x = value(r, y)
        if x is None or x not in pts:
            return f"R(L({i})) = R({y}) = {x} is outside L's domain"
        if pts[x] != y:
            return f"L(R(L({i}))) = L({x}) = {pts[x]}, not L({i}) = {y}"
        if injective and x != i:
            return f"R(L({i})) = {x} for an injective L"
    return None


def check_complement(layout: A.Layout, cot: int | None, r: Any) -> str | None:
    """CuTe's header: ``size(R) >= cotarget / size(filter(L))``, R ordered, ``R(i) != L(j)`` for i >= 1; and the
    combined layout ``(L, R)`` injective (offsets XOR for F2 strides); where the cotarget is past every offset of L
    and a power of two, ``(L, R)`` is a bijection onto [0, cotarget)."""
    if not isinstance(r, A.Layout):
        return f"a complement that is not a layout: {r}"
    n = size_of(layout)
    image = [value(layout, j) for j in range(n)]
    fsize = 1
    for s, d in _leaves(layout.shape, layout.stride):
        if s > 1 and int(d) != 0:
            fsize *= s
    top = max(image) + 1
    want = top if cot is None else cot
    rv = [value(r, i) for i in range(size_of(r))]
    if len(rv) * fsize < want:
        return f"size(R) = {len(rv)} < cotarget / size(filter(L)) = {want} / {fsize}"
    if any(rv[i - 1] >= rv[i] for i in range(1, len(rv))):
        return f"R is not ordered: {rv[:16]}"
    ims = set(image)
    if any(v in ims for v in rv[1:]):
        return f"R meets L's image at {next(v for v in rv[1:] if v in ims)}"
    xor = _has_f2(layout.stride)
    both = {(a ^ b) if xor else a + b for a in ims for b in rv}
    if len(both) != len(ims) * len(rv):
        return "the combined layout (L, R) is not injective"
    if xor and cot is not None and cot & (cot - 1) == 0 and cot >= 1 << (top - 1).bit_length():
        if both != set(range(cot)):
            return f"(L, R) does not cover [0, {cot}) once"
    return None


def check_composition(a: Any, b: Any, r: Any) -> str | None:
    """``R(c) == A(B(c))`` for every c of B with ``0 <= B(c) < size(A)``; ``size(R) == size(B)``. A tiler: mode by
    mode."""
    if type(b) is tuple:
        if not isinstance(r, A.Layout | A.ComposedLayout) or len(r.shape) != len(b):
            return f"a tiler of {len(b)} modes gave {r}"
        for k, bk in enumerate(b):
            ak = _mode(a, k)
            rk = _mode(r, k)
            if (why := check_composition(ak, bk, rk)) is not None:
                return f"mode {k}: {why}"
        return None
    if type(b) is int:
        b = A.Layout(b, 1)
    n = size_of(a)
    nb = size_of(b)
    if nb is not None and size_of(r) != nb:
        return f"size(R) = {size_of(r)}, size(B) = {nb}"
    for i in range(n) if isinstance(b, A.Swizzle) and n is not None else domain(b):  # A o Sw: A's shape, i < n
        x = value(b, i)
        if x is not None and 0 <= x < (n if n is not None else 1 << 62):
            want, got = value(a, x), value(r, i)
            if want != got:
                return f"R({i}) = {got}, but A(B({i})) = A({x}) = {want}"
    return None


def _values(x: Any) -> list:
    return sorted(v for v in (value(x, i) for i in range(size_of(x))) if v is not None)


def check_divide(a: Any, b: Any, r: Any) -> str | None:
    """``logical_divide(A, B)``: each mode k of R holds ``A_k o B_k`` first (B a tiler: mode by mode; a layout: mode
    0), and R is A reordered (the same offsets, as a multiset, where B's tiles cover A)."""
    bs = b if type(b) is tuple else (b,)
    for k, bk in enumerate(bs):
        ak, rk = (_mode(a, k), _mode(r, k)) if type(b) is tuple else (a, r)
        if (why := check_composition(ak, bk, _mode(rk, 0))) is not None:
            return f"mode {k}: {why}"
    if size_of(r) == size_of(a) and _values(r) != _values(a):
        return "R's offsets are not A's"
    return None


def check_product(a: Any, b: Any, r: Any) -> str | None:
    """``logical_product(A, B)``: R's first mode is A, ``size(R) == size(A) * size(B)``, and R injective where A is
    (B's copies of A land on offsets of their own)."""
    n = size_of(a)
    if size_of(r) != n * size_of(b):
        return f"size(R) = {size_of(r)}, not size(A) * size(B) = {n} * {size_of(b)}"
    if (bad := next((i for i in range(n) if value(r, i) != value(a, i)), None)) is not None:
        return f"R({bad}) = {value(r, bad)}, A({bad}) = {value(a, bad)}"
    if len(set(_values(a))) == n and len(set(vs := _values(r))) != len(vs):
        return "R is not injective though A is"
    return None


def check_slice(x: Any, c: Any, r: Any) -> str | None:
    """``x(c)`` with ``_`` in c: ``R(j) - R(0) == x(c_j) - x(c_0)`` (a XOR where x's strides are bit vectors), c_j
    the coordinate with the kept modes at the natural coordinate of j."""
    from algebra.core.layout import slice_layout
    from algebra.core.products import _kept_at

    inner = x if isinstance(x, A.Layout) else x.layout_b
    xor, kept = _has_f2(inner.stride), slice_layout(c, inner).shape  # the offset: F2 bits; R's j: the kept modes' j
    for j in range(size_of(r) or 0):
        cj, c0 = _kept_at(c, kept, j), _kept_at(c, kept, 0)
        got = value(r, j) ^ value(r, 0) if xor else value(r, j) - value(r, 0)
        want = int(x(cj)) ^ int(x(c0)) if xor else int(x(cj)) - int(x(c0))
        if got != want:
            return f"at j = {j}, c_j = {cj}: R gives {got}, x gives {want}"
    return None


def _mode(x: Any, k: int) -> Any:
    if isinstance(x, A.ComposedLayout):
        return A.ComposedLayout(x.layout_a, x.offset, _mode(x.layout_b, k))
    shape, stride = x.shape, x.stride
    return A.Layout(shape[k], stride[k]) if type(shape) is tuple else A.Layout(shape, stride)


def reads_back(x: Any) -> str | None:
    """``parse(str(x)) == x`` and prints the same."""
    if isinstance(x, int):
        return None
    text = str(x)
    try:
        y = A.parse(text)
    except A.LayoutError as err:
        return f"{text} does not parse: {err}"
    if y != x or str(y) != text:
        return f"{text} reads back as {y}"
    return None


# --------------------------------------------------------------------------------------------- inputs


def smem_tile(rng: random.Random) -> A.ComposedLayout:
    """``Sw<B,M,S> o 0 o L``: L a K-major (rows, row elements) or MN-major (row elements, rows) tile of 16-, 32-, 64-
    or 128-byte rows of 8-, 16- or 32-bit elements, sometimes repeated along either mode (tile_to_shape's blocks)."""
    elem = rng.choice((8, 16, 32))
    cols = rng.choice((16, 32, 64, 128)) * 8 // elem
    rows = rng.choice((8, 8, 8, 4, 16, 2))
    b, m = rng.randint(1, 3), rng.randint(3, 4)
    s = 3 if rng.random() < 0.7 else rng.randint(b, 6)
    kr, kc = rng.choice((1, 1, 2, 4)), rng.choice((1, 1, 2))
    atom = rows * cols
    if rng.random() < 0.5:  # K-major: a row of elements is contiguous
        shape = ((rows, kr), (cols, kc))
        stride = ((cols, atom), (1, atom * kr))
    else:  # MN-major
        shape = ((cols, kc), (rows, kr))
        stride = ((1, atom * kr), (cols, atom))
    shape, stride = _unnest(shape, stride)
    return A.ComposedLayout(A.Swizzle(b, m, s), 0, A.Layout(shape, stride))


def _unnest(shape: tuple, stride: tuple) -> tuple:
    out_s, out_d = [], []
    for s, d in zip(shape, stride, strict=True):
        if s[1] == 1:
            out_s.append(s[0])
            out_d.append(d[0])
        else:
            out_s.append(s)
            out_d.append(d)
    return tuple(out_s), tuple(out_d)


def random_f2(rng: random.Random) -> A.Layout:
    """A layout with F2 strides: power-of-two shapes with random, dependent or zero columns, int modes on bits of
    their own, now and then a shape that is not a power of two, or a nested mode."""
    bits = rng.randint(2, 9)
    modes = []
    used = 0
    for _ in range(rng.randint(1, 4)):
        k = rng.random()
        s = 1 << rng.randint(0, 3)
        if k < 0.08:
            s = rng.choice((3, 5, 6))
        if k < 0.75:
            d: Any = A.F2(rng.randrange(1 << bits) if rng.random() < 0.9 else 0)
        else:  # an int power-of-two stride on bits of its own
            t = rng.randint(0, bits)
            if used & ((s - 1) << t):
                d = A.F2(1 << t)
            else:
                used |= (s - 1) << t
                d = 1 << t
        modes.append((s, d))
    if len(modes) >= 3 and rng.random() < 0.3:
        (s0, d0), (s1, d1) = modes[0], modes[1]
        shape = ((s0, s1),) + tuple(m[0] for m in modes[2:])
        stride = ((d0, d1),) + tuple(m[1] for m in modes[2:])
    else:
        shape, stride = tuple(m[0] for m in modes), tuple(m[1] for m in modes)
    if len(shape) == 1:
        shape, stride = shape[0], stride[0]
    return A.Layout(shape, stride)


def _pow2_perm(rng: random.Random, n: int) -> A.Layout:
    """A compact layout of power-of-two modes covering [0, n) rounded up, its modes in a random stride order."""
    bits = max((n - 1).bit_length(), 1)
    cuts = sorted(rng.sample(range(1, bits), min(rng.randint(0, 2), bits - 1)))
    shape = [1 << (b - a) for a, b in zip([0] + cuts, cuts + [bits], strict=True)]
    order = list(range(len(shape)))
    rng.shuffle(order)
    stride, step = [0] * len(shape), 1
    for k in order:
        stride[k] = step
        step *= shape[k]
    return A.Layout(tuple(shape), tuple(stride))


def random_b(rng: random.Random, a: Any) -> Any:
    """Something to compose ``a`` with: a layout moving whole bits of a's domain, any small layout, an int, a tiler,
    or an F2 layout."""
    n = size_of(a) or 1
    nbits = max(n.bit_length() - 1, 0)
    k = rng.random()
    if k < 0.35 and nbits:
        perm = list(range(nbits))
        rng.shuffle(perm)
        take = perm[:rng.randint(1, nbits)]
        return A.Layout(tuple(2 for _ in take), tuple(1 << t for t in take))
    if k < 0.55:
        shape = tuple(rng.randint(1, 8) for _ in range(rng.randint(1, 3)))
        stride = tuple(rng.choice((0, 1, 2, 3, 4, 8, 16, 32, 64, -1, -4)) for _ in shape)
        return A.Layout(shape, stride)
    if k < 0.65:
        return rng.choice((1 << rng.randint(0, max(nbits, 0)), rng.randint(1, n)))
    if k < 0.8 and isinstance(a, A.Layout | A.ComposedLayout) and type(a.shape) is tuple:
        out = []
        for s in a.shape[:rng.randint(1, len(a.shape))]:
            m = _size(s)
            out.append(rng.choice((m, max(m // 2, 1), A.Layout(max(m // 2, 1), 2) if m >= 2 else 1)))
        return tuple(out)
    f = random_f2(rng)
    return f if (size_of(f) or 0) > 0 else A.Layout(1, 0)


# --------------------------------------------------------------------------------------------- the hunt


def _try(fn: Any, *args: Any) -> tuple[Any, str | None]:
    try:
        return fn(*args), None
    except A.LayoutError as err:
        return None, str(err)


def _refusal_is_wrong(op: str, x: Any, msg: str) -> bool:
    """An F2-linear Layout with F2 strides: its inverses are exact (never refused); so is the complement of an
    injective one with an int cotarget."""
    if not (isinstance(x, A.Layout) and _has_f2(x.stride) and f2_linear(x)):
        return False
    if op in ("right_inverse", "left_inverse"):
        return True
    fsize = 1  # complement: refused only where L is not injective once filtered (its stride-0 modes dropped)
    for s, d in _leaves(x.shape, x.stride):
        fsize *= s if int(d) else 1
    return op == "complement" and len(set(table(x))) == fsize


def check_one(stats: Counter, fails: list, op: str, args: tuple, check: Any) -> Any:
    fn = getattr(A, op)
    res, msg = _try(fn, *args)
    label = f"{op}({', '.join(map(str, args))})"
    if msg is not None:
        stats[f"{op} refused"] += 1
        if _refusal_is_wrong(op, args[0], msg):
            fails.append(f"{label}: refused ({msg})")
        return None
    stats[f"{op} answered"] += 1
    why = check(res) or reads_back(res)
    if why is not None:
        fails.append(f"{label} = {res}: {why}")
    return res


def _coord(rng: random.Random, shape: Any, top: bool = True) -> Any:
    if type(shape) is tuple and (top or rng.random() < 0.5):
        return tuple(_coord(rng, s, False) for s in shape)
    return None if rng.random() < 0.5 else rng.randrange(_size(shape))


def _more(rng: random.Random, stats: Counter, fails: list, x: Any) -> None:
    """The divides, products, slices and swizzle compositions of ``x`` (a layout or ``Sw o O o L``), checked."""
    shape = x.shape
    modes = shape if type(shape) is tuple else (shape,)
    tiler = tuple(rng.choice((m, max(m // 2, 1), A.Layout(max(m // 2, 1), 2) if m >= 4 else 1))
                  for m in map(_size, modes[:rng.randint(1, len(modes))]))
    b = tiler if rng.random() < 0.6 else A.Layout(max(_size(modes[0]) // 2, 1), rng.choice((1, 2)))
    check_one(stats, fails, "logical_divide", (x, b), lambda r: check_divide(x, b, r))
    p = rng.choice((A.Layout(2, 1), A.Layout(4, 1), A.Layout(2, 2), A.Layout((2, 2), (2, 1)), A.Layout((2, 2))))
    check_one(stats, fails, "logical_product", (x, p), lambda r: check_product(x, p, r))
    c = _coord(rng, shape)
    if type(c) is tuple and any(v is None for v in A.core.inttuple.flatten(c)):
        stats["slice answered"] += 1
        try:
            r = x(c)
        except A.LayoutError:
            stats["slice answered"] -= 1
            stats["slice refused"] += 1
        else:
            if (why := check_slice(x, c, r)) is not None:
                fails.append(f"{x}({c}) = {r}: {why}")
    if isinstance(x, A.Layout) and rng.random() < 0.5:  # an F2 (or int) layout after a swizzle
        sw_ = A.Swizzle(rng.randint(1, 3), rng.randint(0, 4), rng.choice((3, 4, -3)))
        if abs(sw_.shift) >= sw_.bits:
            check_one(stats, fails, "composition", (x, sw_), lambda r: check_composition(x, sw_, r))


def hunt(seed: int, n: int) -> tuple[list[str], Counter]:
    rng, more = random.Random(seed), random.Random(seed * 7919 + 5)  # more: its own stream, rng's draws as before
    fails: list[str] = []
    stats: Counter = Counter()
    for k in range(n):
        tile = smem_tile(rng) if k % 2 == 0 else None
        if tile is not None and rng.random() < 0.25:
            tile = A.ComposedLayout(tile.layout_a, rng.choice((1, 8, 64, 512)), tile.layout_b)
        subjects: list[Any] = []
        if tile is not None:
            subjects.append(tile)
            if not tile.offset:
                f = A.as_f2_layout(tile)  # the same function, written with F2 strides
                if (why := reads_back(f)) or any(value(f, i) != value(tile, i) for i in range(size_of(tile))):
                    fails.append(f"as_f2_layout({tile}) = {f}: {why or 'not the same offsets'}")
                subjects.append(f)
        else:
            subjects.append(random_f2(rng))
            if rng.random() < 0.3:  # a swizzle (and an offset) outside an F2 layout
                sw_ = A.Swizzle(rng.randint(1, 3), rng.randint(3, 4), 3)
                subjects.append(A.ComposedLayout(sw_, rng.choice((0, 0, 8, 64, 512)), subjects[0]))
        for x in subjects:
            check_one(stats, fails, "right_inverse", (x,), lambda r, x=x: check_right_inverse(x, r))
            check_one(stats, fails, "left_inverse", (x,), lambda r, x=x: check_left_inverse(x, r))
            b = random_b(rng, x)
            check_one(stats, fails, "composition", (x, b), lambda r, x=x, b=b: check_composition(x, b, r))
            if isinstance(x, A.ComposedLayout) and not x.offset and rng.random() < 0.4:  # a layout after the tile
                outer = _pow2_perm(rng, max(value(x, j) for j in range(size_of(x))) + 1)
                check_one(stats, fails, "composition", (outer, x), lambda r, o=outer, x=x: check_composition(o, x, r))
            _more(more, stats, fails, x)
            if isinstance(x, A.Layout):
                if rng.random() < 0.3:  # an int layout after the F2 one
                    m = 1 << (max(value(x, j) for j in range(size_of(x))).bit_length())
                    outer = A.Layout((m,), (rng.choice((1, 2, 3)),)) if rng.random() < 0.5 else A.Layout(
                        (2, m // 2 or 1), (m // 2 or 1, 1))
                    check_one(stats, fails, "composition", (outer, x),
                              lambda r, o=outer, x=x: check_composition(o, x, r))
                top = max(value(x, j) for j in range(size_of(x))) + 1
                p2 = 1 << (top - 1).bit_length()
                cot = rng.choice((None, p2, 2 * p2, rng.randint(1, 2 * top)))
                args = (x,) if cot is None else (x, cot)
                check_one(stats, fails, "complement", args, lambda r, x=x, cot=cot: check_complement(x, cot, r))
    return fails, stats
