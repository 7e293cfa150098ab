"""Job kind ``gemm``: the tensor-core GEMM ladder (kernels/gemm/rung*.cu), each rung checked and timed against cuBLAS.

Every rung computes C[M,N] = A[M,K] * B[N,K]^T with A, B, C row-major bf16 (rung 8 also fp16) and fp32
accumulation. The binary draws fresh random inputs, poisons C, checks it against a cuBLAS fp32-output reference
(itself spot-checked in double on the CPU), and only then times the rung and cublasGemmEx (same dtypes) interleaved,
median of ``iters`` CUDA-event timings with the L2 flushed before each, NVML's clocks, power and throttle reasons
sampled while they run. A rung whose check fails is never timed.

For the lab page: :func:`ladder` returns the committed measurements (bench/results/gemm_h200.json) with each rung's
shared-memory layout in CuTe notation and the bank model's prediction for it; :data:`RUNGS` describes the rungs.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpu_worker import build
from gpu_worker.gemm_decl import DECLS, define_flags, predict
from gpu_worker.ptxas import parse_ptxas
from gpu_worker.registry import JobContext, register
from gpu_worker.run import run_binary

KERNEL_DIR = Path(__file__).resolve().parent / "kernels" / "gemm"
RESULTS_DIR = Path(__file__).resolve().parent.parent / "bench" / "results"
DEFAULT_RESULTS = RESULTS_DIR / "gemm_h200.json"
NVCC_FLAGS = ("-O3", "-std=c++17", "-lineinfo", "-gencode=arch=compute_90a,code=sm_90a")
MAX_DIM = 16384
#: TFLOP/s for the lab's estimate of a job (GemmParams.estimate): each rung's at the largest size it was measured at
#: on an H200 (bench/results/gemm_h200.json), and cuBLAS's (key 0) slowest there.
TFLOPS = {0: 220, 1: 46, 2: 105, 3: 340, 4: 350, 5: 460, 6: 630, 7: 860, 8: 850}
RUN_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RungInfo:
    """One rung: its source, the tile its M, N, K must be multiples of, and its shared-memory layout.

    ``smem_layout`` is the A-operand tile in CuTe notation over bf16 (fp32 for rung 1) element offsets, the same
    function the kernel indexes with; ``base_layout`` and ``swizzle`` split it for the banks API."""

    id: int
    source: str
    title: str
    idea: str
    tile: tuple[int, int, int]
    threads: int
    stages: int
    smem_layout: str
    base_layout: str
    swizzle: str | None
    element_bytes: int
    access: str
    min_cc: str
    cute_atom: str | None = None

    def banks_query(self) -> dict:
        """Arguments for ``POST /api/banks`` that draw this rung's operand reads."""
        return {"layout": self.base_layout, "swizzle": self.swizzle, "element_bytes": self.element_bytes}


_GMMA_ATOM = ("GMMA::Layout_K_SW128_Atom<bf16>: Sw<3,4,3> o smem_ptr[16b] o (8,64):(64,1), the swizzle acting on "
              "byte addresses; the same map as Sw<3,3,3> on bf16 element offsets")
