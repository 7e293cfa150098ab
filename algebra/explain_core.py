"""Traced versions of coalesce, filter, composition, complement and the inverses (``algebra.ops``).

Each ``trace_*`` function walks the same loops as its counterpart in ``algebra.ops``, records one step per decision
in a ``Recorder`` and returns the same result (``explain`` checks that against the real op). Refusals raise
``LayoutError`` with the op's own message.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from algebra import inttuple as it
from algebra import ops
from algebra.errors import LayoutError
from algebra.inttuple import is_int, is_tuple, tdiv
from algebra.layout import Layout, cosize, make_layout

R = Layout._raw


def show(x: Any) -> str:
    """CuTe notation of a Layout, ComposedLayout, Swizzle, tiler tuple, HTuple or int."""
    from algebra.notation import to_str

    if is_tuple(x) and not any(isinstance(e, Layout) or e is None for e in it.flatten(x)):
        return it.to_str(x)
    return to_str(x)


class Recorder:
    """Collects steps ``{"text", "layout", "kind", "depth"}``; ``sub()`` indents the steps of a nested op."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.depth = 0

    def add(self, text: str, layout: Any = None, kind: str = "step", **extra: Any) -> None:
        step = {"text": text, "layout": None if layout is None else show(layout), "kind": kind, "depth": self.depth}
        step.update(extra)
        self.steps.append(step)

    @contextmanager
    def sub(self):
        self.depth += 1
        try:
            yield self
        finally:
            self.depth -= 1


def lay(shape: Any, stride: Any) -> Layout:
    return R(shape, stride)


def as_layout(x: Any, rec: Recorder | None = None, name: str = "B") -> Layout:
    if isinstance(x, Layout):
        return x
    if is_int(x) and not isinstance(x, bool):
        if x <= 0:
            raise LayoutError(f"tile size must be positive, got {x}")
        if rec is not None:
            rec.add(f"{name} = {x} stands for the layout {x}:1", Layout(x))
        return Layout(x)
    raise LayoutError(f"expected a layout, got {x!r}")


# --------------------------------------------------------------------------------------------- coalesce


def trace_bw_coalesce(rec: Recorder, fs: tuple, fd: tuple, seed_s: Any, seed_d: Any) -> Layout:
    """``ops._bw_coalesce`` with a step per mode, walking from the back."""
    ns, nd = [seed_s], [seed_d]

    def cur() -> Layout:
        return lay(it.unwrap(tuple(ns)), it.unwrap(tuple(nd))) if len(ns) > 1 else lay(ns[0], nd[0])

    rec.add(f"start from the last mode {seed_s}:{seed_d} and walk towards the front", cur())
    for i in range(len(fs) - 1, -1, -1):
        s, d = fs[i], fd[i]
        if s == 1:
            rec.add(f"mode {i} ({s}:{d}) has size 1: drop it")
            continue
        front = f"{ns[0]}:{nd[0]}"
        if len(ns) == 1 and ns[0] == 1:
            ns[0], nd[0] = s, d
            rec.add(f"the mode built so far has size 1: mode {i} ({s}:{d}) replaces it", cur())
        elif (is_int(d) and is_int(nd[0]) and s * d == nd[0]) or (not is_int(d) and s * d == nd[0]):
            ns[0], nd[0] = s * ns[0], d
            rec.add(f"mode {i} ({s}:{d}) ends where {front} begins ({s}*{d} = {s * d}): merge them", cur())
        else:
            ns.insert(0, s)
            nd.insert(0, d)
            rec.add(f"mode {i} ({s}:{d}) does not end where {front} begins ({s}*{d} = {s * d} is not "
                    f"{front.split(':')[1]}): keep it as its own mode", cur())
    if len(ns) == 1:
        return R(1, 0) if ns[0] == 1 else R(ns[0], nd[0])
    return R(tuple(ns), tuple(nd))


