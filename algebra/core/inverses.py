"""Right and left inverses, the max common layout/vector and the nullspace (CuTe's ``layout.hpp``, static case)."""

from __future__ import annotations

import math
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, as_stride_leaf, f2_columns, f2_solve, has_f2, is_zero
from algebra.core.checks import cute_would_print, int_strides, unchecked
from algebra.core.coalesce import coalesce
from algebra.core.composition import composition, whole_refusal
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, tdiv
from algebra.core.layout import Layout, _as_layout, layout_arg
from algebra.core.memo import memo
from algebra.core.recorder import active, nested, quiet
from algebra.core.swizzle import ComposedLayout, Swizzle, _bit_modes, as_f2_layout, chain

R = Layout._raw


def _sorted_modes(strides: tuple) -> list[int]:
    """Mode indices ordered by stride with CuTe's exchange sort (``detail::SortByKey``), whose order of equal
    strides is part of the result."""
    a = list(range(len(strides)))
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if strides[a[j]] < strides[a[i]]:
                a[i], a[j] = a[j], a[i]
    return a


def _inverse_modes(layout: Layout, name: str) -> tuple[tuple, tuple, list, Any]:
    """The flat modes of ``coalesce(layout)``, the prefix products of their shapes (1, s0, s0*s1, ...), the recorder."""
    rec = active()
    c = quiet(rec, coalesce, layout)
    ls, ld = it.wrap(c.shape), it.wrap(c.stride)
    if any(not is_int(d) for d in ld):
        raise LayoutError(f"{name}: basis (E) strides are not supported")
    pre = [math.prod(ls[:i]) for i in range(len(ls) + 1)]
    if rec is not None:
        rec.step(f"coalesce A: {c}" if c != layout else f"coalesce A: {c} is already coalesced", c)
        rec.step("each mode's step in A's 1-D coordinate (prefix products of the shape): "
                 + ", ".join(f"mode {i} ({ls[i]}:{ld[i]}) steps by {pre[i]}" for i in range(len(ls))))
    return ls, ld, pre, rec


def _other_inverse(layout: Any, inverse: Any) -> Any:
    """The inverse of None, a swizzle (itself, as in CuTe), F2 strides (``_f2_inverse``), ``_as_layout(layout)``, or
    CuTe's inverse of ``A o O o B`` (each a Layout or a Swizzle, a swizzle its own inverse): ``inverse(B) o Sw`` for
    ``Sw o 0 o B`` (``swizzle_layout.hpp``), kept where it is the inverse; else ``inverse(B) o -O o inverse(A)``
    (``layout_composed.hpp``): ``L^-1 o -O o Sw``, ``R(x) = L^-1(Sw(x) - O)`` on its domain, for ``Sw o O o L``; B
    nested, inverse(B) is itself composed and the answer is one chain (``swizzle.chain``)."""
    if layout is None or type(layout) is Swizzle:
        return layout
    rec, name = active(), inverse.__name__
    if type(layout) is not ComposedLayout:
        return _f2_inverse(layout, name) if type(layout) is Layout else inverse(_as_layout(layout))
    a, off, b = layout.layout_a, layout.offset, layout.layout_b
    if type(a) is Swizzle and not off and type(b) is Layout and has_f2(b.stride) and f2_columns(b.shape, b.stride):
        cols = f2_columns(b.shape, b.stride)  # over F2 (no CuTe print): Sw o B is one F2 layout, inverted exactly
        return _f2_inverse(Layout(*_bit_modes(b.shape, [a(x) for x in cols])), name)
    try:
        inv_b = nested(rec, inverse, b) if type(b) is not Swizzle else b
        inv_a = nested(rec, inverse, a) if type(a) is Layout else a
    except LayoutError as err:  # an inner inverse is not one: nor is the whole; name what CuTe prints for it
        raise whole_refusal(inverse, (layout,), err) or err from None
    if type(a) is Swizzle and off == 0:  # CuTe's print; the inverse's post-condition (checks.POST) decides
        res = unchecked(nested, rec, composition.__wrapped__, inv_b, a)
    else:  # the post-condition decides (checks.POST)
        res = chain(inv_b, -off, inv_a)
    if rec is not None:
        rec.step(f"{name}(A o O o B) = {name}(B) o -O o {name}(A) (a swizzle is its own inverse"
                 + (", composed into the inverse of B when O = 0" if off == 0 and type(a) is Swizzle else "")
                 + f"): {name}({layout}) = {res}", res, kind="result")
    return res


