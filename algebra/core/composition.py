"""Composition, CuTe's ``R = A o B`` (``cute/layout.hpp`` and ``swizzle_layout.hpp``, static case), and what a
refused op built on it names: what CuTe would print for the whole call (``shows_cute``).
"""

from __future__ import annotations

import re
from functools import wraps
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import has_f2
from algebra.core.checks import _ints, _post_swizzled_b, checking, cute_would_print
from algebra.core.errors import LayoutError, no_modes
from algebra.core.layout import Layout, _as_layout, make_layout
from algebra.core.memo import memo, positional
from algebra.core.modes import coalesce_x_pair, compose
from algebra.core.notation import show
from algebra.core.recorder import _ACTIVE, nested
from algebra.core.swizzle import ComposedLayout, Swizzle, layout_swizzle, make_composed, merge_swizzles

R = Layout._raw
_active = _ACTIVE.get  # the derivation recorder, or None (the context variable's own get: no frame of its own)


_WHOLE = re.compile(r"\. CuTe would print [a-z_]+\(.*$", re.S)


def whole_refusal(fn: Any, args: tuple, err: LayoutError) -> LayoutError | None:
    """``err`` (a refusal of an inner composition that is not ``A o B``) extended with what CuTe prints for the
    whole call ``fn(*args)``: ``... CuTe would print fn(args) = R``; None when there is nothing to add (another kind
    of refusal, CuTe refuses the call too, or the message already shows the whole answer)."""
    msg = str(err)
    if not checking() or "CuTe would print" not in msg:
        return None
    whole = cute_would_print(fn, *args)
    if whole is None or f"CuTe would print {whole} here" in msg:
        return None
    text = ", ".join(show(a) for a in args)
    if type(whole) is tuple:  # local_tile / local_partition: the tile and its first element's offset
        whole = f"{whole[0]} at offset {whole[1]}"
    return LayoutError(f"{_WHOLE.sub('', msg)}. CuTe would print {fn.__name__}({text}) = {whole}")


def shows_cute(fn: Any, tile: Any = None) -> Any:
    """For an op built on composition (with a tiler, local_tile, local_partition): a refusal because an inner
    composition is not ``A o B`` also names what CuTe prints for the whole op (``whole_refusal``); ``tile(op, args)``
    then answers it where it is the function after all, or adds the point where not (``products._tile_if_function``)."""

    @wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        args = positional(fn, args, kw) if kw else args
        try:
            return fn(*args)
        except LayoutError as err:
            if tile is None and type(args[0]) is Layout and type(args[1]) is Layout:
                raise  # composition (the op with no tile) of two layouts: its message already shows CuTe's print
            if (new := whole_refusal(fn, args, err)) is None:
                raise
            if type(whole := tile(wrapper, args) if tile else None) is tuple:
                return whole
            if whole:  # the point where CuTe's tile is not A
                head, _, tail = str(new).rpartition(". CuTe would print ")
                new = LayoutError(f"{head}; {whole}. CuTe would print {tail}")
            raise new from None

    return wrapper


