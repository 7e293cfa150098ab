#!/usr/bin/env python3
"""Triton's stores into shared memory on the GPU: a Gluon kernel loads a tile into a distributed layout and stores it
into a shared one (``smem.store``), for each case below; Nsight Compute's shared-store counters for one launch of each
beside LayoutLab's model (``algebra.doctor.triton_conflicts.plan``, fed the layouts as the compiled TTGIR prints them)
and Gluon's ``bank_conflicts``; the store instructions in the kernel's SASS. One JSON file; a table printed last.

    python3 bench/triton_device.py --out $OUT/triton_conflicts_H100.json   # on the GPU (the .sh names the card)
    python3 bench/triton_device.py --compile-only                          # any machine with triton: no launch, no ncu
    python3 bench/triton_device.py --table bench/results/triton_conflicts_<card>_<date>.json

The kernel runs ``GRID + i`` programs for case i (each its own tile), so the CSV rows of one ncu run over all cases
are matched by ``launch__grid_size``. Measured per instruction: ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st``
over ``smsp__sass_inst_executed_op_shared_st`` (STS), or the stmatrix pair where the SASS holds STSM. ``agrees``:
within 1 % + 0.05 wavefronts per instruction (Nsight adds a few wavefronts per launch; a conflict adds a whole one)
and the same instruction count. Needs triton (with Gluon), torch and ncu for the GPU run; ``algebra`` is stdlib-only.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from algebra.doctor import triton_conflicts as TC  # noqa: E402
from algebra.doctor.triton_layouts import convert  # noqa: E402

GRID = 256
METRICS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
           "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
           "smsp__sass_inst_executed_op_shared_stsm.sum",
           "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
           "smsp__sass_inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
           "launch__grid_size")

B18_48 = ("blocked", [1, 8], [4, 8], [4, 1], [1, 0])
B18_84 = ("blocked", [1, 8], [8, 4], [4, 1], [1, 0])
B81_84 = ("blocked", [8, 1], [8, 4], [1, 4], [0, 1])
B81_48 = ("blocked", [8, 1], [4, 8], [1, 4], [0, 1])
MMA3 = ("mma", [3, 0], [4, 1], [16, 64, 16])
MMA2 = ("mma", [2, 0], [2, 2], [16, 8])
ROW = [1, 0]
COL = [0, 1]
#: (name, shape, distributed, shared[, element bits]): shared is ("swizzled", vec, perPhase, maxPhase, order),
#: ("nvmma", bytes, transposed) or ("padded", [[interval, padding], ...], order); 16-bit elements unless given;
#: the kernel's warps are the distributed layout's
CASES = [
    ("b18_48-sw818-64x64", [64, 64], B18_48, ("swizzled", 8, 1, 8, ROW)),
    ("b18_48-sw818-128x64", [128, 64], B18_48, ("swizzled", 8, 1, 8, ROW)),
    ("b18_84-sw818-64x64", [64, 64], B18_84, ("swizzled", 8, 1, 8, ROW)),
    ("b18_84-sw424-128x64", [128, 64], B18_84, ("swizzled", 4, 2, 4, ROW)),
    ("b18_84-rowmajor-64x64", [64, 64], B18_84, ("swizzled", 1, 1, 1, ROW)),
    ("b81_84-rowmajor-64x64", [64, 64], B81_84, ("swizzled", 1, 1, 1, ROW)),
    ("b81_84-sw818col-64x64", [64, 64], B81_84, ("swizzled", 8, 1, 8, COL)),
    ("b81_48-colmajor-64x64", [64, 64], B81_48, ("swizzled", 1, 1, 1, COL)),
    ("b18_84-nvmma128-64x64", [64, 64], B18_84, ("nvmma", 128, False)),
    ("mma3-nvmma128-64x64", [64, 64], MMA3, ("nvmma", 128, False)),
    # registers relabelled into wider vectors (a register at offset 65 beside one at 1 is one at 64)
    ("b28_48-sw112col-64x4", [64, 4], ("blocked", [2, 8], [4, 8], [4, 2], COL), ("swizzled", 1, 1, 2, COL)),
    ("b88_48-sw142-32x16", [32, 16], ("blocked", [8, 8], [4, 8], [1, 2], ROW), ("swizzled", 1, 4, 2, ROW)),
    ("b41_84-sw244col-32x32-f32", [32, 32], ("blocked", [4, 1], [8, 4], [1, 1], COL), ("swizzled", 2, 4, 4, COL),
     32),
    # stmatrix of 8- and 32-bit elements (a lane's 32-bit word and lanes 0-1 along a 16-byte row)
    ("b81_84-sw848col-4x512-i8", [4, 512], ("blocked", [8, 1], [8, 4], [2, 2], ROW), ("swizzled", 8, 4, 8, COL), 8),
    ("b11_84-sw418-64x64-f32", [64, 64], ("blocked", [1, 1], [8, 4], [4, 1], ROW), ("swizzled", 4, 1, 8, ROW), 32),
    # stmatrix.trans: the row register is the one whose rows share the fewest banks (register 4 here, not 0)
    ("b21_48col-sw824-64x64", [64, 64], ("blocked", [2, 1], [4, 8], [1, 4], COL), ("swizzled", 8, 2, 4, ROW)),
    ("mma2-sw818-64x64", [64, 64], MMA2, ("swizzled", 8, 1, 8, ROW)),
    ("b116_84-sw1618-64x128-i8", [64, 128], ("blocked", [1, 16], [8, 4], [4, 1], ROW), ("swizzled", 16, 1, 8, ROW),
     8),
    # padded_shared: st.shared only
    ("b18_48-pad64p8-64x64", [64, 64], B18_48, ("padded", [[64, 8]], ROW)),
    ("mma2-pad64p16col-16x16", [16, 16], ("mma", [2, 0], [4, 2], [16, 8]), ("padded", [[64, 16]], COL)),
    # fresh draws (seeds 14008, 14025, 14031, 14043): CTA tiles larger than the tensor along a dimension (registers
    # and lanes that broadcast), each with conflicts; and an MMA v2 tile other than [16, 8]
    ("b42_48col-sw248-8x128-i8", [8, 128], ("blocked", [4, 2], [4, 8], [2, 1], COL), ("swizzled", 2, 4, 8, ROW), 8),
    ("b81_162-sw421-32x64", [32, 64], ("blocked", [8, 1], [16, 2], [1, 4], ROW), ("swizzled", 4, 2, 1, ROW)),
    ("b14_84-sw241-8x32-f32", [8, 32], ("blocked", [1, 4], [8, 4], [2, 2], ROW), ("swizzled", 2, 4, 1, ROW), 32),
    ("b42_84-sw812-16x8", [16, 8], ("blocked", [4, 2], [8, 4], [1, 1], ROW), ("swizzled", 8, 1, 2, ROW)),
    ("mma2i1616-sw818-64x64", [64, 64], ("mma", [2, 0], [2, 2], [16, 16]), ("swizzled", 8, 1, 8, ROW)),
]
DTYPES = {8: ("i8", "int8"), 16: ("fp16", "float16"), 32: ("fp32", "float32")}


def bits_of(case: tuple) -> int:
    return case[4] if len(case) > 4 else 16


def warps_of(dist: tuple) -> int:
    n = 1
    for x in (dist[3] if dist[0] == "blocked" else dist[2]):
        n *= x
    return n


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def gluon_layouts(dist: tuple, shared: tuple, shape: list[int], bits: int):
    import triton.experimental.gluon.language as ttgl
    if dist[0] == "blocked":
        d = ttgl.BlockedLayout(*dist[1:])
    else:
        d = ttgl.NVMMADistributedLayout(*dist[1:])
    if shared[0] == "swizzled":
        s = ttgl.SwizzledSharedLayout(*shared[1:])
    elif shared[0] == "padded":
        s = ttgl.PaddedSharedLayout.with_identity_for(shared[1], shape, shared[2])
    else:
        s = ttgl.NVMMASharedLayout(shared[1], bits, 2, shared[2])
    return d, s


def kernel():
    from triton.experimental import gluon
    from triton.experimental.gluon import language as ttgl

    if not hasattr(ttgl, "thread_barrier"):  # Triton 3.9 names it barrier
        ttgl.thread_barrier = ttgl.barrier

    @gluon.jit
    def store_tile(src, dst, R: ttgl.constexpr, C: ttgl.constexpr, L: ttgl.constexpr, S: ttgl.constexpr):
        rows = ttgl.arange(0, R, layout=ttgl.SliceLayout(1, L))
        cols = ttgl.arange(0, C, layout=ttgl.SliceLayout(0, L))
        offs = ttgl.program_id(0) * (R * C) + rows[:, None] * C + cols[None, :]
        x = ttgl.load(src + offs)
        smem = ttgl.allocate_shared_memory(src.dtype.element_ty, [R, C], S)
        smem.store(x)
        ttgl.thread_barrier()
        ttgl.store(dst + offs, smem.load(L))

    return store_tile


def compile_cpu(fn, shape, d, s, bits, warps):
    """The kernel compiled for sm_90 with no GPU (``--compile-only``)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    ty = "*" + DTYPES[bits][0]
    sig = {"src": ty, "dst": ty, "R": "constexpr", "C": "constexpr", "L": "constexpr", "S": "constexpr"}
    src = GluonASTSource(fn, sig, {(2,): shape[0], (3,): shape[1], (4,): d, (5,): s})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})


