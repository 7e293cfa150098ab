"""Triton's shared-memory encodings as LinearLayouts (in-dim offset -> tensor coordinate), for NVIDIA:

* ``swizzled_shared<{vec, perPhase, maxPhase, order}>``: row r's vectors of ``vec`` elements XOR-ed with
  ``(r / perPhase) % maxPhase`` (Triton's swizzledSharedToLinearLayout); the older ``shared<{..., hasLeadingOffset}>``
  the same, or with a leading offset the 8-row core matrices of the tensor-core layouts;
* ``nvmma_shared<{swizzlingByteWidth, transposed, elementBitWidth}>``: the TMA / wgmma layout, 8-row core matrices of
  ``swizzlingByteWidth`` bytes in boxes of at most 256 rows (nvmmaSharedToLinearLayout); rank 2;
* ``padded_shared<[interval:+pad, ...] {order, shape}>`` or ``{offset = [...], block = [...]}``: the linear part
  (each basis one power of two in one dimension, as Triton verifies), with the paddings returned beside it;
* ``shared_linear<{offset, block}, alignment = N>``: the bases as given.

``shared_layout(attr, shape, element_bits) -> (TLL, paddings)``; TTGIRError names the field on bad input.
"""

from __future__ import annotations

from math import prod

from algebra.doctor import ttgir
from algebra.doctor.linear_layout import span
from algebra.doctor.triton_attrs import (
    TLL,
    _bases,
    _cga,
    _combine,
    _fail,
    _int,
    _order,
    _pow2s,
    dims,
    ensure_not_smaller,
    identity1d,
    identity_nd,
)
from algebra.doctor.ttgir import Attr, TTGIRError


