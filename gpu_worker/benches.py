"""The benchmark runners: plan, build, check, time, read NVML, optionally count wavefronts with Nsight Compute.

Standard library plus ``algebra`` (and NVML when present): the same functions serve the queue's jobs and the
stand-alone scripts in ``bench/``. Each runner takes a plain dict of already-validated parameters and callbacks for
progress and cancellation, and returns a JSON-ready dict.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Callable

from gpu_worker import patterns, telemetry
from gpu_worker.build import build_kernel, find_toolkit
from gpu_worker.run import RunCancelled, RunError, run_binary

Progress = Callable[..., None]
SMEM_BYTES_PER_CLK_PER_SM = 128
NCU_LD_METRICS = (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
)
NCU_INST_METRICS = ("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_ldsm.sum")


def _noop(*_a, **_k) -> None:
    return None


def spread(times: list[float]) -> dict:
    """Median and spread of a list of times. Post-condition: min <= p10 <= median <= p90 <= max."""
    xs = sorted(times)
    if not xs:
        return {"n": 0}
    q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) > 1 else [xs[0]] * 9
    med = statistics.median(xs)
    return {"n": len(xs), "median": med, "min": xs[0], "max": xs[-1], "p10": q[0], "p90": q[8],
            "rel_spread": (q[8] - q[0]) / med if med else None}


def find_ncu() -> str | None:
    """Nsight Compute's ``ncu``: LAYOUTLAB_NCU, PATH, the CUDA toolkit's bin, or /opt/nvidia/nsight-compute/*."""
    for cand in (os.environ.get("LAYOUTLAB_NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu",
                 *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def ncu_metrics(binary: str, args: list[str], metrics: tuple[str, ...], timeout_s: float = 240.0) -> dict:
    """Run ``binary`` under ``ncu --clock-control none`` and return ``{metric: value summed over kernels}``.
    Raises RunError with ncu's message when it fails."""
    ncu = find_ncu()
    if not ncu:
        raise RunError("ncu not found")
    cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(metrics), "--csv", "--page", "raw",
           "--print-units", "base", binary, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RunError(f"ncu timed out after {timeout_s:.0f} s") from None
    rows = [line for line in proc.stdout.splitlines() if line.startswith('"')]
    if len(rows) < 2:
        msg = (proc.stdout + proc.stderr).strip()[-1500:]
        raise RunError(f"ncu produced no metrics (status {proc.returncode}): {msg}")
    table = list(csv.reader(io.StringIO("\n".join(rows))))
    header, body = table[0], [r for r in table[1:] if r and r[0].strip().isdigit()]
    out: dict[str, float] = {}
    for name in metrics:
        if name in header:
            col = header.index(name)
            total = 0.0
            for r in body:
                try:
                    total += float(r[col].replace(",", ""))
                except (ValueError, IndexError):
                    pass
            out[name] = total
    out["kernels_profiled"] = len(body)
    return out


def smem_defines(plan: dict, warps: int = 8) -> dict[str, int]:
    """Compile-time constants of the smem kernel for a plan from :func:`patterns.plan_smem`."""
    access = plan["access"]
    ldm = access["kind"] == "ldmatrix"
    return {"ELEM_BYTES": plan["element_bytes"], "MODE": 1 if ldm else 0, "LDM_NUM": int(access.get("num", 4)),
            "LDM_TRANS": int(bool(access.get("trans", False))), "NACC": plan["nacc"], "WARPS": warps}


def run_smem(spec: dict, *, progress: Progress = _noop, cancelled: Callable[[], bool] = lambda: False,
             profile: bool = False, timeout_s: float = 300.0) -> dict:
    """Build, check and time one shared-memory access pattern; optionally count wavefronts with ncu.

    Post-condition: ``check.passed`` is true (else RunError), ``timing`` holds the median and spread of ``runs``
    CUDA-event times, ``derived`` the ns and cycles per warp access, TB/s and % of the smem peak
    (128 B/clk/SM x SMs x the SM clock measured in the kernel), ``prediction`` the bank model for the same
    addresses and ``measured`` (when profiled) wavefronts per instruction from ncu.
    """
    progress("planning")
    plan = patterns.plan_smem(spec)
    progress("building")
    built = build_kernel("smem", smem_defines(plan))
    iters, runs = int(spec.get("iterations", 1024)), int(spec.get("runs", 30))
    with tempfile.TemporaryDirectory(prefix="smem-") as tmp:
        table_file = os.path.join(tmp, "table.txt")
        with open(table_file, "w") as fh:
            fh.write("\n".join(" ".join(map(str, row)) for row in plan["addresses"]) + "\n")
        base_args = ["--table", table_file, "--footprint", str(plan["footprint_bytes"])]
        progress("checking")
        before = telemetry.snapshot()
        result = run_binary(built.path, [*base_args, "--iters", str(iters), "--runs", str(runs),
                                         "--seed", str(int.from_bytes(os.urandom(4), "little"))],
                            timeout_s=timeout_s, cancelled=cancelled,
                            on_progress=lambda stage, d, t: progress(stage, d, t))
        after = telemetry.snapshot()
        measured = None
        if profile:
            progress("profiling")
            measured = _profile_smem(str(built.path), base_args, plan, result["device"]["sms"])
    times = result.pop("times_ms")
    clocks = [c for c in result.pop("sm_clock_mhz") if c > 0]
    dev = result["device"]
    timing = spread(times)
    clock = statistics.median(clocks) if clocks else float(after.get("sm_clock_mhz") or dev["max_clock_mhz"])
    per_sm = result["warp_accesses"] / dev["sms"]
    ns = timing["median"] * 1e6 / per_sm
    tbps = result["warp_accesses"] * result["bytes_per_warp_access"] / (timing["median"] * 1e-3) / 1e12
    peak = SMEM_BYTES_PER_CLK_PER_SM * dev["sms"] * clock * 1e6 / 1e12
    return {
        "kind": "smem",
        "layout": plan["layout"],
        "plan": {k: plan[k] for k in ("rows", "cols", "element_bytes", "access", "nacc", "footprint_bytes",
                                      "access_width_bytes", "coords")},
        "addresses": plan["addresses"][0],
        "prediction": plan["prediction"],
        "device": dev,
        "config": result["config"],
        "check": result["check"],
        "timing": {"unit": "ms", **timing, "times": times},
        "sm_clock_mhz_measured": clock,
        "derived": {
            "ns_per_warp_access": ns,
            "cycles_per_warp_access": ns * clock / 1e3,
            "tbps": tbps,
            "peak_tbps": peak,
            "pct_of_peak": 100.0 * tbps / peak,
            "bytes_per_warp_access": result["bytes_per_warp_access"],
        },
        "measured": measured,
        "nvml": {"before": before, "after": after},
        "build": {"key": built.key, "cached": built.cached, "seconds": round(built.seconds, 2)},
    }


def profile_smem(spec: dict, sms: int) -> dict:
    """Only the ncu part of :func:`run_smem` (same plan, same cached binary); ``sms`` is the device's SM count."""
    plan = patterns.plan_smem(spec)
    built = build_kernel("smem", smem_defines(plan))
    with tempfile.TemporaryDirectory(prefix="smem-") as tmp:
        table_file = os.path.join(tmp, "table.txt")
        with open(table_file, "w") as fh:
            fh.write("\n".join(" ".join(map(str, row)) for row in plan["addresses"]) + "\n")
        return _profile_smem(str(built.path), ["--table", table_file, "--footprint", str(plan["footprint_bytes"])],
                             plan, sms)


def _profile_smem(binary: str, base_args: list[str], plan: dict, sms: int) -> dict:
    """Wavefronts and bank conflicts per instruction from ncu on a short run of the same kernel."""
    iters = 8
    args = [*base_args, "--iters", str(iters), "--profile"]
    try:
        try:
            m = ncu_metrics(binary, args, NCU_LD_METRICS + NCU_INST_METRICS)
        except RunError:
            m = ncu_metrics(binary, args, NCU_LD_METRICS)
    except RunError as exc:
        return {"available": False, "reason": str(exc)}
    ldm = plan["access"]["kind"] == "ldmatrix"
    # The profile launch runs one block per SM of WARPS warps; count the instructions from the known loop shape,
    # and cross-check against ncu's own instruction count when it gave one.
    inst_metric = NCU_INST_METRICS[1] if ldm else NCU_INST_METRICS[0]
    expected_inst = sms * 8 * iters * plan["nacc"]
    instructions = m.get(inst_metric) or expected_inst
    wave_metric = NCU_LD_METRICS[2] if ldm else NCU_LD_METRICS[0]
    wavefronts = m.get(wave_metric)
    if not wavefronts and ldm:
        wavefronts = m.get(NCU_LD_METRICS[0])
    per_inst = wavefronts / instructions if wavefronts and instructions else None
    return {
        "available": True,
        "metrics": m,
        "instructions": instructions,
        "instructions_expected": expected_inst,
        "wavefronts_per_instruction": per_inst,
        "bank_conflicts_per_instruction": (m.get(NCU_LD_METRICS[1], 0.0) / instructions) if instructions else None,
        "matches_model": per_inst is not None
        and abs(per_inst - plan["prediction"]["wavefronts_per_access"]) < 0.01 * max(1.0, per_inst),
    }


def transpose_defines(spec: dict) -> dict[str, int]:
    """Compile-time constants of the transpose kernels from validated parameters."""
    eb = 4 if spec.get("dtype", "fp32") == "fp32" else 2
    b, m, s = patterns.parse_swizzle(spec["swizzle"])
    return {"ELEM_BYTES": eb, "TILE": int(spec.get("tile", 32)), "BLOCK_ROWS": int(spec.get("block_rows", 8)),
            "PAD": int(spec["pad"]), "SW_B": b, "SW_M": m, "SW_S": s}


def run_transpose(spec: dict, *, progress: Progress = _noop, cancelled: Callable[[], bool] = lambda: False,
                  timeout_s: float = 300.0) -> dict:
    """Build, check and time the transpose variants beside a device-to-device copy of the same bytes.

    Post-condition: every variant's GPU-side comparison with the reference passed (else RunError); each variant
    has GB/s (bytes read + written over the median time) and ``pct_of_copy`` against cudaMemcpy measured in the
    same process; ``prediction`` holds the bank model of each tile layout's shared-memory read and write."""
    defines = transpose_defines(spec)
    progress("building")
    built = build_kernel("transpose", defines)
    variants = list(spec.get("variants") or ["naive", "tiled", "padded", "swizzled"])
    progress("checking")
    before = telemetry.snapshot()
    result = run_binary(built.path, ["--n", str(int(spec.get("n", 8192))), "--runs", str(int(spec.get("runs", 20))),
                                     "--variants", ",".join(variants),
                                     "--seed", str(int.from_bytes(os.urandom(4), "little"))],
                        timeout_s=timeout_s, cancelled=cancelled,
                        on_progress=lambda stage, d, t: progress(f"timing {stage}", d, t))
    after = telemetry.snapshot()
    copy = result["variants"]["memcpy"]["gbps"]
    copy_kernel = result["variants"]["copy_kernel"]["gbps"]
    out = {}
    for name, v in result["variants"].items():
        out[name] = {**v, "timing": spread(v["times_ms"]), "pct_of_copy": 100.0 * v["gbps"] / copy,
                     "pct_of_copy_kernel": 100.0 * v["gbps"] / copy_kernel}
    return {
        "kind": "transpose",
        "device": result["device"],
        "config": result["config"],
        "variants": out,
        "copy_gbps": copy,
        "prediction": patterns.transpose_prediction(defines["TILE"], defines["ELEM_BYTES"], defines["PAD"],
                                                    spec["swizzle"]),
        "nvml": {"before": before, "after": after},
        "build": {"key": built.key, "cached": built.cached, "seconds": round(built.seconds, 2)},
    }


def run_compile_only(spec: dict, *, progress: Progress = _noop, worker_id: str = "",
                     cancelled: Callable[[], bool] = lambda: False) -> dict:
    """Render (and, when nvcc is present or required, compile) one template; used to exercise the queue.
    Post-condition: ``compiled`` is True only when nvcc built the binary; ``nvcc: "require"`` without nvcc raises;
    the hold (``hold_ms``) ends early with RunCancelled once ``cancelled()`` answers True (checked every 50 ms)."""
    import time

    progress("building")
    end = time.monotonic() + int(spec.get("hold_ms", 0)) / 1000.0
    while (left := end - time.monotonic()) > 0:
        if cancelled():
            raise RunCancelled("stopped while holding")
        time.sleep(min(0.05, left))
    toolkit = find_toolkit()
    mode = spec.get("nvcc", "auto")
    out = {"kind": "compile_only", "template": spec.get("template", "noop"), "worker": worker_id, "compiled": False,
           "toolkit": {"version": toolkit.version, "source": toolkit.source}, "tag": spec.get("tag")}
    if mode == "skip" or (mode == "auto" and not toolkit.nvcc):
        return out
    built = build_kernel(out["template"], dict(spec.get("defines") or {}), toolkit=toolkit)
    out.update(compiled=True, key=built.key, cached=built.cached)
    return out