#: The lab's words for each rung (title, idea, the read it predicts); the rest comes from its declaration.
_TEXT: dict[int, tuple[str, str, str]] = {
    1: ("SIMT fp32 FMA",
        "shared-memory tiles, 8x8 outputs per thread, bf16 widened to fp32 and stored M-major for float4 reads",
        "lds.128 along rows"),
    2: ("mma.sync + ldmatrix, unpadded",
        "m16n8k16 tensor-core MMA fed by ldmatrix.x4 from row-major 128-byte rows: the 8 row addresses of each "
        "8x8 matrix fall in the same 4 banks (8-way conflict)", "ldmatrix.x4"),
    3: ("mma.sync + ldmatrix, padded rows",
        "16 bytes of padding per row moves each row 4 banks along: conflict-free, at 12.5% more shared memory",
        "ldmatrix.x4"),
    4: ("mma.sync + ldmatrix, XOR swizzle",
        "16-byte chunk index XOR (row mod 8): conflict-free with no padding (CuTe's Swizzle<3,3,3> for bf16). The "
        "next k tile still passes through registers (ld.global, then st.shared): per TFLOP/s that costs the L1's "
        "LSU data pipe about 1.6x what cp.async costs, which is what holds rungs 2-4 back", "ldmatrix.x4"),
    5: ("+ cp.async multi-stage pipeline",
        "global -> shared copies bypass registers; 4 stages of 48 KB, one barrier per k tile, and ldmatrix "
        "fragments double-buffered so slice k+1 loads while slice k multiplies", "ldmatrix.x4"),
    6: ("Hopper wgmma + TMA",
        "wgmma.mma_async m64n128k16 reads both operands from 128B-swizzled shared memory written by TMA; "
        "an mbarrier per stage counts the bytes", "wgmma descriptor (K-major, 128B)"),
    7: ("+ warp specialization, persistent, cluster multicast",
        "a producer warpgroup (setmaxnreg.dec) drives TMA; two consumer warpgroups (setmaxnreg.inc) run "
        "m64n256k16; persistent CTAs in 2-CTA clusters share B by TMA multicast; TMA-store epilogue",
        "wgmma descriptor (K-major, 128B)"),
    8: ("+ stream-K tail",
        "rung 7's kernel on a schedule against wave quantization: whole waves of tiles data-parallel, the k "
        "iterations of the remaining tiles split evenly over every cluster; partial tiles meet in an fp32 "
        "workspace, ordered by release/acquire flags. Also builds for fp16", "wgmma descriptor (K-major, 128B)"),
}


def _info(rung: int) -> RungInfo:
    d = DECLS[rung]
    a = d.operand("A")
    title, idea, access = _TEXT[rung]
    return RungInfo(rung, d.source, title, idea, d.granularity, d.threads, d.stages, a.layout, a.base,
                    a.swizzle_text, a.element_bytes, access, d.min_cc, _GMMA_ATOM if d.wgmma else None)


#: The rung table: each entry built from the rung's declaration (gpu_worker.gemm_decl), the lab's words beside it.
RUNGS: dict[int, RungInfo] = {r: _info(r) for r in sorted(DECLS)}
#: Rungs that also build for fp16 inputs (-DGEMM_FP16).
FP16_RUNGS = (8,)


def predicted_wavefronts(rung: int) -> dict:
    """The bank model (algebra.banks) on the rung's A-operand reads as declared (gpu_worker.gemm_decl): for the
    mma.sync rungs every ldmatrix.x4 of a CTA's k tile, for the wgmma rungs the 8-row x 16-byte core matrices the
    descriptor walks (four at a time), for rung 1 every lds.128. Post-condition: ``wavefronts`` (per instruction)
    >= ``ideal_wavefronts`` (4 for ldmatrix.x4 and for 32 lanes x 16 bytes)."""
    a = DECLS[rung].operand("A")
    read = next(x for x in a.accesses if x.counter == "ld" or x.instruction == "HGMMA")
    p = predict(rung, "A", read.name)
    return {"access": read.name, "wavefronts": p.wavefronts, "ways": p.ways, "ideal_wavefronts": p.ideal}