@memo
@shows_cute
def composition(a: Any, b: Any) -> Any:
    """``R = A o B`` (CuTe's ``composition``).

    Pre: ``a`` a Layout (a Swizzle or ComposedLayout: CuTe's overloads, ``compose_swizzled``); ``b`` a Layout, an
    int ``n`` (the layout ``n:1``), None (keep A), or a tiler tuple applied mode by mode (modes of A beyond the
    tiler are dropped, as in CuTe); CuTe's stride and shape divisibility conditions (``modes.compose_int``).
    Post: ``R(c) == A(B(c))`` for every coordinate ``c`` of B with ``B(c) < size(A)``; ``compatible(B, R)``;
    where CuTe prints a layout that is not ``A o B`` it is refused (``checks.post_composition``, applied by
    ``memo``), naming the condition, a counterexample and what CuTe prints.

    >>> from algebra.core.notation import parse
    >>> str(composition(parse("(4,8):(1,16)"), parse("(2,4):(1,8)")))
    '(2,4):(1,32)'
    >>> str(composition(parse("(12,(4,8)):(59,(13,1))"), (3, 8)))
    '(3,(4,2)):(59,(13,1))'
    >>> composition(parse("(6,2):(8,2)"), parse("4:4"))
    Traceback (most recent call last):
    ...
    algebra.core.errors.LayoutError: composition (6,2):(8,2) o 4:4 is not a layout: stride divisibility condition: \
mode 0 of B (4:4) steps by 4 through mode 0 of the coalesced A (shape 6); 4 does not divide 6, so the steps cross \
that mode's end at a point the result cannot express. CuTe would print (2,2):(32,2) here; at i = 2 that gives 2, but \
A(B(2)) = A(8) = 18
    """
    rec = _active()
    if (type(a) is not Layout or type(b) is not Layout) and (
            isinstance(a, Swizzle | ComposedLayout) or isinstance(b, Swizzle | ComposedLayout)):
        if rec is not None:
            rec.step(f"A = {a} is swizzled: the swizzle acts on the offsets the layouts produce, so it stays "
                     f"outside and the layouts compose inside" if not isinstance(b, Swizzle | ComposedLayout) else
                     f"compose {a} with the swizzled {b}")
        return compose_swizzled(a, b)
    if type(a) is not Layout:
        a = _as_layout(a)
    if b is None:
        if rec is not None:
            rec.step("B is _ (keep this mode): R = A", a, kind="result")
        return a
    if type(b) is tuple:
        if len(b) > it.rank(a.shape):
            raise LayoutError(f"composition: tiler has {len(b)} modes but {a} has rank {it.rank(a.shape)}")
        if rec is not None:
            rec.step(f"B is a tiler of {len(b)} modes: mode i of A is composed with B_i"
                     + ("; the modes of A past the tiler are dropped" if len(b) < it.rank(a.shape) else ""))
        parts = []
        for i in range(len(b)):
            if rec is not None:
                rec.step(f"mode {i}: A_{i} = {a[i]}, B_{i} = {show(b[i])}")
            parts.append(nested(rec, composition.__wrapped__, a[i], b[i]))  # a step: the whole is kept
        res = make_layout(*parts)
        if rec is not None:
            rec.step(f"side by side: R = {res}", res, kind="result")
        return res
    if type(b) is int:
        if b <= 0:
            raise LayoutError(f"composition: tile size must be positive, got {b}")
        if rec is not None:
            rec.step(f"B = {b} stands for the layout {b}:1: the first {b} elements of A")
        b = R(b, 1)
    if type(b) is not Layout or b.shape == ():
        raise LayoutError(f"composition: cannot compose with {b!r}") if type(b) is not Layout else no_modes(
            "composition", f"B = {b}")
    basis = not _ints(b.stride) and _has_basis(b.stride)  # each mode of B reads the mode of A its basis selects
    try:
        if basis:
            if rec is not None:
                rec.step("B has basis strides: each of its modes reads the mode of A that its basis selects")
            cs, cd = a.shape, a.stride
        else:
            cs, cd = coalesce_x_pair(a.shape, a.stride)
            if rec is not None:
                rec.step(_coalesce_x_text(a, R(cs, cd)), R(cs, cd))
        res = R(*compose(cs, cd, b.shape, b.stride, rec))
    except LayoutError:
        _f2_sign(a, b)
        raise
    if rec is not None:
        rec.step(f"R = A o B = {res}: R(c) = A(B(c)) for every coordinate c of B with B(c) in A's domain", res,
                 kind="result")
    return res