def _swizzle(nrows: int, ncols: int, vec: int, per: int, maxp: int, row: str, col: str, wrap: bool = False) -> TLL:
    """Offset -> (row, col): the columns first, then row r's vectors of ``vec`` XOR-ed with ``(r / per) % maxp``
    (modulo the columns with ``wrap``, as Triton's swizzledSharedToLinearLayout takes it)."""
    bases = [[0, 1 << i] for i in range(ncols.bit_length() - 1)]
    for i in range(nrows.bit_length() - 1):
        x = vec * (((1 << i) // per) % maxp)
        bases.append([1 << i, x % ncols if wrap else x])
    return TLL.raw({"offset": bases}, {row: nrows, col: ncols})


def _swizzled(a: Attr, shape: list[int]) -> TLL:
    rank = len(shape)
    vec, per, maxp = (_int(a, k, pow2=True) for k in ("vec", "perPhase", "maxPhase"))
    order = _order(a, rank)
    cga = _cga(a, rank)
    names = dims(rank)
    per_cta = [max(1, s // cga.outs[n]) for n, s in zip(names, shape, strict=True)]
    if rank == 1:
        return _combine(identity1d(per_cta[0], "offset", "dim0"), cga, shape, a.name)
    col, row = order[0], order[1]
    if a.name == "shared" and a.fields.get("hasLeadingOffset") is True:
        ll, sizes = _leading_offset(a, shape, vec, per, maxp, order), shape
    else:
        ll, sizes = _swizzle(per_cta[row], per_cta[col], vec, per, maxp, names[row], names[col], wrap=True), per_cta
    for d in order[2:]:
        ll = ll * identity1d(sizes[d], "offset", names[d])
    return _combine(ll, cga, shape, a.name)


def _leading_offset(a: Attr, shape: list[int], vec: int, per: int, maxp: int, order: list[int]) -> TLL:
    """One 8-row core tile of the tensor-core layouts: offset -> (row, col), ``order``'s two innermost dims."""
    widths = {(4, 2): 32, (2, 4): 64, (1, 8): 128}
    if (per, maxp) not in widths:
        raise _fail(a.name, "perPhase", "with hasLeadingOffset, (perPhase, maxPhase) is (4, 2), (2, 4) or (1, 8)")
    bits = a.fields.get("_element_bits")
    if bits is None:
        raise TTGIRError("element_bits: a shared layout with hasLeadingOffset needs the element size")
    names = dims(len(shape))
    col, row = order[0], order[1]
    tile_cols = 8 * widths[(per, maxp)] // bits
    if shape[col] < tile_cols or shape[row] < 8:
        raise TTGIRError(f"{a.name}: the shape {shape} is smaller than one 8 x {tile_cols} core tile")
    return _swizzle(8, tile_cols, vec, per, maxp, names[row], names[col])


def _nvmma(a: Attr, shape: list[int], element_bits: int | None) -> TLL:
    width = _int(a, "swizzlingByteWidth", (0, 32, 64, 128))
    ebits = _int(a, "elementBitWidth", (8, 16, 32, 64))
    transposed = a.fields.get("transposed", False)
    if not isinstance(transposed, bool):
        raise _fail(a.name, "transposed", "expected true or false")
    if a.fields.get("fp4Padded", False) is not False:
        raise _fail(a.name, "fp4Padded", "packed fp4 layouts are not modelled (the bank model counts whole bytes)")
    if element_bits is not None and element_bits != ebits:
        raise TTGIRError(f"element_bits: {element_bits} differs from the layout's elementBitWidth = {ebits}")
    rank = _int(a, "rank", default=len(shape))
    if rank != len(shape):
        raise _fail(a.name, "rank", f"the layout is for rank-{rank} tensors, but the tensor has rank {len(shape)}")
    if rank < 2 or (rank > 2 and transposed):
        raise TTGIRError(f"nvmma_shared: a {'transposed ' * transposed}layout of a rank-{rank} tensor is not modelled "
                         "(rank 2, or rank 3 not transposed: Triton 3.9 aborts on it or gives zero offset bases)")
    cga = _cga(a, rank)
    per_cta = {n: max(1, s // cga.outs[n]) for n, s in zip(dims(rank), shape, strict=True)}
    contig = rank - 2 if transposed else rank - 1
    tma = [min(s, 256) for s in per_cta.values()]
    if not width:
        ll = identity_nd("offset", tma, [contig] + [d for d in range(rank - 1, -1, -1) if d != contig])
        return _combine(ensure_not_smaller(ll, per_cta, "offset"), cga, shape, a.name)
    span = 8 * width // ebits
    if tma[contig] < span:
        raise TTGIRError(f"nvmma_shared.swizzlingByteWidth: {width} bytes is {span} elements of "
                         f"{ebits} bits, more than the {tma[contig]} along the contiguous dimension")
    tma[contig] = span
    rows, cols = prod(tma) // tma[contig], tma[contig]  # the other dimensions collapsed into rows, dim1 the faster
    vec, per, maxp = 128 // ebits, 128 // width, width // 16
    if rows < 8:
        raise TTGIRError(f"nvmma_shared: {rows} rows is fewer than one 8-row core matrix")
    ll = ensure_not_smaller(_swizzle(8, cols, vec, per, maxp, "dim0", "dim1"), {"dim0": rows, "dim1": cols}, "offset")
    ll = TLL.raw({"offset": [[c, r] if transposed else [r, c] if rank == 2 else [r // tma[1], r % tma[1], c]
                             for r, c in ll.bases["offset"]]}, dict(zip(per_cta, tma, strict=True)))
    return _combine(ensure_not_smaller(ll, per_cta, "offset"), cga, shape, a.name)


def _explicit(a: Attr, shape: list[int], owner: str) -> TLL:
    """offset/block bases as given; their shape must be the tensor's."""
    rank = len(shape)
    ll = TLL.inferred({"offset": _bases(a, "offset", rank), "block": _bases(a, "block", rank, [])}, dims(rank))
    got = list(ll.outs.values())
    if got != list(shape):
        raise TTGIRError(f"shape: {owner}'s bases describe a {got} tensor, not {list(shape)}")
    return ll


def _padded(a: Attr, shape: list[int]) -> tuple[TLL, list[list[int]]]:
    pads = a.fields.get("paddings", [])
    if not pads:
        raise _fail(a.name, "paddings", "at least one [interval:+padding] pair is needed")
    seen = set()
    for interval, pad in pads:
        for what, v in (("interval", interval), ("padding", pad)):
            if v < 1 or v & (v - 1):
                raise _fail(a.name, what, f"{v} is not a power of two")
        if interval in seen:
            raise _fail(a.name, "interval", f"{interval} is given twice")
        seen.add(interval)
    if "offset" in a.fields:
        ll = _explicit(a, shape, "padded_shared")
        for k in ("offset", "block"):
            for v in ll.bases.get(k, []):
                if sum(1 for x in v if x) > 1 or any(x & (x - 1) for x in v):
                    raise _fail(a.name, k, f"basis {ttgir.value_text(v)}: Triton's padded_shared bases each move "
                                           "in one dimension by a power of two (no swizzle under the paddings)")
        return ll, [list(p) for p in pads]
    rank = len(shape)
    own = _pow2s(a, "shape", rank)
    if own != list(shape):
        raise TTGIRError(f"shape: the padded_shared layout is for {ttgir.value_text(own)}, not {list(shape)}")
    ll = identity_nd("offset", shape, _order(a, rank)).transpose_outs(dims(rank))
    return ll, [list(p) for p in pads]


def shared_layout(a: Attr, shape: list[int], element_bits: int | None) -> tuple[TLL, list[list[int]]]:
    """(offset -> coordinate layout with out-dims dim0.., paddings) of a shared encoding."""
    if a.name in ("swizzled_shared", "shared"):
        if a.name == "shared" and element_bits is not None:
            a = Attr(a.name, {**a.fields, "_element_bits": element_bits})
        return _swizzled(a, shape), []
    if a.name == "nvmma_shared":
        return _nvmma(a, shape, element_bits), []
    if a.name == "padded_shared":
        return _padded(a, shape)
    return _explicit(a, shape, "shared_linear"), []


def padded(offset: int, paddings: list[list[int]]) -> int:
    """Where linear offset ``offset`` is stored: plus ``padding`` elements after every ``interval``."""
    return offset + sum((offset // i) * p for i, p in paddings)


def pack(v: list[int], shape: list[int]) -> int:
    """A coordinate as its row-major index (dims are powers of two, so XOR of coordinates is XOR of indices)."""
    out = 0
    for x, n in zip(v, shape, strict=True):
        out = out * n + x
    return out


def offset_table(ll: TLL, paddings: list[list[int]], shape: list[int]) -> list[int]:
    """``table[i]``: the element offset of the element at row-major index i in the CTA that holds it (each CTA holds
    its part at the same offsets; a zero block basis broadcasts); TTGIRError when two offsets hold one element or
    some element has no offset."""
    idx = span([pack(v, shape) for v in ll.bases["offset"]])
    ctas = set(span([pack(v, shape) for v in ll.bases.get("block", []) if any(v)]))
    table = [-1] * prod(shape)
    for cta in sorted(ctas):
        for o, j in enumerate(idx):
            if table[j ^ cta] >= 0:
                raise TTGIRError(f"the shared layout stores one element at offsets {table[j ^ cta]} and "
                                 f"{padded(o, paddings)}: it is not a bijection, so no element has a single offset")
            table[j ^ cta] = padded(o, paddings)
    if min(table) < 0:
        raise TTGIRError(f"the shared layout has {len(idx)} offsets in each of {len(ctas)} CTAs for the "
                         f"{len(table)} elements of {shape}")
    return table
