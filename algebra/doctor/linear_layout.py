"""Triton's linear layouts (F2-linear maps between named bit spaces) beside CuTe layouts.

A ``LinearLayout`` follows Triton's ``LinearLayout`` (``lib/Tools/LinearLayout.cpp``): named in-dims, each with a
list of bases (``bases[in_dim][i]`` is the image of ``1 << i``, one integer per out-dim), and named out-dims with
power-of-two sizes; the value at an input is the XOR of the bases of its set bits. The JSON form is
``{"bases": {"register": [[0, 1], ...], "lane": [...], "warp": [...], "block": [...]}, "out_dims": {"dim0": 16,
"dim1": 8}}``; ``gluon()`` gives Gluon's ``DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases,
shape)`` arguments. Shared-memory layouts use the in-dim ``offset`` (offset -> tensor coordinate, as Triton's shared
encodings do). Its map is a core Layout with F2 strides (``LinearLayout.layout``): Triton's ``compose`` and
``invert`` are the core's ``composition`` and ``right_inverse``, ranks and solves ``algebra.core.arith``'s.

A CuTe layout is an integer-linear map (strides add with carries); it equals an F2-linear map exactly when the
strides of its bit-modes have pairwise disjoint bits. So a linear layout is a CuTe layout iff its columns are
disjoint, and a swizzled CuTe layout ``Sw<B,M,S> o L`` iff some swizzle makes them disjoint (a swizzle is an
involution, so ``L = Sw o f``).
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, f2_apply, f2_columns, f2_rank, f2_solve
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, offsets
from algebra.core.ops import coalesce, composition, right_inverse
from algebra.core.swizzle import ComposedLayout, Swizzle, as_f2_layout

MAX_BITS = 20
DISTRIBUTED = ("register", "lane", "warp", "block")
GLUON = ("reg_bases", "lane_bases", "warp_bases", "block_bases")  # Gluon's names of DISTRIBUTED


def log2(n: int, what: str, error: type[LayoutError] = LayoutError) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1):
        raise error(f"{what}: {n!r} is not a power of two")
    return n.bit_length() - 1


def f2_layout(cols: list[int]) -> Any:
    """The core Layout ``(2,...,2):(F c0, F c1, ...)``: bit j of the 1-D coordinate goes to ``cols[j]``."""
    return Layout((2,) * len(cols), tuple(F2(c) for c in cols)) if cols else Layout(1, 0)


def inverse_columns(cols: list[int]) -> list[int] | None:
    """The columns of the inverse of the bijection ``f2_layout(cols)`` on its ``len(cols)`` bits: the core's F2
    solve (``arith.f2_solve``, as its ``right_inverse`` does) at each unit vector; None when it is not a bijection
    (rank below ``len(cols)``, or bits beyond)."""
    n = len(cols)
    if any(c >> n for c in cols):
        return None
    sol = f2_solve(cols, [1 << t for t in range(n)])
    return None if None in sol else sol


class LinearLayout:
    """Named in-dims with bases, named out-dims with sizes (dicts in Triton's order), held as a core Layout with F2
    strides (``layout``): one mode ``(2,...,2)`` per in-dim, each basis one F2 stride whose bits are the out-dims'
    values side by side (the first out-dim lowest). Post: ``self(**{in: value})`` is the XOR of the bases of the set
    bits, one integer per out-dim; ``from_json(ll.to_json()) == ll``. ``check=False`` (Triton's builders below and in
    ``triton_attrs``) skips the input checks; never mutated after ``layout`` is read."""
    __slots__ = ("bases", "outs", "_layout", "_cols", "_bits")

    def __init__(self, bases: Any, out_dims: Any, check: bool = True) -> None:
        bases = list(bases.items()) if isinstance(bases, dict) else list(bases)
        out_dims = list(out_dims.items()) if isinstance(out_dims, dict) else list(out_dims)
        if check:
            _validate(bases, out_dims)
        self.bases = {n: [list(v) for v in b] for n, b in bases}
        self.outs = dict(out_dims)
        self._layout = self._cols = self._bits = None

    @classmethod
    def raw(cls, bases: Any, outs: Any) -> LinearLayout:
        return cls(bases, outs, check=False)

    @property
    def out_bits(self) -> list[int]:
        if self._bits is None:
            self._bits = [log2(s, n) for n, s in self.outs.items()]
        return self._bits

    @property
    def layout(self) -> Any:
        """The core Layout (F2 strides) of this map; its 1-D coordinate is the in-dims' bits side by side."""
        if self._layout is None:
            subs = [f2_layout([self.pack(v) for v in b]) for b in self.bases.values()]
            self._layout = Layout(tuple(x.shape for x in subs), tuple(x.stride for x in subs)) if subs else Layout(1, 0)
        return self._layout

    def pack(self, v: list[int]) -> int:
        """One value per out-dim as one bit vector (the first out-dim lowest)."""
        out, sh = 0, 0
        for x, b in zip(v, self.out_bits, strict=True):
            out |= x << sh
            sh += b
        return out

    def unpack(self, c: int) -> list[int]:
        out = []
        for b in self.out_bits:
            out.append(c & ((1 << b) - 1))
            c >>= b
        return out

    # ------------------------------------------------------------------ as data
    def to_json(self) -> dict[str, Any]:
        return {"bases": {n: [list(v) for v in b] for n, b in self.bases.items()}, "out_dims": dict(self.outs)}

    @staticmethod
    def from_json(obj: Any) -> LinearLayout:
        """From ``{"bases": {...}, "out_dims": {...}}`` or Gluon's ``{"reg_bases", ..., "shape"}``."""
        if not isinstance(obj, dict):
            raise LayoutError("linear layout: expected a JSON object with bases and out_dims")
        gluon = "reg_bases" in obj or "shape" in obj
        takes = (*GLUON, "shape") if gluon else ("bases", "out_dims")
        for key in obj:
            if key not in takes:  # a misspelled key would drop its bases without a word
                raise LayoutError(f"{str(key)[:40]}: not a key of {'Gluon' if gluon else 'Triton'}'s form; it takes "
                                  f"{', '.join(takes)}")
        if gluon:
            shape = obj.get("shape")
            if not isinstance(shape, list) or not shape:
                raise LayoutError("shape: a list of out-dim sizes")
            bases = [(n, obj.get(k) or []) for n, k in zip(DISTRIBUTED, GLUON, strict=True)]
            out = [(f"dim{i}", s) for i, s in enumerate(shape)]
        else:
            b, o = obj.get("bases"), obj.get("out_dims")
            if not isinstance(b, dict) or not isinstance(o, dict) or not o:
                raise LayoutError("linear layout: bases and out_dims must be objects")
            bases, out = list(b.items()), list(o.items())
        for name, bs in bases:
            if not isinstance(bs, list) or not all(isinstance(v, list) for v in bs):
                raise LayoutError(f"bases.{name}: a list of bases, each a list of integers")
        return LinearLayout([(str(n), bs) for n, bs in bases], [(str(n), s) for n, s in out])

    def gluon(self) -> dict[str, Any] | None:
        """Gluon's DistributedLinearLayout arguments, when the in-dims are register/lane/warp/block."""
        if any(n not in DISTRIBUTED for n in self.bases):
            return None
        return {**{k: self.bases.get(n, []) for n, k in zip(DISTRIBUTED, GLUON, strict=True)},
                "shape": list(self.outs.values())}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinearLayout) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"LinearLayout({self.to_json()})"

    # ------------------------------------------------------------------ as a map
    def columns(self) -> list[int]:
        """Each input bit's image (``pack``ed): the F2 strides of ``layout``, one per coordinate bit."""
        if self._cols is None:
            self._cols = f2_columns(self.layout.shape, self.layout.stride)
        return list(self._cols)

    def rank(self) -> int:
        return f2_rank(self.columns())

    def __call__(self, **ins: int) -> tuple[int, ...]:
        x, sh = 0, 0
        for name, b in self.bases.items():
            x |= (ins.get(name, 0) & ((1 << len(b)) - 1)) << sh
            sh += len(b)
        return tuple(self.unpack(f2_apply(self.columns(), x)))

    def matrix(self) -> list[str]:
        """Triton's ``getMatrix``: one row per out bit (out-dims in order), one column per in bit, as 0/1 text."""
        cols = self.columns()
        return ["".join("1" if (c >> r) & 1 else "0" for c in cols) for r in range(sum(self.out_bits))]

    @staticmethod
    def _of_columns(ins: dict[str, int], cols: list[int], outs: dict[str, int]) -> LinearLayout:
        """In-dims ``ins`` (name -> number of bits, in order) with ``cols`` (bits of ``outs``) as the bases."""
        unpack, res, k = LinearLayout.raw({}, outs).unpack, {}, 0
        for name, b in ins.items():
            res[name] = [unpack(c) for c in cols[k:k + b]]
            k += b
        return LinearLayout.raw(res, outs)

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """``outer o self`` (Triton's ``compose``): self's out-dims are outer's in-dims (same names; bases of an
        in-dim outer lacks are zero). The core's composition of the two F2 Layouts."""
        cols = []
        for name, b in zip(self.outs, self.out_bits, strict=True):
            got = [outer.pack(v) for v in outer.bases.get(name, [])[:b]]
            cols += got + [0] * (b - len(got))
        r = composition(f2_layout(cols), self.layout)
        return self._of_columns({n: len(b) for n, b in self.bases.items()}, f2_columns(r.shape, r.stride), outer.outs)

    def invert(self) -> LinearLayout | None:
        """Triton's ``invert``: out-dims -> in-dims, the core's ``right_inverse`` of ``layout``; None when the map
        is not a bijection (``inverse_columns``)."""
        if inverse_columns(self.columns()) is None:
            return None
        r = right_inverse(self.layout)
        inv = f2_columns(r.shape, r.stride) if self.columns() else []
        outs = dict(zip(self.outs, self.out_bits, strict=True))
        return self._of_columns(outs, inv, {n: 1 << len(b) for n, b in self.bases.items()})

    # ------------------------------------------------------------------ Triton's builders (``triton_attrs``)
    @staticmethod
    def inferred(bases: dict[str, list[list[int]]], names: list[str]) -> LinearLayout:
        """Out-dim sizes inferred from the bases, as Triton's constructor without sizes does."""
        sizes = {n: 1 for n in names}
        for bs in bases.values():
            for v in bs:
                for n, x in zip(names, v, strict=True):
                    sizes[n] = max(sizes[n], 1 << x.bit_length())
        return LinearLayout.raw(bases, sizes)

    def __mul__(self, other: LinearLayout) -> LinearLayout:
        """Triton's product: the in-dims side by side, ``other``'s values scaled by ``self``'s out-dim sizes; in-
        and out-dims in the order of Triton's ``supremum`` of the two layouts' orders."""
        names = supremum(list(self.outs), list(other.outs))
        outs = {n: self.outs.get(n, 1) * other.outs.get(n, 1) for n in names}
        bases: dict[str, list[list[int]]] = {}
        for i in supremum(list(self.bases), list(other.bases)):
            rows = [[dict(zip(self.outs, v, strict=True)).get(n, 0) for n in names] for v in self.bases.get(i, [])]
            for v in other.bases.get(i, []):
                got = dict(zip(other.outs, v, strict=True))
                rows.append([got.get(n, 0) * self.outs.get(n, 1) for n in names])
            bases[i] = rows
        return LinearLayout.raw(bases, outs)

    def transpose_outs(self, names: list[str]) -> LinearLayout:
        if sorted(names) != sorted(self.outs):
            raise LayoutError(f"transpose_outs: {names} is not a permutation of {list(self.outs)}")
        idx = [list(self.outs).index(n) for n in names]
        return LinearLayout.raw({k: [[v[j] for j in idx] for v in b] for k, b in self.bases.items()},
                                {n: self.outs[n] for n in names})

    def to_linear(self, ins: tuple[str, ...], outs: list[str]) -> LinearLayout:
        """This layout with the in-dims ``ins`` (missing ones empty) and the out-dims in the order ``outs``,
        checked as a public LinearLayout."""
        me = self.transpose_outs(outs)
        return LinearLayout([(i, me.bases.get(i, [])) for i in ins], [(n, me.outs[n]) for n in outs])


