"""``/api/atoms``: MMA and copy atoms as TV grids; ``/api/tiled``: tiled copies / MMAs; ``/api/sectors``: a thread
partition's sector efficiency; ``/api/tma``: the TMA tensor map builder; ``/api/gmma``: GMMA smem atoms and the wgmma
descriptor."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from algebra import LayoutError, atoms
from app.budget import BudgetedRoute
from app.schemas import AtomOut, AtomSummary, RequestBody
from app.services import kernel_path as KP
from app.services import tiled as T
from app.services import tv as S
from app.services import walkthrough as W

router = APIRouter(route_class=BudgetedRoute, prefix="/api", tags=["atoms"])


@router.get("/atoms", response_model=list[AtomSummary])
def list_atoms() -> list[dict]:
    """Every atom name (CuTe's spelling) with its kind, ``mma`` or ``copy``."""
    mma = set(atoms.mma_names())
    return [{"name": n, "kind": "mma" if n in mma else "copy"} for n in atoms.names()]


@router.get("/atoms/{name}", response_model=AtomOut,
            responses={422: {"description": "unknown atom, or an element size the copy atom cannot move"}})
def get_atom(name: str, element_bits: int = 16) -> dict:
    """The atom's operands (MMA: A, B, C; copy: src, dst) as grids: ``threads[m][n]`` / ``values[m][n]`` hold the
    (thread, value) owning element (m, n)."""
    first = S.tv_view(name, "C" if name in set(atoms.mma_names()) else "src", element_bits)
    views = [S.tv_view(name, op, element_bits) for op in first.operands]
    return {"name": first.name, "kind": first.kind, "shape": first.shape, "operands": [v.to_json() for v in views]}


class SectorsIn(RequestBody):
    tv: str = Field(..., min_length=1, max_length=4000, examples=["((16,2),4):((1,16),32)"],
                    description="(thread, value) -> element offset")
    element_bytes: int = Field(4, ge=1, le=16)
    vector: int | None = Field(None, ge=1, le=16)


@router.post("/sectors")
def post_sectors(body: SectorsIn) -> dict:
    """32-byte sectors (and the 128-byte lines they fall in) per instruction for warp 0 of the partition, and the
    overall utilization."""
    v = S.sector_view(body.tv, body.element_bytes, body.vector)
    return {"tv": v.tv, "vector": v.vector, "max_vector": v.max_vector, "total_sectors": v.total_sectors,
            "total_lines": v.total_lines, "utilization": v.utilization, "instructions": v.instructions}


class TiledIn(RequestBody):
    atom: str = Field(..., min_length=1, max_length=80, examples=["SM80_CP_ASYNC_CACHEALWAYS_16B"])
    thr_layout: str = Field("(32,1):(1,0)", max_length=400, examples=["(16,8):(8,1)"],
                            description="copy atoms: the thread layout of make_tiled_copy")
    val_layout: str = Field("1:0", max_length=400, examples=["(1,8):(8,1)"],
                            description="copy atoms: the value layout of make_tiled_copy")
    element_bits: int = Field(16, ge=8, le=128)
    atom_layout: str = Field("(1,1,1)", max_length=400, description="MMA atoms: make_tiled_mma's (M,N,K) layout "
                             "(also the layout of ``mma`` for make_tiled_copy_A/B/C)")
    operand: str = Field("C", max_length=2, description="MMA atoms: A, B or C (the operand drawn); copy atoms with "
                         "``mma``: the operand make_tiled_copy_A/B/C feeds")
    permutation: str = Field("", max_length=400, examples=["_,32,_"],
                             description="make_tiled_mma's permutation: up to three entries M,N,K (the rest _), "
                                         "each _, a size or a layout (blank: none)")
    layout_tv: str = Field("", max_length=400, examples=["((8,16),8):((128,1),16)"],
                           description="copy atoms: make_tiled_copy from a TV layout (the CuTe DSL's form), with "
                                       "``tiler``")
    tiler: str = Field("", max_length=40, examples=["16,64"], description="copy atoms: the tile M,N of layout_tv")
    mma: str = Field("", max_length=80, examples=["SM80_16x8x16_F32F16F16F32_TN"],
                     description="copy atoms: make_tiled_copy_<operand>(atom, make_tiled_mma(mma, atom_layout, "
                                 "permutation))")


@router.post("/tiled", responses={422: {"description": "unknown atom, malformed layout, a tiling CuTe refuses or "
                                                       "a copy atom that does not fit the MMA"}})
def post_tiled(body: TiledIn) -> dict:
    """``make_tiled_copy`` (copy atoms: from thread / value layouts, from ``layout_tv`` and ``tiler``, or
    ``make_tiled_copy_A/B/C`` of the tiled MMA ``mma``) or ``make_tiled_mma`` (MMA atoms, with ``permutation``) over
    its whole tile: ``threads[m][n]`` / ``values[m][n]`` own element (m, n) (column-major tile index; the lowest
    (thread, value) where several claim it). A copy adds ``tiler``, ``layout_S_TV``, ``layout_D_TV`` (CuTe's
    get_layoutS_TV / get_layoutD_TV) and ``coverage`` (``duplicates`` / ``uncovered`` counts of the tile's elements,
    ``outside`` claims past the tile, and which elements and threads); an MMA adds ``layout_TV`` (get_layoutA/B/C_TV)
    and ``tile_mnk``."""
    kind = "mma" if body.atom.strip() in set(atoms.mma_names()) else "copy"
    return T.tiled_json(T.tiled_view(kind, body.atom, body.thr_layout, body.val_layout, body.element_bits,
                                     body.atom_layout, body.operand, body.permutation, body.layout_tv, body.tiler,
                                     body.mma))


class TmaIn(RequestBody):
    dtype: str = Field("FLOAT16", max_length=60, description="CUtensorMapDataType (FLOAT16, BFLOAT16, ... or fp16)")
    tensor: str = Field(..., min_length=1, max_length=400, examples=["(4096,4096):(4096,1)"],
                        description="the global tensor, a flat layout in elements (one stride-1 mode)")
    box: str = Field(..., min_length=1, max_length=100, examples=["64,64"], description="box extent per mode")
    swizzle: str = Field("atom", max_length=16, description="atom (the smem atom's), NONE, 32B, 64B or 128B")
    major: str = Field("K", max_length=4, description="smem atom: K or MN")
    span_bytes: int = Field(128, description="smem atom: 16 (INTER), 32, 64 or 128")


@router.post("/tma", responses={422: {"description": "malformed tensor / box, or an atom that does not fit"}})
def post_tma(body: TmaIn) -> dict:
    """The ``cuTensorMapEncodeTiled`` arguments for copying the tensor in boxes into the GMMA smem atom's layout,
    every documented rule with its verdict, and ``valid``."""
    from algebra.hw import hopper as hop
    from app.services import hopper as H

    if body.swizzle not in H.TMA_SWIZZLES:
        raise LayoutError(f"swizzle must be one of {', '.join(H.TMA_SWIZZLES)}, not {body.swizzle!r}")
    bits = 8 * hop.TMA_DTYPES[hop.tma_dtype(body.dtype)]
    atom = H.atom_view(body.major, body.span_bytes, bits).atom if body.swizzle == "atom" else None
    return H.tma_view(body.dtype, body.tensor, body.box, body.swizzle, atom).to_dict()


class TmaPartitionIn(RequestBody):
    tensor: str = Field(..., min_length=1, max_length=400, examples=["(4096,4096):(4096,1)"],
                        description="the global tensor, a flat layout in elements")
    smem: str = Field(..., min_length=1, max_length=400, examples=["Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))"],
                      description="the CTA tile's shared-memory layout (may be swizzled)")
    tile: str = Field(..., min_length=1, max_length=40, examples=["128,64"], description="the CTA tile")
    cluster_size: int = Field(1, description="CTAs multicasting one load: 1 to 16 (the box must split evenly)")
    dtype: str = Field("FLOAT16", max_length=60, description="CUtensorMapDataType")
    cta_coord: str = Field("", max_length=40, description="the CTA tile's coordinate in the grid of tiles")


@router.post("/tma/partition", responses={422: {"description": "malformed layouts, a tile that is not the smem "
                                                                 "layout's shape, a box the cluster does not divide"}})
def post_tma_partition(body: TmaPartitionIn) -> dict:
    """CuTe's ``make_tma_atom(op, gA, sA_layout, cta_tile, cluster_size)`` and ``tma_partition``: the TMA
    dimensions (global modes in shared-memory order), the box (all CTAs together and one CTA's part), the instructions
    per tile, the TMA coordinate tensor (``get_tma_tensor``), each CTA's source / destination view, ``owners`` (the
    CTA, and instruction, loading each element of the tile) and the cuTensorMapEncodeTiled arguments with every rule
    checked."""
    from app.services import tma_cluster as TC

    if not 1 <= body.cluster_size <= 16:
        raise LayoutError(f"cluster_size must be 1 to 16, not {body.cluster_size}")
    return TC.tma_json(TC.tma_cluster_view(body.tensor, body.smem, body.tile, body.cluster_size, body.dtype,
                                           body.cta_coord))


class GmmaIn(RequestBody):
    major: str = Field("K", max_length=4, description="K or MN")
    span_bytes: int = Field(128, description="16 (INTER), 32, 64 or 128: the swizzle span of one atom row")
    element_bits: int = Field(16, description="8, 16 or 32")
    tile_mn: int = Field(64, ge=1, le=4096, description="the smem tile built by tile_to_shape(atom, (MN, K))")
    tile_k: int = Field(64, ge=1, le=4096)
    start_address: int = Field(0, ge=0, lt=1 << 18, description="the tile's shared-memory byte address")


@router.post("/gmma", responses={422: {"description": "no such atom, or a tile the atom does not divide"}})
def post_gmma(body: GmmaIn) -> dict:
    """The GMMA smem layout atom (``GMMA::Layout_<major>_<SW>_Atom<T>``: its element layout and offsets) and the wgmma
    descriptor of the first K-block of the tile (``make_gmma_desc``), field by field."""
    from app.services import hopper as H

    view = H.atom_view(body.major.upper(), body.span_bytes, body.element_bits)
    desc = H.desc_view(view.atom, str(body.tile_mn), str(body.tile_k), str(body.start_address))
    return {"atom": view.cpp_name, "layout": str(view.atom), "offsets": view.grid.text,
            "byte_swizzle": list(view.atom.byte_swizzle), "descriptor": str(desc), "fields": desc.fields()}


class PartitionIn(RequestBody):
    atom: str = Field(..., min_length=1, max_length=80, examples=["SM80_CP_ASYNC_CACHEALWAYS_16B"])
    thread: int = Field(0, ge=0, le=1 << 20,
                        description="the thread followed (thr_copy / thr_mma = get_slice(t)); of an MMA, one of its "
                                    "lanes (thr_layout_vmnk's offsets: SM70 (1,2,1) has 0-7 and 16-23)")
    thr_layout: str = Field("(16,8):(8,1)", max_length=400, description="copy: make_tiled_copy's thread layout")
    val_layout: str = Field("(1,8):(8,1)", max_length=400, description="copy: make_tiled_copy's value layout")
    element_bits: int = Field(16, ge=8, le=128, description="copy: the element size")
    src: str = Field("(16,64):(64,1)", max_length=400, description="copy: the source tensor's layout")
    dst: str = Field("(16,64):(64,1)", max_length=400, description="copy: the destination (may be Sw<B,M,S> o ...)")
    atom_layout: str = Field("(2,2,1)", max_length=400, description="MMA: make_tiled_mma's (M,N,K) atom layout")
    tile: str = Field("", max_length=40, description="MMA: the tile M,N,K (blank: the tiled MMA's own)")
    permutation: str = Field("", max_length=400, examples=["_,32,_"],
                             description="MMA: make_tiled_mma's permutation (up to three entries M,N,K, the rest _: "
                                         "_, a size or a layout)")


@router.post("/partition", responses={422: {"description": "unknown atom, malformed layout, a tiling CuTe refuses, "
                                                           "or a thread out of range"}})
def post_partition(body: PartitionIn) -> dict:
    """One thread's partitions: for a copy atom ``thr_copy.partition_S(src)`` / ``partition_D(dst)``, for an MMA atom
    ``thr_mma.partition_A/B/C`` of an M x N x K tile. Each part: the fragment layout and origin offset (CuTe's), and
    ``cells``: the [row, column] of every element of the tensor the thread's fragment covers (the tensor drawn
    rank-2, column-major index ``row + rows * column``). An MMA adds ``fragments`` (CuTe's
    ``partition_fragment_A/B/C``: the layout of the registers the thread holds), ``partition_shapes``
    (``partition_shape_A/B/C`` of the tile), ``layout_TV`` (``get_layoutA/B/C_TV``) and ``tile_mnk``; a copy adds
    ``coverage`` (duplicates / holes of the tiled copy's tile)."""
    if body.atom.strip() in set(atoms.mma_names()):
        return KP.mma_vocab(body.atom, body.atom_layout, body.permutation, body.tile, body.thread)
    else:
        walk = W.copy_walk(body.atom, body.thr_layout, body.val_layout, body.element_bits, body.src, body.dst,
                           str(body.thread))
    parts = [{"call": p.call, "fragment": p.fragment, "offset": p.offset, "rows": p.grid.rows, "cols": p.grid.cols,
              "cells": sorted([i, j] for i, j in p.grid.marks)} for p in walk.parts if p.fragment]
    tv = T.tiled_copy_view(body.atom.strip(), body.thr_layout.strip(), body.val_layout.strip(), body.element_bits)
    return {"kind": walk.kind, "atom": walk.atom, "thread": walk.thread, "num_threads": walk.num_threads,
            "parts": parts, "notes": walk.notes, "coverage": tv.coverage, "layout_S_TV": tv.layout_s,
            "layout_D_TV": tv.layout_d}
