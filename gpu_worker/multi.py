"""One worker process per GPU: what ``layoutlab worker --gpus all|0,2`` and ``layoutlab serve --gpus`` run.

:func:`plan` chooses the GPUs (gpu_worker.gpus.select) and leaves out those that already have a worker on this host;
:class:`Supervisor` starts one process per GPU (``python -m gpu_worker.multi --pinned``) in the environment of
gpu_worker.gpus.pin_env, restarts one that crashed (after 2 s, doubling up to a minute), and stops them all on
SIGTERM/SIGINT (each finishes its job first, for up to ``grace_s`` seconds; then it is killed). A worker process
takes its GPU's lock before it leases anything (exit status LOCKED when another worker holds it: not restarted), dies
with its supervisor (PR_SET_PDEATHSIG: a supervisor killed with SIGKILL leaves no worker behind, and the jobs it held
go to another worker once their leases run out), and stops leasing once its GPU faults (gpu_worker.gpus.GpuWatch),
its heartbeat saying why.

A host with no GPU (and no LAYOUTLAB_FAKE_GPUS) runs one worker in-process, unpinned, as before: it takes the jobs
that need no GPU.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time

from gpu_worker import telemetry
from gpu_worker.gpus import Gpu, GpuLock, GpuSpecError, GpuWatch, held_by, pin_env, pinned_gpu, select, visible

log = logging.getLogger("layoutlab.worker")
#: Exit status of a worker process whose GPU already has a worker on this host.
LOCKED = 3
RESTART_S, RESTART_MAX_S = 2.0, 60.0


def plan(spec: str | None, *, strict: bool, fake_ok: bool = True) -> tuple[list[Gpu], list[str]]:
    """(GPUs to start a worker on, notes on the GPUs left out). ``strict``: a GPU that ``spec`` names explicitly and
    that already has a worker on this host is an error, not a note. ``fake_ok``: fake GPUs count. Raises
    GpuSpecError (bad spec, no GPU, or nothing left to start)."""
    try:
        gpus = [g for g in visible() if fake_ok or not g.fake]
    except (RuntimeError, ValueError) as exc:
        raise GpuSpecError(f"no GPU here ({exc}); LAYOUTLAB_FAKE_GPUS=N gives N fake GPUs for tests") from None
    if not gpus:
        raise GpuSpecError("no GPU here (NVML sees none); LAYOUTLAB_FAKE_GPUS=N gives N fake GPUs for tests")
    chosen = select(spec, gpus)
    explicit = spec is not None and spec.strip().lower() != "all"
    start, notes = [], []
    for gpu in chosen:
        pid = held_by(gpu)
        if pid is None:
            start.append(gpu)
            continue
        note = f"{gpu.label()} already has a worker on this host (pid {pid or 'unknown'}): one worker per GPU"
        if strict and explicit:
            raise GpuSpecError(note)
        notes.append(note)
    if not start:
        raise GpuSpecError("; ".join(notes) or "no GPU to start a worker on")
    return start, notes


class Supervisor:
    """The worker processes of ``gpus``, one each, until ``stop`` is set."""

    def __init__(self, gpus: list[Gpu], stop: threading.Event, *, grace_s: float = 30.0,
                 env: dict[str, str] | None = None) -> None:
        self.gpus, self.stop, self.grace_s = gpus, stop, grace_s
        self.env = dict(os.environ if env is None else env)
        self.procs: dict[str, subprocess.Popen] = {}

    def spawn(self, gpu: Gpu) -> subprocess.Popen:
        """Start the worker process of ``gpu``, pinned to it."""
        proc = subprocess.Popen([sys.executable, "-m", "gpu_worker.multi", "--pinned"],
                                env=pin_env(gpu, self.env), cwd=os.getcwd())
        log.info("worker process %d for %s started", proc.pid, gpu.label())
        self.procs[gpu.uuid] = proc
        return proc

    def run(self) -> int:
        """Supervise until ``stop`` is set, or until no worker is left to run. Returns 0 after a stop, LOCKED when
        every GPU turned out to have a worker already, 1 when the workers ended otherwise."""
        due = {g.uuid: 0.0 for g in self.gpus}  # when to (re)start the worker of a GPU; absent: never
        delay = {g.uuid: RESTART_S for g in self.gpus}
        started: dict[str, float] = {}
        ended: dict[str, int] = {}
        try:
            while True:
                now = time.monotonic()
                for gpu in self.gpus:
                    u, proc = gpu.uuid, self.procs.get(gpu.uuid)
                    if proc is None and u in due and due[u] <= now:
                        self.spawn(gpu)
                        started[u] = now
                        del due[u]
                    elif proc is not None and proc.poll() is not None:
                        rc = self.procs.pop(u).returncode
                        if rc in (0, LOCKED):
                            log.warning("worker process for %s ended: %s", gpu.label(),
                                        "its GPU already has a worker" if rc == LOCKED else "stopped")
                            ended[u] = rc
                            continue
                        if now - started[u] > RESTART_MAX_S:  # it ran a while: the back-off starts afresh
                            delay[u] = RESTART_S
                        due[u] = now + delay[u]
                        log.error("worker process for %s exited with status %s; restarting in %.0f s", gpu.label(),
                                  rc, delay[u])
                        delay[u] = min(2 * delay[u], RESTART_MAX_S)
                if not self.procs and not due:
                    return LOCKED if ended and all(rc == LOCKED for rc in ended.values()) else 1
                if self.stop.wait(0.2):
                    return 0
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        """SIGTERM every worker process, wait up to ``grace_s`` for them to finish their jobs, then SIGKILL."""
        live = [p for p in self.procs.values() if p.poll() is None]
        for p in live:
            p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        for p in live:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker process %d did not stop in %.0f s; killed", p.pid, self.grace_s)
                p.kill()
                p.wait()
        self.procs.clear()


def run(spec: str | None, stop: threading.Event | None = None) -> int:
    """``layoutlab worker [--gpus SPEC]``: one pinned worker process per GPU of ``spec`` (default all) under a
    Supervisor; on a host with no GPU and no spec, one unpinned worker in this process. Raises GpuSpecError."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    stop = stop or threading.Event()
    try:
        telemetry.fake_count()
    except ValueError as exc:
        raise GpuSpecError(str(exc)) from None
    try:
        gpus, notes = plan(spec, strict=True)
    except GpuSpecError:
        if spec is not None or _has_gpus():
            raise
        from gpu_worker.service import run_worker

        return run_worker(stop)
    for note in notes:
        log.warning("%s; left out", note)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    return Supervisor(gpus, stop).run()