class GemmParams(BaseModel):
    """A GEMM ladder job: which rung, the problem size (multiples of the rung's tile) and the timing knobs."""

    model_config = ConfigDict(extra="forbid")

    rung: int = Field(7, ge=1, le=8, description="1 SIMT ... 7 warp-specialized wgmma + TMA, 8 + stream-K")
    m: int = Field(4096, ge=128, le=MAX_DIM)
    n: int = Field(4096, ge=128, le=MAX_DIM)
    k: int = Field(4096, ge=16, le=MAX_DIM)
    dtype: Literal["bf16", "fp16"] = Field("bf16", description="inputs and output; accumulation is fp32")
    iters: int = Field(20, ge=5, le=200, description="timed runs (the median is reported)")
    warmup: int = Field(3, ge=0, le=50)

    def estimate(self) -> tuple[float, str]:
        """(GPU seconds, how): 2*M*N*K flops for each of the rung's and cuBLAS's runs (warm-up, timed and the check)
        at :data:`TFLOPS` (the rung's rate at the largest size of bench/results/gemm_h200.json, cuBLAS's at its
        slowest there)."""
        flops, runs = 2 * self.m * self.n * self.k, self.iters + self.warmup + 1
        seconds = flops * (runs / TFLOPS[self.rung] + (runs + 1) / TFLOPS[0]) / 1e12
        return seconds, (f"{runs} runs of rung {self.rung} at about {TFLOPS[self.rung]} TFLOP/s and of cuBLAS on "
                         f"{self.m}x{self.n}x{self.k}; lower iters, warmup or M, N, K")

    @model_validator(mode="after")
    def _tile_multiples(self) -> GemmParams:
        if self.dtype != "bf16" and self.rung not in FP16_RUNGS:
            raise ValueError(f"dtype {self.dtype} needs rung {' or '.join(map(str, FP16_RUNGS))}; rung {self.rung} "
                             "is bf16 only")
        bm, bn, bk = RUNGS[self.rung].tile
        bad = [f"{name}={v} is not a multiple of {t}" for name, v, t in (("m", self.m, bm), ("n", self.n, bn),
                                                                           ("k", self.k, bk)) if v % t]
        if bad:
            raise ValueError(f"rung {self.rung} takes M, N, K in multiples of its tile {bm}x{bn}x{bk}: "
                             + "; ".join(bad))
        return self


# ----------------------------------------------------------------------------------------------- build and run
@dataclass
class GemmBuild:
    """A built rung. Post-condition: ``path`` is executable; ``ptxas`` holds the kernel's resource usage."""

    path: Path
    key: str
    cached: bool
    seconds: float
    ptxas: dict


def build_rung(rung: int, *, toolkit: build.Toolkit | None = None, defines: dict[str, int] | None = None,
               timeout_s: float = build.COMPILE_TIMEOUT_S) -> GemmBuild:
    """Compile ``kernels/gemm/<rung source>`` for sm_90a into the shared build cache, with the rung's declared
    constants (``gemm_decl.define_flags``) and ``defines`` on top. Post-condition: a second call with the same
    sources, constants and nvcc reuses the binary; nvcc's errors come back as BuildError."""
    info = RUNGS[rung]
    toolkit = toolkit or build.find_toolkit()
    if not toolkit.nvcc:
        raise build.BuildError(toolkit.reason or "nvcc not found")
    flags = [*NVCC_FLAGS, *toolkit.extra_flags, *define_flags(rung), *build.define_flags(defines or {})]
    h = hashlib.sha256()
    for f in [KERNEL_DIR / info.source, *sorted(KERNEL_DIR.glob("*.cuh"))]:
        h.update(f.name.encode() + f.read_bytes())
    h.update("\0".join(flags).encode() + f"|{toolkit.version}".encode())
    key = h.hexdigest()[:24]
    out_dir = build.cache_dir() / f"gemm-{key}"
    binary, meta = out_dir / f"rung{rung}", out_dir / f"rung{rung}.ptxas.json"
    if binary.is_file() and os.access(binary, os.X_OK) and meta.is_file():
        build.mark_used(out_dir)
        return GemmBuild(binary, key, True, 0.0, json.loads(meta.read_text()))
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=out_dir)
    cmd = [toolkit.nvcc, *flags, "-Xptxas", "-v", "-o", os.path.join(tmp, binary.name), str(KERNEL_DIR / info.source)]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=tmp)
    except subprocess.TimeoutExpired:
        raise build.BuildError(f"nvcc timed out after {timeout_s:.0f} s") from None
    finally:
        if not os.path.exists(os.path.join(tmp, binary.name)):
            shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode != 0:
        raise build.BuildError(build.trim_log(proc.stderr + proc.stdout, tmp))
    ptxas = parse_ptxas(proc.stdout + proc.stderr)
    meta.write_text(json.dumps(ptxas))
    os.replace(os.path.join(tmp, binary.name), binary)
    shutil.rmtree(tmp, ignore_errors=True)
    build.evict(keep=out_dir)
    return GemmBuild(binary, key, False, time.monotonic() - t0, ptxas)


