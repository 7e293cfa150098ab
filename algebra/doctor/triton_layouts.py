"""TTGIR layout attributes as Triton's LinearLayouts for a tensor shape, built the way Triton builds them
(``toLinearLayout`` in ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``), for NVIDIA targets (32 lanes):

* distributed (in-dims register, lane, warp, block -> dim0, dim1, ...): ``blocked``, ``nvidia_mma`` versions 2
  (Ampere mma.sync) and 3 (Hopper wgmma), ``dot_op`` of an MMA (or of a blocked layout, the FMA path), ``slice``,
  ``linear`` and ``generic_linear`` (Triton 3.9 prints a linear layout whose warp bases XOR several dimensions as
  ``generic_linear``; its register, lane and block bases move in one dimension each);
* shared (in-dims offset, block -> dims): ``swizzled_shared`` (and the older ``shared``), ``nvmma_shared``,
  ``padded_shared`` (its linear part; the paddings are applied to the offset afterwards) and ``shared_linear``.

``convert(text_or_attr, shape, element_bits)`` -> ``TritonLayout``. Bad parameters raise ``TTGIRError`` naming the
field (``blocked.threadsPerWarp: ...``). Post-condition: the layout's out-dim sizes equal ``shape``; Triton's own
``to_linear_layout`` gives the same bases (``tests/test_triton_oracle.py``).

``cute_of(layout) -> {"cute", "kind", "why", "swizzle"}``: the layout as CuTe sees it, or why no CuTe layout equals
it. Distributed: the TV layout ``((lane, warp, block), register) -> column-major index in the tensor`` (CuTe's TV
convention, as the atoms' A/B/C), when its bases move disjoint bits (``linear_layout.to_cute``); shared: coordinate
-> element offset, ``(R,C):(...)`` or ``Sw<B,M,S> o (R,C):(...)``. Post: ``cute`` (when not null), evaluated at
every coordinate, gives the layout's offset (shared) or index (distributed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any

from algebra.core.errors import LayoutError
from algebra.doctor import ttgir
from algebra.doctor.linear_layout import MAX_BITS, LinearLayout, _layout_from, inverse_columns, to_cute
from algebra.doctor.triton_attrs import (
    TLL,
    _bases,
    _cga,
    _combine,
    _fail,
    _get,
    _int,
    _order,
    _pow2s,
    dims,
    empty,
    ensure_not_larger,
    ensure_not_smaller,
    identity1d,
    identity_nd,
    matrix_order,
    zeros1d,
)
from algebra.doctor.triton_shared import padded, shared_layout
from algebra.doctor.ttgir import Attr, TTGIRError

DISTRIBUTED = ("blocked", "nvidia_mma", "dot_op", "slice", "linear", "generic_linear")
SHARED = ("swizzled_shared", "nvmma_shared", "padded_shared", "shared_linear", "shared")
MAX_ELEMENTS = 1 << 18
WARP = 32


@dataclass
class TritonLayout:
    """One attribute for one shape. ``ll``: distributed in-dims register/lane/warp/block, shared offset/block;
    ``paddings``: padded_shared's [interval, padding] pairs (offset o is stored at o + sum((o // i) * p))."""

    attr: Attr
    shape: list[int]
    ll: TLL
    paddings: list[list[int]] = field(default_factory=list)
    _linear: LinearLayout | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return "swizzled_shared" if self.attr.name == "shared" else self.attr.name

    @property
    def shared(self) -> bool:
        return self.attr.name in SHARED

    @property
    def text(self) -> str:
        return ttgir.format_attr(self.attr)

    def linear(self) -> LinearLayout:
        """``ll`` as the public LinearLayout (checked once, then kept: its core Layout is built once per request)."""
        if self._linear is None:
            ins = ("offset", "block") if self.shared else ("register", "lane", "warp", "block")
            self._linear = self.ll.to_linear(ins, dims(len(self.shape)))
        return self._linear

    def bases(self) -> dict[str, list[list[int]]]:
        return self.linear().to_json()["bases"]


