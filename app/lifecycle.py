"""App hooks of the GPU lab: the lab client cookie (app.services.lab_clients) and the embedded GPU workers.

``install(app)`` starts the embedded workers at start-up when the app was created with ``embedded_worker=True``, as
``layoutlab worker --gpus`` does: one worker process per GPU of ``app.state.gpus`` (``layoutlab serve --gpus``,
default all), pinned to it (gpu_worker.multi), leaving out the GPUs that already have a worker on this host. That
happens when NVML finds a GPU and no external worker is configured (LAYOUTLAB_REDIS_URL unset), or when
LAYOUTLAB_EMBEDDED_WORKER=1 forces it; fake GPUs (LAYOUTLAB_FAKE_GPUS) count only when ``--gpus`` names GPUs or the
worker is forced. Forced on a host with no GPU, one unpinned worker runs in a daemon thread. LAYOUTLAB_EMBEDDED_WORKER=0
never starts any. A worker that dies is started again (gpu_worker.multi.Supervisor for the processes,
gpu_worker.service.supervised for the thread), and under ``layoutlab serve`` gunicorn's master restarts the app
process itself, and with it its workers (app.serve). The workers stop at shutdown. In Redis mode the lifespan also
runs the history archiver (gpu_worker.archiver), stopped with it.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import asynccontextmanager

log = logging.getLogger("layoutlab")


def plan_workers(app) -> tuple[str, list, str]:
    """Which embedded workers to start: ``("none", [], why)``, ``("thread", [], why)`` (one unpinned worker in a
    thread) or ``("gpus", [Gpu, ...], why)`` (one pinned worker process per GPU)."""
    force = os.environ.get("LAYOUTLAB_EMBEDDED_WORKER")
    if force == "0" or not getattr(app.state, "embedded_worker", False):
        return "none", [], "embedded worker disabled"
    from gpu_worker import multi
    from gpu_worker.gpus import GpuSpecError
    from storage.config import redis_url

    spec = getattr(app.state, "gpus", None)
    if force != "1" and redis_url():
        return "none", [], "LAYOUTLAB_REDIS_URL is set: workers run as `layoutlab worker`"
    try:
        gpus, notes = multi.plan(spec, strict=False, fake_ok=force == "1" or spec is not None)
    except GpuSpecError as exc:
        if force == "1" and not _any_gpu():
            return "thread", [], "forced by LAYOUTLAB_EMBEDDED_WORKER=1 (no GPU: one worker for jobs without one)"
        return "none", [], str(exc)
    why = ", ".join(f"{g.label()} {g.name or ''}".strip() for g in gpus)
    return "gpus", gpus, f"one worker per GPU: {why}" + "".join(f"; {n}" for n in notes)


def should_start(app) -> tuple[bool, str]:
    """Whether to start embedded workers, and why (or why not)."""
    mode, _, why = plan_workers(app)
    return mode != "none", why


def _any_gpu() -> bool:
    from gpu_worker.gpus import visible

    try:
        return bool(visible())
    except (RuntimeError, ValueError):
        return False


def install(app) -> None:
    """Add the lab client middleware, and wrap the app's lifespan so that the embedded worker starts and stops with
    it."""
    from app.services.lab_clients import LabClientMiddleware

    app.add_middleware(LabClientMiddleware)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a):
        stop = threading.Event()
        thread = None
        mode, gpus, why = plan_workers(a)
        a.state.embedded_worker_status = why
        if mode == "thread":  # restarted after an unexpected error, as the Supervisor restarts a worker process
            from gpu_worker.service import supervised

            thread = threading.Thread(target=supervised, args=(stop,), name="layoutlab-worker", daemon=True)
        elif mode == "gpus":
            from gpu_worker.multi import Supervisor

            thread = threading.Thread(target=Supervisor(gpus, stop, grace_s=8).run, name="layoutlab-workers",
                                      daemon=True)
        if thread:
            thread.start()
            log.info("embedded GPU worker(s) started: %s", why)
        from gpu_worker import archiver

        archiving = archiver.start(stop)  # Redis mode: finished jobs reach the history here, never in a listing
        async with inner(a) as state:
            yield state
        stop.set()
        for t in (thread, archiving):
            if t:
                t.join(timeout=10)

    app.router.lifespan_context = lifespan
