"""App hooks of the GPU lab: the lab client cookie (app.services.lab_clients) and the embedded GPU worker.

``install(app)`` starts ``gpu_worker.service.run_worker`` in a daemon thread at start-up when the app was created with
``embedded_worker=True`` and either NVML finds a GPU and no external worker is configured (LAYOUTLAB_REDIS_URL unset
and no other live worker on this host), or LAYOUTLAB_EMBEDDED_WORKER=1 forces it. LAYOUTLAB_EMBEDDED_WORKER=0 never
starts it. The worker stops at shutdown. In Redis mode the lifespan also runs the history archiver
(gpu_worker.archiver), stopped with it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from contextlib import asynccontextmanager

log = logging.getLogger("layoutlab")


def should_start(app) -> tuple[bool, str]:
    """Whether to start the embedded worker, and why (or why not)."""
    force = os.environ.get("LAYOUTLAB_EMBEDDED_WORKER")
    if force == "0" or not getattr(app.state, "embedded_worker", False):
        return False, "embedded worker disabled"
    if force == "1":
        return True, "forced by LAYOUTLAB_EMBEDDED_WORKER=1"
    from gpu_worker import service, telemetry
    from storage.config import redis_url

    if redis_url():
        return False, "LAYOUTLAB_REDIS_URL is set: workers run as `layoutlab worker`"
    info = telemetry.device_info()
    if not info.get("available"):
        return False, f"no GPU ({info.get('reason')})"
    host = socket.gethostname()
    if any(w.get("host") == host for w in service.live_workers()):
        return False, "a worker already runs on this host"
    return True, f"GPU found: {info.get('name')}"


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
        start, why = should_start(a)
        a.state.embedded_worker_status = why
        if start:
            from gpu_worker.service import run_worker

            thread = threading.Thread(target=run_worker, args=(stop,), name="layoutlab-worker", daemon=True)
            thread.start()
            log.info("embedded GPU worker started: %s", why)
        from gpu_worker import archiver

        archiving = archiver.start(stop)  # Redis mode: finished jobs reach the history here, never in a listing
        async with inner(a) as state:
            yield state
        stop.set()
        for t in (thread, archiving):
            if t:
                t.join(timeout=10)

    app.router.lifespan_context = lifespan
