"""The GPU lab's service layer: one set of functions behind ``/api/bench/*`` and the ``/lab`` page."""

from __future__ import annotations

from typing import Any

from gpu_worker import registry, service, telemetry
from gpu_worker.build import find_toolkit
from gpu_worker.registry import ParamsError
from gpu_worker.service import NoWorker
from gpu_worker.store import get_store

__all__ = ["NoWorker", "ParamsError", "cancel", "chart", "device_status", "get_job", "history", "kinds", "submit"]
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
    job = get_store().get(job_id)
    return public(job) if job else None


def cancel(job_id: str) -> dict | None:
    """Cancel; see gpu_worker.service.cancel. None when unknown."""
    job = service.cancel(job_id)
    return public(job) if job else None


def history(limit: int = 30) -> list[dict]:
    """The latest jobs, newest first."""
    return [public(j) for j in get_store().list_jobs(limit)]


def _label(job: dict) -> str:
    p = job.get("params") or {}
    if job["kind"] == "smem":
        acc = (p.get("access") or {}).get("kind", "column")
        var = {"padded": f"pad {p.get('pad')}", "swizzle": p.get("swizzle"), "custom": "custom"}.get(p.get("variant"),
                                                                                                      "naive")
        return f"{p.get('element_bytes')}B {acc} {var}"
    return job["kind"]


def chart(jobs: list[dict]) -> dict:
    """Bars for the history chart: smem jobs as cycles per warp access (the model's wavefronts beside each bar),
    transpose jobs as GB/s per variant. Post-condition: every bar has 0 <= height <= 1 (value / the largest)."""
    smem: list[dict[str, Any]] = []
    transpose: list[dict[str, Any]] = []
    for job in reversed(jobs):
        r = job.get("result") or {}
        if job["status"] != "done":
            continue
        if job["kind"] == "smem" and "derived" in r:
            smem.append({"label": _label(job), "value": r["derived"]["cycles_per_warp_access"],
                         "model": r["prediction"]["wavefronts_per_access"], "id": job["id"], "layout": r["layout"]})
        elif job["kind"] == "transpose" and "variants" in r:
            for name, v in r["variants"].items():
                transpose.append({"label": f"{name} n={r['config']['n']}", "value": v["gbps"], "id": job["id"],
                                  "model": (r["prediction"].get(name) or {}).get("read", {}).get("ways")})
    for bars in (smem, transpose):
        top = max((b["value"] for b in bars), default=0) or 1.0
        for b in bars:
            b["height"] = b["value"] / top
    return {"smem": smem[-16:], "transpose": transpose[-12:]}
