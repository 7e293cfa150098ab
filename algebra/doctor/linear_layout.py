"""Triton's linear layouts (F2-linear maps between named bit spaces) beside CuTe layouts.

A ``LinearLayout`` follows Triton's ``LinearLayout`` (``lib/Tools/LinearLayout.cpp``): named in-dims, each with a
list of bases (``bases[in_dim][i]`` is the image of ``1 << i``, one integer per out-dim), and named out-dims with
power-of-two sizes; the value at an input is the XOR of the bases of its set bits. The JSON form is
``{"bases": {"register": [[0, 1], ...], "lane": [...], "warp": [...], "block": [...]}, "out_dims": {"dim0": 16,
"dim1": 8}}``; ``gluon()`` gives Gluon's ``DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases,
shape)`` arguments. Shared-memory layouts use the in-dim ``offset`` (offset -> tensor coordinate, as Triton's shared
encodings do).

A CuTe layout is an integer-linear map (strides add with carries); it equals an F2-linear map exactly when the
strides of its bit-modes have pairwise disjoint bits. So a linear layout is a CuTe layout iff its columns are
disjoint, and a swizzled CuTe layout ``Sw<B,M,S> o L`` iff some swizzle makes them disjoint (a swizzle is an
involution, so ``L = Sw o f``).
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError

MAX_BITS = 20
DISTRIBUTED = ("register", "lane", "warp", "block")


def _log2(n: int, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1):
        raise LayoutError(f"{what}: {n!r} is not a power of two")
    return n.bit_length() - 1


class LinearLayout:
    """Named in-dims with bases, named out-dims with sizes. Post: ``self(**{in: value})`` is the XOR of the bases of
    the set bits, one integer per out-dim; ``from_json(ll.to_json()) == ll``."""

    def __init__(self, bases: list[tuple[str, list[list[int]]]], out_dims: list[tuple[str, int]]) -> None:
        if not out_dims:
            raise LayoutError("out_dims: at least one out-dim is needed")
        for name, size in out_dims:
            _log2(size, f"out_dims.{name}")
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
        self.bases = [(n, [list(v) for v in b]) for n, b in bases]
        self.out_dims = list(out_dims)

    # ------------------------------------------------------------------ as data
    def to_json(self) -> dict[str, Any]:
        return {"bases": {n: [list(v) for v in b] for n, b in self.bases}, "out_dims": dict(self.out_dims)}

    @staticmethod
    def from_json(obj: Any) -> LinearLayout:
        """From ``{"bases": {...}, "out_dims": {...}}`` or Gluon's ``{"reg_bases", ..., "shape"}``."""
        if not isinstance(obj, dict):
            raise LayoutError("linear layout: expected a JSON object with bases and out_dims")
        if "reg_bases" in obj or "shape" in obj:
            shape = obj.get("shape")
            if not isinstance(shape, list) or not shape:
                raise LayoutError("shape: a list of out-dim sizes")
            bases = [(n, obj.get(k) or []) for n, k in zip(DISTRIBUTED, ("reg_bases", "lane_bases", "warp_bases",
                                                                         "block_bases"), strict=True)]
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
        names = [n for n, _ in self.bases]
        if any(n not in DISTRIBUTED for n in names):
            return None
        get = dict(self.bases)
        return {"reg_bases": get.get("register", []), "lane_bases": get.get("lane", []),
                "warp_bases": get.get("warp", []), "block_bases": get.get("block", []),
                "shape": [s for _, s in self.out_dims]}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LinearLayout) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"LinearLayout({self.to_json()})"

    # ------------------------------------------------------------------ as a map
    @property
    def out_bits(self) -> list[int]:
        return [_log2(s, n) for n, s in self.out_dims]

    def columns(self) -> list[int]:
        """Each input bit's image packed into one integer (out-dims concatenated, the first lowest)."""
        shifts, acc = [], 0
        for b in self.out_bits:
            shifts.append(acc)
            acc += b
        return [sum(x << s for x, s in zip(v, shifts, strict=True)) for _, bs in self.bases for v in bs]

    def __call__(self, **ins: int) -> tuple[int, ...]:
        out = [0] * len(self.out_dims)
        for name, bs in self.bases:
            x = ins.get(name, 0)
            for i, v in enumerate(bs):
                if (x >> i) & 1:
                    out = [a ^ b for a, b in zip(out, v, strict=True)]
        return tuple(out)

    def matrix(self) -> list[str]:
        """Triton's ``getMatrix``: one row per out bit (out-dims in order), one column per in bit, as 0/1 text."""
        cols = self.columns()
        n = sum(self.out_bits)
        return ["".join("1" if (c >> r) & 1 else "0" for c in cols) for r in range(n)]


