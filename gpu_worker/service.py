"""The worker service: submit, cancel and execute jobs through the store's lease queue (gpu_worker.store).

``run_worker()`` is what ``layoutlab worker`` runs (and what the app's embedded worker runs in a thread). It leases
one job at a time; a heartbeat thread records the worker (device, kinds, busy) every HEARTBEAT_S seconds and touches
no job. Each attempt has its own lease heartbeat (gpu_worker.lease.AttemptLease), renewing the lease for LEASE_S
seconds with the attempt's token, stopped and joined before the attempt writes its outcome. A worker that dies stops
renewing: once its lease runs out, the next worker that asks (a restarted one, or any other) gets the job again, up
to MAX_ATTEMPTS attempts in all. A job ends "cancelled by user" only when a user asked for it.

A worker pinned to one GPU (gpu_worker.multi) names it in its heartbeat (NVML index, UUID, name, clocks), records it
with every outcome (the job's ``gpu`` column: its UUID; a result's ``gpu``: index, UUID, name, clocks and power at
the start and the end), and stops leasing once its GPU faults (gpu_worker.gpus.GpuWatch), its heartbeat giving the
reason. An attempt whose GPU faulted while it ran writes no outcome: once its lease runs out another worker takes
the job. A worker on a fake GPU (LAYOUTLAB_FAKE_GPUS) fails any job that needs a real one. Fair share: a pinned
worker that has just finished a job, while another worker of the queue is idle, waits a poll interval (or up to half
as long again) before it leases the next, so that the idle one takes it and short jobs spread over the GPUs.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import threading
import time
import traceback
import uuid

from gpu_worker import registry, telemetry
from gpu_worker.build import BuildError, find_toolkit
from gpu_worker.gpus import GpuWatch
from gpu_worker.lease import AttemptLease
from gpu_worker.registry import JobCancelled, JobContext
from gpu_worker.run import RunCancelled
from gpu_worker.store import Store, get_store
from storage.config import data_dir
from storage.outage import Backoff, describe, is_outage
from storage.version import code_version

log = logging.getLogger("layoutlab.worker")
HEARTBEAT_S = float(os.environ.get("LAYOUTLAB_HEARTBEAT_S", "2"))
STALE_S = float(os.environ.get("LAYOUTLAB_WORKER_STALE_S", "10"))
#: Seconds a lease lasts without renewal: how long a dead worker's job waits before another worker takes it
#: (LAYOUTLAB_LEASE_S; by default the time after which a silent worker counts as gone, STALE_S).
LEASE_S = float(os.environ.get("LAYOUTLAB_LEASE_S") or STALE_S)
MAX_ATTEMPTS = int(os.environ.get("LAYOUTLAB_MAX_ATTEMPTS", "3"))
#: Jobs queued or running, over all clients, beyond which submissions are refused (503).
QUEUE_MAX = int(os.environ.get("LAYOUTLAB_QUEUE_MAX", "64"))


class NoWorker(RuntimeError):
    """No live worker can take the job; the message says why (the API answers 409 with it)."""


class QueueFull(RuntimeError):
    """The queue holds QUEUE_MAX live jobs already (the API answers 503 with the message)."""


class FakeGpu(RuntimeError):
    """A job that needs a GPU reached a worker on a fake one (its message says so; the job fails with it)."""


def has_real_gpu(worker: dict) -> bool:
    """Whether the worker's record shows a usable, real GPU (not faulted, not fake)."""
    device = worker.get("device") or {}
    return bool(device.get("available")) and not device.get("fake")


def gpu_record(device: dict, start: dict, end: dict) -> dict | None:
    """What a result records of its GPU: ``{"index", "uuid", "name", "fake", <clocks and power at the end>, "start":
    {<the same at the start>}}``; None for a worker without a GPU."""
    if not device.get("uuid"):
        return None
    keys = telemetry.SNAPSHOT_KEYS
    return {"index": device.get("index"), "uuid": device["uuid"], "name": device.get("name"),
            "fake": bool(device.get("fake")), **{k: end.get(k) for k in keys}, "start": {k: start.get(k) for k in keys}}