def trace_coalesce(rec: Recorder, layout: Any, profile: Any = None) -> Layout:
    layout = ops._as_layout(layout)
    if profile is not None and is_tuple(profile):
        if len(profile) > it.rank(layout.shape):
            raise LayoutError(f"coalesce: profile {it.to_str(profile)} has more modes than {layout}")
        rec.add(f"coalesce by mode: each of the first {len(profile)} modes of {layout} on its own, the others kept")
        modes = []
        for i in range(len(profile)):
            rec.add(f"mode {i}: {layout[i]}", layout[i])
            with rec.sub():
                modes.append(trace_coalesce(rec, layout[i], profile[i]))
        modes += [layout[i] for i in range(len(profile), it.rank(layout.shape))]
        res = make_layout(*modes)
        rec.add(f"put the modes back side by side: {res}", res, kind="result")
        return res
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    flat = lay(fs, fd) if len(fs) > 1 else lay(fs[0], fd[0])
    rec.add(f"flatten {layout} to {flat}: only the 1-D coordinate matters", flat)
    res = trace_bw_coalesce(rec, fs[:-1], fd[:-1], fs[-1], fd[-1])
    rec.add(f"the coalesced layout is {res}: same size, same value at every 1-D coordinate", res, kind="result")
    return res


def trace_filter(rec: Recorder, layout: Any, profile: Any = None) -> Layout:
    layout = ops._as_layout(layout)
    if profile is not None and is_tuple(profile):
        rec.add(f"filter by mode: each of the first {len(profile)} modes on its own, the others kept")
        modes = []
        for i in range(len(profile)):
            with rec.sub():
                modes.append(trace_filter(rec, layout[i], profile[i]))
        modes += [layout[i] for i in range(len(profile), it.rank(layout.shape))]
        res = make_layout(*modes)
        rec.add(f"put the modes back side by side: {res}", res, kind="result")
        return res
    fz = ops.filter_zeros(layout)
    rec.add(f"give every stride-0 mode size 1 (a broadcast adds nothing): {fz}", fz)
    with rec.sub():
        res = trace_coalesce(rec, fz)
    rec.add(f"coalesce drops the size-1 modes and merges the rest: {res}", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- composition


def trace_compose_int(rec: Recorder, ls: Any, ld: Any, rs: int, rd: Any) -> Layout:
    """``ops._compose_int``: the mode ``rs:rd`` of B against the coalesced A = ``ls:ld`` (skip rd, then take rs)."""
    if is_int(rd) and rd == 0:
        res = R(rs, rd)
        rec.add(f"{rs}:0 has stride 0: all {rs} coordinates read A(0), giving {res}", res)
        return res
    if not is_tuple(ls):
        res = R(rs, rd * ld)
        rec.add(f"A is the single mode {ls}:{ld}: {rs} of its elements, {rd} apart, are {res}", res)
        return res
    rec.add(f"{rs}:{rd} means: skip {rd}, then take {rs}, walking the modes of A = {lay(ls, ld)}")
    n = len(ls)
    res_s: list = []
    res_d: list = []
    rest_s, rest_d = rs, rd
    for i in range(n - 1):
        cs, cd = ls[i], ld[i]
        if cs == 0 or rest_d == 0:
            raise LayoutError(f"composition: zero shape or stride at mode {i} of the left layout (CuTe divides by it)")
        if not (ops._cmod(rest_d, cs) == 0 or rest_d < cs):
            raise LayoutError(
                f"stride divisibility condition: composition stride {rest_d} is neither a multiple of nor less "
                f"than shape {cs} of mode {i} of the left layout")
        ad = abs(rest_d)
        next_s = tdiv(cs + ad - 1, ad)  # C++ integer arithmetic, as CuTe computes
        next_d = tdiv(ad + cs - 1, cs) * (-1 if rest_d < 0 else 1)
        if next_s == 1 or rest_s == 1:
            if rest_s == 1:
                rec.add(f"mode {i} of A ({cs}:{cd}): nothing is left to take; the step becomes {next_d}")
            else:
                rec.add(f"mode {i} of A ({cs}:{cd}): a step of {rest_d} jumps over all {cs} of its elements; "
                        f"{rest_d}/{cs} = {next_d} carries to the next mode")
            rest_d = next_d
            continue
        new_s = min(next_s, rest_s)
        if new_s == 0 or ops._cmod(rest_s, new_s) != 0:
            raise LayoutError(
                f"shape divisibility condition: shape {rest_s} is not divisible by {new_s} "
                f"(mode {i} of the left layout)")
        res_s.append(new_s)
        res_d.append(rest_d * cd)
        left = tdiv(rest_s, new_s)
        more = f", {left} still to take" if left > 1 else ""
        rec.add(f"mode {i} of A ({cs}:{cd}): stepping by {rest_d} leaves {next_s} elements {rest_d}*{cd} = "
                f"{rest_d * cd} apart; take {new_s} of them{more}",
                lay(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d))))
        rest_s, rest_d = left, next_d
    last = ld[-1]
    if not res_s:
        res = R(rest_s, rest_d * last)
        rec.add(f"the last mode of A (stride {last}) gives all {rest_s}, {rest_d}*{last} = {rest_d * last} apart "
                f"(it extends past size(A) if it must): {res}", res)
    elif rest_s == 1:
        res = R(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d)))
        rec.add(f"all {rs} are taken: {res}", res)
    else:
        res = R(tuple(res_s) + (rest_s,), tuple(res_d) + (rest_d * last,))
        rec.add(f"the last mode of A (stride {last}) gives the remaining {rest_s}, {rest_d}*{last} = "
                f"{rest_d * last} apart: {res}", res)
    return res