# --------------------------------------------------------------------------- CuTe -> linear


def _flat_bits(shape: Any) -> list[int]:
    out = []
    for s in it.flatten(shape):
        out.append(_log2(s, "shape"))
    return out


def _check_linear(values: list[int], cols: list[int], what: str) -> None:
    """Post-condition: ``values[x]`` is the XOR of ``cols[j]`` over the set bits j of x, for every x < 2^len(cols)
    (``values`` lists the map at x = 0, 1, ...); otherwise LayoutError names the first x where it is not. The XOR
    images are built by doubling (x with its top bit set = x without it, XOR that bit's column): one list operation
    per bit, not one evaluation per point."""
    want = [0]
    for c in cols:
        want += [w ^ c for w in want]
    if values == want:
        return
    x = next(i for i, (got, w) in enumerate(zip(values, want, strict=True)) if got != w)
    raise LayoutError(f"{what} is not F2-linear: it maps {x} to {values[x]}, but the XOR of its bit images is "
                      f"{want[x]} (strides whose bits overlap add with carries)")


def from_cute(layout: Any) -> dict[str, Any]:
    """A layout with power-of-two shapes (a Swizzle composed on it counts) as F2 data: the forward map (in-dims
    dim0, dim1, ... -> out-dim ``offset``), and, when it is a bijection onto [0, 2^n), Triton's shared form
    (in-dim ``offset`` -> dim0, dim1, ...). LayoutError names the condition when the map is not F2-linear."""
    from algebra.core.layout import Layout, offsets

    inner = getattr(layout, "layout_b", layout)
    if not isinstance(inner, Layout):
        raise LayoutError("layout: expected a Layout or Sw<B,M,S> o Layout")
    if not all(isinstance(d, int) for d in it.flatten(inner.stride)):
        raise LayoutError("layout: strides must be integers (an identity or basis-stride layout maps to coordinates, "
                          "not offsets)")
    shp = inner.shape
    modes = list(shp) if it.is_tuple(shp) else [shp]
    sizes = [it.product(m) for m in modes]
    bits = [_log2(s, "shape") for s in sizes]
    _flat_bits(shp)
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
    from algebra.doctor import f2

    if out_bits == n and f2.rank(cols) == n:
        inv = f2.inverse(cols)  # column k: the coordinate bits of offset 1 << k (1-D index, dim0 lowest)
        out_dims = [(f"dim{i}", s) for i, s in enumerate(sizes)]
        bases = []
        for c in inv:
            v, sh = [], 0
            for b in bits:
                v.append((c >> sh) & ((1 << b) - 1))
                sh += b
            bases.append(v)
        result["offset"] = LinearLayout([("offset", bases)], out_dims).to_json()
    else:
        result["offset_why"] = (f"the offsets are not a bijection onto [0, {1 << n}) (the map has rank "
                                f"{f2.rank(cols)} on {out_bits} offset bits), so no offset -> coordinate form exists")
    return result


