"""The GPU lab's service layer: one set of functions behind ``/api/bench/*`` and the ``/lab`` page."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from app.services import lab_class
from app.services.bench_charts import bar_chart, reference_charts, sweeps
from app.services.bench_ladder import gemm_files, ladder_view
from app.services.lab_clients import RateLimited, check_rate
from gpu_worker import registry, service, telemetry
from gpu_worker import store as job_store
from gpu_worker.build import find_toolkit
from gpu_worker.registry import ParamsError
from gpu_worker.service import NoWorker, QueueFull
from storage.config import data_dir
from storage.version import code_version

__all__ = ["Forbidden", "NoWorker", "ParamsError", "QueueFull", "RateLimited", "cancel", "chart", "class_view",
           "device_status",
           "gemm_files", "get_job", "gpu_choices", "gpu_filter", "history", "history_charts", "kinds", "ladder_view",
           "reference_charts", "submit", "sweeps"]
PUBLIC = ("id", "kind", "status", "progress", "result", "error", "params", "worker", "attempts", "created", "started",
          "finished", "gpu")
#: What /api/bench/device shows of each worker's GPU (from its last heartbeat).
GPU_FIELDS = ("index", "uuid", "name", "fake", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "power_w",
              "temperature_c", "fault", "xids")
#: A GPU UUID as the history filter takes it (NVML's GPU-<hex groups>, MIG-..., the fake GPUs' form).
GPU_PATTERN = r"^(GPU|MIG)-[0-9A-Za-z-]{1,90}$"


class Forbidden(PermissionError):
    """The client may not do this to the job (the API answers 403 with the message)."""


def public(job: dict, client: str | None = None, who: dict[str, str | None] | None = None) -> dict:
    """The job as the API shows it: at least id, status, progress, result, error; ``mine`` tells whether ``client``
    submitted it; ``submitter`` is the submitter's display name (the drills' profile name, from ``who``: client ->
    name; None when it has none). The submitter's id is never shown. A running job whose lease ran out says it
    waits for a worker."""
    out = {**{k: job.get(k) for k in PUBLIC}, "mine": bool(client) and job.get("client") == client,
           "submitter": (who or {}).get(job.get("client") or "")}
    if job.get("status") == "running" and float(job.get("lease_until") or time.time() + 1) < time.time():
        out["progress"] = {"stage": f"its worker stopped during attempt {job.get('attempts')}; waiting for a worker",
                           "done": None, "total": None}
    return out


def kinds() -> list[dict]:
    """Registered job kinds: ``[{"kind", "title", "needs_gpu"}]``."""
    return [{"kind": k.name, "title": k.title, "needs_gpu": k.needs_gpu} for k in registry.kinds()]


def _held(worker: dict, store) -> dict | None:
    """The job ``worker`` holds, as the device view shows it: ``{"id", "kind", "status", "stage"}``; None when its
    last heartbeat named none, or named a job that has ended since or that another worker runs now."""
    job = store.get(worker["busy"]) if worker.get("busy") else None
    if not job or job["status"] != "running" or job.get("worker") != worker["id"]:
        return None
    return {"id": job["id"], "kind": job["kind"], "status": job["status"],
            "stage": (job.get("progress") or {}).get("stage")}


def worker_view(worker: dict, store) -> dict:
    """One worker as /api/bench/device shows it: ``{"id", "busy" (it holds ``job``), "job", "available", "reason",
    "name", "gpu_index", "uuid", "gpu": {index, uuid, name, fake, clocks, power, temperature, fault, xids} or None}``.
    ``reason`` says why a worker has no usable GPU (NVML's message, or its GPU's fault); no host, pid or path."""
    device = worker.get("device") or {}
    gpu = {k: device.get(k) for k in GPU_FIELDS} if device.get("uuid") else None
    available, job = bool(device.get("available")), _held(worker, store)
    return {"id": worker["id"], "busy": job is not None, "job": job,
            "available": available, "reason": None if available else device.get("reason"), "name": device.get("name"),
            "gpu_index": gpu["index"] if gpu else None, "uuid": gpu["uuid"] if gpu else None, "gpu": gpu}


def device_status(admin: bool = False) -> dict:
    """What a lab user needs: ``{"available", "name", "driver", "reason", "queue_depth", "queue_max", "workers":
    [worker_view, ...], "toolkit": {"available", "version"}}``, one entry per live worker, each naming its GPU.
    ``available`` is true when a live worker reports a usable GPU (else this host's NVML answer); ``reason`` is NVML's
    message when it is false. Hosts, pids and paths only for the lab admin (``admin``): then each worker's record
    besides, the toolkit's path and this host's NVML."""
    workers = service.live_workers()
    store = job_store.get_store()
    gpu = next((w["device"] for w in workers if (w.get("device") or {}).get("available")), None)
    local = telemetry.device_info() if admin or not gpu else {}
    chosen = gpu or local
    reason = None if chosen.get("available") else (chosen.get("reason") or "no GPU")
    if not chosen.get("available") and not workers:
        reason = f"{reason}; no live worker"
    toolkit = find_toolkit().to_dict()
    out = {
        "available": bool(chosen.get("available")),
        "name": chosen.get("name"),
        "driver": chosen.get("driver"),
        "reason": reason,
        "queue_depth": store.queue_depth(),
        "queue_max": service.QUEUE_MAX,
        "workers": [worker_view(w, store) for w in workers],
        "toolkit": {"available": bool(toolkit.get("nvcc")), "version": toolkit.get("version")},
        "data_dir": str(data_dir()),
        "code_version": code_version(),
        "mixed_versions": mixed_versions(workers),
    }
    if admin:
        out.update(toolkit=toolkit, local=local,
                   workers=[{**view, "host": w.get("host"), "pid": w.get("pid"), "busy": w.get("busy"),
                             "last_seen": w.get("last_seen"), "kinds": w.get("kinds"), "device": w.get("device")}
                            for w, view in zip(workers, out["workers"], strict=True)])
    return out


def mixed_versions(workers: list[dict]) -> list[dict]:
    """The live workers started from other code than this server (their heartbeat's ``code_version``, see
    storage.version): ``[{"id", "code_version"}]``; a worker from before versions counts as other code."""
    mine = code_version()
    return [{"id": w["id"], "code_version": (w.get("device") or {}).get("code_version")} for w in workers
            if (w.get("device") or {}).get("code_version") != mine]


def submit(kind: str, params: dict | None, client: str | None = None, address: str | None = None,
           learner: str | None = None) -> dict:
    """Check, rate-limit, validate and queue for ``client`` (of the drills learner ``learner``, whose profile name is
    the job's submitter): the one way in for the JSON route and the lab form. Raises ParamsError (422), NoWorker
    (409), RateLimited (429) or QueueFull (503).

    Post-condition: returns {"id", "status"}. A submission of a known kind counts against the client's limit and the
    address's (or, for a client in a class, app.services.lab_class, its class's bucket instead of its address's)
    before its parameters are validated, so refused ones (422, 409, 503) count too and a client over its limit is
    answered 429 without any validation work; an unknown kind or a body that is not a job (refused before anything is
    computed) counts nothing. Validation (``gpu_worker.registry.validate``, the kind's model with its caps: for a
    layout its text length, its mode count and its cell count, checked before any cell is enumerated) runs under the
    request's work budget."""
    registry.get(kind)
    if params is not None and not isinstance(params, dict):
        raise ParamsError(f"params: expected a JSON object, got {type(params).__name__}")
    lab_class.note(client, learner)
    check_rate(client, address, group=lab_class.class_of(client, learner), group_rate=lab_class.class_rate())
    job = service.submit(kind, params, client=client)  # registry.validate, then the workers and the queue's depth
    return {"id": job["id"], "status": job["status"]}


def get_job(job_id: str, client: str | None = None) -> dict | None:
    """The job, or None when unknown."""
    job = job_store.find_job(job_id)
    return public(job, client, lab_class.names([job.get("client") or ""])) if job else None


def cancel(job_id: str, client: str | None = None, admin: bool = False) -> dict | None:
    """Cancel the job if ``client`` submitted it (or the lab admin asks); see gpu_worker.service.cancel. None when
    unknown; raises Forbidden for anyone else's job."""
    job = job_store.find_job(job_id)
    if not job:
        return None
    if not admin and (not client or job.get("client") != client):
        raise Forbidden(f"job {job_id} belongs to another client: only its submitter or the lab admin can cancel it")
    job = service.cancel(job_id) or job
    return public(job, client)


def history(limit: int = 30, client: str | None = None, gpu: str | None = None, mine: bool = False) -> list[dict]:
    """The latest jobs, newest first (Redis mode: merged with the history table, see gpu_worker.store); with ``gpu``
    (a GPU's UUID), only the jobs that GPU ran; with ``mine``, only ``client``'s. Each names its submitter."""
    if mine:
        jobs = [j for j in lab_class.jobs_of([client] if client else [], limit) if not gpu or j.get("gpu") == gpu]
    else:
        jobs = job_store.history(limit, gpu=gpu)
    who = lab_class.names([j.get("client") or "" for j in jobs])
    return [public(j, client, who) for j in jobs]


def class_view(code: str, instructor: bool, client: str | None = None, learner: str | None = None,
               limit: int = 200) -> dict:
    """The class page's and API's view (app.services.lab_class.class_view), its jobs as the API shows jobs."""
    view = lab_class.class_view(code, instructor, client, learner, limit)
    if "jobs" in view:
        view["jobs"] = [{**public(j, client), "submitter": j.get("submitter")} for j in view["jobs"]]
    return view


def gpu_filter(value: str | None, current_url: str | None = None) -> str | None:
    """The history's GPU filter: ``value`` (the ``gpu`` query parameter; empty: every GPU), else the ``gpu`` of
    ``current_url`` (the page's own URL, which an htmx poll of the history sends as HX-Current-URL; ignored when it is
    no GPU UUID). Raises ParamsError for a ``value`` that is no GPU UUID."""
    if value is None and current_url:
        found = parse_qs(urlsplit(current_url).query).get("gpu") or [""]
        return found[0] if re.fullmatch(GPU_PATTERN, found[0]) and len(found[0]) <= 96 else None
    if not value:
        return None
    if len(value) > 96 or not re.fullmatch(GPU_PATTERN, value):
        raise ParamsError(f"gpu: {value[:40]!r} is not a GPU UUID (GPU-..., as /api/bench/device lists them)")
    return value


#: The spellings of the history's "mine" flag (as pydantic reads a bool query parameter), case-insensitive.
FLAG_TRUE, FLAG_FALSE = ("1", "true", "t", "yes", "y", "on"), ("0", "false", "f", "no", "n", "off")


def mine_flag(value: Any) -> bool:
    """The ``mine`` query parameter, read one way by the JSON route and the pages: absent or empty is False, a
    spelling of FLAG_TRUE / FLAG_FALSE is that (a bool stays as it is); anything else raises ParamsError naming
    them (the routes answer 422)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in FLAG_TRUE or text in FLAG_FALSE or not text:
        return text in FLAG_TRUE
    raise ParamsError(f"{str(value)[:40]!r} is not a flag (one of {', '.join(FLAG_TRUE + FLAG_FALSE)})")


def mine_filter(value: str | None, current_url: str | None = None) -> bool:
    """The history's "mine" filter: ``value`` (the ``mine`` query parameter, read by :func:`mine_flag`), else the
    ``mine`` of ``current_url`` (the page's own URL, which the history's htmx poll sends as HX-Current-URL).
    Raises ParamsError for a value that is no flag."""
    if value is None and current_url:
        value = (parse_qs(urlsplit(current_url).query, keep_blank_values=True).get("mine") or [None])[0]
    try:
        return mine_flag(value)
    except ParamsError as exc:
        raise ParamsError(f"mine: {exc}") from None  # as the JSON route's 422 names the parameter


def gpu_choices(jobs: list[dict], device: dict, selected: str | None = None) -> list[dict]:
    """The GPUs the history can be filtered by: ``[{"uuid", "label", "selected"}]``, from the live workers and the
    results listed (a GPU seen in either), plus ``selected`` even when neither shows it; sorted by label."""
    seen: dict[str, str] = {}
    gpus = [w.get("gpu") for w in device.get("workers", [])] + [(j.get("result") or {}).get("gpu") for j in jobs]
    for g in gpus:
        if isinstance(g, dict) and g.get("uuid") and g["uuid"] not in seen:
            seen[g["uuid"]] = f"GPU {g.get('index')} · {g.get('name') or '?'} · {g['uuid'][:13]}"
    if selected and selected not in seen:
        seen[selected] = selected
    return sorted(({"uuid": u, "label": label, "selected": u == selected} for u, label in seen.items()),
                  key=lambda c: c["label"])


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
