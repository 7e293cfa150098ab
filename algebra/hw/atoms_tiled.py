"""Tiled copies and tiled MMAs, built and partitioned as CuTe's ``make_tiled_copy`` / ``make_tiled_mma`` do.

``make_tiled_copy(atom, thr, val)``: ``layout_mn = raked_product(thr, val)``; ``tv = right_inverse(layout_mn)
.with_shape(size(thr), size(val))``; ``tiler = product_each(shape(layout_mn))``. Partitions follow CuTe's
``tidfrg_S/D`` and ``thrfrg_A/B/C``, written with the algebra's own operations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, make_layout, size, slice_and_offset
from algebra.core.memo import bounded
from algebra.core.ops import coalesce, composition, right_inverse
from algebra.core.products import logical_divide, raked_product, tiled_product, zipped_divide
from algebra.hw.atoms import CopyAtom, MMAAtom, get


def _unfold(layout: Layout) -> Layout:
    """(X, (R0, R1, ...)) -> (X, R0, R1, ...): CuTe's ``tensor(make_coord(_, _), _)`` unfolding of the rest mode."""
    rest = layout[1]
    modes = list(rest) if it.is_tuple(rest.shape) else [rest]
    return make_layout(layout[0], *modes)


def _zip2(layout: Layout) -> Layout:
    """((a, b), (c, d)) -> ((a, c), (b, d))."""
    m0, m1 = layout[0], layout[1]
    return make_layout(make_layout(m0[0], m1[0]), make_layout(m0[1], m1[1]))


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

    def _tile2thrfrg(self, tensor: Layout, ref2trg: Layout) -> Layout:
        nthr = size(self.atom.thr_id)
        nval = size(self.atom.ref_layout(self.element_bits)[1])
        atom_tv = zipped_divide(self.tv_layout, (nthr, nval))  # ((atom_tid, atom_val), (rest_tid, rest_val))
        trg_tv = make_layout(composition(atom_tv[0], ref2trg), atom_tv[1])
        thrval2mn = coalesce(_zip2(trg_tv), (1, (1, 1)))  # ((tid), (val)) -> (m, n)
        tiles = zipped_divide(tensor, tuple(Layout(t) for t in self.tiler))
        return _unfold(composition(tiles, (thrval2mn, None)))  # ((thr, val), rest_m, rest_n, ...)

    @bounded(4 << 20, "tiled copy fragments")  # partition_S / _D slice it once per thread
    def tidfrg_S(self, tensor: Any) -> Layout:
        """((thread, value), rest...) view of a source tile (CuTe's ``tidfrg_S``)."""
        ref = self.atom.ref_layout(self.element_bits)
        return self._tile2thrfrg(_as_layout(tensor), composition(right_inverse(ref), self.atom.src_layout(
            self.element_bits)))

    @bounded(4 << 20, "tiled copy fragments")
    def tidfrg_D(self, tensor: Any) -> Layout:
        ref = self.atom.ref_layout(self.element_bits)
        return self._tile2thrfrg(_as_layout(tensor), composition(right_inverse(ref), self.atom.dst_layout(
            self.element_bits)))

    def _partition(self, frg: Layout, thr_idx: int) -> tuple[Layout, int]:
        if not 0 <= thr_idx < self.num_threads:
            raise LayoutError(f"thread {thr_idx} out of range: the tiled copy has {self.num_threads} threads")
        crd = ((thr_idx, None),) + (None,) * (len(frg) - 1)
        return slice_and_offset(crd, frg)

    def partition_S(self, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        """Thread ``thr_idx``'s (CPY, CPY_M, CPY_N, ...) view of a source tensor, and the offset of its origin."""
        return self._partition(self.tidfrg_S(tensor), thr_idx)

    def partition_D(self, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        return self._partition(self.tidfrg_D(tensor), thr_idx)


def _as_layout(x: Any) -> Layout:
    if isinstance(x, str):
        from algebra.core.notation import parse

        x = parse(x)
    if not hasattr(x, "shape"):
        raise LayoutError(f"expected a layout, not {x!r}")
    return x


def make_tiled_copy(copy_atom: str | CopyAtom, thr_layout: Any, val_layout: Any = None,
                    element_bits: int = 16) -> TiledCopy:
    """CuTe's ``make_tiled_copy(Copy_Atom<Op, T>{}, thr_layout, val_layout)`` with T of ``element_bits``.

    Post-conditions: ``tiler == product_each(shape(raked_product(thr, val)))``; the TV layout has
    ``size(thr)`` threads and ``size(val)`` values; refuses when the tiling has fewer threads or values than the atom.
    """
    atom = get(copy_atom) if isinstance(copy_atom, str) else copy_atom
    if not isinstance(atom, CopyAtom):
        raise LayoutError(f"{atom.name} is an MMA atom, not a copy atom")
    thr = _as_layout(thr_layout)
    val = _as_layout(val_layout) if val_layout is not None else Layout(1)
    layout_mn = raked_product(thr, val)
    tv = right_inverse(layout_mn).with_shape((size(thr), size(val)))
    tiler = tuple(it.product_each(layout_mn.shape)) if it.is_tuple(layout_mn.shape) else (size(layout_mn),)
    nthr, nval = size(atom.thr_id), atom.num_values(element_bits)
    if size(thr) % nthr:
        raise LayoutError(f"TiledCopy uses too few threads for {atom.name}: {size(thr)} % {nthr} != 0")
    if size(val) % nval:
        raise LayoutError(f"TiledCopy uses too few values for {atom.name}: {size(val)} % {nval} != 0 "
                          f"({nval} values of {element_bits} bits per thread per instruction)")
    return TiledCopy(atom, element_bits, tv, tiler)


@dataclass(frozen=True)
class TiledMMA:
    """An MMA atom replicated over ``atom_layout`` (M, N, K) and permuted by ``permutation`` (CuTe's TiledMMA)."""

    atom: MMAAtom
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
        i, j = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[which]
        t_tensor = logical_divide(tensor, (self.permutation[i], self.permutation[j]))
        shp = self.atom.operand_shape(which)
        ab = zipped_divide(t_tensor, (Layout(shp[0]), Layout(shp[1])))  # ((AtomM, AtomK), (RestM, RestK))
        tv = composition(ab, (self.atom.operand(which), None))  # ((ThrV, FrgV), (RestM, RestK))
        thr_tile = (None, (Layout(size(self.thr_layout_vmnk[i + 1])), Layout(size(self.thr_layout_vmnk[j + 1]))))
        return zipped_divide(tv, thr_tile)  # ((ThrV, (ThrM, ThrK)), (FrgV, (RestM, RestK)))

    def thrfrg_A(self, tensor: Any) -> Layout:
        return self._thrfrg(_as_layout(tensor), "A")

    def thrfrg_B(self, tensor: Any) -> Layout:
        return self._thrfrg(_as_layout(tensor), "B")

    def thrfrg_C(self, tensor: Any) -> Layout:
        return self._thrfrg(_as_layout(tensor), "C")

    def _partition(self, tensor: Any, which: str, thr_idx: int) -> tuple[Layout, int]:
        if not 0 <= thr_idx < self.num_threads:
            raise LayoutError(f"thread {thr_idx} out of range: the tiled MMA has {self.num_threads} threads")
        v, m, n, k = it.idx2crd(thr_idx, self.thr_layout_vmnk.shape)
        a, b = {"A": (m, k), "B": (n, k), "C": (m, n)}[which]
        frg = self._thrfrg(_as_layout(tensor), which)
        sub, off = slice_and_offset(((v, (a, b)), None), frg)  # ((FrgV, (RestM, RestN)))
        return _unfold(sub[0] if len(sub) == 1 else sub), off  # (FrgV, RestM, RestN)

    def partition_A(self, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        """Thread ``thr_idx``'s (MMA, MMA_M, MMA_K) view of an M x K tensor, and its origin offset."""
        return self._partition(tensor, "A", thr_idx)

    def partition_B(self, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        return self._partition(tensor, "B", thr_idx)

    def partition_C(self, tensor: Any, thr_idx: int) -> tuple[Layout, int]:
        return self._partition(tensor, "C", thr_idx)


def make_tiled_mma(mma_atom: str | MMAAtom, atom_layout: Any = None,
                   permutation: tuple[Any, Any, Any] | None = None) -> TiledMMA:
    """CuTe's ``make_tiled_mma(MMA_Atom, atom_layout = (1,1,1), permutation_mnk = (_, _, _))``.

    ``thr_layout_vmnk = tiled_product(atom ThrID, atom_layout)``; the tile is the atom shape times the atom layout
    unless a permutation (one layout or None per M, N, K) says otherwise.
    """
    atom = get(mma_atom) if isinstance(mma_atom, str) else mma_atom
    if not isinstance(atom, MMAAtom):
        raise LayoutError(f"{atom.name} is a copy atom, not an MMA atom")
    lay = _as_layout(atom_layout) if atom_layout is not None else Layout((1, 1, 1))
    if len(lay) > 3:
        raise LayoutError(f"atom_layout must have rank <= 3 (M, N, K), not {lay}")
    while len(lay) < 3:
        lay = make_layout(*list(lay), Layout(1)) if it.is_tuple(lay.shape) else make_layout(lay, Layout(1))
    vmnk = tiled_product(atom.thr_id, lay)
    perm = tuple(permutation) if permutation is not None else (None, None, None)
    if len(perm) != 3:
        raise LayoutError("permutation needs one entry (a layout, a size or None) per M, N, K")
    perm = tuple(Layout(p) if isinstance(p, int) else (_as_layout(p) if p is not None else None) for p in perm)
    return TiledMMA(atom, vmnk, perm)  # type: ignore[arg-type]
