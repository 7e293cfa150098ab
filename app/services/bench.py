"""The GPU lab's service layer: one set of functions behind ``/api/bench/*`` and the ``/lab`` page."""

from __future__ import annotations

from typing import Any

from app.services.bench_charts import bar_chart, reference_charts, sweeps
from app.services.bench_ladder import ladder_view
from gpu_worker import registry, service, telemetry
from gpu_worker import store as job_store
from gpu_worker.build import find_toolkit
from gpu_worker.registry import ParamsError
from gpu_worker.service import NoWorker

__all__ = ["NoWorker", "ParamsError", "cancel", "chart", "device_status", "get_job", "history", "history_charts",
           "kinds", "ladder_view", "reference_charts", "submit", "sweeps"]
PUBLIC = ("id", "kind", "status", "progress", "result", "error", "params", "worker", "attempts", "created", "started",
          "finished")


def public(job: dict) -> dict:
    """The job as the API shows it: at least id, status, progress, result, error."""
    return {k: job.get(k) for k in PUBLIC}


def kinds() -> list[dict]:
    """Registered job kinds: ``[{"kind", "title", "needs_gpu"}]``."""
    return [{"kind": k.name, "title": k.title, "needs_gpu": k.needs_gpu} for k in registry.kinds()]


def device_status() -> dict:
    """``{"available", "name", "driver", "reason", "workers", "toolkit", "local"}``. ``available`` is true when a
    live worker reports a GPU (else this host's NVML answer); ``reason`` is NVML's message when it is false."""
    local = telemetry.device_info()
    workers = service.live_workers()
    gpu = next((w["device"] for w in workers if (w.get("device") or {}).get("available")), None)
    chosen = gpu or local
    reason = None if chosen.get("available") else (chosen.get("reason") or "no GPU")
    if not chosen.get("available") and not workers:
        reason = f"{reason}; no live worker"
    return {
        "available": bool(chosen.get("available")),
        "name": chosen.get("name"),
        "driver": chosen.get("driver"),
        "reason": reason,
        "workers": [{"id": w["id"], "host": w.get("host"), "busy": w.get("busy"), "last_seen": w.get("last_seen"),
                     "kinds": w.get("kinds"), "device": w.get("device")} for w in workers],
        "toolkit": find_toolkit().to_dict(),
        "local": local,
    }


def submit(kind: str, params: dict | None) -> dict:
    """Validate and queue; raises ParamsError (422) or NoWorker (409). Post-condition: returns {"id", "status"}."""
    job = service.submit(kind, params)
    return {"id": job["id"], "status": job["status"]}


def get_job(job_id: str) -> dict | None:
    """The job (after recovering jobs of dead workers), or None when unknown."""
    service.recover()
    job = job_store.find_job(job_id)
    return public(job) if job else None


def cancel(job_id: str) -> dict | None:
    """Cancel; see gpu_worker.service.cancel. None when unknown."""
    job = service.cancel(job_id)
    return public(job) if job else None


def history(limit: int = 30) -> list[dict]:
    """The latest jobs, newest first (Redis mode: merged with the app's SQLite history, see gpu_worker.store)."""
    return [public(j) for j in job_store.history(limit)]


def _label(job: dict) -> str:
    p = job.get("params") or {}
    if job["kind"] == "smem":
        acc = (p.get("access") or {}).get("kind", "column")
        var = {"padded": f"pad {p.get('pad')}", "swizzle": p.get("swizzle"), "custom": "custom"}.get(p.get("variant"),
                                                                                                      "naive")
        return f"{p.get('element_bytes')}B {acc} {var}"
    return job["kind"]


def chart(jobs: list[dict]) -> dict:
    """Bars for the history charts: smem jobs as cycles per warp access (the model's wavefronts beside each bar),
    transpose jobs as GB/s per variant, GEMM jobs as TFLOP/s. Post-condition: every bar has 0 <= height <= 1
    (value / the largest of its chart)."""
    smem: list[dict[str, Any]] = []
    transpose: list[dict[str, Any]] = []
    gemm: list[dict[str, Any]] = []
    for job in reversed(jobs):
        r = job.get("result") or {}
        if job["status"] != "done":
            continue
        if job["kind"] == "smem" and "derived" in r:
            width = (r.get("plan") or {}).get("access_width_bytes") or 4
            smem.append({"label": _label(job), "value": r["derived"]["cycles_per_warp_access"],
                         "model": r["prediction"]["wavefronts_per_access"], "id": job["id"], "layout": r["layout"],
                         "ideal": max(1, width // 4)})
        elif job["kind"] == "transpose" and "variants" in r:
            for name, v in r["variants"].items():
                transpose.append({"label": f"{name} n={r['config']['n']}", "value": v["gbps"], "id": job["id"],
                                  "model": (r["prediction"].get(name) or {}).get("read", {}).get("ways")})
        elif job["kind"] == "gemm" and r.get("tflops"):
            p = r.get("params") or {}
            gemm.append({"label": f"rung {p.get('rung')} {p.get('m')}", "value": r["tflops"], "id": job["id"],
                         "note": f"{r.get('pct_of_cublas') or 0:.0f}%"})
    for bars in (smem, transpose, gemm):
        top = max((b["value"] for b in bars), default=0) or 1.0
        for b in bars:
            b["height"] = b["value"] / top
    return {"smem": smem[-16:], "transpose": transpose[-12:], "gemm": gemm[-12:]}


def history_charts(jobs: list[dict]) -> list[dict]:
    """The history's bar charts (app.services.bench_charts.bar_chart): smem cycles per warp access with the model's
    wavefronts as ticks; transpose GB/s per variant; GEMM TFLOP/s per rung. Only kinds with finished jobs appear."""
    c = chart(jobs)
    out = []
    if c["smem"]:
        out.append(bar_chart("Shared-memory reads: cycles per warp access (lower is better; ticks: model)",
                             "cycles", [{**b, "cls": "bad" if b["value"] > 1.5 * _ideal_of(b) else "good"}
                                        for b in c["smem"]]))
    if c["transpose"]:
        bars = [{k: v for k, v in b.items() if k != "model"} | ({"note": f"model {b['model']}-way"}
                                                                  if b.get("model") else {}) for b in c["transpose"]]
        out.append(bar_chart("Transpose: GB/s (higher is better; model: smem read ways)", "GB/s", bars))
    if c["gemm"]:
        out.append(bar_chart("GEMM: TFLOP/s per rung (higher is better)", "TFLOP/s", c["gemm"]))
    return out


def _ideal_of(bar: dict) -> float:
    return float(bar.get("ideal") or 1.0)