def store_attrs(ttgir: str) -> tuple[str, str]:
    """The (distributed, shared) attribute texts of the kernel's ``ttg.local_store``, aliases defined first."""
    aliases = {m.group(1): m.group(2) for m in re.finditer(r"^(#\w+) = (#ttg\.\w+<.*>)$", ttgir, re.M)}
    m = re.search(r"ttg\.local_store .*: tensor<[\dx]+\w+, (#\w+)> -> !ttg\.memdesc<[\dx]+\w+, (#\w+)", ttgir)
    if not m:
        raise RuntimeError("no ttg.local_store in the TTGIR")

    def text(name: str) -> str:
        body = aliases[name]
        deps = [f"{a} = {aliases[a]}" for a in re.findall(r"#\w+(?=[,}\s])", body) if a in aliases]
        return "\n".join([*deps, body])
    return text(m.group(1)), text(m.group(2))


def sass_stores(sass: str) -> dict[str, int]:
    """Static count of each shared-store opcode (STS.*, STSM.*) in the SASS."""
    out: dict[str, int] = {}
    for op in re.findall(r"\b(STSM(?:\.[\w]+)*|STS(?:\.[\w]+)*)\s", sass):
        out[op] = out.get(op, 0) + 1
    return out


def ptx_stores(ptx: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for op in re.findall(r"\b(st\.shared(?:\.[\w:]+)*|stmatrix(?:\.[\w:]+)*)\s", ptx):
        out[op] = out.get(op, 0) + 1
    return out


def model(dist_text: str, shared_text: str, shape: list[int], bits: int, warps: int) -> dict:
    """The model's count for one CTA (every warp), and its instruction."""
    d, s = convert(dist_text, shape), convert(shared_text, shape, bits)
    wf = count = ideal = 0
    plans = [TC.plan(d, s, bits, "store", warp=w) for w in range(warps)]
    for p in plans:
        wf, count, ideal = wf + p["wavefronts"], count + p["count"], ideal + p["ideal"]
    st = [TC.plan(d, s, bits, "store", warp=w, matrix=False) for w in range(warps)]
    return {"instruction": plans[0]["kind"], "why": plans[0]["why"], "instructions_per_cta": count,
            "wavefronts_per_cta": wf, "ideal_per_cta": ideal, "wavefronts_per_instruction": round(wf / count, 4),
            "ideal_per_instruction": round(ideal / count, 4),
            "st_shared_only": {"instruction": st[0]["kind"], "wavefronts_per_cta": sum(p["wavefronts"] for p in st),
                               "ideal_per_cta": sum(p["ideal"] for p in st),
                               "instructions_per_cta": sum(p["count"] for p in st)}}


def prepare(on_gpu: bool) -> list[dict]:
    """Compile (and on the GPU launch and check) every case; TTGIR, PTX and SASS stores, model, Gluon."""
    import triton
    import triton_oracle  # tests/: Gluon's bank_conflicts inside a @gluon.jit function
    fn = kernel()
    rows = []
    for i, case in enumerate(CASES):
        name, shape, dist, shared = case[:4]
        bits, warps = bits_of(case), warps_of(dist)
        d, s = gluon_layouts(dist, shared, shape, bits)
        row: dict = {"case": name, "shape": shape, "element_bits": bits, "num_warps": warps, "grid": GRID + i}
        if on_gpu:
            import torch
            x, y = tensors(torch, (GRID + i) * shape[0] * shape[1], bits)
            k = fn[(GRID + i,)](x, y, shape[0], shape[1], d, s, num_warps=warps)
            torch.cuda.synchronize()
            row["correct"] = bool(torch.equal(x, y))
        else:
            k = compile_cpu(fn, shape, d, s, bits, warps)
        row["dist_ttgir"], row["shared_ttgir"] = store_attrs(k.asm["ttgir"])
        row["ptx_stores"] = ptx_stores(k.asm["ptx"])
        try:
            row["sass_stores"] = sass_stores(k.asm["sass"])
        except Exception as e:  # noqa: BLE001  (cuobjdump missing: the PTX still names the instruction)
            row["sass_stores"] = {"error": str(e)[:200]}
        row["model"] = model(row["dist_ttgir"], row["shared_ttgir"], shape, bits, warps)
        # Gluon's bank_conflicts has no answer for padded_shared (its layout is not linear)
        g = None if shared[0] == "padded" else triton_oracle.bank_conflicts(d, s, shape, bits)
        st = row["model"]["st_shared_only"]
        row["gluon_bank_conflicts"] = g
        row["gluon_wavefronts_per_instruction"] = None if g is None else round(
            (g + 1) * st["ideal_per_cta"] / st["instructions_per_cta"], 4)
        row["triton"] = triton.__version__
        rows.append(row)
        log(f"PROGRESS {name}: {row['model']['instruction']} {row['ptx_stores']} {row['sass_stores']}")
    return rows


def tensors(torch, n: int, bits: int):
    """A random source of n elements and a destination filled with something else."""
    dtype = getattr(torch, DTYPES[bits][1])
    if bits == 8:
        x = torch.randint(-128, 128, (n,), dtype=dtype, device="cuda")
        return x, torch.full((n,), 0, dtype=dtype, device="cuda") ^ ~x
    return torch.randn(n, dtype=dtype, device="cuda"), torch.full((n,), float("nan"), dtype=dtype, device="cuda")


def launch_only() -> None:
    """One launch of each case (what ncu profiles)."""
    import torch
    fn = kernel()
    for i, case in enumerate(CASES):
        name, shape, dist, shared = case[:4]
        bits = bits_of(case)
        d, s = gluon_layouts(dist, shared, shape, bits)
        x, y = tensors(torch, (GRID + i) * shape[0] * shape[1], bits)
        fn[(GRID + i,)](x, y, shape[0], shape[1], d, s, num_warps=warps_of(dist))
    torch.cuda.synchronize()


def find_ncu() -> str | None:
    found = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))
    for cand in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu", *found):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def parse_raw_csv(text: str) -> list[dict]:
    """``ncu --csv --page raw``: one {metric: value} per profiled kernel."""
    table = list(csv.reader(io.StringIO("\n".join(ln for ln in text.splitlines() if ln.startswith('"')))))
    if len(table) < 2:
        return []
    header, out = table[0], []
    for r in table[1:]:
        if not r or not r[0].strip().isdigit():
            continue
        got: dict = {}
        for name, value in zip(header, r, strict=False):
            if "__" in name:
                try:
                    got[name] = float(value.replace(",", ""))
                except ValueError:
                    continue
        out.append(got)
    return out


