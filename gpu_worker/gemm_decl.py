"""One declaration per rung of the GEMM ladder (see gpu_worker.gemm_layouts for the model): the tile, the
shared-memory operands as CuTe layouts composed with their swizzle, each instruction that touches them (element
coordinates per lane, as the kernel computes them), the TMA boxes, the wgmma descriptor and the atoms.

The build passes these to nvcc (:func:`defines`, at the end with the bank model of each rung: :func:`predict`,
:func:`predicted_counters`); ``--describe`` prints what the kernel computed from them
(tests/test_gemm_layouts.py compares the two). Instances enumerate one CTA's instructions per repetition; the
comments give the kernel's own indexing.
"""

from __future__ import annotations

import functools

from gpu_worker.gemm_layouts import (
    COUNTERS,
    Access,
    Prediction,
    RungDecl,
    SmemOperand,
    TmaBox,
    WgmmaDesc,
    _wavefronts,
    instance_analysis,
)

LANES = range(32)
SW128 = (3, 3, 3)  # Sw<3,4,3> on bytes = Sw<3,3,3> on 2-byte element offsets: the 128-byte swizzle


def _per_ktile(bm: int, bn: int, bk: int):
    return lambda m, n, k: (m // bm) * (n // bn) * (k // bk)


def _per_tile(bm: int, bn: int):
    return lambda m, n, k: (m // bm) * (n // bn)


# ------------------------------------------------------------------------------------------------ rung 1 (SIMT)
def _r1_sts(warps: int = 8) -> list:  # As[lk + i][lrow] = a[i]: lrow = t / 2, lk = 8 (t % 2), i = 0..7
    return [[(16 * w + l // 2, 8 * (l % 2) + i) for l in LANES] for w in range(warps) for i in range(8)]


def r1_thread(t: int) -> tuple[int, int]:
    """Rung 1's (ty, tx) of thread t: quarter q of warp w takes ty = w + 8 (q % 2), tx = lane % 8 + 8 [q in 1, 2]."""
    q = (t % 32) // 8
    return t // 32 + 8 * (q % 2), t % 8 + 8 * (q in (1, 2))


def _r1_lds(operand: str, warps: int = 8) -> list:  # float4 at As[k][4 ty (+ 64)], Bs[k][4 tx (+ 64)]
    def row(t: int) -> int:
        ty, tx = r1_thread(t)
        return 4 * (ty if operand == "A" else tx)
    return [[(half + row(32 * w + l), k) for l in LANES] for w in range(warps) for k in range(16) for half in (0, 64)]


def _rung1() -> RungDecl:
    rep = _per_ktile(128, 128, 16)
    ops = tuple(SmemOperand(x, (128, 16), (1, 128), 4, 1, None, (
        Access(f"st.shared.f32 {x}", "STS.32", "st", "lanes", 4, _r1_sts, rep,
               "bf16 widened to fp32: lane l of warp w writes row 16w + l/2, k 8(l%2) + i; lanes 2j and 2j+1 share "
               "a bank (rows of one column are 128 words apart)"),
        Access(f"ld.shared.v4 {x} (float4)", "LDS.128", "ld", "lanes", 16, lambda x=x: _r1_lds(x), rep,
               "a float4 of 4 consecutive rows at one k; a quarter-warp shares one vector (A) or reads 8 in a row (B), "
               "the two quarters of a half-warp in the same banks"),
    )) for x in ("A", "B"))
    return RungDecl(1, "SIMT fp32 FMA, shared-memory tiles", "rung1_simt.cu", (128, 128, 16), 256, 1, ops,
                    "UniversalFMA", "UniversalCopy_128b", "UniversalCopy_32b",
                    "The baseline: 128x128 block tiles in shared memory, 8x8 outputs per thread on the fp32 FMA pipes.",
                    "The tile is stored M-major, (128,16):(1,128) in fp32: 4 consecutive rows are 16 contiguous bytes, "
                    "so one ld.shared.v4 feeds 4 FMAs, 4 wavefronts (one per quarter-warp). The widening stores put "
                    "two lanes in each bank (rows of one column are 128 words apart): 2-way.",
                    min_cc="8.0")


# ------------------------------------------------------------------------------------------------ rungs 2-5
def _chunks(rows: int, threads: int = 256) -> list:  # chunk i of thread t: row t/8 + (T/8) i, 16-byte column t%8
    per = rows * 64 // 8 // threads
    return [[((32 * w + l) // 8 + (threads // 8) * i, 8 * (l % 8)) for l in LANES]
            for w in range(threads // 32) for i in range(per)]


def _ldsm_a(warps_m: int = 2, warps_n: int = 4, wtm: int = 64) -> list:
    # rows wm0 + 16 mi + (lane & 15), k 16 ks + (lane >> 4) * 8
    return [[((w // warps_n) * wtm + 16 * mi + (l & 15), 16 * ks + (l >> 4) * 8) for l in LANES]
            for w in range(warps_m * warps_n) for mi in range(wtm // 16) for ks in range(4)]


def _ldsm_b(warps_m: int = 2, warps_n: int = 4, wtn: int = 64) -> list:
    # rows wn0 + 8 nj + (lane & 7) + (lane >> 4) * 8, k 16 ks + ((lane >> 3) & 1) * 8, nj = 0, 2, ...
    return [[((w % warps_n) * wtn + 8 * nj + (l & 7) + (l >> 4) * 8, 16 * ks + ((l >> 3) & 1) * 8) for l in LANES]
            for w in range(warps_m * warps_n) for nj in range(0, wtn // 8, 2) for ks in range(4)]


def _mma_sync(rung: int, pitch: int, swizzle, name: str, changed: str, fact: str, stages: int = 2) -> RungDecl:
    rep = _per_ktile(128, 256, 64)
    write = ("cp.async.cg 16 B", "LDGSTS.128", "ldgsts", "SM80_CP_ASYNC_CACHEGLOBAL_16B") if rung == 5 else \
        ("st.shared.v4 (16 B)", "STS.128", "st", "UniversalCopy_128b")

    def operand(x: str, rows: int) -> SmemOperand:
        return SmemOperand(x, (rows, 64), (pitch, 1), 2, stages, swizzle, (
            Access(f"{write[0]} {x}", write[1], write[2], "lanes", 16, lambda: _chunks(rows), rep,
                   "the next k tile: chunk i of thread t at row t/8 + 32 i, 16-byte column t % 8 (8 lanes per "
                   "phase write one 128-byte row)"),
            Access(f"ldmatrix.x4 {x}", "LDSM.x4", "ld", "ldmatrix", 16, _ldsm_a if x == "A" else _ldsm_b, rep,
                   "four 8x8 matrices of a 16x16 fragment per k16 slice: 8 row addresses of 16 bytes per matrix"),
        ))

    return RungDecl(rung, name, {2: "rung2_mma_unpadded.cu", 3: "rung3_mma_padded.cu", 4: "rung4_mma_swizzled.cu",
                                 5: "rung5_cp_async.cu"}[rung], (128, 256, 64), 256, stages,
                    (operand("A", 128), operand("B", 256)), "SM80_16x8x16_F32BF16BF16F32_TN", "SM75_U32x4_LDSM_N",
                    write[3], changed, fact, warps=(2, 4))


# ------------------------------------------------------------------------------------------------ rungs 6-8
def _tma_rows(rows: int) -> list:  # the box's rows as 16-byte chunks; one 128-byte row per 8-chunk phase
    return [[(4 * g + l // 8, 8 * (l % 8)) for l in LANES] for g in range(rows // 4)]


def _core_matrices(rows: int, readers: int = 1) -> list:
    # per k16 step: the 8-row x 16-byte core matrices of `rows` rows, four at a time; `readers` warpgroups read them
    return [[(16 * g + 8 * (m % 2) + r, 16 * ks + 8 * (m // 2)) for m in range(4) for r in range(8)]
            for _ in range(readers) for g in range(rows // 16) for ks in range(4)]


def _epilogue() -> list:  # row 16 warp + lane/4 + 8 hh, chunk jj (^ row % 8 by the swizzle), word lane % 4
    return [[(16 * warp + l // 4 + 8 * hh, 8 * jj + 2 * (l % 4)) for l in LANES]
            for _cw in range(2) for warp in range(4) for _q in range(4) for jj in range(8) for hh in range(2)]


def _wgmma_operand(x: str, rows: int, stages: int, box_rows: int, rep, readers: int) -> SmemOperand:
    # Nsight counts a wgmma once per warp of its warpgroup (4) and all the wavefronts of both operands: A's groups
    # of four core matrices are exactly one per warp instruction (64 rows x 2 chunks = 4 groups, 4 warps), B's
    # count wavefronts only.
    return SmemOperand(x, (rows, 64), (64, 1), 2, stages, SW128, (
        Access(f"TMA write {x}", "UTMALDG", None, "lanes", 16, lambda: _tma_rows(box_rows), rep,
               f"the copy engine writes the {box_rows}x64 box row by row (a model: the engine is not a warp, and "
               "Nsight's LSU counters do not see it)"),
        Access(f"wgmma read {x} (4 core matrices)", "HGMMA", "gmma", "ldmatrix", 16,
               lambda: _core_matrices(rows, readers), rep,
               "the descriptor walks 8-row x 16-byte core matrices (2 per 8 rows in a k16 step), four per phase group "
               + ("as ldmatrix.x4 reads them; each warpgroup its own 64 rows" if x == "A" else
                  f"as ldmatrix.x4 reads them; every consumer warpgroup ({readers}) reads all of B"),
               instructions_per_instance=1 if x == "A" else 0),
    ))


def _wgmma_rung(rung: int, bn: int, stages: int, threads: int, cluster: int, name: str, changed: str,
                fact: str) -> RungDecl:
    rep = _per_ktile(128, bn, 64)
    smem = [_wgmma_operand("A", 128, stages, 128, rep, 1), _wgmma_operand("B", bn, stages, bn // cluster, rep, 2)]
    tma = [TmaBox("A", "load", (64, 128), "SWIZZLE_128B", smem[0].layout),
           TmaBox("B", "load", (64, bn // cluster), "SWIZZLE_128B", f"Sw<3,3,3> o ({bn // cluster},64):(64,1)",
                  multicast=cluster)]
    extra = 1024  # slack to put the ring on a 1024-byte boundary (the swizzle's repeat)
    if rung >= 7:
        smem.append(SmemOperand("C", (64, 64), (64, 1), 2, 4, SW128, (
            Access("st.shared.b32 C", "STS.32", "st", "lanes", 4, _epilogue, _per_tile(128, bn),
                   "accumulator pairs of one warp: 8 rows (lane / 4) x 4 words (lane % 4) of chunk jj; the swizzle "
                   "moves each row's chunk to jj ^ (row % 8)"),
            Access("TMA store read C", "UTMASTG", None, "lanes", 16, lambda: _tma_rows(64), _per_tile(128, bn),
                   "the copy engine reads the 64x64 box back out (modelled row by row)"),
        )))
        tma.append(TmaBox("C", "store", (64, 64), "SWIZZLE_128B", smem[2].layout))
    wg = WgmmaDesc(f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.bf16.bf16", 64, bn, 16, 1, 16, 1024, 32)
    return RungDecl(rung, name, {6: "rung6_wgmma_tma.cu", 7: "rung7_ws_persistent.cu", 8: "rung8_stream_k.cu"}[rung],
                    (128, bn, 64), threads, stages, tuple(smem), f"SM90_64x{bn}x16_F32BF16BF16_SS",
                    "SM90_TMA_LOAD_MULTICAST" if cluster > 1 else "SM90_TMA_LOAD", "SM90_TMA_LOAD", changed, fact,
                    cluster=cluster, tma=tuple(tma), wgmma=wg, extra_smem=extra, min_cc="9.0a")


_SW_FACT = ("Sw<3,3,3> XORs offset bits 6-8 (the row mod 8) into bits 3-5 (the 16-byte chunk): the 8 rows of one "
            "chunk land in 8 different chunks, 32 banks, 4 wavefronts, with rows of exactly 128 bytes")
DECLS: dict[int, RungDecl] = {d.rung: d for d in (
    _rung1(),
    _mma_sync(2, 64, None, "mma.sync m16n8k16 + ldmatrix, row-major unpadded shared memory",
              "Tensor cores: mma.sync m16n8k16 fed by ldmatrix.x4 from a row-major bf16 tile, 128x256x64 per CTA.",
              "(128,64):(64,1) puts the 8 row addresses of each 8x8 matrix 128 bytes apart, all in banks 0-3: "
              "8-way, 32 wavefronts per ldmatrix.x4 where 4 would do. The tensor cores wait on shared memory."),
    _mma_sync(3, 72, None, "mma.sync m16n8k16 + ldmatrix, rows padded by 16 bytes",
              "Each row padded from 64 to 72 elements (16 bytes).",
              "With a pitch of 72 elements (144 bytes = 36 words), row r starts at bank 4r mod 32: the 8 rows of a "
              "matrix cover all 32 banks, 4 wavefronts per ldmatrix.x4; 12.5 % more shared memory."),
    _mma_sync(4, 64, (3, 3, 3), "mma.sync m16n8k16 + ldmatrix, XOR-swizzled shared memory (Sw<3,3,3>)",
              "The padding replaced by the XOR swizzle Sw<3,3,3>: no extra bytes.",
              _SW_FACT + ", which 16-byte copies, TMA and wgmma need."),
    _mma_sync(5, 64, (3, 3, 3), "mma.sync + swizzled smem + cp.async multi-stage pipeline",
              "cp.async copies global -> shared without registers, 4 stages deep; fragments double-buffered.",
              "The swizzle moves whole 16-byte chunks (M = 3), so a chunk stays contiguous: one cp.async 16 B per "
              "chunk, 8 lanes per 128-byte row, conflict-free; the same Sw<3,3,3> tile as rung 4.", stages=4),
    _wgmma_rung(6, 128, 3, 256, 1, "wgmma m64n128k16 + TMA (128B swizzle) + mbarrier ring",
                "Hopper: TMA fills a 3-stage ring, wgmma m64n128k16 reads both operands from shared memory through "
                "descriptors; no ldmatrix, no registers on the way.",
                "Sw<3,3,3> o (128,64):(64,1) on bf16 offsets is Sw<3,4,3> on bytes: exactly what TMA's SWIZZLE_128B "
                "writes and what the K-major SW128 descriptor (LBO 16 B, unused; SBO 1024 B, one 8-row atom) "
                "reads: one layout, written by the copy engine and read by the tensor cores."),
    _wgmma_rung(7, 256, 4, 384, 2, "warp-specialized persistent wgmma m64n256k16 + TMA multicast (2-CTA cluster)",
                "Warp specialization (a producer warpgroup drives TMA, two consumers run m64n256k16), persistent "
                "CTAs, 2-CTA clusters that multicast B, and a TMA-store epilogue.",
                "B's 256 rows arrive as two 128-row boxes, one per CTA, each multicast to both: the swizzle repeats "
                "every 8 rows (1024 bytes), so each half lands on the same Sw<3,4,3> pattern. The epilogue writes C "
                "through the same 128B swizzle: st.shared.b32 of 8 rows x 4 words, conflict-free, then one TMA "
                "store."),
    _wgmma_rung(8, 256, 4, 384, 2, "rung 7 + stream-K tail, fp16 build",
                "A stream-K tail: the k iterations of the tiles left over after whole waves are split evenly over "
                "every cluster (8192^3: 1024 tiles on 66 clusters).",
                "No new layout: the shared-memory tiles, TMA boxes and descriptors are rung 7's. The gain is the "
                "schedule (wave quantization), not the banks."),
)}


# ------------------------------------------------------------------------------------- the model of each rung
@functools.cache
def predict(rung: int, operand: str, name: str) -> Prediction:
    """The bank model on every instance of one access of a declared rung."""
    op = DECLS[rung].operand(operand)
    access = next(a for a in op.accesses if a.name == name)
    instances = access.instances()
    runs = [_wavefronts(op, access, c) for c in instances]
    n = len(runs)
    wf = sum(r[0] for r in runs) / n
    ideal = sum(r[1] for r in runs) / n
    return Prediction(n, _tidy(wf), _tidy(ideal), max(r[2] for r in runs), instance_analysis(op, access, instances[0]))


def _tidy(x: float) -> float | int:
    return int(x) if x == int(x) else round(x, 4)


def predicted_counters(rung: int, m: int, n: int, k: int) -> dict[str, dict]:
    """What Nsight Compute should count for one launch at M x N x K, per counter ("ld", "st", "ldgsts", "gmma"):
    ``{"instructions", "wavefronts", "conflicts", "wavefronts_per_instruction"}`` (the last None without
    instructions). Post-condition: wavefronts == the sum over the counter's accesses of count x predicted."""
    d = DECLS[rung]
    out = {c: {"instructions": 0, "wavefronts": 0.0, "conflicts": 0.0} for c in COUNTERS if c}
    for op in d.smem:
        for a in op.accesses:
            if a.counter is None:
                continue
            p = predict(rung, op.operand, a.name)
            count = p.instances * a.repeat(m, n, k)
            row = out[a.counter]
            row["instructions"] += count * a.instructions_per_instance
            row["wavefronts"] += count * p.wavefronts
            row["conflicts"] += count * p.conflicts
    for row in out.values():
        row["wavefronts"], row["conflicts"] = _tidy(row["wavefronts"]), _tidy(row["conflicts"])
        row["wavefronts_per_instruction"] = (round(row["wavefronts"] / row["instructions"], 4)
                                             if row["instructions"] else None)
    return out


# ------------------------------------------------------------------------------------------------ the build
def defines(rung: int) -> dict[str, int]:
    """The compile-time constants of a rung, as ``-DNAME=value`` takes them: what the kernel's tile, layouts, TMA
    boxes and descriptor are built from (kernels/gemm/decl.cuh reads them). Post-condition: ``GEMM_RUNG`` is the
    rung and every value is an int."""
    d = DECLS[rung]
    bm, bn, bk = d.tile
    out = {"GEMM_RUNG": d.rung, "GEMM_BM": bm, "GEMM_BN": bn, "GEMM_BK": bk, "GEMM_STAGES": d.stages,
           "GEMM_THREADS": d.threads, "GEMM_CLUSTER": d.cluster}
    a = d.operand("A")
    if d.warps:
        out.update(GEMM_WARPS_M=d.warps[0], GEMM_WARPS_N=d.warps[1])
    if not d.tma:
        b, m, s = a.swizzle or (0, 0, 0)
        out.update(GEMM_SMEM_PITCH=a.pitch, GEMM_SW_B=b, GEMM_SW_M=m, GEMM_SW_S=s)
    for box in d.tma:
        key = f"GEMM_TMA_{box.operand}"
        out.update({f"{key}_COLS": box.box_dim[0], f"{key}_ROWS": box.box_dim[1],
                    f"{key}_SWIZZLE": int(box.swizzle.removeprefix("SWIZZLE_").removesuffix("B"))})
    if d.wgmma:
        w = d.wgmma
        out.update(GEMM_WGMMA_M=w.m, GEMM_WGMMA_N=w.n, GEMM_WGMMA_K=w.k, GEMM_DESC_LAYOUT=w.layout_type,
                   GEMM_DESC_LBO=w.leading_byte_offset, GEMM_DESC_SBO=w.stride_byte_offset,
                   GEMM_DESC_K_STEP=w.k_step_bytes)
    if any(op.operand == "C" for op in d.smem):
        c = d.operand("C")
        b, m, s = c.swizzle or (0, 0, 0)
        out.update(GEMM_EPI_ROWS=c.shape[0], GEMM_EPI_COLS=c.shape[1], GEMM_EPI_SW_B=b, GEMM_EPI_SW_M=m,
                   GEMM_EPI_SW_S=s)
    out.update(d.defines)
    return out


def define_flags(rung: int) -> list[str]:
    """``-DNAME=value`` for :func:`defines`, sorted by name."""
    return [f"-D{k}={v}" for k, v in sorted(defines(rung).items())]
