#!/usr/bin/env python3
"""Rung-4 schedule experiments: every way tried to feed mma.sync from registers (no cp.async), timed against cuBLAS.

Standard library only. Builds each variant of bench/gemm_experiments/*.cu with nvcc (sm_90a), runs it through the
GEMM harness (fp32-reference check, then median of --iters timed runs interleaved with cuBLAS, L2 flushed) and
writes one JSON file. Variants marked `diag` compute a wrong product on purpose (loads from one k tile, or no loads):
the harness would refuse to time them, so they time themselves and measure a ceiling, not a GEMM.

    python3 bench/gemm_rung4_experiments.py --out bench/results/gemm_h200_rung4_experiments.json
    python3 bench/gemm_rung4_experiments.py --only ws_c208_p88,staged_d2
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXP = ROOT / "bench" / "gemm_experiments"
KERNELS = ROOT / "gpu_worker" / "kernels" / "gemm"
FLAGS = ["-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v"]
_WS_F0 = "-DXFDB=0 -DXCREG=184 -DXPREG=136 -DXBATCH=12"
# name: (source, defines, what it tests)
VARIANTS: dict[str, tuple[str, str, str]] = {
    "rung4": ("rung4_mma_swizzled.cu", "", "committed rung 4: next tile in registers, 2 buffers"),
    "rung5": ("rung5_cp_async.cu", "", "committed rung 5: cp.async, 4 stages (the same main loop, async copies)"),
    "staged_d1": ("r4_staged.cu", "-DXDIST=1", "streamed quarters, stored 1 slice after issue, 3 buffers"),
    "staged_d2": ("r4_staged.cu", "-DXDIST=2", "streamed, stored 2 slices after issue"),
    "staged_d4": ("r4_staged.cu", "-DXDIST=4", "streamed, stored 4 slices after issue (spills)"),
    "staged_d2_nc": ("r4_staged.cu", "-DXDIST=2 -DXNC=1", "streamed d2, ld.global.nc.L1::no_allocate"),
    "staged_d2_f0": ("r4_staged.cu", "-DXDIST=2 -DXFDB=0", "streamed d2, no fragment double buffering"),
    "staged_d4_f0": ("r4_staged.cu", "-DXDIST=4 -DXFDB=0", "streamed d4, no fragment double buffering"),
    "staged_d2_pad": ("r4_staged.cu", "-DXDIST=2 -DXLAYOUT=SmemPadded", "streamed d2, padded rows"),
    "staged_256x128": ("r4_staged.cu", "-DXBM=256 -DXBN=128 -DXWM=4 -DXWN=2 -DXDIST=2", "256x128 tile"),
    "staged_2cta_d1": ("r4_staged.cu", "-DXBN=128 -DXWN=2 -DXMINB=2 -DXDIST=1", "128x128 tile, 2 CTAs per SM"),
    "staged_2cta_d2": ("r4_staged.cu", "-DXBN=128 -DXWN=2 -DXMINB=2 -DXDIST=2", "128x128 tile, 2 CTAs per SM"),
    "staged_d2_hot": ("r4_staged.cu", "-DXDIST=2 -DXDIAG=1", "diag: streamed d2, loads always hit (tile 0)"),
    "staged_d4_f0_hot": ("r4_staged.cu", "-DXDIST=4 -DXFDB=0 -DXDIAG=1", "diag: streamed d4 f0, loads hit"),
    "staged_none": ("r4_staged.cu", "-DXDIST=2 -DXDIAG=2", "diag: rung-5 main loop, no loads or stores"),
    "pf0": ("r4_staged.cu", "-DXKIND=1 -DXPF=0", "rung-4 schedule, explicit st.shared.v4 (now committed)"),
    "pf0_nc": ("r4_staged.cu", "-DXKIND=1 -DXPF=0 -DXNC=1", "the same, ld.global.nc.L1::no_allocate"),
    "pf2": ("r4_staged.cu", "-DXKIND=1 -DXPF=2", "+ prefetch.global.L1 of tile kt+2, 1 per row"),
    "pf3": ("r4_staged.cu", "-DXKIND=1 -DXPF=3", "+ prefetch.global.L1 of tile kt+3"),
    "pf2_s4": ("r4_staged.cu", "-DXKIND=1 -DXPF=2 -DXPFS=4", "+ prefetch of kt+2, 4 per row"),
    "pf3_s2": ("r4_staged.cu", "-DXKIND=1 -DXPF=3 -DXPFS=2", "+ prefetch of kt+3, 2 per row"),
    "pf2_pad": ("r4_staged.cu", "-DXKIND=1 -DXPF=2 -DXLAYOUT=SmemPadded", "padded rows + prefetch kt+2"),
    "pf0_none": ("r4_staged.cu", "-DXKIND=1 -DXPF=0 -DXDIAG=2", "diag: rung-4 main loop, no loads or stores"),
    "ws_c208_p88": ("r4_ws.cu", "-DXCREG=208 -DXPREG=88", "warp-specialized, 4 stages, fragments double-buffered"),
    "ws_c208_p88_s3": ("r4_ws.cu", "-DXCREG=208 -DXPREG=88 -DXS=3", "the same, 3 stages"),
    "ws_c208_p88_b6": ("r4_ws.cu", "-DXCREG=208 -DXPREG=88 -DXBATCH=6", "the same, batches of 6 chunks"),
    "ws_pad_s3": ("r4_ws.cu", "-DXCREG=208 -DXPREG=88 -DXLAYOUT=SmemPadded -DXS=3", "padded rows, 3 stages"),
    "ws_f0": ("r4_ws.cu", _WS_F0, "warp-specialized, no fragment double buffering, batches of 12"),
    "ws_f0_b8": ("r4_ws.cu", "-DXFDB=0 -DXCREG=184 -DXPREG=136", "the same, batches of 8"),
    "ws_f0_sets3_b8": ("r4_ws.cu", "-DXFDB=0 -DXCREG=176 -DXPREG=152 -DXSETS=3", "3 batches of 8 in flight"),
    "ws_f0_sets3_b12": ("r4_ws.cu", "-DXFDB=0 -DXCREG=176 -DXPREG=152 -DXBATCH=12 -DXSETS=3", "3 of 12"),
    "ws_f0_sets4_b8": ("r4_ws.cu", "-DXFDB=0 -DXCREG=168 -DXPREG=168 -DXSETS=4", "4 batches of 8 in flight"),
    "ws_cluster2": ("r4_ws.cu", "-DXCL=2 -DXCREG=208 -DXPREG=88", "2-CTA cluster shares B through DSMEM"),
    "ws_cluster2_s3": ("r4_ws.cu", "-DXCL=2 -DXCREG=208 -DXPREG=88 -DXS=3", "the same, 3 stages"),
    "ws_cluster2_f0": ("r4_ws.cu", "-DXCL=2 " + _WS_F0.replace(" -DXBATCH=12", ""), "cluster, no fragment DB"),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(name: str, nvcc: str, bin_dir: Path) -> dict:
    src, defines, _ = VARIANTS[name]
    path = (KERNELS if src.startswith("rung") else EXP) / src
    sys.path.insert(0, str(ROOT))
    from gpu_worker.gemm_decl import define_flags  # standard library and algebra only
    from gpu_worker.ptxas import parse_ptxas  # standard library only

    # a committed rung with its own declared constants; the experiments start from rung 4's
    declared = define_flags(int(src[4]) if src.startswith("rung") else 4)
    cmd = [nvcc, *FLAGS, *declared, *defines.split(), "-o", str(bin_dir / name), str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)

    info = {"nvcc_command": " ".join(cmd[1:]), "ok": proc.returncode == 0}
    if proc.returncode == 0:
        info["ptxas"] = parse_ptxas(proc.stdout + proc.stderr)
    else:
        info["error"] = (proc.stdout + proc.stderr)[-1500:]
    return info


def run(name: str, bin_dir: Path, sizes: str, iters: int) -> dict:
    cmd = [str(bin_dir / name), "--sizes", sizes, "--iters", str(iters), "--timeout", "20"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "killed after 30 s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"ok": False, "error": proc.stderr[-500:]}


def smi() -> str:
    q = "name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw"
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--sizes", default="4096x4096x4096,2048x2048x2048")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--bin-dir", default=str(ROOT / "build" / "gemm_rung4"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants: {', '.join(unknown)}")
    nvcc = os.environ.get("LAYOUTLAB_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    bin_dir = Path(args.bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    with cf.ThreadPoolExecutor(max(1, (os.cpu_count() or 2) - 1)) as pool:
        builds = dict(zip(names, pool.map(lambda n: build(n, nvcc, bin_dir), names), strict=True))
    out = {"benchmark": "gemm ladder, rung-4 schedule experiments (no cp.async), bf16 -> fp32, C = A B^T",
           "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "command": "python3 bench/gemm_rung4_experiments.py " + " ".join(argv or sys.argv[1:]),
           "nvidia_smi_before": smi(), "variants": {}}
    print(f"{'variant':18} {'regs':>4} {'spill':>5} " + " ".join(f"{s:>16}" for s in args.sizes.split(",")))
    for n in names:
        rec = {"source": VARIANTS[n][0], "defines": VARIANTS[n][1], "what": VARIANTS[n][2], "build": builds[n]}
        if builds[n]["ok"]:
            rec["run"] = run(n, bin_dir, args.sizes, args.iters)
        out["variants"][n] = rec
        ptx = builds[n].get("ptxas") or {}
        cells = []
        for r in (rec.get("run") or {}).get("results", []):
            pct = r.get("pct_of_cublas")
            cells.append(f"{r.get('tflops', '-')!s:>8} TF {pct if pct is not None else 'diag':>5}")
        err = "" if (rec.get("run") or {}).get("ok") else (rec.get("run") or builds[n]).get("error", "")[:60]
        print(f"{n:18} {ptx.get('registers', '-')!s:>4} {ptx.get('spill_stores', '-')!s:>5} " + " ".join(cells),
              err, flush=True)
    out["nvidia_smi_after"] = smi()
    path = Path(args.out) if args.out else ROOT / "bench" / "results" / "gemm_rung4_experiments.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