def live_workers(store: Store | None = None) -> list[dict]:
    """Workers whose last heartbeat is younger than STALE_S seconds. Records silent for 30 x STALE_S (a worker
    killed without its clean exit) are deleted on the way."""
    store = store or get_store()
    now = time.time()
    workers = store.workers()
    for w in workers:
        if now - float(w.get("last_seen") or 0) > 30 * STALE_S:
            store.remove_worker(w["id"])
    live = [w for w in workers if now - float(w.get("last_seen") or 0) < STALE_S]
    return _one_per_gpu(live)


def _one_per_gpu(workers: list[dict]) -> list[dict]:
    """Of several records for one GPU of one host (a worker killed and restarted on it: the dead one's record is
    silent but not stale yet), only the one heard from last; records without a GPU UUID are all kept."""
    latest: dict[tuple, dict] = {}
    out = []
    for w in workers:
        uuid = (w.get("device") or {}).get("uuid")
        if not uuid:
            out.append(w)
            continue
        key = (w.get("host"), uuid)
        if key not in latest or float(w.get("last_seen") or 0) > float(latest[key].get("last_seen") or 0):
            latest[key] = w
    return out + [w for w in workers if w in latest.values()]


def submit(kind: str, params: dict | None, store: Store | None = None, client: str | None = None) -> dict:
    """Validate and queue a job for ``client``. Post-condition: the job is stored as queued, where a lease can take it.
    Raises registry.ParamsError (bad kind or params), NoWorker (no live worker can run the kind) or QueueFull."""
    store = store or get_store()
    entry = registry.get(kind)
    model = registry.validate(kind, params)
    live = live_workers(store)
    if not live:
        if not entry.needs_gpu:  # compile_only and the like run on any worker, a CPU-only host's too
            raise NoWorker(f"no live worker: start one with `layoutlab worker` on any host ({kind} needs no GPU)")
        raise NoWorker("no live worker: start one with `layoutlab worker` on a GPU host (or `layoutlab serve` there)")
    if entry.needs_gpu and not any(has_real_gpu(w) for w in live):
        reasons = sorted({str((w.get("device") or {}).get("reason") or "a fake GPU") for w in live})
        raise NoWorker(f"no live worker has a GPU ({len(live)} live without one: {'; '.join(reasons)})")
    depth = store.queue_depth()
    if depth >= QUEUE_MAX:
        raise QueueFull(f"the lab's queue is full: {depth} jobs queued or running (cap {QUEUE_MAX}); try again later")
    return store.create(kind, registry.stored(model), client)


def cancel(job_id: str, store: Store | None = None) -> dict | None:
    """Cancel a job (the caller checked who may). Post-condition: a queued job is failed with "cancelled by user" at
    once; a running job gets cancel_requested and stops at its next check; a finished job is unchanged."""
    return (store or get_store()).cancel(job_id)