def _trace_compose_basis(rec: Recorder, ls: Any, ld: Any, rs: int, rd: Any) -> Layout:
    path = rd.mode_path
    for k in path:
        if not is_tuple(ls) or k >= len(ls):
            raise LayoutError(f"basis stride {rd} selects a mode the left layout does not have")
        ls, ld = ls[k], ld[k]
    rec.add(f"stride {rd} reads mode {'.'.join(map(str, path))} of A, {lay(ls, ld)}, with step {rd.value}")
    if is_tuple(ls):
        c = ops.coalesce_x(R(ls, ld))
        rec.add(f"coalesce that mode to {c}", c)
        ls, ld = c.shape, c.stride
    return trace_compose_int(rec, ls, ld, rs, rd.value)


def trace_compose_impl(rec: Recorder, ls: Any, ld: Any, rs: Any, rd: Any, path: str = "") -> Layout:
    if is_tuple(rs):
        if not path:
            rec.add(f"B = {lay(rs, rd)} has {len(rs)} modes: each is composed with A on its own and the results "
                    "sit side by side, so R has the shape of B")
        parts = []
        for i, (s, d) in enumerate(zip(rs, rd, strict=True)):
            rec.add(f"mode {path}{i} of B: {lay(s, d)}")
            with rec.sub():
                parts.append(trace_compose_impl(rec, ls, ld, s, d, f"{path}{i}."))
        res = make_layout(*parts)
        rec.add(f"side by side: {res}", res)
        return res
    if not is_int(rd):
        return _trace_compose_basis(rec, ls, ld, rs, rd)
    return trace_compose_int(rec, ls, ld, rs, rd)