def supremum(x: list[str], y: list[str]) -> list[str]:
    """Triton's ``supremum`` (``LayoutUtils.cpp``): x and y merged, each in its order; the next name of x comes first
    unless y's next name is in x and x's is later in y than y's is in x (when the orders disagree, x's wins)."""
    out: list[str] = []
    while True:
        a, b = [n for n in x if n not in out], [n for n in y if n not in out]
        if not a or not b:
            return out + a + b
        first = a[0] == b[0] or a[0] not in y or (b[0] in x and y.index(a[0]) <= x.index(b[0]))
        out.append(a[0] if first else b[0])


def _validate(bases: list, out_dims: list) -> None:
    if not out_dims:
        raise LayoutError("out_dims: at least one out-dim is needed")
    for name, size in out_dims:
        log2(size, f"out_dims.{name}")
    total = sum(len(b) for _, b in bases)
    if total > MAX_BITS:
        raise LayoutError(f"bases: {total} input bits is over the cap of {MAX_BITS}")
    for name, bs in bases:
        for i, v in enumerate(bs):
            if len(v) != len(out_dims):
                raise LayoutError(f"bases.{name}[{i}]: needs {len(out_dims)} values (one per out-dim)")
            for (oname, size), x in zip(out_dims, v, strict=True):
                if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < size:
                    raise LayoutError(f"bases.{name}[{i}]: {x!r} for {oname} must be an integer in [0, {size})")