def execute_job(job: dict, worker_id: str = "local", device: dict | None = None, store: Store | None = None,
                heartbeat_s: float | None = None, fault=None, stop: threading.Event | None = None) -> dict | None:
    """Run one attempt of a job that ``store.lease`` returned (it carries the attempt's ``lease_token``), under its
    own lease heartbeat (every ``heartbeat_s``, default HEARTBEAT_S). Post-condition: the heartbeat is stopped and
    joined, then the attempt's outcome is written once, keyed on its token: done (with result), or failed (with
    error; "cancelled by user" only when the job's cancel_requested is set), with ``gpu`` = the UUID of ``device``
    and, when done, ``result["gpu"]`` (gpu_record). When the attempt lost its lease (another attempt owns the job),
    or ``fault()`` (the GPU's health, None while usable) answered a reason while it ran, it stops early and writes
    no outcome. An outage of the backend while it runs (storage.outage) skips progress and keeps the last known cancel
    flag, and the outcome is written once the backend is back (:func:`write_outcome`; ``stop``: the worker's own).
    Returns the stored record."""
    store = store or get_store()
    device, fault = device or {}, fault or (lambda: None)
    job_id, token = job["id"], job.get("lease_token")
    last_check = [0.0, False]
    lease = AttemptLease(store, job, LEASE_S, HEARTBEAT_S if heartbeat_s is None else heartbeat_s)

    def cancel_requested(fresh: bool = False) -> bool:
        now = time.monotonic()
        if fresh or now - last_check[0] > 0.5:
            last_check[0] = now
            try:
                cur = store.get(job_id)
            except Exception as exc:  # the backend is down: the job runs on, as last known
                if not is_outage(exc):
                    raise
                log.debug("job %s: reading its cancel flag failed: %s", job_id, describe(exc))
                return last_check[1]
            last_check[1] = bool(cur and cur.get("cancel_requested"))
        return last_check[1]

    def report(progress: dict) -> bool:
        try:
            return store.progress(job_id, token, progress)
        except Exception as exc:  # progress is advisory: an outage skips it
            if not is_outage(exc):
                raise
            log.warning("job %s: progress not recorded: %s", job_id, describe(exc))
            return True

    def stop_now() -> bool:
        return lease.lost.is_set() or fault() is not None or cancel_requested()

    ctx = JobContext(job_id, worker_id, report=report, cancelled=stop_now, device=device)
    start = telemetry.snapshot() if device.get("uuid") else {}
    with lease:
        try:
            model = registry.validate(job["kind"], job["params"])
            if device.get("fake") and registry.get(job["kind"]).needs_gpu:
                raise FakeGpu(f"worker {worker_id} runs on a fake GPU (LAYOUTLAB_FAKE_GPUS): it takes only jobs "
                              f"that need no GPU, not {job['kind']}")
            result = registry.get(job["kind"]).runner(model, ctx)
            if isinstance(result, dict) and device.get("uuid"):
                result = {**result, "gpu": gpu_record(device, start, telemetry.snapshot())}
            outcome = {"status": "done", "result": result, "error": None,
                       "progress": {"stage": "done", "done": None, "total": None}}
        except (JobCancelled, RunCancelled) as exc:
            stopped = "cancelled by user" if cancel_requested(fresh=True) else f"stopped: {exc}"
            outcome = {"status": "failed", "error": stopped}
        except (BuildError, registry.ParamsError, FakeGpu) as exc:
            outcome = {"status": "failed", "error": str(exc)}
        except Exception as exc:
            log.warning("job %s failed: %s", job_id, traceback.format_exc())
            outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
        halted = fault()
        if halted and not lease.lost.is_set():
            report({"stage": f"{halted}; the job waits for another worker", "done": None, "total": None})
    if lease.lost.is_set():
        log.warning("job %s: lease lost; outcome of this attempt dropped", job_id)
    elif halted:
        log.warning("job %s: its GPU faulted during the attempt; no outcome written (another worker takes the job "
                    "once its lease runs out)", job_id)
    elif not write_outcome(store, job_id, token, stop, finished=time.time(), gpu=device.get("uuid"), **outcome):
        log.warning("job %s: another attempt owns the job; outcome of this attempt dropped", job_id)
    return _read(store, job_id, job)


#: Seconds a worker that was asked to stop still retries writing an outcome while the backend is down.
FINISH_GRACE_S = float(os.environ.get("LAYOUTLAB_FINISH_GRACE_S", "10"))