@memo
def right_inverse(layout: Layout) -> Layout:
    """``R`` with ``L(R(i)) == i`` for ``i < size(R)``; R covers the largest contiguous prefix of offsets.
    A swizzled ``Sw o 0 o L`` gives CuTe's ``right_inverse(L) o Sw`` (``composition(Layout, Swizzle)``); with an
    offset, ``right_inverse(L) o -O o Sw`` (``L(R(x)) == x`` on its domain, ``ComposedLayout.domain``)."""
    if type(layout) is not Layout or has_f2(layout.stride):
        return _other_inverse(layout, right_inverse.__wrapped__)
    ls, ld, pre, rec = _inverse_modes(layout, "right_inverse")
    res_s, res_d, cur = [1], [0], 1
    for i in _sorted_modes(ld):
        if ld[i] == cur:
            res_s.append(ls[i])
            res_d.append(pre[i])
            if rec is not None:
                rec.step(f"mode {i} ({ls[i]}:{ld[i]}) starts at offset {cur}, the first one not reached yet: offsets "
                         f"{cur}, {2 * cur}, ... come from 1-D coordinates {pre[i]} apart, add {ls[i]}:{pre[i]}",
                         R(it.unwrap(tuple(res_s[1:])), it.unwrap(tuple(res_d[1:]))))
            cur = ls[i] * ld[i]
        elif rec is not None:
            rec.step(f"mode {i} ({ls[i]}:{ld[i]}) does not step to offset {cur} (its stride {ld[i]} is not {cur}): "
                     f"it does not extend the contiguous run of offsets 0..{cur - 1}")
    res = quiet(rec, coalesce, R(tuple(res_s), tuple(res_d)))
    if rec is not None:
        rec.step(f"coalesce: R = {res}, with A(R(i)) = i for i < {it.product(res.shape)}", res, kind="result")
    return res


@memo
def left_inverse(layout: Layout) -> Layout:
    """``R`` with ``R(L(i)) == i`` for ``i < size(L)`` when L is injective (a quasi-inverse otherwise:
    ``L(R(L(i))) == L(i)``). Refuses when a stride is not a multiple of the size covered before it.
    A swizzled ``Sw o 0 o L`` gives CuTe's ``left_inverse(L) o Sw``; with an offset, ``left_inverse(L) o -O o Sw``."""
    if type(layout) is not Layout or has_f2(layout.stride):
        return _other_inverse(layout, left_inverse.__wrapped__)
    ls, ld, pre, rec = _inverse_modes(layout, "left_inverse")
    order = _sorted_modes(ld)
    res_s, res_d = [], [0]
    for i in order:
        d = ld[i]
        if d == 0:
            if rec is not None:
                rec.step(f"mode {i} ({ls[i]}:0) is a broadcast: it has no inverse, skip it")
            continue
        covered = it.product(tuple(res_s))
        if d % covered != 0:
            raise LayoutError(
                f"left inverse divisibility condition: stride {d} of mode {i} is not a multiple of {covered}")
        res_s.append(tdiv(d, covered))
        res_d.append(pre[i])
        if rec is not None:
            rec.step(f"mode {i} ({ls[i]}:{d}): the offsets below {d} come in {res_s[-1]} block(s) of {covered}, "
                     f"giving R the mode {res_s[-1]}:{res_d[-2]}; one step of mode {i} is 1-D coordinate {pre[i]} of "
                     "A, the next mode's stride")
    res_s.append(ls[order[-1]])
    raw = R(tuple(res_s), tuple(res_d))
    res = quiet(rec, coalesce, raw)
    if rec is not None:
        rec.step(f"the last mode in stride order repeats {ls[order[-1]]} times: {raw}", raw)
        rec.step(f"coalesce: R = {res}, with R(A(i)) = i for every coordinate i of an injective A", res,
                 kind="result")
    return res