# --------------------------------------------------------------------------- CuTe -> linear


def span(cols: list[int]) -> list[int]:
    """Every XOR of the columns, in the order of ``f2_layout(cols)``'s 1-D coordinates: x with its top bit set is x
    without it XOR that bit's column (one list operation per bit, not one evaluation per point)."""
    out = [0]
    for c in cols:
        out += [x ^ c for x in out]
    return out


def _check_linear(values: list[int], cols: list[int], what: str) -> None:
    """Post-condition: ``values[x]`` is the XOR of ``cols[j]`` over the set bits j of x, for every x < 2^len(cols)
    (``values`` lists the map at x = 0, 1, ...); otherwise LayoutError names the first x where it is not."""
    want = span(cols)
    if values == want:
        return
    x = next(i for i, (got, w) in enumerate(zip(values, want, strict=True)) if got != w)
    raise LayoutError(f"{what} is not F2-linear: it maps {x} to {values[x]}, but the XOR of its bit images is "
                      f"{want[x]} (strides whose bits overlap add with carries)")


def from_cute(layout: Any) -> dict[str, Any]:
    """A layout with power-of-two shapes (a Swizzle composed on it counts) as F2 data: the forward map (in-dims
    dim0, dim1, ... -> out-dim ``offset``), and, when it is a bijection onto [0, 2^n), Triton's shared form
    (in-dim ``offset`` -> dim0, dim1, ...). LayoutError names the condition when the map is not F2-linear."""
    inner = getattr(layout, "layout_b", layout)
    if not isinstance(inner, Layout):
        raise LayoutError("layout: expected a Layout or Sw<B,M,S> o Layout")
    if not all(isinstance(d, int) for d in it.flatten(inner.stride)):
        raise LayoutError("layout: strides must be integers (an identity or basis-stride layout maps to coordinates, "
                          "not offsets)")
    bits = [log2(m, "shape") for m in it.product_each(inner.shape)]
    for s in it.flatten(inner.shape):
        log2(s, "shape")
    n = sum(bits)
    if n > MAX_BITS:
        raise LayoutError(f"layout: {n} coordinate bits is over the cap of {MAX_BITS}")
    cols = [int(layout(1 << j)) for j in range(n)]
    _check_linear(offsets(layout), cols, f"{layout}")
    out_bits = max(cols, default=0).bit_length()
    forward = LinearLayout([(f"dim{i}", [[cols[sum(bits[:i]) + k]] for k in range(b)]) for i, b in enumerate(bits)],
                           [("offset", 1 << out_bits)])
    result: dict[str, Any] = {"forward": forward.to_json(), "matrix": forward.matrix(), "offset": None,
                              "offset_why": None}
    inv = forward.invert() if out_bits == n else None  # offset -> coordinate bits (dim0 lowest)
    if inv is not None:
        result["offset"] = inv.to_json()
    else:
        result["offset_why"] = (f"the offsets are not a bijection onto [0, {1 << n}) (the map has rank "
                                f"{f2_rank(cols)} on {out_bits} offset bits), so no offset -> coordinate form exists")
    return result


