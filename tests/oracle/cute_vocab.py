"""CuTe's kernel vocabulary against CuTe C++: tiled MMAs (``get_layout{A,B,C}_TV``, ``partition_shape_*``,
``partition_{A,B,C}``, ``partition_fragment_*``), the tiled copies that feed them (``make_tiled_copy_{A,B,C}``),
``make_tiled_copy`` in both forms (thread/value layouts; a TV layout and a tiler) and ``local_tile`` with a projection.

A case is a dict (JSON); ``program(cases)`` is one host-only translation unit that prints ``key<TAB>value`` lines
(a case CuTe does not compile is ``<i>.refused`` and must be refused here); ``ours(case)`` gives the same keys from
``algebra``. Values are compared as printed, underscores removed.

One case in ten (drawn from its own stream, ``seed + 3``, so the other cases of a seed are unchanged) is a copy atom
with any of 8-, 16-, 32- and 64-bit elements (``_type_case``): ``Copy_Atom<Op, T>``'s three value layouts, where
CuTe's static_assert refuses the pairs whose recast loses threads (both sides must refuse) and prints
``(1,1):(0,1)`` for a copy narrower than T (refused here, naming that print).

    python tests/oracle/cute_vocab.py --seed 3 --n 40 --out tests/oracle/data/vocab_s3.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cute_cpp import compile_refusing, cvalue, printed  # noqa: E402

import algebra as A  # noqa: E402
from algebra import atoms  # noqa: E402

SM90_T = "SM90::GMMA::MMA_64x{n}x16_{t}_{form}<GMMA::Major::K, GMMA::Major::K>"
#: MMA atoms: our name -> (C++ type, C++ element types of A, B, C)
MMAS: dict[str, tuple[str, str, str, str]] = {
    "SM80_16x8x16_F32F16F16F32_TN": ("SM80_16x8x16_F32F16F16F32_TN", "half_t", "half_t", "float"),
    "SM80_16x8x8_F16F16F16F16_TN": ("SM80_16x8x8_F16F16F16F16_TN", "half_t", "half_t", "half_t"),
    "SM80_16x8x8_F32TF32TF32F32_TN": ("SM80_16x8x8_F32TF32TF32F32_TN", "tfloat32_t", "tfloat32_t", "float"),
    "SM80_8x8x4_F64F64F64F64_TN": ("SM80_8x8x4_F64F64F64F64_TN", "double", "double", "double"),
    "SM70_8x8x4_F32F16F16F32_TN": ("SM70_8x8x4_F32F16F16F32_TN", "half_t", "half_t", "float"),
    "SM70_8x8x4_F16F16F16F16_NT": ("SM70_8x8x4_F16F16F16F16_NT", "half_t", "half_t", "half_t"),
    "SM90_64x64x16_F32F16F16_SS": (SM90_T.format(n=64, t="F32F16F16", form="SS"), "half_t", "half_t", "float"),
    "SM90_64x32x16_F16F16F16_RS": (SM90_T.format(n=32, t="F16F16F16", form="RS"), "half_t", "half_t", "half_t"),
}
#: more atoms for ``--wide``
MMAS_WIDE: dict[str, tuple[str, str, str, str]] = {
    "SM80_16x8x16_F32BF16BF16F32_TN": ("SM80_16x8x16_F32BF16BF16F32_TN", "bfloat16_t", "bfloat16_t", "float"),
    "SM80_16x8x32_S32S8S8S32_TN": ("SM80_16x8x32_S32S8S8S32_TN", "int8_t", "int8_t", "int32_t"),
    "SM80_16x8x4_F32TF32TF32F32_TN": ("SM80_16x8x4_F32TF32TF32F32_TN", "tfloat32_t", "tfloat32_t", "float"),
    "SM70_8x8x4_F32F16F16F32_NN": ("SM70_8x8x4_F32F16F16F32_NN", "half_t", "half_t", "float"),
    "SM70_8x8x4_F16F16F16F16_TT": ("SM70_8x8x4_F16F16F16F16_TT", "half_t", "half_t", "half_t"),
    "SM90_64x8x16_F32BF16BF16_SS": (SM90_T.format(n=8, t="F32BF16BF16", form="SS"), "bfloat16_t", "bfloat16_t",
                                    "float"),
    "SM90_64x192x16_F32F16F16_RS": (SM90_T.format(n=192, t="F32F16F16", form="RS"), "half_t", "half_t", "float"),
    "SM90_64x256x16_F16F16F16_SS": (SM90_T.format(n=256, t="F16F16F16", form="SS"), "half_t", "half_t", "half_t"),
    "SM90_64x96x16_F32F16F16_SS": (SM90_T.format(n=96, t="F32F16F16", form="SS").replace("Major::K>", "Major::MN>"),
                                   "half_t", "half_t", "float"),
}
#: copy atoms: our name -> C++ op
COPIES: dict[str, str] = {
    "SM75_U32x1_LDSM_N": "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N": "SM75_U32x2_LDSM_N",
    "SM75_U32x4_LDSM_N": "SM75_U32x4_LDSM_N", "SM75_U16x2_LDSM_T": "SM75_U16x2_LDSM_T",
    "SM75_U16x4_LDSM_T": "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T": "SM75_U16x8_LDSM_T",
    "SM90_U32x2_STSM_N": "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N": "SM90_U32x4_STSM_N",
    "SM80_CP_ASYNC_CACHEALWAYS_16B": "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>",
    "SM80_CP_ASYNC_CACHEALWAYS_8B": "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>",
    "UniversalCopy_32b": "UniversalCopy<uint32_t>", "UniversalCopy_64b": "UniversalCopy<uint64_t>",
    "UniversalCopy_128b": "UniversalCopy<uint128_t>", "UniversalCopy_16b": "UniversalCopy<uint16_t>",
}
ELEM = {16: "half_t", 32: "float", 64: "double", 8: "uint8_t"}
BITS = {"half_t": 16, "float": 32, "tfloat32_t": 32, "double": 64, "bfloat16_t": 16, "int8_t": 8, "int32_t": 32}


# ------------------------------------------------------------------------------------------- cases


def _fits(copy: str, bits: int, tv: A.Layout) -> bool:
    """CuTe's TiledCopy asserts: threads and values are multiples of the reference layout's (AtomNumThr / AtomNumVal:
    ldmatrix x1 takes 2 16-bit values per thread, though its source addresses 8)."""
    atom = atoms.get(copy)
    try:
        ref = atom.ref_layout(bits)
        return A.size(tv[0]) % A.size(ref[0]) == 0 and A.size(tv[1]) % A.size(ref[1]) == 0
    except A.LayoutError:
        return False


def gen_cases(seed: int, n: int, wide: bool = False) -> list[dict]:
    """``n`` cases: tiled MMAs (with their tiled copies), tiled copies in both forms and projected local_tiles.
    ``wide``: tiled MMAs only (``_mma_wide``)."""
    rng, types = random.Random(seed), random.Random(seed + 3)
    out: list[dict] = []
    while wide and len(out) < n:
        out.append(_mma_wide(rng))
    layouts = ["(1,1,1)", "(2,1,1)", "(1,2,1)", "(2,2,1)", "(4,1,1)", "(1,4,1)", "(2,2,1):(2,1,0)", "(4,2,1)",
               "(1,1,2)"]
    while len(out) < n:
        r = rng.random()
        if r < 0.35:
            out.append(_mma_case(rng, layouts))
        elif r < 0.55:
            out.append(_copy_case(rng))
        elif r < 0.67:
            out.append(_tile_case(rng))
        elif r < 0.8:
            out.append(_cpart_case(rng))
        elif r < 0.9:
            out.append(_lpart_case(rng))
        else:
            out.append(_slice_case(rng))
        if types.random() < 0.1:
            out[-1] = _type_case(types)
    return out


def _type_case(rng: random.Random) -> dict:
    """A copy atom with an element type drawn from all four widths, whether CuTe takes the pair or not."""
    return {"kind": "atom_t", "atom": rng.choice(list(COPIES)), "bits": rng.choice([8, 16, 32, 64])}


def _mma_case(rng: random.Random, layouts: list[str]) -> dict:
    name = rng.choice(list(MMAS))
    lay = rng.choice(layouts[:6] if name.startswith("SM90") else layouts)
    if name.startswith("SM90"):
        lay = rng.choice(["(1,1,1)", "(2,1,1)", "(1,2,1)"])
    tm = atoms.make_tiled_mma(name, A.parse(lay))
    perm: list[Any] = [None, None, None]
    if rng.random() < 0.4 and not name.startswith("SM90"):
        m, n, k = (tm.tile_size_mnk(i) for i in range(3))
        choice = rng.choice(["sizeN", "permM", "sizeK", "permN"])
        if choice == "permN" and n % 4 == 0:
            perm[1] = f"({n // 4},2,2):(2,1,{n // 2})"  # a bijection of 0..n-1
        elif choice == "sizeN":
            perm[1] = 2 * n
        elif choice == "sizeK":
            perm[2] = 2 * k
        elif m % 8 == 0 and m >= 16:
            perm[0] = f"({m // 8},2,4):(2,1,{m // 4})"  # a bijection of 0..m-1
    tm = atoms.make_tiled_mma(name, A.parse(lay), _perm(perm))
    m, n, k = (tm.tile_size_mnk(i) for i in range(3))
    rm, rn, rk = rng.choice([1, 2]), rng.choice([1, 2]), rng.choice([1, 2])
    _, ta, tb, tc = MMAS[name]
    copies = {}
    for op, t in (("A", ta), ("B", tb), ("C", tc)):
        bits = BITS[t]
        tv = tm.get_layout_TV(op)
        good = [c for c in COPIES if _fits(c, bits, tv) and (bits == 16 or "LDSM" not in c and "STSM" not in c)]
        if op == "C":
            good = [c for c in good if "CP_ASYNC" not in c]
        if good:
            copies[op] = rng.choice(good)
    return {"kind": "mma", "atom": name, "layout": lay, "perm": perm, "thr": rng.randrange(tm.num_threads),
            "A": [m * rm, k * rk], "B": [n * rn, k * rk], "C": [m * rm, n * rn], "row_major": rng.random() < 0.5,
            "copies": copies, "identity": rng.choice("ABC")}


def _perm_layout(rng: random.Random, size: int) -> str:
    """A layout of ``size`` elements for a permutation tiler: a bijection of 0..size-1 (its modes' strides shuffled),
    or (one time in three) one with holes (cosize > size)."""
    f = []
    left = size
    while left > 1:
        d = rng.choice([x for x in (2, 4, 8) if left % x == 0] or [left])
        f.append(d)
        left //= d
    f = f or [1]
    order = rng.sample(range(len(f)), len(f))
    stride, acc = [0] * len(f), 1
    for j in order:
        stride[j] = acc
        acc *= f[j] * (2 if rng.random() < 0.15 else 1)
    return str(A.Layout(tuple(f), tuple(stride)))


def _mma_wide(rng: random.Random) -> dict:
    """Tiled MMAs of more atoms (bf16, s8, tf32 k4, SM70 NN/TT, wgmma N = 8 / 96 / 192 / 256, MN-major), every operand
    permuted (sizes, bijections, tilers with holes; wgmma too), atom layouts with strides, tiles that are not
    multiples of the tiled MMA's, with make_tiled_copy_A/B/C."""
    name = rng.choice(list(MMAS) + list(MMAS_WIDE))
    sm90 = name.startswith("SM90")
    lay = rng.choice(["(1,1,1)", "(2,1,1)", "(1,2,1)", "(2,1,1):(1,0,0)"] if sm90 else
                     ["(1,1,1)", "(2,1,1)", "(1,2,1)", "(2,2,1)", "(2,2,1):(2,1,0)", "(4,2,1)", "(1,1,2)",
                      "(2,2,2):(1,2,4)", "(2,2,1):(1,2,0)", "(1,4,1)"])
    tm = atoms.make_tiled_mma(name, A.parse(lay))
    perm: list[Any] = [None, None, None]
    for i in range(3):
        t = tm.tile_size_mnk(i)
        r = rng.random()
        if r < 0.25:
            perm[i] = t * rng.choice([1, 2])
        elif r < 0.55 and t <= 256:
            perm[i] = _perm_layout(rng, t)
    tm = atoms.make_tiled_mma(name, A.parse(lay), _perm(perm))
    m, n, k = (tm.tile_size_mnk(i) for i in range(3))
    rm, rn, rk = (rng.choice([1, 2, 1.5]) for _ in range(3))
    _, ta, tb, tc = {**MMAS, **MMAS_WIDE}[name]
    copies = {}
    for op, t in (("A", ta), ("B", tb), ("C", tc)):
        bits = BITS[t]
        try:
            tv = tm.get_layout_TV(op)
        except A.LayoutError:
            continue
        good = [c for c in COPIES if _fits(c, bits, tv) and (bits == 16 or "LDSM" not in c and "STSM" not in c)]
        if op == "C":
            good = [c for c in good if "CP_ASYNC" not in c]
        if good and rng.random() < 0.7:
            copies[op] = rng.choice(good)
    dims = [max(1, int(m * rm)), max(1, int(n * rn)), max(1, int(k * rk))]
    return {"kind": "mma", "atom": name, "layout": lay, "perm": perm, "thr": rng.randrange(tm.num_threads),
            "A": [dims[0], dims[2]], "B": [dims[1], dims[2]], "C": [dims[0], dims[1]],
            "row_major": rng.random() < 0.5, "copies": copies, "identity": rng.choice("ABC")}


ODD_LAYOUTS = ["((2,2),1,1)", "(2,(2,2),1)", "(2,2,1):(1,4,0)", "(2,2,1):(4,1,0)", "(2,1,1):(2,0,0)",
               "(1,2,1):(0,2,0)", "((2,2),2,1):((1,4),2,0)", "(4,1,1):(1,0,0)", "(2,2,1):(2,1,4)", "(1,1,2):(0,0,1)",
               "(2,1,2):(1,0,2)", "((1,2),(2,1),1)", "(2,2,1):(1,1,0)", "(3,1,1)", "(1,3,1)", "(2,2,1):(0,1,0)"]


def gen_odd_cases(seed: int, n: int) -> list[dict]:
    """Tiled MMAs (SM70 / SM80 atoms) with odd atom layouts (nested, gapped, stride-0 and overlapping thread modes,
    3 atoms along a mode) and permutations (sizes 2-3x the tile, transposes, strided, interleaved and gapped layouts),
    tiles of half to twice the tiled MMA's, with make_tiled_copy_A/B/C where a copy fits: CuTe's answers where it
    compiles, a refusal on both sides where it does not."""
    rng = random.Random(seed)
    names = [x for x in {**MMAS, **MMAS_WIDE} if not x.startswith("SM90")]
    out: list[dict] = []
    while len(out) < n:
        name, lay = rng.choice(names), rng.choice(ODD_LAYOUTS)
        perm: list[Any] = [None, None, None]
        try:
            tm = atoms.make_tiled_mma(name, A.parse(lay))
            for i in range(3):
                t, r = tm.tile_size_mnk(i), rng.random()
                if r < 0.2:
                    perm[i] = t * rng.choice([2, 3])
                elif r < 0.45 and t % 4 == 0:
                    perm[i] = rng.choice([f"({t // 4},4):(4,1)", f"(4,{t // 4}):({t // 4},1)", f"({t // 2},2):(2,1)",
                                          f"({t // 2},2):(1,{t})", f"(({t // 4},2),2):((2,1),{t // 2})"])
                elif r < 0.55:
                    perm[i] = f"{t}:2"
            tm = atoms.make_tiled_mma(name, A.parse(lay), _perm(perm))
            dims, thr = [tm.tile_size_mnk(i) for i in range(3)], rng.randrange(tm.num_threads)
        except A.LayoutError:  # CuTe must refuse it too
            tm, dims, thr = None, [32, 32, 16], 0
        m, nn, k = (max(1, int(d * rng.choice([1, 2, 1.5, 0.5]))) for d in dims)
        copies = {}
        for op, t in zip("ABC", {**MMAS, **MMAS_WIDE}[name][1:], strict=True):
            try:
                tv = tm.get_layout_TV(op) if tm is not None else None
            except A.LayoutError:
                tv = None
            good = [c for c in COPIES if tv is not None and _fits(c, BITS[t], tv) and (
                BITS[t] == 16 or "LDSM" not in c and "STSM" not in c) and not (op == "C" and "CP_ASYNC" in c)]
            if good and rng.random() < 0.6:
                copies[op] = rng.choice(good)
        out.append({"kind": "mma", "atom": name, "layout": lay, "perm": perm, "thr": thr, "A": [m, k], "B": [nn, k],
                    "C": [m, nn], "row_major": rng.random() < 0.5, "copies": copies, "identity": rng.choice("ABC")})
    return out


def _perm(perm: list[Any]) -> tuple:
    return tuple(p if p is None or isinstance(p, int) else A.parse(p) for p in perm)


def _copy_case(rng: random.Random) -> dict:
    name = rng.choice(list(COPIES))
    atom = atoms.get(name)
    bits = 16 if ("LDSM" in name or "STSM" in name) else rng.choice([b for b in (16, 32) if
                                                                     (A.size(atom.src) // atom.num_threads) % b == 0])
    nval = atom.num_values(bits)
    nthr = atom.num_threads
    if rng.random() < 0.5:  # thread / value layouts
        tm_, tn_ = rng.choice([(8, 4), (4, 8), (16, 2), (32, 1), (16, 8), (8, 16), (2, 16)])
        if nthr > 1 and tm_ * tn_ % nthr:
            tm_, tn_ = 8, 4
        thr = f"({tm_},{tn_}):({tn_},1)" if rng.random() < 0.5 else f"({tm_},{tn_}):(1,{tm_})"
        if rng.random() < 0.15:
            thr = f"({tm_},{tn_}):({tn_},0)"  # a stride-0 thread mode: duplicate claims
        vm = rng.choice([1, nval]) if nval > 1 else 1
        vn = nval // vm * rng.choice([1, 1, 2])
        val = f"({vm},{vn}):({vn},1)" if rng.random() < 0.5 else f"({vm},{vn})"
        return {"kind": "copy", "atom": name, "bits": bits, "thr": thr, "val": val}
    # a TV layout and a tiler (the DSL's make_tiled_copy / C++ make_tiled_copy_impl)
    threads = nthr * rng.choice([1, 2, 4]) if nthr > 1 else rng.choice([32, 64, 128])
    vals = nval * rng.choice([1, 2])
    rows = rng.choice([d for d in (4, 8, 16, 32) if threads % d == 0 or d % threads == 0])
    total = threads * vals
    cols = total // rows if total % rows == 0 else total
    tv = A.right_inverse(A.raked_product(A.Layout((rows, threads // rows if threads >= rows else 1)),
                                         A.Layout((1, vals)))).with_shape((threads, vals)) \
        if threads >= rows else A.Layout((threads, vals), (vals, 1))
    tiler = [rows, total // rows]
    if rng.random() < 0.3:
        tiler = [rows, 2 * (total // rows)]  # a tiler larger than the TV layout covers: holes
    del cols
    return {"kind": "copy_tv", "atom": name, "bits": bits, "tv": str(tv), "tiler": tiler}


def _tensor(rng: random.Random, shape: tuple[int, ...]) -> dict:
    """A tensor to partition: a column- / row-major layout or (one time in four) a coordinate tensor."""
    if rng.random() < 0.25:
        return {"identity": list(shape)}
    lay = A.make_layout_row_major(shape) if rng.random() < 0.5 else A.Layout(shape)
    return {"layout": str(lay)}


def _cpart_case(rng: random.Random) -> dict:
    """A tiled copy's get_slice(t).partition_S / partition_D of a tensor some whole tilers big."""
    c = _copy_case(rng)
    while c["kind"] != "copy":
        c = _copy_case(rng)
    tc = atoms.make_tiled_copy(c["atom"], A.parse(c["thr"]), A.parse(c["val"]), element_bits=c["bits"])
    shape = tuple(t * rng.choice([1, 2, 3]) for t in tc.tiler)
    return {**c, "kind": "cpart", "t": rng.randrange(tc.num_threads), "tensor": _tensor(rng, shape)}


THREADS = ["(8,4)", "(8,4):(4,1)", "(4,8):(8,1)", "(16,2)", "(32,1)", "((2,4),4)", "((2,4),(2,2)):((1,8),(2,4))",
           "(2,16):(16,1)", "(4,4)"]


def _lpart_case(rng: random.Random) -> dict:
    """local_partition(tensor, thread layout, thread index): the thread's elements, one per tile."""
    thr = A.parse(rng.choice(THREADS))
    shape = tuple(A.size(m) * rng.choice([1, 2, 3, 4]) for m in thr)
    return {"kind": "lpart", "thr": str(thr), "t": rng.randrange(A.size(thr)), "tensor": _tensor(rng, shape)}


def _slice_case(rng: random.Random) -> dict:
    """A tensor sliced at a coordinate with ``_`` and integers, at any depth: ``g(make_coord(_, make_coord(1, _)))``."""
    shape = tuple(rng.choice([2, 3, 4, (2, 2), (2, 3), (4, 2), (2, 2, 2)]) for _ in range(rng.choice([2, 3])))
    tensor = _tensor(rng, shape)

    def crd(s: Any) -> Any:
        if isinstance(s, tuple) and rng.random() < 0.6:
            return tuple(crd(x) for x in s)
        return None if rng.random() < 0.5 else rng.randrange(A.inttuple.product(s))

    c = tuple(crd(x) for x in shape)
    while None not in A.inttuple.flatten(c):  # a full coordinate gives an element, not a tensor
        c = tuple(crd(x) for x in shape)
    return {"kind": "slice", "tensor": tensor, "coord": _jcrd(c)}


def _jcrd(c: Any) -> Any:
    return [_jcrd(x) for x in c] if isinstance(c, tuple) else c


def _pcrd(c: Any) -> Any:
    return tuple(_pcrd(x) for x in c) if isinstance(c, list) else c


def _tile_case(rng: random.Random) -> dict:
    m, n, k = rng.choice([64, 128, 96]), rng.choice([64, 128, 32]), rng.choice([32, 64, 128])
    bm, bn, bk = rng.choice([16, 32, 64]), rng.choice([16, 32]), rng.choice([8, 16, 32])
    which = rng.choice(["A", "B", "C"])
    if which == "A":
        shape, proj, coord = (m, k), [1, None, 1], [rng.randrange(m // bm), rng.randrange(n // bn), None]
    elif which == "B":
        shape, proj, coord = (n, k), [None, 1, 1], [rng.randrange(m // bm), rng.randrange(n // bn), None]
    else:
        shape, proj, coord = (m, n), [1, 1, None], [rng.randrange(m // bm), rng.randrange(n // bn), None]
    row = rng.random() < 0.5
    lay = A.make_layout_row_major(shape) if row else A.Layout(shape)
    if rng.random() < 0.3:  # a coordinate tensor: make_identity_tensor(shape)
        return {"kind": "tile", "identity": list(shape), "tiler": [bm, bn, bk], "coord": coord, "proj": proj}
    return {"kind": "tile", "layout": str(lay), "tiler": [bm, bn, bk], "coord": coord, "proj": proj}


def gen_tile_cases(seed: int, n: int) -> list[dict]:
    """local_tile with a projection (``Step`` with X at any place, 2 to 4 tiler modes, tilers that are layouts or do
    not divide, coordinates past the grid, ``_`` kept modes) over memory tensors (nested shapes, column- / row-major,
    padded) and coordinate tensors of nested shapes; and local_partition with a projection of the thread layout
    (threads of the whole layout, and indices past the diced one)."""
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        if rng.random() < 0.3:
            thr = A.parse(rng.choice(["(8,4)", "(8,4):(4,1)", "(4,8,2)", "(2,16):(16,1)", "((2,4),4)",
                                      "(4,2,4):(1,16,4)", "(16,2)"]))
            keep = [rng.random() < 0.6 for _ in range(A.rank(thr))]
            if not any(keep):
                keep[rng.randrange(len(keep))] = True
            proj = [1 if k else None for k in keep]
            kept = [m for m, k in zip(thr, keep, strict=True) if k]
            shape = tuple(A.size(m) * rng.choice([1, 2, 3]) for m in kept)
            t = rng.randrange(A.size(thr)) if rng.random() < 0.85 else A.size(thr) + rng.randrange(8)
            out.append({"kind": "lpart", "thr": str(thr), "t": t, "proj": proj, "tensor": _tensor(rng, shape)})
            continue
        r = rng.choice([2, 2, 3])
        modes = [rng.choice([4, 8, 16, 32, 64, 96, 12, (4, 8), (2, 16), (8, 6)]) for _ in range(r)]
        extra = rng.choice([0, 0, 1, 2]) if r < 4 else 0
        slots = rng.sample(range(r + extra), r)  # where the tensor's modes sit among the tiler's
        tiler: list[Any] = [0] * (r + extra)
        proj: list[Any] = [None] * (r + extra)
        for j, m in zip(sorted(slots), modes, strict=True):
            size = A.inttuple.product(m)
            d = [x for x in (1, 2, 4, 8, 16, 32) if x <= size]
            pick = rng.choice(d)
            if rng.random() < 0.15:
                pick = rng.choice([3, 5, 6, 24, 48])  # a tiler that need not divide
            tiler[j] = pick if rng.random() < 0.85 else (f"({pick // 2},2):(1,{pick // 2})" if pick % 2 == 0 and
                                                          pick > 2 else f"{pick}:1")
            proj[j] = 1
        for j in range(r + extra):
            if proj[j] is None:
                tiler[j] = rng.choice([2, 4, 8])
        grid = []
        for j in range(r + extra):
            if proj[j] is None:
                grid.append(rng.randrange(4))
                continue
            k = sorted(slots).index(j)
            t = tiler[j] if isinstance(tiler[j], int) else A.size(A.parse(tiler[j]))
            tiles = -(-A.inttuple.product(modes[k]) // t)
            grid.append(None if rng.random() < 0.2 else rng.randrange(tiles + (1 if rng.random() < 0.1 else 0)))
        shape = tuple(modes)
        case = {"kind": "tile", "tiler": tiler, "coord": grid, "proj": proj}
        u = rng.random()
        if u < 0.3:
            case["identity"] = _jcrd(shape)
        elif u < 0.6:
            case["layout"] = str(A.make_layout_row_major(shape))
        elif u < 0.8:
            case["layout"] = str(A.Layout(shape))
        else:  # padded rows
            case["layout"] = str(A.Layout(shape, _padded(shape, rng.choice([1, 2, 4]))))
        out.append(case)
    return out


def _padded(shape: tuple, pad: int) -> Any:
    """Column-major strides with ``pad`` elements after each column of mode 0."""
    acc, strides = 1, []
    for j, m in enumerate(shape):
        sub = A.Layout(m if isinstance(m, int) else tuple(m))
        strides.append(_mul(sub.stride, acc))
        acc *= A.inttuple.product(m) + (pad if j == 0 else 0)
    return tuple(strides)


def _mul(x: Any, k: int) -> Any:
    return tuple(_mul(y, k) for y in x) if isinstance(x, tuple) else x * k


# ------------------------------------------------------------------------------------------- C++


def _cpp_perm(perm: list[Any]) -> str:
    return "Tile<" + ",".join("Underscore" if p is None else (f"Int<{p}>" if isinstance(p, int) else
                                                             cvalue(p).removesuffix("{}")) for p in perm) + ">{}"


def _cpp_layout(layout: A.Layout) -> str:
    return cvalue(str(layout))


def _show(key: str, expr: str) -> str:
    return f'  printf("{key}\\t"); print({expr}); printf("\\n");'


def _regs(case: dict, op: str) -> bool:
    """wgmma's shared-memory operands make descriptors, which CuTe builds only for canonical GMMA smem layouts:
    their fragments are left out (in ``program`` and ``ours`` alike)."""
    return not atoms.get(case["atom"]).smem_operand(op)


def _cpp_case(i: int, case: dict) -> list[str]:
    k = case["kind"]
    body = [f"void c{i}() {{"]
    if k == "mma":
        cpp, ta, tb, tc = {**MMAS, **MMAS_WIDE}[case["atom"]]
        lay = _cpp_layout(A.parse(case["layout"]))
        body += [f"  auto mma = make_tiled_mma({cpp}{{}}, {lay}, {_cpp_perm(case['perm'])});"]
        for op in "ABC":
            body.append(_show(f"{i}.TV{op}", f"mma.get_layout{op}_TV()"))
        body.append(f"  auto thr = mma.get_slice({case['thr']});")
        for op, t in (("A", ta), ("B", tb), ("C", tc)):
            shape = case[op]
            st = "Shape<" + ",".join(f"Int<{x}>" for x in shape) + ">{}"
            body.append(_show(f"{i}.pshape{op}", f"partition_shape_{op}(mma, {st})"))
            lay = A.make_layout_row_major(tuple(shape)) if case["row_major"] else A.Layout(tuple(shape))
            body += [f"  {{ static {t} buf{op}[{A.cosize(lay)}];",
                     f"    auto g = make_tensor(make_smem_ptr(buf{op}), {_cpp_layout(lay)});",
                     f"    auto p = thr.partition_{op}(g);",
                     _show(f"{i}.part{op}", "p.layout()"),
                     f'    printf("{i}.off{op}\\t%d\\n", int(p.data().get() - buf{op}));']
            if _regs(case, op):
                body.append(_show(f"{i}.frag{op}", f"thr.partition_fragment_{op}(g).layout()"))
            body.append("  }")
            if case.get("identity") == op:
                body.append(_show(f"{i}.id{op}", f"thr.partition_{op}(make_identity_tensor({st}))"))
            if op in case["copies"]:
                cop = COPIES[case["copies"][op]]
                body += [f"  {{ auto tc = make_tiled_copy_{op}(Copy_Atom<{cop}, {t}>{{}}, mma);",
                         _show(f"{i}.cp{op}.tiler", "typename decltype(tc)::Tiler_MN{}"),
                         _show(f"{i}.cp{op}.tv", "typename decltype(tc)::TiledLayout_TV{}"),
                         _show(f"{i}.cp{op}.S", "tc.get_layoutS_TV()"),
                         _show(f"{i}.cp{op}.D", "tc.get_layoutD_TV()"), "  }"]
    elif k in ("copy", "copy_tv"):
        t = ELEM[case["bits"]]
        atom = f"Copy_Atom<{COPIES[case['atom']]}, {t}>{{}}"
        if k == "copy":
            body.append(f"  auto tc = make_tiled_copy({atom}, {_cpp_layout(A.parse(case['thr']))}, "
                        f"{_cpp_layout(A.parse(case['val']))});")
        else:
            tiler = "Shape<" + ",".join(f"Int<{x}>" for x in case["tiler"]) + ">{}"
            body.append(f"  auto tc = make_tiled_copy_impl({atom}, {_cpp_layout(A.parse(case['tv']))}, {tiler});")
        body += [_show(f"{i}.tiler", "typename decltype(tc)::Tiler_MN{}"),
                 _show(f"{i}.tv", "typename decltype(tc)::TiledLayout_TV{}"),
                 _show(f"{i}.S", "tc.get_layoutS_TV()"), _show(f"{i}.D", "tc.get_layoutD_TV()")]
    elif k == "atom_t":
        body.append(f"  using Atom = Copy_Atom<{COPIES[case['atom']]}, {ELEM[case['bits']]}>;")
        body += [_show(f"{i}.v{x.lower()}", f"typename Atom::ValLayout{x}{{}}") for x in ("Src", "Dst", "Ref")]
    elif k == "cpart":
        atom = f"Copy_Atom<{COPIES[case['atom']]}, {ELEM[case['bits']]}>{{}}"
        body += [f"  auto tc = make_tiled_copy({atom}, {_cpp_layout(A.parse(case['thr']))}, "
                 f"{_cpp_layout(A.parse(case['val']))});", f"  auto thr = tc.get_slice({case['t']});"]
        body += _cpp_tensor(case["tensor"])
        for side in "SD":
            body.append(_show_tensor(f"{i}.{side}", f"thr.partition_{side}(g)", case["tensor"]))
    elif k == "lpart":
        body += _cpp_tensor(case["tensor"])
        proj = "" if case.get("proj") is None else ", Step<" + ",".join(
            "X" if p is None else "_1" for p in case["proj"]) + ">{}"
        body.append(_show_tensor(f"{i}.part", f"local_partition(g, {_cpp_layout(A.parse(case['thr']))}, "
                                 f"{case['t']}{proj})", case["tensor"]))
    elif k == "slice":
        body += _cpp_tensor(case["tensor"])
        body.append(_show_tensor(f"{i}.slice", f"g({_cpp_crd(_pcrd(case['coord']))})", case["tensor"]))
    else:
        tiler = ("make_shape(" + ",".join(f"Int<{x}>{{}}" for x in case["tiler"]) + ")" if all(
            isinstance(x, int) for x in case["tiler"]) else "make_tile(" + ",".join(
            f"Int<{x}>{{}}" if isinstance(x, int) else _cpp_layout(A.parse(x)) for x in case["tiler"]) + ")")
        coord = "make_coord(" + ",".join("_" if c is None else f"{c}" for c in case["coord"]) + ")"
        proj = "Step<" + ",".join("X" if p is None else "_1" for p in case["proj"]) + ">{}"
        if "identity" in case:
            shape = _cpp_shape(case["identity"])
            body += [f"  auto c = make_identity_tensor({shape});",
                     _show(f"{i}.coords", f"local_tile(c, {tiler}, {coord}, {proj})"), "}"]
            return body
        lay = A.parse(case["layout"])
        body += ["  static int buf[1];",
                 f"  auto g = make_tensor(make_gmem_ptr(buf), {_cpp_layout(lay)});",
                 f"  auto r = local_tile(g, {tiler}, {coord}, {proj});",
                 _show(f"{i}.tile", "r.layout()"),
                 f'  printf("{i}.off\\t%d\\n", int(r.data().get() - buf));']
    return body + ["}"]


def _cpp_shape(shape: Any) -> str:
    """``make_shape(Int<..>{}, make_shape(..))`` of a (nested) JSON shape."""
    return "make_shape(" + ",".join(f"Int<{x}>{{}}" if isinstance(x, int) else _cpp_shape(x) for x in shape) + ")"


def _cpp_crd(c: Any) -> str:
    if c is None:
        return "_"
    if isinstance(c, tuple):
        return "make_coord(" + ", ".join(_cpp_crd(x) for x in c) + ")"
    return str(c)


def _cpp_tensor(t: dict) -> list[str]:
    """``g``: the case's tensor (a gmem tensor over ``buf``, or a coordinate tensor)."""
    shape = "make_shape(" + ",".join(f"Int<{x}>{{}}" if isinstance(x, int) else
                                     "make_shape(" + ",".join(f"Int<{y}>{{}}" for y in x) + ")"
                                     for x in t.get("identity", [])) + ")"
    if "identity" in t:
        return ["  static int buf[1];", f"  auto g = make_identity_tensor({shape});"]
    return ["  static int buf[1];", f"  auto g = make_tensor(make_gmem_ptr(buf), {_cpp_layout(A.parse(t['layout']))});"]


def _show_tensor(key: str, expr: str, t: dict) -> str:
    """Print a partition or slice of the case's tensor: a coordinate tensor as itself (its origin and layout), a
    memory tensor as its layout and its origin's offset from the buffer, ``<layout> @ <offset>``."""
    if "identity" in t:
        return _show(key, expr)
    return (f'  {{ auto r = {expr}; printf("{key}\\t"); print(r.layout()); '
            f'printf(" @ %d\\n", int(r.data().get() - buf)); }}')


HEADERS = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_atom.hpp>",
           "#include <cute/atom/copy_atom.hpp>", "#include <cute/atom/mma_traits_sm90_gmma.hpp>",
           "#include <cute/atom/copy_traits_sm90.hpp>", "#include <cute/atom/copy_traits_sm75.hpp>",
           "#include <cute/atom/copy_traits_sm80.hpp>", "using namespace cute;"]


def program(cases: list[dict], headers: list[str] = HEADERS, case_cpp: Any = None,
            skip: frozenset = frozenset()) -> tuple[str, dict[int, int]]:
    """``headers``, ``case_cpp(i, case)`` (``void c<i>()``, ``_cpp_case`` by default) for each case not in ``skip``
    and a ``main`` that calls them; and a map line number -> case index (``compile_refusing``)."""
    lines, owner = list(headers), {}
    for i, case in enumerate(cases):
        if i not in skip:
            body = (case_cpp or _cpp_case)(i, case)
            owner.update({len(lines) + j + 1: i for j in range(len(body))})
            lines += body
    lines += ["int main() {"] + [f"  c{i}();" for i in range(len(cases)) if i not in skip] + ["  return 0;", "}"]
    return "\n".join(lines) + "\n", owner


def run_cpp(cases: list[dict], timeout: int = 1800, headers: list[str] = HEADERS, case_cpp: Any = None) -> dict:
    """CuTe C++'s printed values for every key of every case (underscores removed); see ``program``. A case that CuTe
    does not compile (a static_assert in any of its keys) is ``<i>.refused``: the compiler's message."""
    with tempfile.TemporaryDirectory(prefix="cute-run-") as tmp:
        exe, refused = compile_refusing(lambda r: program(cases, headers, case_cpp, frozenset(r)), Path(tmp),
                                        timeout=timeout)
        out = subprocess.run([str(exe)], capture_output=True, timeout=120, check=True).stdout.decode(errors="replace")
    got = {a: b.replace("_", "") for a, b in printed(out).items()}
    return got | {f"{i}.refused": msg for i, msg in refused.items()}


# ------------------------------------------------------------------------------------------- ours


def _tstr(x: Any) -> str:
    return A.inttuple.to_str(x) if isinstance(x, tuple) else str(x)


def ours(i: int, case: dict) -> dict[str, str]:
    """Our values for the keys ``program`` prints for case ``i`` (an exception's message where we refuse)."""
    k = case["kind"]
    got: dict[str, str] = {}
    if k == "umma":
        return _ours_umma(i, case)
    if k == "mma":
        tm = atoms.make_tiled_mma(case["atom"], A.parse(case["layout"]), _perm(case["perm"]))
        for op in "ABC":
            got[f"{i}.TV{op}"] = str(tm.get_layout_TV(op))
            shape = tuple(case[op])
            got[f"{i}.pshape{op}"] = _tstr(getattr(tm, f"partition_shape_{op}")(shape))
            lay = A.make_layout_row_major(shape) if case["row_major"] else A.Layout(shape)
            part, off = getattr(tm, f"partition_{op}")(lay, case["thr"])
            got[f"{i}.part{op}"], got[f"{i}.off{op}"] = str(part), str(off)
            if _regs(case, op):
                got[f"{i}.frag{op}"] = str(getattr(tm, f"partition_fragment_{op}")(lay, case["thr"]))
            if case.get("identity") == op:
                x = A.make_coord_tensor(tuple(0 for _ in shape), shape)
                got[f"{i}.id{op}"] = str(getattr(tm, f"partition_{op}")(x, case["thr"]))
            if op in case["copies"]:
                bits = BITS[{**MMAS, **MMAS_WIDE}[case["atom"]][1 + "ABC".index(op)]]
                tc = getattr(atoms, f"make_tiled_copy_{op}")(case["copies"][op], tm, element_bits=bits)
                got[f"{i}.cp{op}.tiler"] = _tstr(tuple(tc.tiler))
                got[f"{i}.cp{op}.tv"] = str(tc.tv_layout)
                got[f"{i}.cp{op}.S"], got[f"{i}.cp{op}.D"] = str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV())
    elif k in ("copy", "copy_tv"):
        if k == "copy":
            tc = atoms.make_tiled_copy(case["atom"], A.parse(case["thr"]), A.parse(case["val"]),
                                       element_bits=case["bits"])
        else:
            tc = atoms.make_tiled_copy(case["atom"], layout_tv=A.parse(case["tv"]), tiler=tuple(case["tiler"]),
                                       element_bits=case["bits"])
        got[f"{i}.tiler"], got[f"{i}.tv"] = _tstr(tuple(tc.tiler)), str(tc.tv_layout)
        got[f"{i}.S"], got[f"{i}.D"] = str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV())
    elif k == "atom_t":
        atom = atoms.get(case["atom"])
        for x in ("src", "dst", "ref"):
            got[f"{i}.v{x}"] = str(getattr(atom, f"{x}_layout")(case["bits"]))
    elif k == "cpart":
        tc = atoms.make_tiled_copy(case["atom"], A.parse(case["thr"]), A.parse(case["val"]),
                                   element_bits=case["bits"])
        g = _our_tensor(case["tensor"])
        got[f"{i}.S"], got[f"{i}.D"] = _shown(tc.partition_S(g, case["t"])), _shown(tc.partition_D(g, case["t"]))
    elif k == "lpart":
        proj = None if case.get("proj") is None else tuple(case["proj"])
        got[f"{i}.part"] = _shown(A.local_partition(_our_tensor(case["tensor"]), A.parse(case["thr"]), case["t"],
                                                    proj))
    elif k == "slice":
        g = _our_tensor(case["tensor"])
        c = _pcrd(case["coord"])
        got[f"{i}.slice"] = _shown(A.slice_and_offset(c, g) if isinstance(g, A.Layout) else g.slice(c))
    elif "identity" in case:
        x = _our_tensor({"identity": case["identity"]})
        got[f"{i}.coords"] = str(A.local_tile(x, _tiler(case["tiler"]), tuple(case["coord"]), tuple(case["proj"])))
    else:
        sub, off = A.local_tile(A.parse(case["layout"]), _tiler(case["tiler"]), tuple(case["coord"]),
                                tuple(case["proj"]))
        got[f"{i}.tile"], got[f"{i}.off"] = str(sub), str(off)
    return got


def _tiler(tiler: list) -> tuple:
    return tuple(x if isinstance(x, int) else A.parse(x) for x in tiler)


def _our_tensor(t: dict) -> Any:
    if "identity" in t:
        shape = _pcrd(t["identity"])
        return A.make_coord_tensor(tuple(0 for _ in shape), shape)
    return A.parse(t["layout"])


def _shown(x: Any) -> str:
    """As ``_show_tensor`` prints it: a coordinate tensor as itself, (layout, offset) as ``layout @ offset``."""
    return f"{x[0]} @ {x[1]}" if isinstance(x, tuple) else str(x)


def compare(cases: list[dict], cute: dict[str, str], tally: dict | None = None) -> list[str]:
    """Every key where we differ from CuTe: ``key: cute=... ours=...``. ``tally``: per case kind, the counts of
    cases, equal answers, refusals on both sides, our refusals that name what CuTe prints (confirmed) and wrong ones."""
    bad: list[str] = []
    tally = tally if tally is not None else {}

    def count(case: dict, what: str) -> None:
        row = tally.setdefault(case["kind"] + ("+proj" if case.get("proj") else ""), {})
        row[what] = row.get(what, 0) + 1

    for i, case in enumerate(cases):
        count(case, "cases")
        if f"{i}.refused" in cute:  # CuTe does not compile the case: we must refuse (one of its keys at least)
            try:
                ours(i, case)
                bad.append(f"{i} {json.dumps(case)}: CuTe refuses ({cute[f'{i}.refused']}) where we answer")
                count(case, "wrong")
            except A.LayoutError:
                count(case, "both refuse")
            continue
        try:
            mine = ours(i, case)
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch, unless it names CuTe's print
            said = [f"CuTe prints {cute.get(f'{i}.part{op}')} @ {cute.get(f'{i}.off{op}')}," for op in "ABC"]
            if case["kind"] == "atom_t" and len({cute.get(f"{i}.v{x}") for x in ("src", "dst", "ref")}) == 1:
                said.append(f"prints {cute.get(f'{i}.vsrc')}:")  # a copy narrower than T: recast rounded up
            if case["kind"] == "lpart" and " o " in cute.get(f"{i}.part", ""):  # a coordinate tensor's print
                origin, lay = cute[f"{i}.part"].removeprefix("ArithTuple").split(" o ", 1)
                said.append(f"= {lay} at offset {origin}")
            if not (isinstance(exc, A.LayoutError) and any(x in str(exc) for x in said)):
                bad.append(f"{i} {json.dumps(case)}: ours raised {exc!r}")
                count(case, "wrong")
            else:
                count(case, "refused, naming CuTe's print")
            continue
        diff = [f"{key} {json.dumps(case)}: cute={cute.get(key)} ours={val}" for key, val in mine.items()
                if cute.get(key) != val]
        bad += diff
        count(case, "wrong" if diff else "equal")
    return bad


# ------------------------------------------------------------------------------------- tiled UMMA (nvcc)

UMMA_KINDS = {"f16": [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")], "tf32": [("tf32", "f32")],
              "i8": [("s8", "s32")], "f8f6f4": [("e4m3", "f32")]}


def gen_umma_cases(seed: int, n: int) -> list[dict]:
    """Tiled MMAs of Blackwell's tcgen05.mma atoms (1 and 2 CTAs, SS and TS, both majors) over whole tiles and tiles
    that are not multiples of the atom; each CTA's (``get_slice(v)``) partitions of a memory and a coordinate tensor.
    The program is host-only C++ against ``mma_traits_sm100.hpp`` (its values are those of an nvcc -arch=sm_100a
    build: the traits and the tiled MMA are host code)."""
    from algebra.hw import sm100

    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        kind = rng.choice(list(UMMA_KINDS))
        ab, c = rng.choice(UMMA_KINDS[kind])
        cta, src = rng.choice([1, 2]), rng.choice(["smem", "smem", "tmem"])
        m = rng.choice((64, 128) if cta == 1 else (128, 256))
        am = "K" if src == "tmem" else rng.choice(["K", "MN"])
        bm = rng.choice(["K", "MN"])
        try:
            ns, _ = sm100.n_rule(sm100._KIND_ALIASES[kind], m, cta, src, bm)
            args = [kind, m, rng.choice(ns), am, bm, cta, src, ab, c]
            atom = sm100.umma(*args)
        except (KeyError, A.LayoutError, ValueError):
            continue
        lay = rng.choice(["(1,1,1)"] * 4 + ["(2,1,1)", "(1,2,1)"])
        mm, nn, kk = atom.shape_mnk
        fm, fn, fk = (rng.choice([1, 1, 2, 3]) for _ in range(3))
        if rng.random() < 0.2:  # a tile the atom does not divide: CuTe's partitions pad the rest modes
            fm = rng.choice([1, 2]) + 0.5
        tile = {"A": [int(mm * fm), kk * fk], "B": [nn * fn, kk * fk], "C": [int(mm * fm), nn * fn]}
        reps = 1 if lay == "(1,1,1)" else 2
        out.append({"kind": "umma", "args": args, "layout": lay, "thr": rng.randrange(cta * reps),
                    "tiles": tile, "row_major": rng.random() < 0.5, "identity": rng.choice("ABC")})
    return out


def _umma_cpp(i: int, case: dict) -> list[str]:
    from algebra.hw import sm100

    atom = sm100.umma(*case["args"])
    body = [f"void c{i}() {{", f"  auto mma = make_tiled_mma(MMA_Atom<MMA_Traits<{atom.cpp()}>>{{}}, "
            f"{_cpp_layout(A.parse(case['layout']))});", f"  auto thr = mma.get_slice({case['thr']});"]
    for op in "ABC":
        shape = case["tiles"][op]
        st = "Shape<" + ",".join(f"Int<{x}>" for x in shape) + ">{}"
        lay = A.make_layout_row_major(tuple(shape)) if case["row_major"] else A.Layout(tuple(shape))
        body += [_show(f"{i}.TV{op}", f"mma.get_layout{op}_TV()"),
                 _show(f"{i}.pshape{op}", f"partition_shape_{op}(mma, {st})"),
                 f"  {{ static int buf{op}[{A.cosize(lay)}];",
                 f"    auto p = thr.partition_{op}(make_tensor(make_gmem_ptr(buf{op}), {_cpp_layout(lay)}));",
                 _show(f"{i}.part{op}", "p.layout()"),
                 f'    printf("{i}.off{op}\\t%d\\n", int(p.data().get() - buf{op})); }}']
        if case["identity"] == op:
            body.append(_show(f"{i}.id{op}", f"thr.partition_{op}(make_identity_tensor({st}))"))
    return body + ["}"]


def run_umma(cases: list[dict], timeout: int = 1800) -> dict[str, str]:
    """CuTe's values for the tiled-UMMA cases: one host-only translation unit (CuTe's SM100 MMA traits and tiled MMA
    are host code; g++ builds them as nvcc -arch=sm_100a does, in a fraction of the time)."""
    return run_cpp(cases, timeout, ["#include <cstdio>", "#include <cute/tensor.hpp>",
                                    "#include <cute/atom/mma_traits_sm100.hpp>", "using namespace cute;"], _umma_cpp)


def _ours_umma(i: int, case: dict) -> dict[str, str]:
    from algebra.hw import sm100

    tm = atoms.make_tiled_mma(sm100.umma(*case["args"]), A.parse(case["layout"]))
    got: dict[str, str] = {}
    for op in "ABC":
        shape = tuple(case["tiles"][op])
        lay = A.make_layout_row_major(shape) if case["row_major"] else A.Layout(shape)
        got[f"{i}.TV{op}"] = str(tm.get_layout_TV(op))
        got[f"{i}.pshape{op}"] = _tstr(getattr(tm, f"partition_shape_{op}")(shape))
        part, off = getattr(tm, f"partition_{op}")(lay, case["thr"])
        got[f"{i}.part{op}"], got[f"{i}.off{op}"] = str(part), str(off)
        if case["identity"] == op:
            x = A.make_coord_tensor(tuple(0 for _ in shape), shape)
            got[f"{i}.id{op}"] = str(getattr(tm, f"partition_{op}")(x, case["thr"]))
    return got


# ------------------------------------------------------------ tensor memory: tiled tcgen05.ld / st, accumulators

TMEM_T = {32: "float", 16: "half_t", 8: "uint8_t"}


def gen_tmem_cases(seed: int, n: int) -> list[dict]:
    """``make_tmem_copy`` of tcgen05.ld / st atoms (every shape, repeats 1x up to the largest CuTe defines, packed
    ``_16b`` or not) over a dense TMEM tensor of 32-, 16- or 8-bit elements, one thread of warps 0-3 (against
    ``sm100_tmem.thread_map``); and the accumulators of tcgen05.mma atoms with f32 and f16 C (the traits'
    ``FrgTypeC::make``, against ``sm100_tmem.accumulator_layout``)."""
    from algebra.hw import sm100, sm100_tmem

    rng = random.Random(seed)
    names = sorted(sm100_tmem.tmem_copy_table())
    out: list[dict] = []
    while len(out) < n:
        if rng.random() < 0.7:
            name = rng.choice(names)
            _, shape, r, packed = sm100_tmem.split_name(name)
            if r > 1 and rng.random() < 0.4:  # the narrow ones more often
                r = rng.choice([1, 2])
                name = re.sub(r"(\d+dp\d+b)\d+x", rf"\g<1>{r}x", name)
            per_thread = sm100_tmem.SHAPES[shape][1] * r // 32
            bits = 16 if packed else rng.choice([b for b in (32, 16, 8) if per_thread % b == 0])  # _16b: 16-bit
            out.append({"kind": "tmem_copy", "atom": name, "bits": bits, "warp": rng.randrange(4),
                        "thread": rng.randrange(32)})
            continue
        kind = rng.choice(["f16", "f16", "tf32", "f8f6f4"])
        ab, c = rng.choice([("f16", "f16"), ("f16", "f32"), ("bf16", "f32")] if kind == "f16" else [
            ("tf32", "f32")] if kind == "tf32" else [("e4m3", "f16"), ("e4m3", "f32")])
        cta, src = rng.choice([1, 2]), rng.choice(["smem", "tmem"])
        m = rng.choice((64, 128) if cta == 1 else (128, 256))
        try:
            ns, _ = sm100.n_rule(sm100._KIND_ALIASES[kind], m, cta, src, "K")
            args = [kind, m, rng.choice(ns), "K", "K", cta, src, ab, c]
            sm100.umma(*args)
        except (KeyError, A.LayoutError, ValueError):
            continue
        out.append({"kind": "tmem_acc", "args": args})
    return out


def _tmem_cpp(i: int, case: dict) -> list[str]:
    from algebra.hw import sm100, sm100_tmem

    if case["kind"] == "tmem_acc":
        atom = sm100.umma(*case["args"])
        m, n, _ = atom.shape_mnk
        cta = atom.cta_group
        return [f"void c{i}() {{", f"  using Tr = MMA_Traits<{atom.cpp()}>;",
                _show(f"{i}.acc", f"Tr::FrgTypeC::make(Shape<Shape<Int<{m // cta}>,Int<{n}>>,_1,_1>{{}}).layout()"),
                f'  printf("{i}.cbits\\t%d\\n", int(sizeof_bits_v<typename Tr::ValTypeC>));', "}"]
    kind, shape, r, packed = sm100_tmem.split_name(case["atom"])
    per_lane = sm100_tmem.SHAPES[shape][1] * r // sm100_tmem.SHAPES[shape][0]  # register bits per TMEM lane
    # a dense tensor of the case's type; _16b: one 16-bit value in each 32-bit column (tmem_frg<half_t, uint32_t>)
    t, cols, step = TMEM_T[case["bits"]], (per_lane // 16 if packed else per_lane // case["bits"]), 2 if packed else 1
    part = "partition_D" if kind == "LOAD" else "partition_S"  # the register side: the thread's own values
    return [f"void c{i}() {{",
            f"  auto L = Layout<Shape<_128,Int<{cols}>>, Stride<TMEM::DP<{t}>,_{step}>>{{}};",
            f"  auto tiled = make_tmem_copy({case['atom']}{{}}, make_tensor(make_tmem_ptr<{t}>(0), L));",
            f"  auto tI = tiled.get_slice({32 * case['warp'] + case['thread']}).{part}("
            "make_identity_tensor(shape(L)));",
            f'  printf("{i}.vals\\t");',
            "  for (int v = 0; v < size<0>(tI); ++v) { auto c = tI(v, 0, 0); int o = L(get<0>(c), get<1>(c));",
            f"    printf(\"%d.%d.%d \", o / int(TMEM::DP<{t}>{{}}), o % int(TMEM::DP<{t}>{{}}) * {case['bits']} / 32, "
            f"o % int(TMEM::DP<{t}>{{}}) * {case['bits']} % 32); }}",
            '  printf("\\n");', "}"]


def run_tmem(cases: list[dict], timeout: int = 1800) -> dict[str, str]:
    """CuTe's values for the tensor-memory cases: one host-only translation unit against ``copy_traits_sm100.hpp``
    and ``mma_traits_sm100.hpp`` (the traits and ``make_tmem_copy`` are host code)."""
    return {k: v.strip() for k, v in run_cpp(cases, timeout, [
        "#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm100.hpp>",
        "#include <cute/atom/copy_traits_sm100.hpp>", "using namespace cute;"], _tmem_cpp).items()}


def _tmem_names() -> list[str]:
    """The tcgen05.ld / st atoms CuTe defines (``arch/copy_sm100.hpp``: 1x to 128x, powers of 2 only) against the
    names ``sm100_tmem`` takes; every other repeat (3x, 5x, 6x, ...) must be refused."""
    from cute_cpp import cute_include

    from algebra.hw import sm100_tmem

    text = (cute_include() / "cute" / "arch" / "copy_sm100.hpp").read_text()
    theirs = set(re.findall(r"struct (SM100_TMEM_(?:LOAD|STORE)_\d+dp\d+b\d+x(?:_16b)?)\b", text))
    ours = set(sm100_tmem.tmem_copy_table())
    bad = [f"tcgen05 atoms: only CuTe's {sorted(theirs - ours)[:8]}, only ours {sorted(ours - theirs)[:8]}"] * (
        theirs != ours)
    for shape in sm100_tmem.SHAPES:
        for r in range(1, 129):
            for kind in ("LOAD", "STORE"):
                name = f"SM100_TMEM_{kind}_{shape}{r}x"
                try:
                    sm100_tmem.split_name(name)
                    ok = True
                except A.LayoutError:
                    ok = False
                if ok != (name in theirs):
                    bad.append(f"{name}: CuTe {'defines' if name in theirs else 'lacks'} it, we "
                               f"{'take' if ok else 'refuse'} it")
    return bad


def compare_tmem(cases: list[dict], cute: dict[str, str]) -> list[str]:
    """Copies: each value's TMEM (lane, 32-bit column, first bit), ``thread_map`` against the tiled copy's
    partition of the thread. Accumulators: per CTA, each element's (lane, 32-bit column), ``accumulator_layout``
    against CuTe's layout in C elements (lane * DP<C> + column * 32 / bits(C); a value off a column's first bit
    is printed with its bit)."""
    from algebra.hw import sm100, sm100_tmem

    bad = _tmem_names()
    for i, case in enumerate(cases):
        if case["kind"] == "tmem_copy":
            tm = sm100_tmem.thread_map(case["atom"], case["warp"], case["bits"])[case["thread"]]
            mine, theirs = " ".join(f"{v['lane']}.{v['column']}.{v['bit']}" for v in tm), cute.get(f"{i}.vals")
        else:
            atom = sm100.umma(*case["args"])
            m, n, _ = atom.shape_mnk
            cta, bits = atom.cta_group, int(cute.get(f"{i}.cbits", "32"))
            ours, rows, dp = sm100_tmem.accumulator_layout(m, n, cta), m // cta, (1 << 16) * (32 // bits)
            lay = A.parse(cute[f"{i}.acc"]) if f"{i}.acc" in cute else None
            got, want = [], []
            for c in range(cta):
                for j in range(n):
                    for r in range(rows):
                        a = ours((c * rows + r, j))
                        got.append(f"{a >> 32}:{(a >> 16) & 0xFFFF}.{a & 0xFFFF}")
                        if lay is not None:
                            o, x = lay(r + rows * j), lay(r + rows * j) % dp * bits
                            want.append(f"{c}:{o // dp}.{x // 32}" + (f"+{x % 32}b" if x % 32 else ""))
            mine, theirs = " ".join(got), " ".join(want) if lay is not None else None
        if mine != theirs:
            bad.append(f"{i} {json.dumps(case)}: cute={cute.get(f'{i}.vals', cute.get(f'{i}.acc'))} "
                       f"ours={mine[:300]} (CuTe's as ours: {(theirs or '')[:300]})")
    return bad


# ------------------------------------------------- tcgen05.mma op structs, hostile parameters (nvcc -arch=sm_100a)

UMMA_OP_TYPES = ["half_t", "bfloat16_t", "tfloat32_t", "float", "int8_t", "uint8_t", "int32_t", "float_e4m3_t",
                 "float_e5m2_t", "float_e2m3_t", "float_e3m2_t", "float_e2m1_t"]


def gen_umma_op_cases(seed: int, n: int) -> list[dict]:
    """tcgen05.mma atoms with any M (32 .. 256), N (0 .. 272, off the multiples of 8 now and then), majors and element
    types (one time in four from any kind): the op struct is built in C++ (``Op op{};``) so that CuTe's static_asserts
    fire, in the op and in its MMA_Traits. Where CuTe compiles, the traits and the instruction descriptor must equal
    ours; where it refuses, we must refuse."""
    from algebra.hw import sm100

    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        kind = rng.choice(list(sm100.KINDS))
        _, _, ab_ok, c_ok, _ = sm100.KINDS[kind]
        pool = UMMA_OP_TYPES if rng.random() < 0.25 else list(ab_ok)
        a = rng.choice(pool)
        b = a if rng.random() < 0.6 else rng.choice(pool)
        c = rng.choice(list(c_ok)) if rng.random() < 0.8 else rng.choice(["float", "half_t", "int32_t"])
        cta, src = rng.choice([1, 2]), rng.choice(["smem", "smem", "tmem"])
        m = rng.choice([64, 128] if cta == 1 else [128, 256]) if rng.random() < 0.8 else rng.choice(
            [32, 64, 96, 128, 192, 256])
        nn = 8 * rng.randrange(0, 35) if rng.random() < 0.85 else rng.choice([4, 12, 20, 24, 40, 48, 264, 272])
        am = "K" if src == "tmem" and rng.random() < 0.8 else rng.choice(["K", "MN"])
        out.append({"kind": "umma_op", "args": [kind, m, nn, am, rng.choice(["K", "MN"]), cta, src, [a, b], c]})
    return out


def _umma_op_type(case: dict) -> tuple[str, str]:
    """(the op type, the MMA_Traits type) of a case, whether CuTe takes it or not."""
    from algebra.hw import sm100

    kind, m, n, am, bm, cta, src, (a, b), c = case["args"]
    frag = sm100.KINDS[kind][0]
    name = f"SM100_MMA_{frag}_{'2x1SM_' if cta == 2 else ''}{'TS' if src == 'tmem' else 'SS'}"
    cpp = {t: sm100.TYPES[t][0] for t in sm100.TYPES}
    am, bm = f"UMMA::Major::{am}", f"UMMA::Major::{bm}"
    if kind == "f8f6f4" and src == "smem":  # a plain struct: the traits carry the parameters
        one = "integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>"
        return name, (f"MMA_Traits<{name}, {cpp[a]}, {cpp[b]}, {cpp[c]}, C<{m}>, C<{n}>, "
                      f"integral_constant<UMMA::Major, {am}>, integral_constant<UMMA::Major, {bm}>, {one}, {one}>")
    op = f"{name}<{cpp[a]}, {cpp[b]}, {cpp[c]}, {m}, {n}, {am}, {bm}>"
    return op, f"MMA_Traits<{op}>"


def _umma_op_cpp(i: int, case: dict) -> list[str]:
    op, tr = _umma_op_type(case)
    body = [f"void c{i}() {{", f"  {op} op{{}}; (void)op;", f"  using Tr = {tr};"]
    body += [_show(f"{i}.{x}", f"typename Tr::{x}{{}}") for x in ("ALayout", "BLayout", "CLayout", "ThrID",
                                                                 "Shape_MNK")]
    return body + [f'  Tr tr{{}}; printf("{i}.idesc\\t%u\\n", uint32_t(tr.idesc_));', "}"]


def run_umma_ops(cases: list[dict], timeout: int = 3600) -> dict[str, str]:
    """CuTe's values for the op-struct cases: one translation unit built with ``nvcc -arch=sm_100a`` (host code
    only runs); a case whose static_assert fires (nvcc names its line, or the line it was instantiated from) is
    ``<i>.refused`` with the assertion's text, and the rest is compiled again."""
    from cute_cpp import cute_include

    nvcc = shutil.which(os.environ.get("NVCC", "nvcc"))
    if nvcc is None or cute_include() is None:
        raise RuntimeError("needs nvcc and the CuTe headers")
    cmd = [nvcc, "-std=c++17", "-arch=sm_100a", "-O0", "-w", f"-I{cute_include()}"]
    head = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm100.hpp>",
            "using namespace cute;"]
    refused: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="cute-umma-") as tmp:
        src, exe = Path(tmp) / "u.cu", Path(tmp) / "u"
        for _round in range(12):
            text, owner = program(cases, head, _umma_op_cpp, frozenset(refused))
            src.write_text(text)
            p = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=timeout)
            if p.returncode == 0:
                break
            new: dict[int, str] = {}
            for block in re.split(r"(?=^\S.*error)", p.stderr, flags=re.M):
                if "error" not in block:
                    continue
                lines = [int(a or b) for a, b in re.findall(r"u\.cu\((\d+)\): error|at line (\d+) of \S*u\.cu",
                                                              block)]
                msg = re.search(r'static assertion failed with "([^"]*)"', block)
                for ln in lines:
                    if ln in owner:
                        new.setdefault(owner[ln], msg.group(1) if msg else block.strip().splitlines()[0][:200])
            if not new:
                raise RuntimeError(f"nvcc failed without a case to blame:\n{p.stderr[-4000:]}")
            refused.update(new)
        else:
            raise RuntimeError("too many compile rounds")
        out = subprocess.run([str(exe)], capture_output=True, timeout=120, check=True).stdout.decode(errors="replace")
    got = {a: b.replace("_", "") for a, b in printed(out).items()}
    return got | {f"{i}.refused": msg for i, msg in refused.items()}


def compare_umma_ops(cases: list[dict], cute: dict[str, str], tally: dict | None = None) -> list[str]:
    """Every difference: a refusal on one side only (ours must name a PTX ISA rule where CuTe compiles: an element
    type the kind lacks, or an accumulator the kind lacks), or a traits value / descriptor that differs."""
    from algebra.hw import sm100

    bad: list[str] = []
    tally = tally if tally is not None else {}
    for i, case in enumerate(cases):
        kind, m, n, am, bm, cta, src, ab, c = case["args"]
        try:
            atom, err = sm100.umma(kind, m, n, am, bm, cta, src, tuple(ab), c), None
        except A.LayoutError as exc:
            atom, err = None, str(exc)
        if f"{i}.refused" in cute:
            tally["both refuse" if err else "cute refuses, ours answers"] = tally.get(
                "both refuse" if err else "cute refuses, ours answers", 0) + 1
            if err is None:
                bad.append(f"{i} {json.dumps(case)}: CuTe refuses ({cute[f'{i}.refused']}) where we answer")
            continue
        if err is not None:
            ptx = ("takes A and B of" in err or "accumulates" in err or "one type" in err or "must be K-major" in err)
            key = "ours refuses by a PTX type rule, cute compiles" if ptx else "over-refusal"
            tally[key] = tally.get(key, 0) + 1
            if not ptx:
                bad.append(f"{i} {json.dumps(case)}: CuTe compiles where we refuse: {err}")
            continue
        mine = {"ALayout": atom.A, "BLayout": atom.B, "CLayout": atom.C, "ThrID": atom.thr_id,
                "Shape_MNK": "(" + ",".join(map(str, atom.shape_mnk)) + ")", "idesc": atom.instr_desc}
        diff = [f"{k}: cute={cute.get(f'{i}.{k}')} ours={v}" for k, v in mine.items() if cute.get(f"{i}.{k}") != str(v)]
        tally["equal" if not diff else "wrong"] = tally.get("equal" if not diff else "wrong", 0) + 1
        if diff:
            bad.append(f"{i} {json.dumps(case)}: " + "; ".join(diff))
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--out", type=Path, help="write the cases with CuTe's answers here (JSON)")
    ap.add_argument("--umma", action="store_true", help="tiled MMAs of SM100 tcgen05.mma atoms")
    ap.add_argument("--wide", action="store_true", help="wider draws: see gen_cases")
    ap.add_argument("--tmem", action="store_true", help="tiled tcgen05.ld / st copies and f16 / f32 accumulators in "
                    "tensor memory (gen_tmem_cases)")
    ap.add_argument("--rescore", type=Path, help="a file written by --out: compare the current tree with the "
                    "CuTe answers it records (no compiler)")
    ap.add_argument("--tiles", action="store_true", help="local_tile / local_partition with projections "
                    "(gen_tile_cases)")
    ap.add_argument("--odd", action="store_true", help="tiled MMAs with odd atom layouts and permutations "
                    "(gen_odd_cases)")
    ap.add_argument("--umma-ops", action="store_true", help="tcgen05.mma op structs with hostile M, N, majors and "
                    "types, built with nvcc -arch=sm_100a so CuTe's static_asserts fire (gen_umma_op_cases)")
    a = ap.parse_args(argv)
    if a.umma_ops:
        cases, tally = gen_umma_op_cases(a.seed, a.n), {}
        bad = compare_umma_ops(cases, run_umma_ops(cases), tally)
        print("\n".join(bad) or f"all {len(cases)} cases agree")
        print(json.dumps(tally, sort_keys=True))
        return 1 if bad else 0
    cases = gen_tmem_cases(a.seed, a.n) if a.tmem else gen_umma_cases(a.seed, a.n) if a.umma else gen_tile_cases(
        a.seed, a.n) if a.tiles else gen_odd_cases(a.seed, a.n) if a.odd else gen_cases(a.seed, a.n, a.wide)
    if a.rescore:  # a file written by --out: score the current tree against CuTe's recorded answers
        recs = json.loads(a.rescore.read_text())
        cases, cute = [r["case"] for r in recs], {k: v for r in recs for k, v in r["cute"].items()}
        tally: dict = {}
        bad = compare_tmem(cases, cute) if a.tmem else compare(cases, cute, tally)
        print("\n".join(bad) or f"all {len(cases)} cases agree")
        print(json.dumps(tally, sort_keys=True))
        return 1 if bad else 0
    cute = run_tmem(cases) if a.tmem else run_umma(cases) if a.umma else run_cpp(cases)
    if a.out:
        recs = [{"case": c, "cute": {k: v for k, v in cute.items() if k.split(".")[0] == str(i)}}
                for i, c in enumerate(cases)]
        a.out.write_text("[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in recs) + "\n]\n")
    tally = {}
    bad = compare_tmem(cases, cute) if a.tmem else compare(cases, cute, tally)
    print("\n".join(bad) or f"all {len(cases)} cases agree")
    print(json.dumps(tally, sort_keys=True))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