def profile(ncu: str) -> tuple[dict[int, dict], str]:
    cmd = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base", "-k", "regex:store_tile",
           "--metrics", ",".join(METRICS), sys.executable, str(Path(__file__).resolve()), "--launch-only"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rows = parse_raw_csv(proc.stdout)
    got = {int(r["launch__grid_size"]): r for r in rows if "launch__grid_size" in r}
    if not got and len(rows) == len(CASES):  # no grid size in the CSV: the launches come in the cases' order
        got = {GRID + i: r for i, r in enumerate(rows)}
    return got, " ".join(cmd[:-2] + ["bench/triton_device.py", "--launch-only"]) + "\n" + proc.stderr[-1500:]


def keep(m: dict) -> dict:
    """The asked-for metrics (their .sum and the .avg/.min/.max ncu prints beside it) and the kernel's duration."""
    bases = {x.rsplit(".", 1)[0] for x in METRICS}
    return {k: v for k, v in m.items() if k.rsplit(".", 1)[0] in bases or k in ("launch__grid_size",
                                                                                 "gpu__time_duration.sum")}


def measured(row: dict, m: dict) -> dict:
    sass = row.get("sass_stores", {})
    stsm = any(k.startswith("STSM") for k in sass) or m.get("smsp__sass_inst_executed_op_shared_stsm.sum", 0) > 0
    if stsm:
        inst = m.get("smsp__sass_inst_executed_op_shared_stsm.sum", 0)
        wf = m.get("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum", 0)
    else:
        inst = m.get("smsp__sass_inst_executed_op_shared_st.sum", 0)
        wf = m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0)
    out = {"class": "stsm" if stsm else "sts", "instructions": inst, "wavefronts": wf,
           "conflicts": m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
           "wavefronts_per_instruction": round(wf / inst, 4) if inst else None}
    want = row["model"]
    pred_inst = want["instructions_per_cta"] * row["grid"]
    per = out["wavefronts_per_instruction"]
    out["agrees"] = bool(inst == pred_inst and per is not None
                         and abs(per - want["wavefronts_per_instruction"])
                         <= 0.05 + 0.01 * want["wavefronts_per_instruction"])
    return out