def from_tv(tv: Any, tile: tuple[int, ...], threads_per_warp: int = 32) -> LinearLayout:
    """A CuTe TV layout ((thread), (value)) -> column-major index in ``tile`` (e.g. (M, K)) as a distributed linear
    layout: register = value bits, lane = thread bits below log2(threads_per_warp), warp = the rest."""
    t_size, v_size = it.product(tv.shape[0]), it.product(tv.shape[1])
    tb, vb = log2(t_size, "threads"), log2(v_size, "values")
    for s in tile:
        log2(s, "tile")
    outs = [(f"dim{i}", s) for i, s in enumerate(tile)]
    split = LinearLayout.raw({}, outs).unpack  # column-major index in the tile -> coordinate
    cols_t = [int(tv((1 << j, 0))) for j in range(tb)]
    cols_v = [int(tv((0, 1 << j))) for j in range(vb)]
    _check_linear(offsets(tv), cols_t + cols_v, f"TV layout {tv}")  # tv's 1-D index x is (x mod T, x div T)
    lw = log2(threads_per_warp, "threads_per_warp")
    return LinearLayout([("register", [split(c) for c in cols_v]), ("lane", [split(c) for c in cols_t[:lw]]),
                         ("warp", [split(c) for c in cols_t[lw:]]), ("block", [])], outs)


