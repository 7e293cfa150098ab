"""Tiled copies and tiled MMAs, built and partitioned as CuTe's ``make_tiled_copy`` / ``make_tiled_mma`` do.

Partitions follow CuTe's ``tidfrg_S/D`` and ``thrfrg_A/B/C``, written with the algebra's own operations;
``copy_coverage`` says whether a TV layout covers its tile and ``make_fragment_like`` gives a partition's registers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial, partialmethod
from typing import Any

from algebra.core import inttuple as it
from algebra.core.coord_tensor import CoordTensor
from algebra.core.errors import LayoutError
from algebra.core.layout import (
    Layout,
    cosize,
    get_flat_coord,
    make_layout,
    make_ordered_layout,
    size,
    slice_and_offset,
    slice_layout,
)
from algebra.core.memo import bounded
from algebra.core.modes import offsets
from algebra.core.notation import parse
from algebra.core.ops import coalesce, complement, composition, filter_zeros, right_inverse
from algebra.core.products import logical_divide, raked_product, tiled_product, zipped_divide
from algebra.core.recast import upcast
from algebra.hw.atoms import CopyAtom, MMAAtom, MMAOperands, get


def _unfold(layout: Layout) -> Layout:
    """(X, (R0, R1, ...)) -> (X, R0, R1, ...): CuTe's ``tensor(make_coord(_, _), _)`` unfolding of the rest mode."""
    return make_layout(layout[0], *layout[1])  # a rank-1 layout iterates as its one mode


def _zip2(layout: Layout) -> Layout:
    """((a, b), (c, d)) -> ((a, c), (b, d))."""
    m0, m1 = layout[0], layout[1]
    return make_layout(make_layout(m0[0], m1[0]), make_layout(m0[1], m1[1]))


