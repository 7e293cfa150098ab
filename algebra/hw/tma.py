"""A TMA atom as CuTe's ``make_tma_atom(op, gtensor, slayout, cta_tile, cluster_size)`` builds it, and
``tma_partition``'s per-CTA views, for flat global layouts (one mode per dimension, element strides).

CuTe traces the shared-memory "vector": ``right_inverse(slayout)`` walks shared memory in address order; composed
with the global tensor's coordinates it gives the TMA dimensions in that order (coalesced), the box (each dimension's
extent), and how many TMA instructions one CTA tile takes. With a cluster of ``N`` CTAs multicasting, the box is cut
from its last dimension by ``N`` (CuTe's truncation loop) and CTA ``r`` loads the ``r``-th ``1/N`` of every
instruction's vector (``multicast_offset = r * size(vector) / N``). ``get_tma_tensor(shape(g))`` is the coordinate
tensor ``ArithTuple(0,...) o shape:(1@d_0, 1@d_1, ...)`` (mode j's stride is the basis of its TMA dimension).

Post-conditions: the boxes of the N CTAs of one instruction tile the instruction's vector exactly; every element of
the CTA tile is loaded by exactly one (instruction, CTA); ``encode`` (``hopper.encode_tiled``) is
cuTensorMapEncodeTiled's argument list with every documented rule checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import E
from algebra.core.coord_tensor import CoordTensor
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, cosize, make_layout, size
from algebra.core.ops import coalesce, composition, right_inverse
from algebra.core.products import logical_divide
from algebra.hw import hopper

MAX_TMA_DIMS = 5
OPS = ("SM90_TMA_LOAD", "SM90_TMA_LOAD_MULTICAST", "SM90_TMA_STORE")


@dataclass(frozen=True)
class TmaAtom:
    """What ``make_tma_atom`` decides: the TMA dimensions (global modes in shared-memory order), the box one CTA
    loads, the instructions per CTA tile, and which CTA of the cluster loads which part."""

    op: str
    gmem: Layout
    smem: Any
    cta_tile: tuple[int, ...]
    cluster_size: int
    dtype: str
    dims: tuple[tuple[int, ...], ...]  # TMA dimension d -> its global modes (coalesce_256 merges contiguous ones)
    full_box: tuple[int, ...]       # one instruction's box, all CTAs together (TMA dim order)
    box: tuple[int, ...]            # the box one CTA loads (after the multicast cut)
    vector: int                     # elements one instruction moves into one CTA's tile (all CTAs together)
    instructions: int               # TMA instructions per CTA tile (TMA_Iter)
    mode_box: tuple[int, ...]       # each global mode's extent in one instruction's box (1 off the vector)

    @property
    def chunk(self) -> int:
        """Elements of each instruction's vector that one CTA of the cluster loads."""
        return self.vector // self.cluster_size

    def problem(self) -> list[tuple[int, int]]:
        """Each TMA dimension's (extent, element stride) as CuTe's fill_tma_gmem_shape_stride derives them from its
        global modes: stride = gcd of theirs, extent by the recurrence (e - 1) * (d / g) + (s_j - 1) * (d_j / g) + 1."""
        shape, stride, out = it.wrap(self.gmem.shape), it.wrap(self.gmem.stride), []
        for grp in self.dims:
            ext, d = 1, 0
            for j in grp:
                g = math.gcd(d, stride[j])
                ext, d = ((ext - 1) * (d // g) + (shape[j] - 1) * (stride[j] // g) + 1 if g else shape[j]), g
            out.append((ext, d))
        return out

    def mode_strides(self) -> tuple[Any, ...]:
        """Each global mode's stride in the TMA coordinate tensor (CuTe's gmem_tma_basis_stride): 0 for a mode of size
        1, stride 0 or no dimension; ``stride@0`` in dimension 0; ``1@k`` alone in dimension k; merged with others in
        dimension k, ``(stride / the dimension's stride)@k`` (CuTe: ceil_div(d * bits / max(bytes stride, 16), 8))."""
        shape, stride, prob, out = it.wrap(self.gmem.shape), it.wrap(self.gmem.stride), self.problem(), []
        esize = hopper.TMA_DTYPES[hopper.tma_dtype(self.dtype)]
        for j, (s, d) in enumerate(zip(shape, stride, strict=True)):
            k = next((k for k, grp in enumerate(self.dims) if j in grp), None)
            out.append(0 if s == 1 or d == 0 or k is None else E(0) * d if k == 0 else E(k) if len(self.dims[k]) == 1
                       else E(k) * -(-(d * esize * 8 // max(prob[k][1] * esize, 16)) // 8))
        return tuple(out)

    def gbasis(self) -> Layout:
        """CuTe's ``construct_tma_gbasis``: one instruction's box per TMA dimension with the global modes it spans."""
        one = [(self.mode_box[g[0]], E(g[0])) if len(g) == 1 and k < MAX_TMA_DIMS - 1 else (  # CuTe: group<4,-1>
            tuple(self.mode_box[j] for j in g), tuple(E(j) for j in g)) for k, g in enumerate(self.dims)]
        return Layout(tuple(b for b, _ in one), tuple(e for _, e in one))

    @property
    def smem_to_coord(self) -> Layout:
        """smem offset -> TMA coordinate (basis strides)."""
        return composition(Layout(self.cta_tile, self.mode_strides()), right_inverse(_plain(self.smem)))

    def coord_rank(self) -> int:
        """The TMA coordinates' rank as CuTe prints them (``make_coord_tensor``: the strides' coprofile): one past the
        last dimension a global mode walks, so trailing dimensions of stride-0 global modes have no entry."""
        return max(d.mode_path[0] + 1 for d in self.mode_strides() if hasattr(d, "mode_path"))

    def tma_tensor(self) -> CoordTensor:
        """``get_tma_tensor(shape(gtensor))``: global coordinates as TMA coordinates."""
        return CoordTensor((0,) * self.coord_rank(), Layout(it.wrap(self.gmem.shape), self.mode_strides()))

    def owner(self, tile_index: int) -> tuple[int, int]:
        """(instruction, CTA of the cluster) that loads element ``tile_index`` (column-major in the CTA tile)."""
        o = _plain(self.smem)(tile_index)
        return o // self.vector, (o % self.vector) // self.chunk

    def partition(self, cta_rank: int, cta_coord: tuple[int, ...] | None = None) -> dict[str, Any]:
        """``tma_partition(atom, cta_rank, Layout<N>{}, group_modes<0,R>(sA), group_modes<0,R>(gA))`` for the CTA
        tile at ``cta_coord`` (default 0), as CuTe returns it: ``source`` (TMA coordinates) and ``destination``
        (smem; a swizzled one keeps its swizzle, the CTA's offset inside it) are rank 1, ``((TMA, TMA_Iter))``, each
        part coalesced; the TMA mode is one instruction's whole vector (all CTAs: copy consumes it whole), domain-offset
        to this CTA's share, so only its first ``chunk`` values are what this CTA loads: ``loads`` is that part,
        ``(chunk, TMA_Iter)``. ``smem_offset`` is the destination's pointer offset (0 for a swizzled layout)."""
        if not 0 <= cta_rank < self.cluster_size:
            raise LayoutError(f"CTA {cta_rank} is out of range: the cluster has {self.cluster_size} CTAs")
        coord = tuple(cta_coord or (0,) * len(self.cta_tile))
        if len(coord) != len(self.cta_tile):
            raise LayoutError(f"CTA tile coordinate {coord} needs {len(self.cta_tile)} entries")
        start, plain = cta_rank * self.chunk, _plain(self.smem)
        div = logical_divide(self.smem_to_coord, Layout(self.vector))  # ((vector), (iterations))
        o = Layout(self.cta_tile, self.mode_strides())(tuple(c * t for c, t in zip(coord, self.cta_tile, strict=True)))
        o = getattr(o + self.smem_to_coord(start), "as_tuple", tuple)()  # the CTA tile's origin + this CTA's share
        origin = o + (0,) * (self.coord_rank() - len(o))  # in TMA coordinates
        sdiv = logical_divide(composition(plain, right_inverse(plain)), Layout(self.vector))
        dst, off = _rank1(sdiv), sdiv((start, 0))
        if plain is not self.smem:  # CuTe: a composed layout's domain_offset moves its offset, not the pointer
            dst, off = type(self.smem)(self.smem.layout_a, self.smem.offset + off, dst), 0
        loads = CoordTensor(tuple(origin), make_layout(composition(div[0], Layout(self.chunk)), div[1]))
        # a TMA dimension past the first that merges global modes scales each by a run-time int in CuTe
        # (gmem_tma_basis_stride), so CuTe's coalesce joins none of them with a neighbour: each such global mode
        # walks its own basis here, E(len(dims) + j), until the view is coalesced
        real, n = self.mode_strides(), len(self.dims)
        dyn = {j for k, grp in enumerate(self.dims) if k and len(grp) > 1 for j in grp if real[j] != 0}
        own = Layout(self.cta_tile, tuple(E(n + j) if j in dyn else d for j, d in enumerate(real)))
        view = _rank1(logical_divide(composition(own, right_inverse(plain)), Layout(self.vector)))
        back = tuple(real[d.mode_path[0] - n] * d.value if hasattr(d, "mode_path") and d.mode_path[0] >= n else d
                     for d in it.flatten(view.stride))
        view = Layout(view.shape, it.unflatten(back, view.stride))
        return {"cta": cta_rank, "source": CoordTensor(tuple(origin), view), "destination": dst,
                "smem_offset": off, "loads": loads}

    def encode(self, strict: bool = False) -> Any:
        """cuTensorMapEncodeTiled's arguments for this atom (``hopper.encode_tiled``), every rule checked."""
        esize, prob = hopper.TMA_DTYPES[hopper.tma_dtype(self.dtype)], self.problem()
        return hopper.encode_tiled(self.dtype, [e for e, _ in prob], [d * esize for _, d in prob[1:]], list(self.box),
                                   swizzle=_swizzle_mode(self.smem, esize), strict=strict)


def _rank1(div: Layout) -> Layout:
    """CuTe's ``coalesce(t, Shape<Shape<_1,_1>>{})`` of a ((TMA), (TMA_Iter)) layout: one mode, each part coalesced."""
    two = make_layout(coalesce(div[0]), coalesce(div[1]))
    return Layout((two.shape,), (two.stride,))


def _plain(smem: Any) -> Layout:
    return smem.layout_b if hasattr(smem, "layout_b") else smem


def _swizzle_mode(smem: Any, esize: int) -> str:
    if not hasattr(smem, "layout_a"):
        return "NONE"
    span = (1 << (smem.layout_a.bits + smem.layout_a.base)) * esize
    return "NONE" if span == 16 else f"{span}B"


def make_tma_atom(op: str, gmem: Any, smem: Any, cta_tile: Any, cluster_size: int = 1,
                  dtype: str = "FLOAT16") -> TmaAtom:
    """CuTe's ``make_tma_atom(op, gtensor, slayout, cta_tile, cluster_size)`` for a flat global layout ``gmem``
    (element strides), a shared-memory layout ``smem`` (may be swizzled: ``Sw<B,M,S> o L``) of the CTA tile's
    shape (it need not divide the global tensor: TMA fills past its edge), and a cluster of ``cluster_size`` CTAs
    (1..16; > 1 needs SM90_TMA_LOAD_MULTICAST).

    Refuses (LayoutError) what CuTe refuses or the hardware cannot do: a tile that is not the smem layout's shape,
    a shared-memory vector whose first mode is not stride-1 in global memory, a box the cluster does not divide; and
    where CuTe folds more than 5 TMA dimensions into 5, a folded box that is not read at one stride (CuTe's atom
    loads other elements)."""
    if op not in OPS:
        raise LayoutError(f"op must be one of {', '.join(OPS)}, not {op!r}")
    if isinstance(cluster_size, bool) or not isinstance(cluster_size, int) or not 1 <= cluster_size <= 16:
        raise LayoutError(f"cluster size must be an integer in 1..16, not {cluster_size!r}")
    if cluster_size > 1 and op != "SM90_TMA_LOAD_MULTICAST":
        raise LayoutError(f"a cluster of {cluster_size} CTAs shares a load only with SM90_TMA_LOAD_MULTICAST")
    if not isinstance(gmem, Layout):
        raise LayoutError(f"the global tensor must be a layout, not {gmem!r}")
    shape, stride = it.wrap(gmem.shape), it.wrap(gmem.stride)
    if any(it.is_tuple(s) for s in shape) or any(not isinstance(d, int) for d in stride):
        raise LayoutError(f"the global tensor must be flat with integer strides (one mode per dimension): {gmem}")
    tile = tuple(cta_tile) if isinstance(cta_tile, list | tuple) else (cta_tile,)
    if len(tile) != len(shape) or not all(isinstance(t, int) and t > 0 for t in tile):
        raise LayoutError(f"the CTA tile {tile} needs one positive extent per global mode ({len(shape)})")
    plain = _plain(smem)
    if not isinstance(plain, Layout):
        raise LayoutError(f"the shared-memory layout must be a layout, not {smem!r}")
    sshape = it.product_each(plain.shape)
    if sshape != tile:
        raise LayoutError(f"the shared-memory layout {smem} has shape {sshape}, not the CTA tile {tile}")
    if cosize(plain) != size(plain):
        raise LayoutError(f"the shared-memory layout {plain} is not compact (cosize {cosize(plain)} != size "
                          f"{size(plain)})")
    inv = right_inverse(plain)  # smem offset -> tile index (column-major)
    if size(inv) != size(plain):
        raise LayoutError(f"the shared-memory layout {plain} is not invertible")
    coord_of_tile = Layout(tile, tuple(E(j) for j in range(len(tile))))
    cvec = coalesce(composition(coord_of_tile, inv))  # smem offset -> global coordinate, in smem order
    modes = [(sz, d) for sz, d in zip(it.flatten(cvec.shape), it.flatten(cvec.stride), strict=True) if sz > 1]
    # one instruction's vector: the longest prefix of the smem walk that is a box (each global mode entered once,
    # at its origin, extended contiguously, and left for good); then, as CuTe appends them, the global modes it does
    # not enter, in mode order, but for those of size 1 or stride 0 (no TMA dimension: stride 0 in the TMA tensor)
    vector, seen, box = 1, [], {j: 1 for j in range(len(tile))}
    for sz, d in modes:
        j = d.mode_path[0]
        if seen and j == seen[-1] and d.value == box[j]:
            box[j] *= sz
        elif j not in seen and d.value == 1:
            seen.append(j)
            box[j] = sz
        else:
            break
        vector *= sz
    if not seen:
        raise LayoutError(f"shared memory {smem} does not start along a global mode at unit steps: no common "
                          "tile-gmem vectorization (CuTe: static_assert smem_rank > 0)")
    # CuTe's coalesce_256: a vector mode whose stride is the merged box so far x its stride joins that TMA dimension
    # while the dimension's box stays <= 256 elements; the modes off the vector follow, one dimension each (box 1)
    groups: list[list[int]] = []
    for j in seen:
        ext = it.product(tuple(box[k] for k in groups[-1])) if groups else 0
        if groups and ext * stride[groups[-1][0]] == stride[j] and ext * box[j] <= 256:
            groups[-1].append(j)
        else:
            groups.append([j])
    dims = tuple(map(tuple, groups)) + tuple((j,) for j in range(len(tile)) if j not in seen and shape[j] > 1
                                             and stride[j] != 0)
    if stride[dims[0][0]] != 1:
        raise LayoutError(f"TMA's first box dimension must be contiguous in global memory: shared memory {smem} "
                          f"runs along global mode {dims[0][0]} first, whose stride is {stride[dims[0][0]]}")
    if len(dims) >= MAX_TMA_DIMS:  # CuTe groups the dimensions past the fourth into one (group<4,-1>)
        if any(len(grp) > 1 for grp in dims[MAX_TMA_DIMS - 1:]):
            raise LayoutError(f"{len(dims)} TMA dimensions {dims}, and one of those CuTe folds into the fifth merges "
                              "global modes already (coalesce_256): CuTe does not compile it (basis_get of a tuple)")
        dims = dims[:MAX_TMA_DIMS - 1] + (tuple(j for grp in dims[MAX_TMA_DIMS - 1:] for j in grp),)
    esize = hopper.TMA_DTYPES[hopper.tma_dtype(dtype)]
    full_box = tuple(it.product(tuple(box[j] for j in grp)) for grp in dims)
    atom = TmaAtom(op, gmem, smem, tile, cluster_size, dtype, dims, full_box, full_box, vector, size(plain) // vector,
                   tuple(box[j] if j in seen else 1 for j in range(len(tile))))
    for k, (ext, d) in enumerate(atom.problem()):
        if ext > 1 << 32 or k and (d * esize % 16 or d * esize >= 1 << 40):
            raise LayoutError(f"TMA dimension {k} (global modes {dims[k]}) has stride {d} x {esize} bytes, not a "
                              "multiple of 16 bytes below 2^40, or extent over 2^32: TMA cannot address it (CuTe "
                              "asserts in make_tma_copy_desc)")
    for k, (grp, (_, d)) in enumerate(zip(dims, atom.problem(), strict=True)):  # the box is read at d, 2d, ...
        acc = 1
        for j in (j for j in grp if atom.mode_box[j] > 1):
            if stride[j] != d * acc:
                raise LayoutError(f"TMA dimension {k} holds global modes {grp} (CuTe folds the dimensions past the "
                                  f"fifth into one): TMA reads its box at multiples of stride {d}, so box element "
                                  f"{acc} is read at offset {d * acc}, but it is global mode {j}'s first step, offset "
                                  f"{stride[j]}; CuTe prints {atom.tma_tensor()} and loads other elements than the "
                                  "tile's")
            acc *= atom.mode_box[j]
    cut, mult = list(full_box), cluster_size
    for i in range(len(cut) - 1, -1, -1):  # CuTe: truncate the box by num_multicast from its last dimension
        if mult <= 1:
            break
        if cut[i] % mult and mult % cut[i]:
            raise LayoutError(f"the cluster of {cluster_size} CTAs does not divide the box {full_box}")
        cut[i], mult = -(-cut[i] // mult), -(-mult // cut[i])
    if mult > 1:
        raise LayoutError(f"the box {full_box} has fewer elements than the cluster has CTAs ({cluster_size})")
    if any(b > 256 for b in cut):
        raise LayoutError(f"the box {tuple(cut)} (one CTA's share of {full_box}) has an extent over 256 (TMA's limit "
                          "per dimension)")
    return replace(atom, box=tuple(cut))
