#!/usr/bin/env python3
"""GEMM ladder benchmark: build every rung with nvcc, check and time each against cuBLAS, write one JSON file.

Standard library only (runs under any Python >= 3.11, e.g. the device image's 3.12). Per rung it records the
binary's own JSON (relative error against a cuBLAS fp32 reference, median TFLOP/s of ours and cuBLAS bf16, % of
cuBLAS), ptxas registers / shared memory / spills, a SASS opcode summary (when cuobjdump is present) and, for the
ldmatrix rungs, Nsight Compute's shared-memory wavefront counters on one small size.

    python3 bench/gemm.py                                  # all rungs, default sizes, JSON to bench/results/
    python3 bench/gemm.py --rungs 6,7 --sizes 4096x4096x4096 --iters 50
    python3 bench/gemm.py --build-only --bin-dir build/gemm   # compile (here), run elsewhere with --bin-dir
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import glob
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.gemm_ncu import NCU_RUNGS, ncu_sections_summary, parse_ncu_csv, run_ncu  # noqa: E402, F401
from gpu_worker.gemm_decl import define_flags  # noqa: E402  (standard library and algebra only)
from gpu_worker.ptxas import parse_ptxas  # noqa: E402  (standard library only)

KERNELS = ROOT / "gpu_worker" / "kernels" / "gemm"
RUNG_SOURCES = {
    1: "rung1_simt.cu",
    2: "rung2_mma_unpadded.cu",
    3: "rung3_mma_padded.cu",
    4: "rung4_mma_swizzled.cu",
    5: "rung5_cp_async.cu",
    6: "rung6_wgmma_tma.cu",
    7: "rung7_ws_persistent.cu",
    8: "rung8_stream_k.cu",
}
#: Ceilings built beside the rungs (rung 0 in the build list): mma.sync from registers alone, wgmma from shared memory.
PEAKS = {"mma_peak": "mma_peak.cu", "wgmma_peak": "wgmma_peak.cu"}
DISTS = ("uniform", "normal", "zeros")
#: What each named build of bench/gemm_device.sh tries (written into the results beside its figures).
VARIANT_NOTES = {
    "rung8": "stream-K tail where tiles make >= 8 waves (the committed rung 8)",
    "r8_dp": "stream-K off: rung 7's schedule",
    "r8_sk": "stream-K wherever tiles do not fill whole waves",
    "rung8_fp16": "fp16 in and out (cuBLAS fp16 beside it)",
    "r8_c4": "4-CTA clusters: B multicast to 4 CTAs",
    "r8_g8": "raster groups of 8 tile rows (16 in rung 8)",
    "r8_g32": "raster groups of 32 tile rows",
    "r8_waitloop": "mbarrier waits as one PTX loop (24 B spilled)",
    "r8_sleep": "mbarrier waits with a suspend-time hint (threads sleep in try_wait instead of polling)",
    "r8_epi": "epilogue stored under the next piece's first wgmmas",
    "r8_s3": "3 pipeline stages instead of 4",
    "r8_all": "stream-K over every tile: each cluster the same share of all k iterations",
    "r8_all_epi": "stream-K over every tile, epilogue stored under the next piece's first wgmmas",
}
SQUARE = ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096", "8192x8192x8192"]
RECTANGULAR = ["8192x2048x4096", "2048x8192x4096", "4096x4096x16384"]
SASS_OPCODES = ("HGMMA", "HMMA", "LDSM", "FFMA", "LDS", "STS", "LDGSTS", "UTMALDG", "UTMASTG", "SYNCS", "LDL", "STL",
                "MEMBAR", "FENCE", "BAR")
NVCC_FLAGS = ["-O3", "-std=c++17", "-lineinfo", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def find_nvcc() -> str | None:
    for cand in (os.environ.get("LAYOUTLAB_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def build(rung: int, out: Path, nvcc: str, defines: list[str], name: str) -> dict:
    src = KERNELS / (RUNG_SOURCES[rung] if rung else PEAKS[name])
    declared = define_flags(rung) if rung else []  # the rung's declared constants (gpu_worker/gemm_decl.py)
    cmd = [nvcc, *NVCC_FLAGS, *declared, *defines, "-o", str(out / name), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed for {name}:\n{text[-3000:]}")
    ver = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    release = re.search(r"release [\d.]+, V[\d.]+", ver)
    info = {"ptxas": parse_ptxas(text), "nvcc_command": " ".join(shlex.quote(c) for c in cmd),
            "nvcc_version": release.group(0) if release else None, "build_host": platform.node()}
    (out / f"{name}.build.json").write_text(json.dumps(info, indent=1))
    return info


def find_cublas() -> str | None:
    """Path of libcublas.so.N: LAYOUTLAB_CUBLAS, the CUDA toolkit, or an nvidia-cublas Python package."""
    if os.environ.get("LAYOUTLAB_CUBLAS"):
        return os.environ["LAYOUTLAB_CUBLAS"]
    pats = ["/usr/local/cuda*/lib64/libcublas.so.*", "/usr/local/cuda*/targets/*/lib/libcublas.so.*",
            "/usr/lib/x86_64-linux-gnu/libcublas.so.*"]
    for p in sys.path + [os.path.dirname(sys.executable) + "/../lib"]:
        pats += [f"{p}/nvidia/cublas/lib/libcublas.so.*", f"{p}/nvidia/cu1*/lib/libcublas.so.*"]
    pats += ["/opt/*/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.*",
             "/opt/*/.venv/lib/python3*/site-packages/nvidia/cu1*/lib/libcublas.so.*"]
    hits = sorted({h for p in pats for h in glob.glob(p) if re.search(r"libcublas\.so\.\d+$", h)}, reverse=True)
    return hits[0] if hits else None


def nvidia_smi() -> dict:
    fields = ["name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
              "temperature.gpu", "power.draw", "power.limit", "pstate"]
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)}
    if not out:
        return {"error": "nvidia-smi printed nothing"}
    return dict(zip(fields, [v.strip() for v in out[0].split(",")], strict=False))


def sass_summary(binary: Path) -> dict:
    tool = shutil.which("cuobjdump") or ("/usr/local/cuda/bin/cuobjdump" if os.path.exists(
        "/usr/local/cuda/bin/cuobjdump") else None)
    if not tool:
        return {}
    try:
        text = subprocess.run([tool, "--dump-sass", str(binary)], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    counts: dict[str, int] = {}
    inside = False
    for line in text.splitlines():
        if "Function :" in line:
            inside = bool(re.search(r"gemm_(rung\d|mma_)", line))
            continue
        if inside:
            m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
            if m:
                op = m.group(1)
                if op in SASS_OPCODES:
                    counts[op] = counts.get(op, 0) + 1
    return counts


def run_binary(binary: Path, sizes: list[str], iters: int, env: dict, timeout: int,
               dists: tuple[str, ...] = ("uniform",), energy_s: float = 0) -> dict:
    cmd = [str(binary), "--sizes", ",".join(sizes), "--iters", str(iters), "--timeout", str(timeout),
           "--dists", ",".join(dists)] + (["--energy", str(energy_s)] if energy_s else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 15, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout + 15} s"}
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                res = json.loads(line)
                res["returncode"] = proc.returncode
                return res
            except json.JSONDecodeError:
                break
    return {"ok": False, "error": f"no JSON (status {proc.returncode}): {proc.stderr.strip()[-800:]}"}


def run_peak(binary: Path, timeout: int) -> dict:
    """A ceiling binary's JSON: mma.sync m16n8k16 from registers (4 / 8 / 16 warps per SM), what rungs 2-5 cannot
    beat; wgmma m64n256k16 from shared memory, what rungs 6-8 cannot beat."""
    try:
        proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    try:
        return json.loads(lines[-1]) if lines else {"ok": False, "error": proc.stderr.strip()[-400:]}
    except json.JSONDecodeError:
        return {"ok": False, "error": f"bad JSON from {binary.name}"}


def parse_variant(spec: str) -> tuple[str, int, list[str]]:
    """``name:rung:FLAG=V,FLAG=V`` -> (name, rung, ["-DFLAG=V", ...])."""
    name, rung, *rest = spec.split(":")
    defines = [f"-D{d}" for d in (rest[0].split(",") if rest and rest[0] else [])]
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise SystemExit(f"bad variant name {name!r}")
    return name, int(rung), defines


def clocks_note(s: dict) -> str:
    """``MHz min-max, W max, throttle reasons`` from a case's NVML samples, then the SM clock measured inside the
    kernel where the rung reports it ('' without either)."""
    nv, clk = s.get("nvml") or {}, s.get("in_kernel_clock")
    reasons = [r for r in nv.get("clock_event_reasons", []) if r != "gpu_idle"]
    out = (f"{nv['sm_clock_mhz']['min']}-{nv['sm_clock_mhz']['max']} MHz {nv['power_w']['max']:.0f} W"
           + (f" THROTTLED ({', '.join(reasons)})" if nv.get("throttled") else "")) if nv.get("available") else ""
    return " ".join(x for x in (out, f"kernel {clk['ghz_median']:.2f} GHz" if clk else "") if x)


def table(results: list[dict]) -> str:
    lines = [f"{'rung':<18} {'M x N x K':<16} {'dist':<7} {'TFLOP/s':>8} {'cuBLAS':>8} {'%':>6} {'rel err':>9}  clocks"]
    for r in results:
        for s in r.get("results", []) or [{}]:
            size = f"{s.get('m')}x{s.get('n')}x{s.get('k')}" if s else "-"
            tf = s.get("tflops")
            lines.append(f"{r['label']:<18} {size:<16} {s.get('dist', '-'):<7} {tf if tf is not None else 'FAIL':>8} "
                         f"{s.get('cublas_tflops', '-')!s:>8} {s.get('pct_of_cublas', '-')!s:>6} "
                         f"{s.get('rel_err', '-')!s:>9}  {clocks_note(s)}" +
                         ("" if s.get("ok", r.get("ok")) else f"  {s.get('error') or r.get('error', '')}"))
    return "\n".join(lines)


def throttle_summary(rungs: list[dict]) -> dict:
    """Cases whose NVML samples saw a throttle reason (power cap, thermal, slowdown), and the SM clock range seen."""
    cases, lo, hi = [], None, None
    for r in rungs:
        for s in r.get("results", []):
            nv = s.get("nvml") or {}
            if not nv.get("available"):
                continue
            lo = min(lo or 10**6, nv["sm_clock_mhz"]["min"])
            hi = max(hi or 0, nv["sm_clock_mhz"]["max"])
            if nv.get("throttled"):
                cases.append({"job": r["label"], "size": f"{s['m']}x{s['n']}x{s['k']}", "dist": s.get("dist"),
                              "reasons": nv.get("clock_event_reasons"),
                              "throttled_samples": nv.get("throttled_samples"), "samples": nv.get("samples")})
    return {"throttled_cases": cases, "sm_clock_mhz_min": lo, "sm_clock_mhz_max": hi,
            "note": (f"the GPU throttled during {len(cases)} timed case(s): see each case's nvml field" if cases
                     else "no throttle reason seen in any timed case")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rungs", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--dists", default="uniform", help=f"input distributions, comma-separated, of {DISTS}")
    ap.add_argument("--dist-jobs", default="", help="jobs (labels) timed on every --dists; others on the first only")
    ap.add_argument("--sizes", default=",".join(SQUARE + RECTANGULAR))
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--bin-dir", default=str(ROOT / "build" / "gemm"))
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="use the binaries already in --bin-dir")
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--variant", action="append", default=[], help="extra build: name:rung:DEF=V,DEF=V")
    ap.add_argument("--no-peak", action="store_true", help="skip the mma.sync and wgmma ceilings")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per binary")
    ap.add_argument("--energy", type=float, default=0, metavar="S",
                    help="after timing, S seconds of back-to-back runs of each kernel (twice, alternating) with "
                         "NVML's energy counter: joules per GEMM, watts, clock (jobs in --energy-jobs)")
    ap.add_argument("--energy-jobs", default="rung8", help="jobs given --energy (comma-separated labels)")
    ap.add_argument("--out", default=None, help="JSON file (default bench/results/gemm_<date>.json)")
    ap.add_argument("--ncu-summary", metavar="DIR", help="summarise DIR/ncu_<size>.txt (bench/gemm_device.sh) to --out")
    args = ap.parse_args(argv)
    if args.ncu_summary:
        kernels = {f"{name} {f.stem[4:]}": v for f in sorted(Path(args.ncu_summary).glob("ncu_*.txt"))
                   for name, v in ncu_sections_summary(f.read_text(errors="replace")).items()}
        Path(args.out).write_text(json.dumps({"kernels": kernels}, indent=1))
        print("\n".join(f"{k}: {v['metrics']}" for k, v in kernels.items()))
        return 0

    rungs = [int(r) for r in args.rungs.split(",") if r]
    jobs = [(f"rung{r}", r, []) for r in rungs] + [parse_variant(v) for v in args.variant]
    dists = tuple(d for d in args.dists.split(",") if d)
    if not dists or set(dists) - set(DISTS):
        raise SystemExit(f"--dists takes some of {DISTS}")
    dist_jobs = {j for j in args.dist_jobs.split(",") if j}
    builds_only = [] if args.no_peak else [(name, 0, []) for name in PEAKS]
    bin_dir = Path(args.bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    nvcc = find_nvcc()
    builds: dict[str, dict] = {}
    if not args.no_build:
        if not nvcc:
            raise SystemExit("nvcc not found (set LAYOUTLAB_NVCC)")
        with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
            futs = {name: pool.submit(build, r, bin_dir, nvcc, d, name) for name, r, d in jobs + builds_only}
            for name, fut in futs.items():
                builds[name] = fut.result()
                log(f"built {name}: {builds[name]['ptxas']}")
    else:
        for name, _, _ in jobs:
            meta = bin_dir / f"{name}.build.json"
            builds[name] = json.loads(meta.read_text()) if meta.exists() else {}
    if args.build_only:
        return 0

    env = dict(os.environ)
    cublas = find_cublas()
    if cublas:
        env["LAYOUTLAB_CUBLAS"] = cublas
    log(f"cuBLAS: {cublas}")
    report: dict = {
        "benchmark": "gemm ladder",
        "problem": "C[M,N] = A[M,K] * B[N,K]^T; A, B, C row-major bf16; fp32 accumulate; cuBLAS cublasGemmEx same "
                   "dtypes (CUBLAS_COMPUTE_32F, bf16 out) is the comparison, cuBLAS fp32 out the reference",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python3 bench/gemm.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "host": platform.node(), "python": platform.python_version(), "cublas_library": cublas,
        "nvidia_smi_before": nvidia_smi(), "rungs": [],
    }
    if builds_only:
        report["mma_sync_peak"] = run_peak(bin_dir / "mma_peak", 120)
        log(f"mma.sync ceiling: {report['mma_sync_peak']}")
        report["wgmma_peak"] = run_peak(bin_dir / "wgmma_peak", 120)
        log(f"wgmma ceiling: {report['wgmma_peak']}")
        report["nvidia_smi_after_peaks"] = nvidia_smi()
    sizes = args.sizes.split(",")
    for name, r, defines in jobs:
        binary = bin_dir / name
        log(f"running {name} ...")
        energy_jobs = {j for j in args.energy_jobs.split(",") if j}
        res = run_binary(binary, sizes, args.iters, env, args.timeout, dists if name in dist_jobs else dists[:1],
                         args.energy if name in energy_jobs else 0)
        res.update(label=name, defines=defines, build=builds.get(name, {}), sass=sass_summary(binary))
        if r in NCU_RUNGS and not args.no_ncu and not defines:
            res["ncu"] = run_ncu(binary, env, 120)
        report["rungs"].append(res)
        log(table([res]))
    report["nvidia_smi_after"] = nvidia_smi()
    report["variants"] = {name: VARIANT_NOTES[name] for name, _, _ in jobs if name in VARIANT_NOTES}
    report["throttle"] = throttle_summary(report["rungs"])
    log(report["throttle"]["note"])
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / f"gemm_{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(table(report["rungs"]))
    print(f"wrote {out}")
    return 0 if all(r.get("ok") for r in report["rungs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