def _blocked(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    spt, tpw, wpc = (_pow2s(a, k, rank) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"))
    order = _order(a, rank)
    if prod(tpw) != WARP:
        raise _fail(a.name, "threadsPerWarp", f"the product is {prod(tpw)}, not {WARP} (one NVIDIA warp)")
    cta = identity_nd("register", spt, order) * identity_nd("lane", tpw, order) * identity_nd("warp", wpc, order)
    return _combine(cta, _cga(a, rank), shape, a.name)


def _mma_cta(tile: list[int], kwidth: int, row_major: bool, wpc: list[int], major: int, owner: str,
             kdim: int | None = None) -> TLL:
    """Triton's nvidiaMmaTile (kWidth registers, 4 lanes (inner), 8 lanes (outer), then register repeats), with the
    warps of ``warpsPerCTA`` outside (along K, dimension ``kdim``, they broadcast)."""
    rank = len(tile)
    names = dims(rank)
    order = matrix_order(rank, row_major)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (kwidth * 4):
        raise TTGIRError(f"{owner}: an instruction tile of {tile} does not hold 8 x {kwidth * 4} elements")
    ll = identity_nd("register", [1] * rank, order)
    cta = (ll * identity1d(kwidth, "register", names[inner]) * identity1d(4, "lane", names[inner])
           * identity1d(8, "lane", names[outer]) * identity1d(m // 8, "register", names[outer])
           * identity1d(n // (kwidth * 4), "register", names[inner]))
    return cta * identity_nd("warp", wpc, matrix_order(rank, major != 3), kdim).transpose_outs(list(cta.outs))


def _mma_params(a: Attr, rank: int) -> tuple[int, list[int], list[int]]:
    major = _int(a, "versionMajor", (2, 3))
    _int(a, "versionMinor", default=0)
    if rank not in (2, 3) or (major == 3 and rank != 2):
        raise TTGIRError(f"nvidia_mma: version {major} takes a rank-{'2' if major == 3 else '2 or 3'} tensor, "
                         f"not rank {rank}")
    wpc = _pow2s(a, "warpsPerCTA", rank)
    instr = _get(a, "instrShape")
    want = rank if major == 2 else 3
    if not isinstance(instr, list) or len(instr) != want or not all(isinstance(x, int) for x in instr):
        raise _fail(a.name, "instrShape", f"expected {want} integers, got {ttgir.value_text(instr)}")
    if major == 3 and (instr[0] != 16 or instr[1] % 8 or not 8 <= instr[1] <= 256):
        raise _fail(a.name, "instrShape", f"{ttgir.value_text(instr)}: wgmma (version 3) is [16, N, K] with N a "
                                          "multiple of 8 up to 256")
    return major, wpc, (list(instr) if major == 2 else instr[:2])


def _mma(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    major, wpc, tile = _mma_params(a, rank)
    # checked here, not for a parent: its dot operands are read (they do not depend on the tile)
    if major == 2 and any(x < 8 or x & (x - 1) for x in tile[-2:]):
        raise _fail(a.name, "instrShape", f"{ttgir.value_text(tile)}: the tile [M, N] of version 2 (mma.sync: "
                                          "[16, 8]) must be powers of two, at least 8 (Triton's conversion)")
    if tile[-1] & (tile[-1] - 1):
        raise _fail(a.name, "instrShape", f"N = {tile[-1]} is not a power of two (Triton's conversion needs one)")
    return _combine(_mma_cta(tile, 2, True, wpc, major, a.name), _cga(a, rank), shape, a.name)


def _dot(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    op = _int(a, "opIdx", (0, 1))
    parent = _get(a, "parent")
    if not isinstance(parent, Attr) or parent.name not in ("nvidia_mma", "blocked"):
        raise _fail(a.name, "parent", "expected #ttg.nvidia_mma<...> or #ttg.blocked<...> (or an alias of one)")
    kdim = rank - 1 if op == 0 else rank - 2
    cga = _cga(parent, rank)  # the parent's CTAs broadcast along K: each CTA holds the whole K extent
    cga = TLL.raw({"block": [[0 if i == kdim else x for i, x in enumerate(v)] for v in cga.bases["block"]]},
                  {n: 1 if i == kdim else cga.outs[n] for i, n in enumerate(dims(rank))})
    if parent.name == "blocked":
        spt, tpw, wpc = (_pow2s(parent, k, rank) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"))
        order = _order(parent, rank)
        spt[kdim] = shape[kdim]
        cta = (identity_nd("register", spt, order) * identity_nd("lane", tpw, order, kdim)
               * identity_nd("warp", wpc, order, kdim))
        return _combine(cta, cga, shape, a.name)
    major, wpc, _ = _mma_params(parent, rank)
    kwidth = _int(a, "kWidth", pow2=True)
    if major == 3 and op == 1:
        raise _fail(a.name, "opIdx", "wgmma (version 3) reads operand B from shared memory: only opIdx = 0 has a "
                                     "register layout")
    tile = [1] * rank
    tile[-2:] = [16, kwidth * 8] if op == 0 else [kwidth * 8, 8]
    return _combine(_mma_cta(tile, kwidth, op == 0, wpc, major, a.name, kdim), cga, shape, a.name)


def _slice(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    d = _int(a, "dim", tuple(range(rank + 1)))
    parent = _get(a, "parent")
    if not isinstance(parent, Attr) or parent.name not in DISTRIBUTED:
        raise _fail(a.name, "parent", "expected a distributed layout (#ttg.blocked<...>, an alias of one, ...)")
    pshape = shape[:d] + [1] + shape[d:]
    p = _distributed(parent, pshape)
    new = dims(rank)
    transform = empty()
    for name in p.outs:
        idx = int(name[3:])
        if idx == d:
            transform = transform * zeros1d(p.outs[name], name, new[0] if new else "dim0")
        else:
            transform = transform * identity1d(p.outs[name], name, new[idx - (idx > d)])
    s = p.compose(transform)
    s = TLL.raw({**s.bases, "register": [v for v in s.bases["register"] if any(v)]}, s.outs)
    return s.transpose_outs(new)


def _linear(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    names = dims(rank)
    bases = {k: _bases(a, k, rank, []) for k in ("register", "lane", "warp", "block")}
    if a.name == "generic_linear":
        for k in ("register", "lane", "block"):
            for v in bases[k]:
                if sum(1 for x in v if x) > 1:
                    raise _fail(a.name, k, f"basis {ttgir.value_text(v)} moves in {sum(1 for x in v if x)} "
                                           "dimensions; only warp bases may be swizzled")
    if len(bases["lane"]) != 5:
        raise _fail(a.name, "lane", f"{len(bases['lane'])} bases: an NVIDIA warp has 32 lanes (5 bases)")
    ll = TLL.inferred(bases, names)
    reach = ll.to_linear(("register", "lane", "warp", "block"), names).rank()
    nbits = sum(ll.out_bits)
    if reach != nbits:
        raise TTGIRError(f"{a.name}: the bases reach {reach} of the {nbits} coordinate bits of "
                         f"{list(ll.outs.values())}: Triton requires every element to be held (surjective)")
    # the dimensions in the order the register bases first move in, then the rest from the last one
    order = list(dict.fromkeys(next(i for i, x in enumerate(v) if x) for v in bases["register"] if any(v)))
    order += [i for i in range(rank - 1, -1, -1) if i not in order]
    ll = ll.transpose_outs([names[i] for i in order])
    want = dict(zip(names, shape, strict=True))
    ll = ensure_not_larger(ensure_not_smaller(ll, want, "register"), want, broadcast_registers=False)
    return ll.transpose_outs(names)


def _distributed(a: Attr, shape: list[int]) -> TLL:
    make = {"blocked": _blocked, "nvidia_mma": _mma, "dot_op": _dot, "slice": _slice, "linear": _linear,
            "generic_linear": _linear}[a.name]
    return make(a, shape)


def convert(layout: str | Attr, shape: Any, element_bits: int | None = None) -> TritonLayout:
    """The attribute's LinearLayout for ``shape`` (see the module docstring)."""
    a = ttgir.parse(layout) if isinstance(layout, str) else layout
    shp = check_shape(shape)
    if a.name.startswith("amd"):
        raise TTGIRError(f"{a.name}: AMD layouts are not read (LayoutLab models NVIDIA's shared-memory banks)")
    if a.name in SHARED:
        ll, pads = shared_layout(a, shp, element_bits)
        return TritonLayout(a, shp, _fits(a, ll), pads)
    return TritonLayout(a, shp, _fits(a, _distributed(a, shp)))


_SETS = {"register": "sizePerThread, kWidth or the register bases", "lane": "threadsPerWarp or the lane bases",
         "warp": "warpsPerCTA or the warp bases", "block": "the CTAs (CGALayout, CTAsPerCGA)",
         "offset": "the shape"}


def _fits(a: Attr, ll: TLL) -> TLL:
    """``ll`` when its input bits fit a LinearLayout (MAX_BITS); TTGIRError naming what set the most of them."""
    n = {k: len(v) for k, v in ll.bases.items()}
    if sum(n.values()) > MAX_BITS:
        big = max(n, key=lambda k: n[k])
        raise TTGIRError(f"{a.name}: {', '.join(f'{v} {k}' for k, v in n.items())} bits is over the cap of "
                         f"{MAX_BITS} input bits (2^{n[big]} {big}s: {_SETS.get(big, big)})")
    return ll


def check_shape(shape: Any) -> list[int]:
    """A tensor shape: 1 to 3 powers of two, at most MAX_ELEMENTS elements. LayoutError names ``shape``."""
    if not isinstance(shape, list | tuple) or not 1 <= len(shape) <= 3:
        raise LayoutError("shape: expected a list of 1 to 3 sizes, e.g. [64, 64]")
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool) or s < 1 or s & (s - 1):
            raise LayoutError(f"shape: {s!r} is not a power of two (Triton's tensors have power-of-two sizes)")
    if prod(shape) > MAX_ELEMENTS:
        raise LayoutError(f"shape: {prod(shape):,} elements is over the cap of {MAX_ELEMENTS:,}")
    return list(shape)


def _padded_cute(t: TritonLayout) -> dict[str, Any]:
    """A padded_shared layout whose linear part moves whole bits is one integer layout: its paddings add to each
    coordinate bit's stride (an offset o = sum of distinct powers of two has o // i = sum of (2^k // i), so padding
    is additive over the bits)."""
    ll = t.ll.to_linear(("offset",), dims(len(t.shape)))
    cols = ll.columns()
    inv = inverse_columns(cols) if len(cols) == sum(ll.out_bits) else None  # coordinate bit -> linear offset
    if inv is None:
        return {"cute": None, "kind": "offset", "why": "the linear part is not a bijection onto the tensor"}
    if any(c & (c - 1) for c in inv):
        return {"cute": None, "kind": "offset",
                "why": "the linear part XORs offset bits (a swizzle) under the paddings: CuTe has no layout "
                       "that pads after a swizzle (pad o Sw o L), so no CuTe text is exact"}
    return {"cute": str(_layout_from([padded(c, t.paddings) for c in inv], ll.out_bits)), "kind": "offset",
            "why": None}


def cute_of(t: TritonLayout) -> dict[str, Any]:
    """The CuTe text of a Triton layout (see the module docstring), and its swizzle when it has one."""
    if t.paddings:
        out = _padded_cute(t)
    elif t.shared:
        if any(any(v) for v in t.ll.bases.get("block", [])):
            return {"cute": None, "kind": "offset", "why": "a layout over several CTAs (CGALayout) is not one CuTe "
                    "layout of one shared buffer", "swizzle": None}
        out = to_cute(t.ll.to_linear(("offset",), dims(len(t.shape))))
    else:
        out = to_cute(t.linear())
    text = out.get("cute")
    sw = [int(x) for x in text[3:text.index(">")].split(",")] if text and text.startswith("Sw<") else None
    return {"cute": text, "kind": out.get("kind"), "why": out.get("why"), "swizzle": sw}