def trace_composition(rec: Recorder, a: Any, b: Any) -> Any:
    """``ops.composition`` step by step (Swizzle / ComposedLayout, tiler, int, Layout)."""
    from algebra.swizzle import ComposedLayout, Swizzle, compose_swizzled

    if isinstance(a, Swizzle) and isinstance(b, Layout | int) and not isinstance(b, bool):
        res = compose_swizzled(a, b)
        rec.add(f"A is the swizzle {a}: it acts on the offsets B produces, R = {a} o 0 o B", res, kind="result")
        return res
    if isinstance(a, ComposedLayout) and not isinstance(b, Swizzle | ComposedLayout):
        rec.add(f"A = {a}: the swizzle stays outside; compose its inner layout {a.layout_b} with B")
        with rec.sub():
            inner = trace_composition(rec, a.layout_b, b)
        res = ComposedLayout(a.layout_a, a.offset, inner)
        rec.add(f"put the swizzle back outside: {res}", res, kind="result")
        return res
    if isinstance(a, Swizzle | ComposedLayout) or isinstance(b, Swizzle | ComposedLayout):
        return compose_swizzled(a, b)
    a = ops._as_layout(a)
    if b is None:
        rec.add("B is _ (keep this mode): R = A", a, kind="result")
        return a
    if is_tuple(b):
        if len(b) > it.rank(a.shape):
            raise LayoutError(f"composition: tiler has {len(b)} modes but {a} has rank {it.rank(a.shape)}")
        rec.add(f"B is a tiler of {len(b)} modes: mode i of A is composed with B_i"
                + ("; the modes of A past the tiler are dropped" if len(b) < it.rank(a.shape) else ""))
        parts = []
        for i in range(len(b)):
            rec.add(f"mode {i}: A_{i} = {a[i]}, B_{i} = {show(b[i])}")
            with rec.sub():
                parts.append(trace_composition(rec, a[i], b[i]))
        res = make_layout(*parts)
        rec.add(f"side by side: R = {res}", res, kind="result")
        return res
    if is_int(b) and not isinstance(b, bool):
        if b <= 0:
            raise LayoutError(f"composition: tile size must be positive, got {b}")
        rec.add(f"B = {b} stands for the layout {b}:1: the first {b} elements of A")
        c = ops.coalesce_x(a)
        rec.add(f"coalesce A to {c} (the same function, also past size(A))", c)
        res = trace_compose_impl(rec, c.shape, c.stride, b, 1)
        rec.add(f"R = {res}", res, kind="result")
        return res
    if not isinstance(b, Layout):
        raise LayoutError(f"composition: cannot compose with {b!r}")
    if any(not is_int(x) for x in it.flatten(b.stride)):
        rec.add("B has basis strides: each of its modes reads the mode of A that its basis selects")
        res = trace_compose_impl(rec, a.shape, a.stride, b.shape, b.stride)
    else:
        c = ops.coalesce_x(a)
        rec.add(f"coalesce A to {c}: the same function of the 1-D coordinate, also past size(A)", c)
        res = trace_compose_impl(rec, c.shape, c.stride, b.shape, b.stride)
    rec.add(f"R = A o B = {res}: R(c) = A(B(c)) for every coordinate c of B", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- complement


def trace_complement(rec: Recorder, layout: Any, cotarget: Any = None) -> Layout:
    """``ops.complement``: sort A's modes by stride, fill the gap below each, then repeat up to the cotarget."""
    layout = ops._as_layout(layout)
    fl = ops.filter(layout)
    rec.add(f"filter A (drop stride-0 and size-1 modes, coalesce): {fl}", fl)
    if cotarget is None:
        cotarget = cosize(fl)
        rec.add(f"no cotarget given: use cosize(A) = {cotarget}")
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    else:
        cotarget = it.check_shape(cotarget, "cotarget")
    shape_, stride_ = fl.shape, fl.stride
    if is_int(stride_) and stride_ == 0:
        res = Layout(ops._coalesce_shape(cotarget))
        rec.add(f"A only reaches offset 0: the complement is all of [0, {show(cotarget)}), {res}", res, kind="result")
        return res
    if any(not is_int(d) for d in it.flatten(stride_)):
        raise LayoutError("complement: basis (E) strides are not supported")
    shapes, strides = list(it.wrap(shape_)), list(it.wrap(stride_))
    order = sorted(range(len(strides)), key=lambda k: strides[k])
    if len(shapes) > 1:
        rec.add("sort the modes by stride: " + ", ".join(f"{shapes[k]}:{strides[k]}" for k in order))
    res_s: list = []
    res_d: list = [1]

    def fill(s: int, d: int) -> None:
        new_s = tdiv(d, res_d[-1])
        if new_s == 0:
            raise LayoutError(f"Non-injective Layout detected in complement: {layout} has overlapping modes")
        res_s.append(new_s)
        gap = "no gap" if new_s == 1 else f"a gap of {new_s} blocks"
        rec.add(f"mode {s}:{d} starts at {d}; the block covered so far has size {res_d[-1]}, so below it lies {gap}:"
                f" add {new_s}:{res_d[-1]}; the block now reaches {d * s}",
                lay(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d[:len(res_s)]))))

    for _ in range(len(shapes) - 1):
        min_d = min(strides)
        k = strides.index(min_d)
        fill(shapes[k], min_d)
        res_d.append(min_d * shapes[k])
        del shapes[k]
        del strides[k]
    fill(shapes[0], strides[0])
    new_d = strides[0] * shapes[0]
    rest_s = ops._coalesce_shape(it.ceil_div(cotarget, new_d))
    rest_d = it.compact_col_major(rest_s, new_d)
    rec.add(f"A and the gaps cover [0, {new_d}); ceil({show(cotarget)} / {new_d}) = {rest_s} copies of that block, "
            f"{new_d} apart, reach the cotarget: add {rest_s}:{rest_d}")
    raw = R((tuple(res_s), rest_s), (tuple(res_d), rest_d))
    res = ops.coalesce(raw)
    rec.add(f"coalesce {raw}: the complement is {res}", res, kind="result")
    return res