# --------------------------------------------------------------------------- linear -> CuTe


def _disjoint(cols: list[int]) -> tuple[int, int] | None:
    """None when the nonzero columns have pairwise disjoint bits, else the first clashing pair of indices."""
    seen = 0
    for j, c in enumerate(cols):
        if c & seen:
            k = next(i for i in range(j) if cols[i] & c)
            return k, j
        seen |= c
    return None


def _layout_from(cols: list[int], groups: list[int]) -> Any:
    shape, stride, k = [], [], 0
    for g in groups:
        shape.append(tuple([2] * g) if g else 1)
        stride.append(tuple(cols[k:k + g]) if g else 0)
        k += g
    lay = Layout(tuple(shape), tuple(stride)) if len(groups) > 1 else Layout(shape[0], stride[0])
    return coalesce(lay, tuple([1] * len(groups))) if len(groups) > 1 else coalesce(lay)


def swizzles(n: int) -> list[tuple[int, int, int]]:
    """Every distinct Sw<B,M,S> (B >= 1, S >= B, M + S + B <= n) on n bits, as (B, M, S), M then S then B rising."""
    return [(b, m, s) for m in range(n) for s in range(1, n - m) for b in range(1, min(s, n - m - s) + 1)]


def to_cute(ll: LinearLayout) -> dict[str, Any]:
    """The CuTe layout of a linear layout, or why there is none: ``{"cute", "kind", "why"}``.

    ``offset`` in-dim: inverted to coordinate -> offset (it must be a bijection). register/lane/warp/block: a TV
    layout ((lane, warp, block), register) -> column-major index in the out-dims' tile. dimK in-dims: the forward
    map itself. Post: the returned layout, evaluated on every input, equals the linear layout."""
    names = list(ll.bases)
    cols = ll.columns()
    if names == ["offset"]:
        n = sum(ll.out_bits)
        inv = inverse_columns(cols) if len(cols) == n else None
        if inv is None:
            return {"cute": None, "kind": "offset", "why": f"offset -> coordinate must be a bijection between "
                    f"{len(cols)} offset bits and {n} coordinate bits (rank {f2_rank(cols)}); CuTe needs "
                    "coordinate -> offset"}
        cols, groups, kind = inv, ll.out_bits, "offset"
    elif all(n in DISTRIBUTED for n in names):
        thr = [ll.pack(v) for n in ("lane", "warp", "block") for v in ll.bases.get(n, [])]
        reg = [ll.pack(v) for v in ll.bases.get("register", [])]
        cols, groups, kind = thr + reg, [len(thr), len(reg)], "tv"
    else:
        groups, kind = [len(b) for b in ll.bases.values()], "forward"
    clash = _disjoint(cols)
    if clash is None:
        return {"cute": str(_layout_from(cols, groups)), "kind": kind, "why": None}
    for sw in (Swizzle(*bms) for bms in swizzles(max(max(cols, default=0).bit_length(), 1))) if kind != "tv" else ():
        sc = [sw(c) for c in cols]
        if _disjoint(sc) is None:
            return {"cute": str(ComposedLayout(sw, 0, _layout_from(sc, groups))), "kind": kind, "why": None}
    i, j = clash
    return {"cute": None, "kind": kind,
            "why": f"input bits {i} and {j} map to {cols[i]} and {cols[j]}, which share bit(s) "
                   f"{bin(cols[i] & cols[j])}: a CuTe layout adds its strides with carries, so it equals an XOR map "
                   "only when the images of different bits are disjoint, and no Sw<B,M,S> composed on the outside "
                   "makes them so" + (" (TV layouts carry no swizzle)" if kind == "tv" else "")}