@bounded(4 << 20, "tiled copy coverage")
def copy_coverage(tv_layout: Layout, tiler: tuple[int, ...], limit: int = 64) -> dict[str, Any]:
    """Who claims each element of the tile: ``duplicates`` (elements held by more than one (thread, value)),
    ``uncovered`` (elements nobody holds), ``outside`` (claims past the tile, from stride-0 thread layouts:
    neither), and up to ``limit`` examples of each: ``duplicate_elements`` [{"element": (m, n), "claims":
    [(t, v), ...]}], ``uncovered_elements`` [(m, n)], ``duplicate_threads`` (threads with a repeated claim)."""
    rows, total = tiler[0], it.product(tuple(tiler))
    nthr, nval = size(tv_layout[0]), size(tv_layout[1])
    if nthr * nval > (1 << 20) or total > (1 << 20):
        raise LayoutError(f"coverage is capped at 2^20 claims and elements ({nthr}x{nval} over {total})")
    claims: dict[int, list[tuple[int, int]]] = {}
    outside = 0
    for i, e in enumerate(offsets(tv_layout)):  # i = t + nthr * v
        if not isinstance(e, int) or not 0 <= e < total:
            outside += 1
            continue
        claims.setdefault(e, []).append((i % nthr, i // nthr))
    dup = sorted(e for e, c in claims.items() if len(c) > 1)
    holes = [e for e in range(total) if e not in claims]

    def where(e: int) -> tuple[int, ...]:
        return (e % rows, e // rows) if len(tiler) > 1 else (e,)

    threads = sorted({t for e in dup for t, _ in claims[e]})
    return {"duplicates": len(dup), "uncovered": len(holes), "outside": outside, "tile": tuple(tiler),
            "duplicate_elements": [{"element": where(e), "claims": claims[e]} for e in dup[:limit]],
            "uncovered_elements": [where(e) for e in holes[:limit]], "duplicate_threads": threads[:limit],
            "claims_per_element": max((len(c) for c in claims.values()), default=0)}


def make_fragment_like(layout: Layout) -> Layout:
    """CuTe's ``make_fragment_like(Layout)``: mode 0 compact column-major over its non-zero strides, the other
    modes compact in the order of their strides, tiled together (``tiled_product``); rank 1: ``make_layout(shape)``."""
    if not it.is_tuple(layout.shape) or len(layout) < 2:
        return Layout(layout.shape)
    if any(not isinstance(d, int) for d in it.flatten(layout.stride[1:])):
        raise LayoutError(f"make_fragment_like({layout}): the rest modes' strides are not all integers, and CuTe "
                          "orders them (make_ordered_layout), which does not compile for basis strides such as "
                          "1@0 (no operator< between them); a coordinate tensor's fragment takes a tile of one rest")
    m0 = layout[0]
    first = Layout(m0.shape, it.compact_major(filter_zeros(m0).shape))  # compact over the non-zero strides
    return tiled_product(first, make_ordered_layout(layout.shape[1:], layout.stride[1:]))


@dataclass(frozen=True)
class TiledCopy:
    """A copy atom tiled over threads and values. ``tv_layout``: (thread, value) -> column-major index in the
    ``tiler`` tile. Post-condition: ``size(tv_layout) == prod(tiler)`` for a tiling without replication."""

    atom: CopyAtom
    element_bits: int
    tv_layout: Layout
    tiler: tuple[int, ...]

    @property
    def num_threads(self) -> int:
        return size(self.tv_layout[0])

    @bounded(4 << 20, "tiled copy fragments")  # partition_S / _D slice it once per thread
    def _tidfrg(self, src: bool, tensor: Any) -> Layout:
        """((thread, value), rest...) view of a source (destination) tile (CuTe's ``tidfrg_S`` / ``tidfrg_D``)."""
        tiles = zipped_divide(_as_layout(tensor), tuple(Layout(t) for t in self.tiler))
        return self._tile2thrfrg_unfolded(tiles, src)  # ((thr, val), rest_m, rest_n, ...)

    tidfrg_S = partialmethod(_tidfrg, True)
    tidfrg_D = partialmethod(_tidfrg, False)

    def _partition(self, src: bool, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        """``partition_S`` / ``partition_D``: thread ``thr_idx``'s (CPY, CPY_M, CPY_N, ...) view of a source /
        destination tensor, and the offset of its origin; of a coordinate tensor (``make_identity_tensor``), the
        thread's coordinates (a CoordTensor)."""
        if isinstance(tensor, CoordTensor):
            return tensor.moved(*self._partition(src, tensor.layout, thr_idx))
        frg = self._tidfrg(src, tensor)
        if not 0 <= thr_idx < self.num_threads:
            raise LayoutError(f"thread {thr_idx} out of range: the tiled copy has {self.num_threads} threads")
        crd = ((thr_idx, None),) + (None,) * (len(frg) - 1)
        return slice_and_offset(crd, frg)

    partition_S = partialmethod(_partition, True)
    partition_D = partialmethod(_partition, False)

    # ------------------------------------------------------------------ CuTe's get_layoutS_TV / get_layoutD_TV
    def _layout_TV(self, src: bool) -> Layout:
        """(thr_idx, val_idx) -> column-major index of the tiler tile, as the source / destination sees it (CuTe's
        ``TiledCopy::get_layoutS_TV`` / ``get_layoutD_TV``)."""
        ref = Layout((tuple(self.tiler), 1))  # ((M, N), 1): the tile itself, one rest
        return self._tile2thrfrg_unfolded(ref, src)[0]  # ((thr, val), 1) -> (thr, val)

    get_layoutS_TV = partialmethod(_layout_TV, True)
    get_layoutD_TV = partialmethod(_layout_TV, False)

    def _tile2thrfrg_unfolded(self, tensor: Layout, src: bool) -> Layout:
        """CuTe's ``tile2thrfrg`` of a ((tile), (rest)) tensor: (thr, val, rest...), the atom's values read through
        ``AtomLayoutRef`` -> ``AtomLayoutSrc`` / ``AtomLayoutDst``: ``right_inverse(ref) o src|dst``."""
        bits = self.element_bits
        ref, trg = self.atom.ref_layout(bits), (self.atom.src_layout if src else self.atom.dst_layout)(bits)
        atom_tv = zipped_divide(self.tv_layout, (size(self.atom.thr_id), size(ref[1])))  # ((atom_tid, atom_val), rest)
        trg_tv = make_layout(composition(atom_tv[0], composition(right_inverse(ref), trg)), atom_tv[1])
        thrval2mn = coalesce(_zip2(trg_tv), (1, (1, 1)))  # ((tid), (val)) -> (m, n)
        return _unfold(composition(tensor, (thrval2mn, None)))

    # ------------------------------------------------------------------ does the tiled copy cover its tile?
    def coverage_detail(self, limit: int = 64) -> dict[str, Any]:
        """:func:`copy_coverage` of the TV layout over its tile."""
        return copy_coverage(self.tv_layout, tuple(self.tiler), limit)

    def coverage(self) -> dict[str, int]:
        """``{"duplicates": n, "uncovered": n}`` of :meth:`coverage_detail`."""
        d = self.coverage_detail(limit=0)
        return {"duplicates": d["duplicates"], "uncovered": d["uncovered"]}


def _as_layout(x: Any) -> Layout:
    if isinstance(x, str):
        x = parse(x)
    if not hasattr(x, "shape"):
        raise LayoutError(f"expected a layout, not {x!r}")
    return x


def _copy_atom(copy_atom: str | CopyAtom) -> CopyAtom:
    atom = get(copy_atom) if isinstance(copy_atom, str) else copy_atom
    if not isinstance(atom, CopyAtom):
        raise LayoutError(f"{atom.name} is an MMA atom, not a copy atom")
    return atom


def make_tiled_copy_impl(copy_atom: str | CopyAtom, layout_tv: Any, tiler: Any, element_bits: int = 16,
                         what: str = "TiledCopy") -> TiledCopy:
    """CuTe's ``make_tiled_copy_impl(Copy_Atom<Op, T>{}, layout_tv, tiler)``: a TV layout ((thread, value) ->
    column-major index of the ``tiler`` tile) taken as it is. Refuses what CuTe's static asserts refuse: fewer
    threads or values than (a multiple of) the atom's."""
    atom = _copy_atom(copy_atom)
    tv = _as_layout(layout_tv)
    if isinstance(tiler, int) and not isinstance(tiler, bool):
        tiler = (tiler,)
    if not isinstance(tiler, list | tuple) or not tiler or not all(
            isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in tiler):
        raise LayoutError(f"tiler must be a tuple of positive integers (M, N), not {tiler!r}")
    if not it.is_tuple(tv.shape) or len(tv) != 2:
        raise LayoutError(f"layout_tv must have two modes (thread, value), not {tv}")
    _check_fit(atom, size(tv[0]), size(tv[1]), element_bits, what, ": the atom does not fit")
    return TiledCopy(atom, element_bits, tv, tuple(tiler))


def _check_fit(atom: CopyAtom, threads: int, values: int, element_bits: int, what: str, why: str = "") -> None:
    """CuTe's static asserts: a tiled copy's threads and values are multiples of its atom's, ``AtomNumThr`` and
    ``AtomNumVal``: the sizes of the reference layout's modes (ldmatrix's destination: U32x1 moves 2 16-bit values
    per thread where its source addresses 8)."""
    ref = atom.ref_layout(element_bits)
    nthr, nval = size(ref[0]), size(ref[1])
    if threads % nthr:
        raise LayoutError(f"{what} uses too few threads for {atom.name}: {threads} % {nthr} != 0"
                          + (f" ({why[2:]})" if why else ""))
    if values % nval:
        raise LayoutError(f"{what} uses too few values for {atom.name}: {values} % {nval} != 0 "
                          f"({nval} values of {element_bits} bits per thread per instruction, the size of its "
                          f"reference layout's value mode{why})")


def make_tiled_copy(copy_atom: str | CopyAtom, thr_layout: Any = None, val_layout: Any = None,
                    element_bits: int = 16, *, layout_tv: Any = None, tiler: Any = None) -> TiledCopy:
    """CuTe's ``make_tiled_copy(Copy_Atom<Op, T>{}, thr_layout, val_layout)`` with T of ``element_bits``, or the
    CuTe DSL's form ``make_tiled_copy(atom, layout_tv, tiler_mn)`` (``layout_tv=``, ``tiler=``; C++'s
    ``make_tiled_copy_impl``).

    Post-conditions: ``tiler == product_each(shape(raked_product(thr, val)))``; the TV layout has
    ``size(thr)`` threads and ``size(val)`` values; refuses when the tiling has fewer threads or values than the atom.
    """
    if layout_tv is not None or tiler is not None:
        if layout_tv is None or tiler is None or thr_layout is not None or val_layout is not None:
            raise LayoutError("make_tiled_copy takes either thr_layout (and val_layout) or layout_tv and tiler")
        return make_tiled_copy_impl(copy_atom, layout_tv, tiler, element_bits)
    if thr_layout is None:
        raise LayoutError("make_tiled_copy needs a thread layout (or layout_tv and tiler)")
    atom = _copy_atom(copy_atom)
    thr = _as_layout(thr_layout)
    val = _as_layout(val_layout) if val_layout is not None else Layout(1)
    layout_mn = raked_product(thr, val)
    tv = right_inverse(layout_mn).with_shape((size(thr), size(val)))
    _check_fit(atom, size(thr), size(val), element_bits, "TiledCopy")
    return TiledCopy(atom, element_bits, tv, it.product_each(layout_mn.shape))


_MNK = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}  # the M, N, K modes of each operand's tile


@dataclass(frozen=True)
class TiledMMA:
    """An MMA atom replicated over ``atom_layout`` (M, N, K) and permuted by ``permutation`` (CuTe's TiledMMA)."""

    atom: MMAOperands
    thr_layout_vmnk: Layout
    permutation: tuple[Any, Any, Any]

    @property
    def num_threads(self) -> int:
        return size(self.thr_layout_vmnk)

    def tile_size_mnk(self, i: int) -> int:
        p = self.permutation[i]
        return size(p) if p is not None else self.atom.shape_mnk[i] * size(self.thr_layout_vmnk[i + 1])

    @bounded(4 << 20, "tiled MMA fragments")  # partition_A / _B / _C slice it once per thread
    def _thrfrg(self, tensor: Layout, which: str) -> Layout:
        i, j = _MNK[which]
        t_tensor = logical_divide(tensor, (self.permutation[i], self.permutation[j]))
        shp = self.atom.operand_shape(which)
        ab = zipped_divide(t_tensor, (Layout(shp[0]), Layout(shp[1])))  # ((AtomM, AtomK), (RestM, RestK))
        tv = composition(ab, (self.atom.operand(which), None))  # ((ThrV, FrgV), (RestM, RestK))
        thr_tile = (None, (Layout(size(self.thr_layout_vmnk[i + 1])), Layout(size(self.thr_layout_vmnk[j + 1]))))
        return zipped_divide(tv, thr_tile)  # ((ThrV, (ThrM, ThrK)), (FrgV, (RestM, RestK)))

    def _thr_vmnk(self, thr_idx: Any) -> tuple[int, int, int, int]:
        """CuTe's ``get_slice``: ``thr_layout_vmnk.get_flat_coord(thr_idx)``, one integer per V, M, N, K mode (a
        hierarchical V, such as SM70's quad-pair ``(4,2):(1,16)``, is flattened to its index). The index is a lane:
        SM70's quad-pairs put 16 threads on lanes 0..23, so indices up to cosize(thr_layout_vmnk) - 1 are taken.
        An index past the thread count that is no lane (SM70 (1,1,1): 8..15) is refused: CuTe's coordinate for it
        names another thread's lane."""
        top = max(self.num_threads, cosize(self.thr_layout_vmnk))
        if isinstance(thr_idx, bool) or not isinstance(thr_idx, int) or not 0 <= thr_idx < top:
            raise LayoutError(f"thread {thr_idx!r} out of range: the tiled MMA's threads are lanes 0..{top - 1}")
        crd = get_flat_coord(self.thr_layout_vmnk, thr_idx)
        if thr_idx >= self.num_threads and self.thr_layout_vmnk(crd) != thr_idx:  # past the count and no lane
            raise LayoutError(f"thread {thr_idx} out of range: the tiled MMA has {self.num_threads} threads and "
                              f"{thr_idx} is not one of the lanes of thr_layout_vmnk {self.thr_layout_vmnk} (CuTe's "
                              f"get_slice({thr_idx}) would take the coordinate {crd}, lane "
                              f"{self.thr_layout_vmnk(crd)})")
        return crd  # type: ignore[return-value]

    def _partition(self, which: str, tensor: Any, thr_idx: int, off_tensor: bool = False) -> tuple[Layout, int]:
        """``partition_A`` / ``_B`` / ``_C``: thread ``thr_idx``'s (MMA, MMA_M, MMA_K) view of an M x K (N x K, M x N)
        tensor, and its origin offset; of a coordinate tensor, the thread's coordinates (a CoordTensor). Refused
        where the thread's MMA tile starts past the tensor (a tensor smaller than the tiled MMA's tile): CuTe's
        origin is off the tensor there (named where it is known)."""
        if isinstance(tensor, CoordTensor):
            return tensor.moved(*self._partition(which, tensor.layout, thr_idx, off_tensor))
        v, m, n, k = self._thr_vmnk(thr_idx)
        a, b = {"A": (m, k), "B": (n, k), "C": (m, n)}[which]
        lay = _as_layout(tensor)
        frg = self._thrfrg(lay, which)
        sub, off = slice_and_offset(((v, (a, b)), None), frg)  # ((FrgV, (RestM, RestN)))
        sub = _unfold(sub[0] if len(sub) == 1 else sub)  # (FrgV, RestM, RestN)
        past = [(c, e, t) for t, (c, e) in enumerate(zip((a, b), self.atom.operand_shape(which), strict=True))
                if c * e >= size(lay[t])]  # the thread's atom tile starts past the tensor along mode t
        if past and not off_tensor:  # CuTe's rest mode keeps its stride past the tensor: c * e steps of the mode
            c, e, t = past[0]
            keep = all(isinstance(lay[u].shape, int) and isinstance(lay[u].stride, int) and
                       self.permutation[_MNK[which][u]] is None for _, _, u in past)
            cute = (f"; CuTe prints {sub} @ {off + sum(c * e * lay[u].stride for c, e, u in past)}, elements off the "
                    "tensor" if keep and all(size(lay[u]) <= e for _, e, u in past) else "")
            raise LayoutError(f"partition_{which}: thread {thr_idx}'s MMA tile starts at {c * e} along mode {t}, past "
                              f"the tensor's {size(lay[t])} (the tiled MMA's tile is {self.tile_shape(which)}, the "
                              f"tensor {it.product_each(lay.shape)}){cute}")
        return sub, off

    partition_A = partialmethod(_partition, "A")
    partition_B = partialmethod(_partition, "B")
    partition_C = partialmethod(_partition, "C")

    # ------------------------------------------------------------------ CuTe's TiledMMA::get_layout*_TV
    def _thridx_2_thrid(self) -> Layout:
        """thr_idx -> (ThrV, ThrM, ThrN, ThrK)."""
        vmnk = self.thr_layout_vmnk
        return composition(Layout((size(vmnk), 1), (1, 0)), right_inverse(make_layout(vmnk, complement(vmnk))))

    def get_layout_TV(self, which: str) -> Layout:
        """CuTe's ``get_layoutA_TV`` / ``B`` / ``C``: (thr_idx, val) -> column-major index of the operand's tile
        (:meth:`tile_shape`). For A and B, CuTe's ``atile`` / ``btile``: the (ThrM, ThrN) threads map to one operand
        thread, stride 0 on the other (threads along N read the same A, threads along M the same B)."""
        key = which.upper()
        if key not in ("A", "B", "C"):
            raise LayoutError(f"operand must be A, B or C, not {which!r}")
        frg = self._thrfrg(Layout(self.tile_shape(key)), key)
        if key != "C":
            vmnk = self.thr_layout_vmnk
            tile = (None, (Layout((size(vmnk[1]), size(vmnk[2])), (1, 0) if key == "A" else (0, 1)), None))
            frg = composition(frg, (tile, None))
        return composition(frg, (self._thridx_2_thrid(), None))

    get_layoutA_TV = partialmethod(get_layout_TV, "A")
    get_layoutB_TV = partialmethod(get_layout_TV, "B")
    get_layoutC_TV = partialmethod(get_layout_TV, "C")

    def tile_shape(self, which: str) -> tuple[int, int]:
        """(M, K), (N, K) or (M, N) of ``tile_size_mnk``."""
        i, j = _MNK[which.upper()]
        return self.tile_size_mnk(i), self.tile_size_mnk(j)

    # ------------------------------------------------------------------ partition_shape / partition_fragment
    def _partition_shape(self, which: str, shape: Any) -> Any:
        """CuTe's ``partition_shape_A(mma, (M, K))`` (``_B``, ``_C``): (MMA, MMA_M, MMA_K) of one thread's A."""
        dims = tuple(shape) if isinstance(shape, list | tuple) else (shape,)
        if len(dims) < 2 or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in it.flatten(
                dims)):
            raise LayoutError(f"partition_shape_{which}: expected a shape of rank >= 2 of positive integers, not "
                              f"{shape!r}")
        frg = self._thrfrg(Layout(dims), which)  # ((ThrV, (ThrM, ThrK)), (FrgV, (RestM, RestK, ...)))
        sub = slice_layout((0, None), frg)
        return _unfold(sub[0] if len(sub) == 1 else sub).shape  # (FrgV, RestM, RestK, ...)

    partition_shape_A = partialmethod(_partition_shape, "A")
    partition_shape_B = partialmethod(_partition_shape, "B")
    partition_shape_C = partialmethod(_partition_shape, "C")

    def _fragment(self, which: str, tensor_layout: Any, thr_idx: int) -> Layout:
        """The layout of the registers thread ``thr_idx`` holds for its slice of A or B (CuTe's
        ``thr_mma.partition_fragment_A(tensor)``): ``make_fragment_like(partition_A(tensor))``, or for wgmma's SS
        form, whose A stays in shared memory, the partition itself (a tensor of descriptors over it). For C, the
        accumulators: a compact column-major layout of ``partition_C``'s shape (CuTe's make_fragment_C)."""
        if not isinstance(self.atom, MMAAtom):
            raise LayoutError(f"{self.atom.name}'s fragments are shared-memory descriptors and tensor memory, not "
                              "registers (sm100.umma_desc, sm100_tmem.accumulator_layout)")
        got = self._partition(which, tensor_layout, thr_idx, off_tensor=True)  # registers, wherever the tile
        part = got.layout if isinstance(got, CoordTensor) else got[0]  # of a coordinate tensor: its layout
        if which == "C":
            return Layout(part.shape)
        if self.atom.smem_operand(which):  # MakeTensor<GMMA::smem_desc>: recast to uint128_t, mode 0 -> 1:0
            per = 128 // self.atom.value_bits(which)
            return make_layout(Layout(1, 0), *(upcast(part[i], per) for i in range(1, len(part))))
        return make_fragment_like(part)

    partition_fragment_A = partialmethod(_fragment, "A")
    partition_fragment_B = partialmethod(_fragment, "B")
    partition_fragment_C = partialmethod(_fragment, "C")


def make_tiled_mma(mma_atom: str | MMAAtom, atom_layout: Any = None,
                   permutation: tuple[Any, ...] | None = None) -> TiledMMA:
    """CuTe's ``make_tiled_mma(MMA_Atom, atom_layout = (1,1,1), permutation_mnk = (_, _, _))``.

    ``thr_layout_vmnk = tiled_product(atom ThrID, atom_layout)``; the tile is the atom shape times the atom layout
    unless a permutation (one layout, size or None per M, N, K) says otherwise. As CuTe's ``append<3>``, an atom
    layout of rank < 3 is padded with ``1:0`` and a permutation of fewer than three entries with ``_`` (None); a
    lone layout or size is the M entry.
    """
    atom = get(mma_atom) if isinstance(mma_atom, str) else mma_atom
    if not isinstance(atom, MMAOperands):  # the SM70-SM90 atoms, and Blackwell's (algebra.hw.sm100.umma)
        kind = "a copy atom, not an MMA atom" if isinstance(atom, CopyAtom) else "not an MMA atom"
        raise LayoutError(f"{getattr(atom, 'name', atom)} is {kind}")
    lay = _as_layout(atom_layout) if atom_layout is not None else Layout((1, 1, 1))
    if len(lay) > 3:
        raise LayoutError(f"atom_layout must have rank <= 3 (M, N, K), not {lay}")
    while len(lay) < 3:
        lay = make_layout(*lay, Layout(1))
    vmnk = tiled_product(atom.thr_id, lay)
    if permutation is None:
        permutation = ()
    elif not isinstance(permutation, list | tuple):  # CuTe's append<3> wraps a lone layout or size: (p, _, _)
        permutation = (permutation,)
    if len(permutation) > 3:
        raise LayoutError(f"permutation takes up to three entries (M, N, K: each a layout, a size or None), not "
                          f"{len(permutation)}: {permutation!r} (CuTe's append<3> static_asserts)")
    perm = tuple(permutation) + (None,) * (3 - len(permutation))  # CuTe: append<3>(permutations, _)
    perm = tuple(Layout(p) if isinstance(p, int) else (_as_layout(p) if p is not None else None) for p in perm)
    return TiledMMA(atom, vmnk, perm)  # type: ignore[arg-type]


def _tiled_copy_operand(which: str, copy_atom: str | CopyAtom, tiled_mma: TiledMMA,
                        element_bits: int | None = None) -> TiledCopy:
    """CuTe's ``make_tiled_copy_A(Copy_Atom<Op, T>{}, mma)`` (``_B``, ``_C``): the TV layout ``mma.get_layoutA_TV()``
    over the tile_M x tile_K tile (tile_N x tile_K, tile_M x tile_N), so each thread copies exactly the values its
    MMA reads (for C: the epilogue's copy of the accumulators). T has 16 bits (32 for C) unless ``element_bits``."""
    if element_bits is None:
        element_bits = 32 if which == "C" else 16
    if not isinstance(tiled_mma, TiledMMA):
        raise LayoutError(f"make_tiled_copy_{which} needs a TiledMMA (atoms.make_tiled_mma), not {tiled_mma!r}")
    return make_tiled_copy_impl(copy_atom, tiled_mma.get_layout_TV(which), tiled_mma.tile_shape(which),
                                element_bits, what=f"make_tiled_copy_{which} ({tiled_mma.atom.name})")


make_tiled_copy_A = partial(_tiled_copy_operand, "A")
make_tiled_copy_B = partial(_tiled_copy_operand, "B")
make_tiled_copy_C = partial(_tiled_copy_operand, "C")