def from_tv(tv: Any, tile: tuple[int, ...], threads_per_warp: int = 32) -> LinearLayout:
    """A CuTe TV layout ((thread), (value)) -> column-major index in ``tile`` (e.g. (M, K)) as a distributed linear
    layout: register = value bits, lane = thread bits below log2(threads_per_warp), warp = the rest."""
    from algebra.core.layout import offsets

    t_size, v_size = it.product(tv.shape[0]), it.product(tv.shape[1])
    tb, vb = _log2(t_size, "threads"), _log2(v_size, "values")
    outs = [_log2(s, "tile") for s in tile]
    shifts = [sum(outs[:i]) for i in range(len(outs))]

    def split(idx: int) -> list[int]:
        return [(idx >> s) & ((1 << b) - 1) for s, b in zip(shifts, outs, strict=True)]

    cols_t = [int(tv((1 << j, 0))) for j in range(tb)]
    cols_v = [int(tv((0, 1 << j))) for j in range(vb)]
    cols = cols_t + cols_v
    _check_linear(offsets(tv), cols, f"TV layout {tv}")  # tv's 1-D index x is (x mod T, x div T)
    lw = _log2(threads_per_warp, "threads_per_warp")
    return LinearLayout([("register", [split(c) for c in cols_v]), ("lane", [split(c) for c in cols_t[:lw]]),
                         ("warp", [split(c) for c in cols_t[lw:]]), ("block", [])],
                        [(f"dim{i}", s) for i, s in enumerate(tile)])


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
    from algebra.core.layout import Layout
    from algebra.core.ops import coalesce

    shape, stride, k = [], [], 0
    for g in groups:
        shape.append(tuple([2] * g) if g else 1)
        stride.append(tuple(cols[k:k + g]) if g else 0)
        k += g
    lay = Layout(tuple(shape), tuple(stride)) if len(groups) > 1 else Layout(shape[0], stride[0])
    return coalesce(lay, tuple([1] * len(groups))) if len(groups) > 1 else coalesce(lay)


def to_cute(ll: LinearLayout) -> dict[str, Any]:
    """The CuTe layout of a linear layout, or why there is none: ``{"cute", "kind", "why"}``.

    ``offset`` in-dim: inverted to coordinate -> offset (it must be a bijection). register/lane/warp/block: a TV
    layout ((lane, warp, block), register) -> column-major index in the out-dims' tile. dimK in-dims: the forward
    map itself. Post: the returned layout, evaluated on every input, equals the linear layout."""
    from algebra.core.swizzle import ComposedLayout, Swizzle
    from algebra.doctor import f2

    names = [n for n, _ in ll.bases]
    out_bits = ll.out_bits
    cols = ll.columns()
    if names == ["offset"]:
        n = sum(out_bits)
        if len(cols) != n or f2.rank(cols) != n:
            return {"cute": None, "kind": "offset", "why": f"offset -> coordinate must be a bijection between "
                    f"{len(cols)} offset bits and {n} coordinate bits (rank {f2.rank(cols)}); CuTe needs "
                    "coordinate -> offset"}
        cols = f2.inverse(cols)
        groups, kind = out_bits, "offset"
    elif all(n in DISTRIBUTED for n in names):
        get = dict(ll.bases)
        order = ["lane", "warp", "block", "register"]
        packed = {name: [c for c in _pack(get.get(name, []), out_bits)] for name in order}
        cols = packed["lane"] + packed["warp"] + packed["block"] + packed["register"]
        groups = [len(packed["lane"]) + len(packed["warp"]) + len(packed["block"]), len(packed["register"])]
        kind = "tv"
    else:
        groups, kind = [len(b) for _, b in ll.bases], "forward"
    clash = _disjoint(cols)
    if clash is None:
        return {"cute": str(_layout_from(cols, groups)), "kind": kind, "why": None}
    nb = max(max(cols, default=0).bit_length(), 1)
    for m in range(nb):
        for s in range(1, nb - m):
            for b in range(1, min(s, nb - m - s) + 1):
                sw = Swizzle(b, m, s)
                sc = [sw(c) for c in cols]
                if _disjoint(sc) is None and kind != "tv":
                    return {"cute": str(ComposedLayout(sw, 0, _layout_from(sc, groups))), "kind": kind, "why": None}
    i, j = clash
    return {"cute": None, "kind": kind,
            "why": f"input bits {i} and {j} map to {cols[i]} and {cols[j]}, which share bit(s) "
                   f"{bin(cols[i] & cols[j])}: a CuTe layout adds its strides with carries, so it equals an XOR map "
                   "only when the images of different bits are disjoint, and no Sw<B,M,S> composed on the outside "
                   "makes them so" + (" (TV layouts carry no swizzle)" if kind == "tv" else "")}


def _pack(bases: list[list[int]], out_bits: list[int]) -> list[int]:
    shifts = [sum(out_bits[:i]) for i in range(len(out_bits))]
    return [sum(x << s for x, s in zip(v, shifts, strict=True)) for v in bases]