def nvml() -> dict:
    try:
        import pynvml as N
        N.nvmlInit()
        h = N.nvmlDeviceGetHandleByIndex(0)

        def s(x):
            return x.decode() if isinstance(x, bytes) else x
        out = {"device": s(N.nvmlDeviceGetName(h)), "driver": s(N.nvmlSystemGetDriverVersion()),
               "sm_clock_mhz": N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM),
               "mem_clock_mhz": N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_MEM),
               "sm_clock_max_mhz": N.nvmlDeviceGetMaxClockInfo(h, N.NVML_CLOCK_SM),
               "temperature_c": N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU)}
        N.nvmlShutdown()
        return out
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)[:200]}


def table(report: dict) -> str:
    lines = [f"{'case':24} {'SASS':18} {'model':>6} {'Nsight':>7} {'Gluon':>6} {'conf':>4} agrees"]
    for r in report["cases"]:
        ms = r.get("measured", {})
        sass = ",".join(k for k in r.get("sass_stores", {}) if k != "error") or r["model"]["instruction"]
        lines.append(f"{r['case']:24} {sass[:18]:18} {r['model']['wavefronts_per_instruction']:>6} "
                     f"{ms.get('wavefronts_per_instruction')!s:>7} {r['gluon_wavefronts_per_instruction']!s:>6} "
                     f"{r['gluon_bank_conflicts']!s:>4} {ms.get('agrees')}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--launch-only", action="store_true")
    ap.add_argument("--table", type=Path)
    a = ap.parse_args()
    if a.launch_only:
        launch_only()
        return 0
    if a.table:
        print(table(json.loads(a.table.read_text())))
        return 0
    report: dict = {"benchmark": "Triton/Gluon stores into shared memory: the model beside Nsight Compute and Gluon",
                    "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    "command": "bash bench/triton_device.sh" if not a.compile_only else "--compile-only",
                    "nvml_before": {} if a.compile_only else nvml()}
    report["cases"] = prepare(not a.compile_only)
    if not a.compile_only:
        ncu = find_ncu()
        report["ncu"] = ncu
        got, report["ncu_log"] = profile(ncu) if ncu else ({}, "ncu not found")
        for r in report["cases"]:
            m = got.get(r["grid"])
            r["ncu"] = keep(m) if m else {"error": "no row"}
            if m:
                r["measured"] = measured(r, m)
        report["nvml_after"] = nvml()
        report["all_agree"] = all(r.get("measured", {}).get("agrees") for r in report["cases"])
        report["all_correct"] = all(r.get("correct") for r in report["cases"])
    text = json.dumps(report, indent=1)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
