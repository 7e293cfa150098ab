"""The worker service: submit, cancel, execute, heartbeat, and recovery of jobs whose worker died.

``run_worker()`` is what ``layoutlab worker`` runs (and what the app's embedded worker runs in a thread): it
heartbeats every HEARTBEAT_S seconds with its device (NVML), takes one job at a time off the queue, and on each beat
requeues (or fails, after MAX_ATTEMPTS) running jobs whose worker has stopped heartbeating for STALE_S seconds.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import traceback
import uuid

from gpu_worker import registry, tasks, telemetry
from gpu_worker.build import BuildError, find_toolkit
from gpu_worker.registry import JobCancelled, JobContext
from gpu_worker.run import RunCancelled
from gpu_worker.store import Store, get_store

log = logging.getLogger("layoutlab.worker")
HEARTBEAT_S = float(os.environ.get("LAYOUTLAB_HEARTBEAT_S", "2"))
STALE_S = float(os.environ.get("LAYOUTLAB_WORKER_STALE_S", "10"))
MAX_ATTEMPTS = 2
ORPHAN_S = 30.0


class NoWorker(RuntimeError):
    """No live worker can take the job; the message says why (the API answers 409 with it)."""


def live_workers(store: Store | None = None) -> list[dict]:
    """Workers whose last heartbeat is younger than STALE_S seconds."""
    store = store or get_store()
    now = time.time()
    return [w for w in store.workers() if now - float(w.get("last_seen") or 0) < STALE_S]


def submit(kind: str, params: dict | None, store: Store | None = None) -> dict:
    """Validate and queue a job. Post-condition: the job is stored as queued and one queue message names it.
    Raises registry.ParamsError (bad kind or params) or NoWorker (no live worker that can run the kind)."""
    store = store or get_store()
    entry = registry.get(kind)
    model = registry.validate(kind, params)
    live = live_workers(store)
    if not live:
        raise NoWorker("no live GPU worker: start one with `layoutlab worker` (or `layoutlab serve` on a GPU host)")
    if entry.needs_gpu and not any((w.get("device") or {}).get("available") for w in live):
        reasons = sorted({str((w.get("device") or {}).get("reason")) for w in live})
        raise NoWorker(f"no live worker has a GPU ({len(live)} live without one: {'; '.join(reasons)})")
    job = store.create(kind, model.model_dump())
    tasks.enqueue(job["id"])
    return job


def cancel(job_id: str, store: Store | None = None) -> dict | None:
    """Cancel a job. Post-condition: a queued job is failed with "cancelled by user" at once; a running job gets
    cancel_requested and stops at its next check (its binary is killed); a finished job is unchanged."""
    store = store or get_store()
    job = store.get(job_id)
    if not job:
        return None
    if job["status"] == "queued":
        store.update(job_id, cancel_requested=1, status="failed", error="cancelled by user", finished=time.time())
    elif job["status"] == "running":
        store.update(job_id, cancel_requested=1)
    return store.get(job_id)


def execute_job(job_id: str, worker_id: str = "local", device: dict | None = None,
                store: Store | None = None) -> dict | None:
    """Run one job if it can be claimed. Post-condition: the job ends done (with result) or failed (with error);
    returns the final record, or None when the job was missing, cancelled or taken by another worker."""
    store = store or get_store()
    if not store.claim(job_id, worker_id):
        return None
    job = store.get(job_id)
    last_check = [0.0, False]

    def cancelled() -> bool:
        now = time.monotonic()
        if now - last_check[0] > 0.5:
            last_check[0] = now
            cur = store.get(job_id)
            last_check[1] = bool(cur and cur.get("cancel_requested"))
        return last_check[1]

    ctx = JobContext(job_id, worker_id, report=lambda p: store.update(job_id, progress=p), cancelled=cancelled,
                     device=device or {})
    try:
        model = registry.validate(job["kind"], job["params"])
        result = registry.get(job["kind"]).runner(model, ctx)
        store.update(job_id, status="done", result=result, error=None, finished=time.time(),
                     progress={"stage": "done", "done": None, "total": None})
    except (JobCancelled, RunCancelled):
        store.update(job_id, status="failed", error="cancelled by user", finished=time.time())
    except (BuildError, registry.ParamsError) as exc:
        store.update(job_id, status="failed", error=str(exc), finished=time.time())
    except Exception as exc:
        log.warning("job %s failed: %s", job_id, traceback.format_exc())
        store.update(job_id, status="failed", error=f"{type(exc).__name__}: {exc}", finished=time.time())
    return store.get(job_id)


def recover(store: Store | None = None) -> list[str]:
    """Requeue (or fail after MAX_ATTEMPTS) running jobs whose worker stopped heartbeating, re-enqueue queued jobs
    whose message was lost, and forget long-dead workers. Returns the ids of the jobs it touched."""
    store = store or get_store()
    now = time.time()
    workers = store.workers()
    live = {w["id"] for w in workers if now - float(w.get("last_seen") or 0) < STALE_S}
    touched = []
    for job in store.list_jobs(500, status="running"):
        if job.get("worker") in live or now - float(job.get("started") or now) < STALE_S:
            continue
        reason = (f"worker {job.get('worker')} stopped (no heartbeat for {STALE_S:.0f} s) "
                  f"during attempt {job['attempts']}")
        if job.get("cancel_requested"):
            store.update(job["id"], status="failed", error="cancelled by user", finished=now)
        elif job["attempts"] < MAX_ATTEMPTS and live:
            store.update(job["id"], status="queued", worker=None, error=None,
                         progress={"stage": "requeued", "done": None, "total": None, "reason": reason})
            tasks.enqueue(job["id"])
        else:
            store.update(job["id"], status="failed", error=f"{reason}; gave up", finished=now)
        touched.append(job["id"])
    queued = [j for j in store.list_jobs(500, status="queued") if now - float(j["created"]) > ORPHAN_S]
    if queued and tasks.pending_count() == 0:
        for job in queued:
            tasks.enqueue(job["id"])
            touched.append(job["id"])
    for w in workers:
        if now - float(w.get("last_seen") or 0) > 30 * STALE_S:
            store.remove_worker(w["id"])
    return touched


def run_worker(stop: threading.Event | None = None, *, worker_id: str | None = None, poll_s: float = 0.25) -> int:
    """Consume jobs until ``stop`` is set (or SIGTERM/SIGINT in the main thread). One job at a time. Returns 0."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stop = stop or threading.Event()
    store = get_store()
    worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:4]}"
    toolkit = find_toolkit().to_dict()
    state: dict = {"busy": None}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())

    def beat() -> dict:
        device = telemetry.device_info()
        store.heartbeat({"id": worker_id, "host": socket.gethostname(), "pid": os.getpid(),
                         "device": {**device, "toolkit": toolkit},
                         "kinds": [k.name for k in registry.kinds()], "busy": state["busy"]})
        return device

    def heartbeats() -> None:
        while not stop.is_set():
            try:
                beat()
                recover(store)
            except Exception:
                log.warning("heartbeat failed: %s", traceback.format_exc())
            stop.wait(HEARTBEAT_S)

    device = beat()
    log.info("worker %s up; GPU: %s; nvcc: %s", worker_id, device.get("name") or device.get("reason"),
             toolkit.get("nvcc"))
    threading.Thread(target=heartbeats, name="layoutlab-heartbeat", daemon=True).start()
    try:
        while not stop.is_set():
            job_id = tasks.dequeue_job_id()
            if job_id is None:
                stop.wait(poll_s)
                continue
            state["busy"] = job_id
            try:
                execute_job(job_id, worker_id, device, store)
            finally:
                state["busy"] = None
    finally:
        store.remove_worker(worker_id)
        log.info("worker %s stopped", worker_id)
    return 0