def find_cublas() -> str | None:
    """Path of libcublas.so.N: LAYOUTLAB_CUBLAS, a CUDA toolkit, or the nvidia-cublas Python package."""
    if os.environ.get("LAYOUTLAB_CUBLAS"):
        return os.environ["LAYOUTLAB_CUBLAS"]
    pats = ["/usr/local/cuda*/lib64/libcublas.so.*", "/usr/local/cuda*/targets/*/lib/libcublas.so.*",
            "/usr/lib/x86_64-linux-gnu/libcublas.so.*"]
    pats += [f"{p}/nvidia/{sub}/lib/libcublas.so.*" for p in sys.path if p for sub in ("cublas", "cu13", "cu12")]
    hits = {h for p in pats for h in glob.glob(p) if re.search(r"libcublas\.so\.\d+$", h)}
    return sorted(hits, reverse=True)[0] if hits else None


def run_gemm(params: GemmParams, ctx: JobContext) -> dict:
    """Runner for kind ``gemm``: build the rung, check it, time it and cuBLAS. Post-condition: the result's
    ``check.passed`` is true and ``tflops`` / ``cublas_tflops`` are medians; a failed check raises RunError."""
    info = RUNGS[params.rung]
    ctx.progress("building")
    built = build_rung(params.rung, defines={"GEMM_FP16": 1} if params.dtype == "fp16" else None)
    ctx.check_cancel()
    env = dict(os.environ)
    lib = find_cublas()
    if lib:
        env["LAYOUTLAB_CUBLAS"] = lib
    from gpu_worker import telemetry

    before = telemetry.snapshot()
    ctx.progress("checking and timing")
    out = run_binary(built.path, ["--sizes", f"{params.m}x{params.n}x{params.k}", "--iters", str(params.iters),
                                  "--warmup", str(params.warmup), "--timeout", str(int(RUN_TIMEOUT_S) - 20)],
                     timeout_s=RUN_TIMEOUT_S, cancelled=ctx.cancelled, env=env,
                     on_progress=lambda stage, done, total: ctx.progress(stage, done, total))
    after = telemetry.snapshot()
    entry = out["results"][0]
    return {
        "kind": "gemm",
        "rung": asdict(info),
        "params": params.model_dump(),
        "check": {"passed": bool(entry.get("ok")), "rel_err": entry.get("rel_err"), "tolerance": 1e-2,
                  "reference": "cuBLAS fp32 output", "reference_spot_err": entry.get("reference_spot_err")},
        "tflops": entry.get("tflops"),
        "cublas_tflops": entry.get("cublas_tflops"),
        "pct_of_cublas": entry.get("pct_of_cublas"),
        "timing": {k: entry.get(k) for k in ("ms_median", "ms_min", "ms_max", "cublas_ms_median")},
        "ptxas": built.ptxas,
        "smem_bytes": out.get("smem_bytes"),
        "prediction": predicted_wavefronts(params.rung),
        "device": out.get("device"),
        "cublas_version": out.get("cublas_version"),
        "note": out.get("note"),
        "nvml": {"before": before, "after": after, "during": entry.get("nvml")},
        "build": {"key": built.key, "cached": built.cached, "seconds": round(built.seconds, 2)},
    }