def _f2_inverse(layout: Layout, name: str) -> Layout:
    """The inverses of an F2-linear layout (``arith.f2_columns``: a swizzled tile written with F2 strides), exact.

    Right: ``R`` with ``L(R(i)) == i`` for the longest run ``i < 2^k`` of offsets in L's image; left (quasi):
    ``L(R(L(i))) == L(i)``, R defined on every offset bit of L (the bits outside its image go to 0). Each is the
    solution of L's bit matrix (``arith.f2_solve``) at the unit offsets, as F2 strides.

    >>> from algebra.core.notation import parse
    >>> str(right_inverse(parse("(8,8):(F1,F9)")))
    '(8,8):(F1,F9)'
    >>> str(left_inverse(parse("(4,2):(F2,F1)")))
    '(2,4):(F4,F1)'
    """
    cols = f2_columns(layout.shape, layout.stride)
    right = name == "right_inverse"
    if cols is None:
        raise LayoutError(f"{name}: {layout} has F2 strides but is not F2-linear (each mode needs a power-of-two "
                          "shape, and an F2 stride or a power-of-two int stride on bits of its own)")
    top = max((c.bit_length() for c in cols), default=0)
    if right:
        xs = f2_solve(cols, [1 << t for t in range(top)]) + [None]
        xs = xs[:xs.index(None)]
    else:
        extra = []  # unit offsets outside the image: R sends them to 0
        for t in range(top):
            if f2_solve(cols + extra, [1 << t])[0] is None:
                extra.append(1 << t)
        xs = [sol & ((1 << len(cols)) - 1) for sol in f2_solve(cols + extra, [1 << t for t in range(top)])]
    rec = active()
    res = R(1, 0) if not xs else quiet(rec, coalesce, R((2,) * len(xs), tuple(F2(x) for x in xs)))
    if rec is not None:
        rec.step(f"A has F2 strides: its bit columns are {', '.join(map(str, cols))}; solving them at each unit "
                 f"offset gives the {'right' if right else 'left'} inverse {res}", res, kind="result")
    return res