def write_outcome(store: Store, job_id: str, token: str, stop: threading.Event | None = None, **outcome) -> bool:
    """``store.finish`` for the attempt ``token``, retried with back-off while the backend is down: the outcome of a
    job that ran is not lost to an outage. Before each retry the attempt's lease is renewed, so that no other worker
    takes the job while this one waits; a renew that answers False (another attempt owns it) ends the wait.
    Post-condition: the store's answer (True: written; False: another attempt owns the job); or, when ``stop`` is
    set and the backend stays down FINISH_GRACE_S seconds more, False with the loss logged (the job runs again once
    its lease runs out: delivery is at least once)."""
    stop = stop or threading.Event()
    backoff, given_up_at = Backoff(most=2.0), None
    retried = False
    while True:
        try:
            if retried and not store.renew(job_id, token, LEASE_S):
                return False
            done = store.finish(job_id, token, **outcome)
            if retried:
                log.info("job %s: outcome written after %d retries", job_id, backoff.failures)
            return done
        except Exception as exc:
            if not is_outage(exc):
                raise
            retried = True
            if stop.is_set():
                given_up_at = given_up_at or time.monotonic() + FINISH_GRACE_S
                if time.monotonic() > given_up_at:
                    log.error("job %s: outcome not written, %s; the worker stops, and the job runs again once its "
                              "lease runs out", job_id, describe(exc))
                    return False
            if backoff.failures % 10 == 0:
                log.warning("job %s: writing its outcome failed (%s); retrying", job_id, describe(exc))
            time.sleep(backoff.next())


def _read(store: Store, job_id: str, fallback: dict) -> dict | None:
    """The stored job, or ``fallback`` while the backend is down."""
    try:
        return store.get(job_id)
    except Exception as exc:
        if not is_outage(exc):
            raise
        return fallback


class _Outage:
    """A backend outage as one worker sees it: said once when it begins and once when it ends, waited out with
    back-off (storage.outage.Backoff) until the backend answers or the worker is stopped."""

    def __init__(self, worker_id: str, stop: threading.Event) -> None:
        self.worker_id, self.stop = worker_id, stop
        self.since: float | None = None
        self.backoff = Backoff()

    def down(self, exc: BaseException) -> None:
        if self.since is None:
            self.since = time.monotonic()
            log.error("worker %s: %s; it waits and reconnects (retrying with back-off)", self.worker_id, describe(exc))

    def up(self) -> None:
        if self.since is not None:
            log.info("worker %s: the backend answers again after %.1f s", self.worker_id,
                     time.monotonic() - self.since)
            self.since = None
        self.backoff.reset()

    def wait(self) -> bool:
        """Wait the next back-off delay; True when the worker was stopped meanwhile."""
        return self.backoff.wait(self.stop)

    def call(self, fn, *args):
        """``fn(*args)``, retried while it fails with an outage; None once the worker is stopped."""
        while True:
            try:
                out = fn(*args)
            except Exception as exc:
                if not is_outage(exc):
                    raise
                self.down(exc)
                if self.wait():
                    return None
                continue
            self.up()
            return out