# ----------------------------------------------------------------------------------------------- the lab's ladder
def _results_file(path: str | Path | None) -> Path:
    if path:
        return Path(path)
    if DEFAULT_RESULTS.is_file():
        return DEFAULT_RESULTS
    found = sorted(RESULTS_DIR.glob("gemm_*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    if not found:
        raise FileNotFoundError(f"no gemm_*.json under {RESULTS_DIR}")
    return found[0]


def ladder(path: str | Path | None = None) -> dict:
    """The measured ladder for the lab page, read from bench/results/gemm_h200.json (or ``path``).

    Post-condition: ``rungs`` lists the rungs (1..8) that the file holds, each with its description (RungInfo
    fields, ``banks_query`` for ``/api/banks``, the bank model's ``prediction``), ``ptxas``, ``ncu`` (rungs 2-4) and
    ``results`` per size on uniform inputs (tflops, cublas_tflops, pct_of_cublas, rel_err, ok, nvml and, for rung 8,
    in_kernel_clock: the SM clock the last timed launch really ran at); ``cublas``
    gives, per size, the median cuBLAS TFLOP/s over all rungs' runs (the chart's reference line); ``sizes`` is in
    file order; ``peaks`` holds the measured mma.sync and wgmma ceilings (TFLOP/s, None when not measured);
    ``variants`` lists the file's other builds (label, -D flags, description, % of cuBLAS per size on uniform
    inputs)."""
    src = _results_file(path)
    data = json.loads(src.read_text())
    rungs, sizes, cublas, variants = [], [], {}, []
    for entry in data.get("rungs", []):
        if entry.get("defines") or entry.get("label", f"rung{entry.get('rung')}") != f"rung{entry.get('rung')}":
            label = entry.get("label") or "?"  # an experimental variant, not a rung of the ladder
            variants.append({"label": label, "rung": entry.get("rung"), "defines": entry.get("defines") or [],
                             "what": (data.get("variants") or {}).get(label), "note": entry.get("note"),
                             "pct": {f"{r['m']}x{r['n']}x{r['k']}": r.get("pct_of_cublas")
                                     for r in entry.get("results", []) if r.get("dist", "uniform") == "uniform"}})
            continue
        info = RUNGS.get(entry.get("rung"))
        if not info:
            continue
        results = []
        for r in entry.get("results", []):
            if r.get("dist", "uniform") != "uniform":
                continue  # the other input distributions are in the file, not in the ladder
            size = f"{r['m']}x{r['n']}x{r['k']}"
            if size not in sizes:
                sizes.append(size)
            if r.get("cublas_tflops"):
                cublas.setdefault(size, []).append(r["cublas_tflops"])
            results.append({"size": size, **{k: r.get(k) for k in ("m", "n", "k", "ok", "tflops", "cublas_tflops",
                                                                   "pct_of_cublas", "rel_err", "ms_median",
                                                                   "error", "nvml", "in_kernel_clock")}})
        rungs.append({**asdict(info), "banks_query": info.banks_query(), "prediction": predicted_wavefronts(info.id),
                      "ok": entry.get("ok"), "note": entry.get("note"), "smem_bytes": entry.get("smem_bytes"),
                      "ptxas": (entry.get("build") or {}).get("ptxas"), "sass": entry.get("sass"),
                      "ncu": entry.get("ncu"), "results": results})
    med = {s: sorted(v)[len(v) // 2] for s, v in cublas.items()}
    smi = data.get("nvidia_smi_before") or {}
    return {"source": src.name, "device": smi.get("name"), "driver": smi.get("driver_version"),
            "date": data.get("date"), "command": data.get("command"), "problem": data.get("problem"),
            "sizes": sizes, "cublas": [{"size": s, "tflops": med.get(s)} for s in sizes],
            "rungs": sorted(rungs, key=lambda r: r["id"]), "peaks": _peaks(data), "throttle": data.get("throttle"),
            "variants": variants}


def _peaks(data: dict) -> dict:
    """The ceilings a results file measured: mma.sync (best over warps per SM) and wgmma, in TFLOP/s."""
    mma = data.get("mma_sync_peak") or {}
    wg = data.get("wgmma_peak") or {}
    return {"mma_sync": max((r["tflops"] for r in mma.get("results", []) if r.get("tflops")), default=None),
            "wgmma": wg.get("tflops") if wg.get("ok") else None}


def rung_layouts() -> list[dict]:
    """Each rung's shared-memory layout in CuTe notation with its banks-API query and predicted wavefronts."""
    return [{"rung": r.id, "title": r.title, "smem_layout": r.smem_layout, "element_bytes": r.element_bytes,
             "cute_atom": r.cute_atom, "banks_query": r.banks_query(), "prediction": predicted_wavefronts(r.id)}
            for r in RUNGS.values()]


register("gemm", GemmParams, run_gemm, title="GEMM ladder: tensor cores vs cuBLAS", needs_gpu=True)