def _swizzle_base(x: Any) -> int:
    """``2^M`` of the swizzle of a swizzled layout: the run of offsets it never moves."""
    if isinstance(x.layout_a, Swizzle) and isinstance(x.layout_b, Layout):
        return 1 << x.layout_a.base
    raise LayoutError(f"only a swizzled layout Sw o offset o L is supported, got {x}")


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The layout ``R`` of the longest run with ``a(R(i)) == i`` and ``b(R(i)) == i``.
    One swizzled side (CuTe's overload): that of its inner layout and the other, cut to ``2^M`` elements (the
    swizzle leaves the low M bits of an offset alone); both swizzled: refused, as CuTe has no overload."""
    return _max_common(a, b, max_common_layout)


def max_common_vector(a: Layout, b: Layout) -> int:
    """The largest ``N`` such that the first N elements are contiguous in both ``a`` and ``b``.
    A swizzled side (CuTe's overloads): that of the inner layouts, at most ``2^M`` of each swizzle (no cut when both
    have the same swizzle)."""
    return _max_common(a, b, max_common_vector)


def _max_common(a: Any, b: Any, fn: Any) -> Any:
    """``fn`` (max_common_layout or max_common_vector) of ``a`` and ``b``: the swizzled side first (CuTe's
    ``fn(Layout, Composed)`` is ``fn(Composed, Layout)``) and read through its inner layout; else both from the first
    mode ``s0:d0`` of ``coalesce(a o right_inverse(b))``, A's offset at each of B's offsets 0, 1, 2, ..."""
    rec, vector = active(), fn is max_common_vector
    if type(b) is ComposedLayout and type(a) is not ComposedLayout:
        a, b = b, a
        if rec is not None:
            rec.step(f"B is swizzled: CuTe answers {fn.__name__}(B, A)")
    if type(a) is ComposedLayout and vector:
        if type(b) is ComposedLayout:
            caps = [] if a.layout_a == b.layout_a else [_swizzle_base(a), _swizzle_base(b)]
            inner_b = b.layout_b
        else:
            caps, inner_b = [_swizzle_base(a)], b
        if rec is not None:
            rec.step(f"the inner layouts {a.layout_b} and {inner_b} have a common vector; "
                     + (f"cap it at 2^M of each swizzle: {', '.join(map(str, caps))}" if caps else
                        "both have the same swizzle, which moves their offsets alike: no cap"))
        n = min([nested(rec, max_common_vector, a.layout_b, inner_b)] + caps)
        if rec is not None:
            rec.step(f"{n} element(s) are contiguous in both", None, kind="result", value=str(n))
        return n
    if type(a) is ComposedLayout:
        if type(b) is ComposedLayout:
            raise LayoutError(f"max_common_layout: CuTe has no overload for two swizzled layouts ({a}, {b})")
        base = _swizzle_base(a)
        if rec is not None:
            rec.step(f"A = {a}: the common layout of its inner layout {a.layout_b} and B, cut to 2^M = {base} "
                     "elements (the swizzle leaves the low M bits of an offset alone)")
        common = nested(rec, max_common_layout, a.layout_b, b)
        if base < it.product(common.shape):
            common = nested(rec, composition, common, base)
        if rec is not None:
            rec.step(f"max_common_layout = {common}", common, kind="result")
        return common
    if rec is not None:
        rec.step("invert B on its contiguous offsets: right_inverse(B)")
    inv_b = nested(rec, right_inverse, b)
    if rec is not None:
        rec.step(f"compose A with right_inverse(B) = {inv_b}")
    try:
        comp = nested(rec, composition, a, inv_b)
    except LayoutError as err:
        comp = _cute_run(a, b, inv_b, fn, err)
    common = quiet(rec, coalesce, comp)
    if rec is not None:
        rec.step(f"A o right_inverse(B) = {comp}, coalesced {common}: A's offset at each of B's offsets 0, 1, 2, ...",
                 common)
    s0, d0 = it.wrap(common.shape)[0], it.wrap(common.stride)[0]
    d0 = 1 if d0 == F2(1) else d0  # c * F1 is c
    res = (s0 if d0 == 1 else 1) if vector else nested(rec, composition, inv_b, R(s0, d0)) if d0 == 1 else R(1, 0)
    if rec is not None and vector:
        why = f"its first mode {s0}:{d0} has stride 1" if d0 == 1 else f"its first mode {s0}:{d0} is not stride 1"
        rec.step(f"{why}: {res} element(s) are contiguous in both", None, kind="result", value=str(res))
    elif rec is not None:
        rec.step(f"its first mode {s0}:1 is contiguous: right_inverse(B) o {s0}:1 = {res}" if d0 == 1 else
                 f"its first mode {s0}:{d0} is not stride 1: nothing in common beyond one element, 1:0", res,
                 kind="result")
    return res


def _cute_run(a: Layout, b: Layout, inv_b: Layout, fn: Any, err: LayoutError) -> Layout:
    """CuTe's ``A o R`` (R = right_inverse(B)) where it is not A o R (``err``): its coalesced first mode ``s:1`` (else
    1) is still the common run N when ``A(R(i)) == i`` for every ``i < N`` and not at N; refused otherwise."""
    comp = cute_would_print(composition, a, inv_b)
    if comp is None or not all(map(int_strides, (a, inv_b, comp))):
        raise err
    c = coalesce(comp)
    n, size = it.wrap(c.shape)[0] if it.wrap(c.stride)[0] == 1 else 1, it.product(inv_b.shape)
    run = next((i for i in range(min(n + 1, size)) if a(inv_b(i)) != i), size)
    if run != n:  # CuTe's run is not A's: refused with the composition's point and CuTe's print of the whole
        raise whole_refusal(fn, (a, b), err) or err
    return comp


def nullspace(layout: Layout) -> Layout:
    """The coordinates that ``layout`` maps to 0 through its stride-0 leaves (an int 0 or the F2 zero ``F0``):
    ``L(R(i)) == 0``. A swizzled layout gives ``1:0`` (CuTe does not
    attempt it)."""
    rec = active()
    if type(layout) is ComposedLayout:
        if rec is not None:
            rec.step(f"A = {layout} is swizzled: CuTe does not attempt a nullspace and answers 1:0", R(1, 0),
                     kind="result")
        return R(1, 0)
    layout = layout_arg(layout, "nullspace")
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    rd = it.flatten(it.compact_col_major(tuple(fs)))
    idx = [i for i, d in enumerate(fd) if is_zero(d)]
    if rec is not None:
        rec.step(f"flatten A: shape {it.to_str(tuple(fs))}, stride {it.to_str(tuple(fd))}; a step along leaf k is "
                 f"1-D coordinate {it.to_str(tuple(rd))}[k] of A")
    res = R(it.unwrap(tuple(fs[i] for i in idx)), it.unwrap(tuple(rd[i] for i in idx))) if idx else R(1, 0)
    if rec is not None:
        rec.step(f"the stride-0 leaves {', '.join(f'{fs[i]}:0 (leaf {i})' for i in idx)} add nothing to the offset: "
                 f"R walks them by their 1-D steps, R = {res}" if idx else
                 "no leaf has stride 0: only coordinate 0 goes to offset 0, R = 1:0", res, kind="result")
    return res


def _leaf_spans(x: Any) -> list[tuple[int, int]]:
    """The ``[start, end)`` of each leaf of shape > 1 of ``shape(x)`` in the 1-D coordinate (prefix products)."""
    out, start = [], 1
    for n in it.flatten(x.shape if hasattr(x, "shape") else it.check_shape(x, "shape")):
        if n > 1:
            out.append((start, start * n))
            start *= n
    return out


def _room(d: int, spans: list) -> int | None:
    """How far a mode starting at the 1-D stride ``d`` can reach inside one leaf (``end // d``), or None."""
    return next((end // d for start, end in spans if d % start == 0 and end % d == 0 and d < end), None)


def greatest_common_domain(a: Any, b: Any) -> Layout:
    """The largest layout ``R`` of the 1-D coordinate that both ``shape(a)`` and ``shape(b)`` split into whole
    sub-modes, in order: each mode ``s:d`` of R lies inside one leaf of each shape (the leaf's start divides ``d``,
    ``d*s`` divides its end). Depends on the shapes only (a, b: layouts, ints or tuples).

    Post: ``depth(R) == 1``; ``size(R)`` divides ``gcd(size(a), size(b))``; symmetric in a and b; ``(1,):(0,)`` when
    the shapes share no factor in order. ``layout_add`` adds two layouts on it.

    >>> str(greatest_common_domain((5, 3, 4), (10, 6)))
    '(5,2):(1,30)'
    >>> str(greatest_common_domain((2, 21), (3, 14))), str(greatest_common_domain((5, 3), (3, 5)))
    ('(7):(6)', '(1):(0)')
    """
    sa, sb = _leaf_spans(a), _leaf_spans(b)
    limit = min(spans[-1][1] if spans else 1 for spans in (sa, sb))
    # where a sub-mode of a leaf of each shape can start: the least such point of two leaves is the lcm of their starts
    common = sorted({v for s0, e0 in sa for s1, e1 in sb if e0 % (v := math.lcm(s0, s1)) == 0 and e1 % v == 0})
    shapes, strides = [], []
    rec = active()
    if rec is not None:
        rec.step(f"in the 1-D coordinate, each leaf of shape(A) steps from its stride to its end: {_spans_text(sa)}; "
                 f"each of shape(B): {_spans_text(sb)}; walk the 1-D coordinate d from 1 and keep the sub-modes that "
                 "sit inside one leaf of each")
    d = 1
    while d < limit:
        ra, rb = _room(d, sa), _room(d, sb)
        g = math.gcd(ra, rb) if ra and rb else 1
        if g > 1:
            shapes.append(g)
            strides.append(d)
            if rec is not None:
                rec.step(f"at d = {d}: a sub-mode of A's leaf can take {ra} steps ({ra * d}/{d} = {ra}), of B's "
                         f"{rb} ({rb * d}/{d} = {rb}); gcd({ra}, {rb}) = {g}: add {g}:{d}, then d = {d}*{g} = {d * g}")
            d *= g
            continue
        nxt = next((v for v in common if v > d), limit)
        if rec is not None:
            why = (f"A's leaf can take {ra} steps, B's {rb}, and gcd({ra}, {rb}) = 1" if ra and rb else
                   f"a sub-mode starting there fits in no leaf of {'A' if not ra else 'B'}")
            rec.step(f"at d = {d}: {why}, so no common sub-mode starts there; " + (
                f"skip to {nxt}, the next 1-D coordinate where a sub-mode can start in both" if nxt < limit else
                "none starts past it either: done"))
        d = nxt
    res = R(tuple(shapes), tuple(strides)) if shapes else R((1,), (0,))
    if rec is not None:
        rec.step(f"the common domain is {res}", res, kind="result")
    return res


def _spans_text(spans: list[tuple[int, int]]) -> str:
    return ", ".join(f"{a} to {b}" for a, b in spans) or "none (size 1)"


def _addend(x: Any, name: str) -> Layout:
    """Argument ``name`` of ``layout_add`` as a Layout (``layout_arg``); a swizzled ``Sw o 0 o L`` as its F2 strides
    (``as_f2_layout``), refused naming the argument where it is not F2-linear."""
    x = layout_arg(x, "layout_add", name)
    if type(x) is not ComposedLayout:
        return x
    try:
        return as_f2_layout(x)
    except LayoutError as e:
        raise LayoutError(f"layout_add: {name} = {e}") from None


@memo
def layout_add(a: Layout, b: Layout) -> Layout:
    """``R(i) == A(i) + B(i)`` for every ``i < size(A)`` (int, basis or F2 sums), as one layout.

    Pre: ``size(A) == size(B)``; the coalesced A and B share a common domain of their whole size
    (``greatest_common_domain``), on which both are linear. Post: R is that domain with stride ``A(d) + B(d)`` at
    each of its modes ``s:d``, coalesced; checked point by point (``checks.post_layout_add``). Refused otherwise.
    A swizzled ``Sw o 0 o L`` is read as its F2 strides; an F2 and an int offset add as integers (refused at a carry).

    >>> from algebra.core.notation import parse
    >>> str(layout_add(parse("(4,3):(1,4)"), parse("(4,3):(3,1)")))
    '(4,3):(4,5)'
    >>> str(layout_add(parse("12:2"), parse("(4,3):(3,1)")))
    '(4,3):(5,9)'
    """
    a, b = _addend(a, "A"), _addend(b, "B")
    if it.product(a.shape) != it.product(b.shape):
        raise LayoutError(f"layout_add: size condition: size(A) = {it.product(a.shape)} and size(B) = "
                          f"{it.product(b.shape)} differ")
    rec = active()
    ca, cb = quiet(rec, coalesce, a), quiet(rec, coalesce, b)
    if rec is not None:
        rec.step(f"coalesce both: A = {ca}, B = {cb}; find their greatest common domain")
    g = nested(rec, greatest_common_domain, ca, cb)
    if it.product(g.shape) != it.product(a.shape):
        raise LayoutError(f"layout_add: common domain condition: coalesced, {ca} and {cb} share the common domain "
                          f"{g} of size {it.product(g.shape)}, not all {it.product(a.shape)} coordinates")
    raw = R(g.shape, tuple(as_stride_leaf(ca(d) + cb(d)) for d in g.stride))
    if rec is not None:
        rec.step("on that domain both are linear: each mode s:d gets the stride A(d) + B(d): " + ", ".join(
            f"{s}:{ca(d)}+{cb(d)} = {s}:{ca(d) + cb(d)}" for s, d in zip(it.wrap(g.shape), it.wrap(g.stride),
                                                                           strict=True)) + f", so {raw}", raw)
    res = quiet(rec, coalesce, raw)
    if rec is not None:
        rec.step(f"coalesced, R = {res}: R(i) = A(i) + B(i) for every i < {it.product(a.shape)}", res, kind="result")
    return res