def _has_gpus() -> bool:
    try:
        return bool(visible())
    except (RuntimeError, ValueError):
        return False


def _die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its supervisor dies; exit now if it already has."""
    parent = int(os.environ.get("LAYOUTLAB_SUPERVISOR_PID") or 0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        armed = True
    except (OSError, AttributeError):
        armed = False
    if parent and os.getppid() != parent:
        os._exit(1)
    if not armed and parent:  # no prctl: watch the parent
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1)
            os._exit(1)

        threading.Thread(target=watch, name="layoutlab-parent", daemon=True).start()


def pinned_main() -> int:
    """The worker process of one GPU (environment from pin_env): lock the GPU, watch it, run the worker."""
    _die_with_parent()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    gpu = pinned_gpu()
    if gpu is None:
        log.error("a pinned worker needs LAYOUTLAB_GPU_INDEX and LAYOUTLAB_GPU_UUID (gpu_worker.gpus.pin_env)")
        return 2
    lock = GpuLock(gpu)
    if not lock.acquire():
        log.error("%s already has a worker on this host (pid %s): one worker per GPU", gpu.label(),
                  lock.holder() or "unknown")
        return LOCKED
    watch = GpuWatch(gpu).start()
    try:
        from gpu_worker.service import run_worker

        return run_worker(watch=watch)
    finally:
        watch.stop()
        lock.release()


if __name__ == "__main__":
    if sys.argv[1:] != ["--pinned"]:
        sys.exit("usage: python -m gpu_worker.multi --pinned (started by `layoutlab worker`)")
    sys.exit(pinned_main())