def _f2_sign(a: Layout, b: Layout) -> None:
    """Where ``a o b`` is refused and a negative int stride meets F2 (XOR) strides (beside them in one layout, or in B
    where A has them: A's bit vectors read at B's offsets bit by bit): that condition and where it shows instead."""
    f2 = [has_f2(x.stride) for x in (a, b)]
    for name, x in (("A", a), ("B", b)) if f2[0] or f2[1] else ():
        fs, fd = it.flatten(x.shape), it.flatten(x.stride)
        if (k := next((k for k, d in enumerate(fd) if type(d) is int and d < 0 < fs[k] - 1), None)) is not None \
                and (f2[0] or name == "B"):
            raise LayoutError(
                f"composition {a} o {b}: F2 sign condition: F2 (XOR) strides are bit vectors, with no sign, so "
                f"no negative int stride may sit beside them nor be read by them; {name} has the stride {fd[k]} "
                f"({name}({it.product(tuple(fs[:k]))}) = {fd[k]}) and {'A' if f2[0] else 'B'} has F2 strides. "
                "CuTe has no F2 strides: write the F2 layout with int strides (or as the swizzled layout it stands "
                "for) for CuTe's composition") from None


def _coalesce_x_text(a: Layout, c: Layout) -> str:
    if c == a:
        return f"coalesce A: {a} is already coalesced, one function of the 1-D coordinate (also past size(A))"
    if it.product(c.shape) == it.product(a.shape):
        return f"coalesce A to {c}: the same function of the 1-D coordinate, also past size(A)"
    return (f"coalesce A, keeping the stride of its trailing size-1 mode so that the function continues past "
            f"size(A) = {it.product(a.shape)}: {c} (A itself is its first {it.product(a.shape)} elements)")


def _has_basis(d: Any) -> bool:
    """True when the strides are basis elements (E strides); mixing them with non-zero ints is refused (the caller
    tests for int strides, the usual case, first: no leaf to sort)."""
    kinds = {"basis" if hasattr(x, "is_basis") else "zero" if type(x) is int and x == 0 else "other"
             for x in it.flatten(d)}  # the kinds of the stride leaves: ``v@m``, int 0, other
    if "basis" not in kinds:
        return False
    if "other" in kinds:
        raise LayoutError("composition: the right layout mixes basis (E) strides with integer strides")
    return True


def compose_swizzled(a: Any, b: Any) -> Any:
    """composition() when either side is a Swizzle or ComposedLayout, as CuTe's overloads do it.

    ``Swizzle o Layout -> ComposedLayout(sw, 0, L)``; ``(A o off o B) o C -> A o off o (B o C)``;
    ``Layout o Swizzle -> Sw' o 0 o Layout`` with ``Sw'`` read off the layout's values at the swizzle's bit masks
    (``layout_swizzle``); ``Layout o (Sw o 0 o B) -> (Layout o Sw) o B``.
    """
    if isinstance(a, Swizzle):
        if isinstance(b, Swizzle):
            return merge_swizzles(a, b)
        if isinstance(b, Layout):
            return make_composed(a, 0, b)
        raise LayoutError(f"cannot compose {a} with {b}: CuTe composes a swizzle with a layout only")
    if isinstance(a, ComposedLayout):
        return make_composed(a.layout_a, a.offset, composition(a.layout_b, b))
    if isinstance(a, Layout) and isinstance(b, Swizzle):
        return layout_swizzle(a, b)
    if isinstance(a, Layout) and isinstance(b, ComposedLayout):
        if b.offset != 0:
            raise LayoutError(f"composition {a} o {b}: CuTe requires the offset of the composed layout to be 0 "
                              f"(\"Require offset == 0.\"), here {b.offset}")
        try:
            return composition(composition(a, b.layout_a), b.layout_b)
        except LayoutError as err:  # a part is not its function; the whole may be (where A o Sw is wrong, B leaves A)
            whole = cute_would_print(composition.__wrapped__, a, b) if checking() else None
            if whole is None:
                raise
            _post_swizzled_b(a, b, whole, err)
            return whole
    raise LayoutError(f"cannot compose {a} with {b}")