def run_worker(stop: threading.Event | None = None, *, worker_id: str | None = None, poll_s: float = 0.25,
               watch: GpuWatch | None = None) -> int:
    """Consume jobs until ``stop`` is set (or SIGTERM/SIGINT in the main thread). One job at a time; none once
    ``watch`` (the pinned GPU's health) reports a fault. Returns 0, after logging why it stopped.

    The worker rides out its backend: while Redis or PostgreSQL cannot be reached (at start-up too), it says so once,
    retries with back-off (storage.outage) and reconnects, and a job's outcome is written once the backend is back
    (:func:`write_outcome`). Only a stop ends it."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stop = stop or threading.Event()
    why = ["stop requested"]
    pin = telemetry.pinned()
    worker_id = worker_id or (f"w-{uuid.uuid4().hex[:8]}-gpu{pin['index']}" if pin else f"w-{uuid.uuid4().hex[:10]}")
    if threading.current_thread() is threading.main_thread():
        def on_signal(signum, _frame) -> None:
            why[0] = f"{signal.Signals(signum).name} received"
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)
    outage = _Outage(worker_id, stop)
    store = outage.call(get_store)
    if store is None:
        log.info("worker %s stopped before its job store answered: %s", worker_id, why[0])
        return 0
    toolkit = find_toolkit().to_dict()
    state: dict = {"busy": None, "fault": None, "device": {}}
    fault = watch.check if watch else (lambda: None)

    beat_lock = threading.Lock()

    def beat(device: dict | None = None) -> dict:
        """Write the worker's record: the GPU read now (or ``device``, the last reading) and the job it holds."""
        with beat_lock:
            if device is None:
                device = telemetry.device_info()
                if watch:
                    fault_now = watch.check()
                    device.update(watch.report())
                    if fault_now:
                        device.update(available=False, reason=fault_now)
                state["device"] = device
            store.heartbeat({"id": worker_id, "host": socket.gethostname(), "pid": os.getpid(),
                             "device": {**device, "toolkit": toolkit, "code_version": code_version()},
                             "kinds": [k.name for k in registry.kinds()], "busy": state["busy"]})
            return device

    def quiet(what: str, fn, *args) -> None:
        """``fn(*args)``; a failure is logged (an outage in one line: the loop says when the backend is down)."""
        try:
            fn(*args)
        except Exception as exc:
            if is_outage(exc):
                log.debug("%s failed: %s", what, describe(exc))
            else:
                log.warning("%s failed: %s", what, traceback.format_exc())

    def hold(job_id: str | None) -> None:
        """Record at once which job this worker holds (no GPU reading: the last heartbeat's stays)."""
        state["busy"] = job_id
        quiet("heartbeat", beat, state["device"])

    def others_idle() -> bool:
        """Whether another live worker of this queue holds no job and has no faulted GPU (its last heartbeat)."""
        now = time.time()
        return any(w["id"] != worker_id and not w.get("busy") and not (w.get("device") or {}).get("fault")
                   and now - float(w.get("last_seen") or 0) < STALE_S for w in store.workers())

    def heartbeats() -> None:
        while not stop.wait(HEARTBEAT_S):
            quiet("heartbeat", beat)

    device = outage.call(beat)
    if device is None:
        log.info("worker %s stopped before its first heartbeat: %s", worker_id, why[0])
        return 0
    log.info("worker %s up; GPU: %s; nvcc: %s; code version %s; data folder %s", worker_id,
             device.get("name") or device.get("reason"), toolkit.get("version"), code_version(), data_dir())
    threading.Thread(target=heartbeats, name="layoutlab-heartbeat", daemon=True).start()
    try:
        while not stop.is_set():
            if fault() is not None:
                if state["fault"] is None:  # say why at once, not at the next beat
                    state["fault"] = fault()
                    log.error("worker %s stops taking jobs: %s", worker_id, state["fault"])
                    quiet("heartbeat", beat)
                stop.wait(poll_s)
                continue
            try:
                job = store.lease(worker_id, LEASE_S, MAX_ATTEMPTS)
            except Exception as exc:
                if is_outage(exc):
                    outage.down(exc)
                else:
                    log.warning("lease failed: %s", traceback.format_exc())
                outage.wait()
                continue
            outage.up()
            if job is None:
                stop.wait(poll_s)
                continue
            hold(job["id"])
            try:
                execute_job(job, worker_id, device, store, fault=fault, stop=stop)
            finally:
                hold(None)
            try:
                if pin and others_idle():
                    stop.wait(poll_s * random.uniform(1.0, 1.5))
            except Exception:
                log.warning("reading the workers failed: %s", traceback.format_exc())
    finally:
        quiet("removing the worker's record", store.remove_worker, worker_id)
        log.info("worker %s stopped: %s", worker_id, why[0])
    return 0


def supervised(stop: threading.Event, restart_s: float = 2.0) -> None:
    """:func:`run_worker` in this thread until ``stop`` is set, started again (after ``restart_s`` seconds, doubling
    up to a minute) when it ends by an unexpected error: what ``layoutlab serve``'s embedded worker runs on a host
    without a GPU."""
    delay = restart_s
    while not stop.is_set():
        started = time.monotonic()
        try:
            run_worker(stop)
        except Exception:
            log.error("the embedded worker failed; restarting in %.0f s: %s", delay, traceback.format_exc())
        if stop.wait(delay):
            return
        delay = restart_s if time.monotonic() - started > 60 else min(2 * delay, 60.0)