def describe_swizzle(sw: Any) -> dict[str, Any]:
    """The F2 view of ``Sw<B,M,S>`` as data for a page: its matrix on ``M + B + |S|`` bits (the core's
    ``as_f2_layout``; rows = output bits, bit 0 on top), masks, rank, whether it is its own inverse (the core's
    composition of it with itself is the identity), and a sentence."""
    f = as_f2_layout(sw)
    cols = f2_columns(f.shape, f.stride)
    n = len(cols)
    twice = composition(f, f) if n else f
    inv = f2_columns(twice.shape, twice.stride) == [1 << j for j in range(n)]
    src = [b for b in range(n) if (sw.yyy_mask >> b) & 1]
    dst = [b for b in range(n) if (sw.zzz_mask >> b) & 1]
    text = (f"{sw} XORs bits {src} into bits {dst}; over F2 it is the identity plus those {len(src)} entries. "
            + ("Source and target bits do not overlap (|S| >= B), so the source bits pass through unchanged and "
               "applying it twice gives back every offset: it is its own inverse." if inv else
               "It is not its own inverse."))
    return {"matrix": [" ".join("1" if (c >> i) & 1 else "0" for c in cols) for i in range(n)],
            "yyy_mask": sw.yyy_mask, "zzz_mask": sw.zzz_mask, "nbits": n, "rank": f2_rank(cols), "involution": inv,
            "text": text}
