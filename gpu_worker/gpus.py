"""The GPUs of a host as the workers see them: choosing them (``--gpus all|0,2|GPU-<uuid>``), pinning a worker
process to one, one worker per GPU (a lock), and watching a GPU's health (gone, or an Xid error).

- :func:`select` turns a ``--gpus`` spec into GPUs, refusing with the reason (an unknown index names those there).
- :func:`pin_env` is the environment of the worker process of one GPU: CUDA_VISIBLE_DEVICES holds the GPU's UUID
  (so CUDA sees that GPU alone, whatever CUDA's own device order), CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's order is
  then NVML's), LAYOUTLAB_GPU_INDEX and LAYOUTLAB_GPU_UUID (NVML's index and UUID, read by gpu_worker.telemetry).
- :class:`GpuLock` is an exclusive ``flock`` per GPU UUID, held by the worker process of that GPU for its life (the
  kernel drops it when the process dies): a second worker for the same GPU on this host is refused, so no two jobs
  share a GPU.
- :class:`GpuWatch` says why a GPU stopped being usable: NVML lost it, or it reported an Xid error (NVML's critical
  Xid events, read in a thread). The fault sticks for the life of the process. Xids that a faulty kernel causes and
  that leave the GPU usable (LAYOUTLAB_XID_BENIGN, default 13, 31, 43, 45) are recorded, not a fault.

Fake GPUs (LAYOUTLAB_FAKE_GPUS=N) take their faults from files, for tests: ``<index>.xid`` (holding the Xid number)
and ``<index>.lost`` under LAYOUTLAB_FAKE_GPU_FAULTS (default ``<data dir>/fake-gpus``); their locks live under the
data folder, so tests in separate data folders never meet.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpu_worker import telemetry

log = logging.getLogger("layoutlab.worker")
#: The variables :func:`pin_env` sets; every one of them is replaced, never inherited.
PIN_VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LAYOUTLAB_GPU_INDEX", "LAYOUTLAB_GPU_UUID")
_LOST = {"GPU_IS_LOST", "NOT_FOUND", "RESET_REQUIRED", "UNINITIALIZED"}


class GpuSpecError(ValueError):
    """A ``--gpus`` spec that names no usable GPU; the message says why."""


@dataclass(frozen=True)
class Gpu:
    """One GPU: NVML's index and UUID, its name, and whether it is a fake one (LAYOUTLAB_FAKE_GPUS)."""

    index: int
    uuid: str
    name: str | None = None
    fake: bool = False

    def label(self) -> str:
        return f"GPU {self.index} ({self.uuid})"


def visible() -> list[Gpu]:
    """The GPUs of this host (the fake ones when LAYOUTLAB_FAKE_GPUS is set). Raises RuntimeError with NVML's reason
    when NVML cannot start, ValueError for a bad LAYOUTLAB_FAKE_GPUS."""
    return [Gpu(g["index"], g["uuid"], g["name"], g["fake"]) for g in telemetry.list_gpus()]


def select(spec: str | None, gpus: list[Gpu]) -> list[Gpu]:
    """The GPUs ``spec`` names: None or ``all`` (every GPU of ``gpus``), or a comma-separated list of NVML indices
    and UUIDs (``0,2``, ``GPU-8f3c...``), in the order given. Raises GpuSpecError for an empty entry, a repeated
    GPU, a word that is neither, or a GPU that is not there (naming those that are)."""
    if not gpus:
        raise GpuSpecError("this host has no GPU to choose from")
    if spec is None or spec.strip().lower() == "all":
        return list(gpus)
    by_index, by_uuid = {g.index: g for g in gpus}, {g.uuid.lower(): g for g in gpus}
    there = ", ".join(f"{g.index} ({g.uuid})" for g in gpus)
    chosen: list[Gpu] = []
    for word in spec.split(","):
        word = word.strip()
        if not word:
            raise GpuSpecError(f"--gpus {spec[:80]!r} has an empty entry; write all, or indices like 0,2")
        if word.isdecimal():
            gpu = by_index.get(int(word))
        elif word.lower().startswith(("gpu-", "mig-")):
            gpu = by_uuid.get(word.lower())
        else:
            raise GpuSpecError(f"--gpus entry {word[:40]!r} is neither a GPU index nor a GPU UUID; GPUs here: {there}")
        if gpu is None:
            raise GpuSpecError(f"no GPU {word[:40]} on this host; GPUs here: {there}")
        if gpu in chosen:
            raise GpuSpecError(f"--gpus names {gpu.label()} twice: one worker per GPU")
        chosen.append(gpu)
    return chosen


def pin_env(gpu: Gpu, base: Mapping[str, str], supervisor_pid: int | None = None) -> dict[str, str]:
    """The environment of the worker process of ``gpu``: ``base`` with PIN_VARS replaced (CUDA_VISIBLE_DEVICES =
    the UUID, CUDA_DEVICE_ORDER = PCI_BUS_ID, LAYOUTLAB_GPU_INDEX, LAYOUTLAB_GPU_UUID) and LAYOUTLAB_SUPERVISOR_PID
    (the process the worker dies with). ``base`` is left unchanged."""
    env = {k: v for k, v in base.items() if k not in PIN_VARS}
    env.update(CUDA_VISIBLE_DEVICES=gpu.uuid, CUDA_DEVICE_ORDER="PCI_BUS_ID", LAYOUTLAB_GPU_INDEX=str(gpu.index),
               LAYOUTLAB_GPU_UUID=gpu.uuid, LAYOUTLAB_SUPERVISOR_PID=str(supervisor_pid or os.getpid()))
    return env


def pinned_gpu() -> Gpu | None:
    """The GPU this process was pinned to by :func:`pin_env`, or None."""
    pin = telemetry.pinned()
    if not pin:
        return None
    fake = bool(telemetry.fake_count())
    name = telemetry.device_info().get("name")
    return Gpu(pin["index"], pin["uuid"], name, fake)


def lock_dir(fake: bool) -> Path:
    """Where the GPU locks live: LAYOUTLAB_GPU_LOCK_DIR, else (real GPUs) one folder per host in the temporary
    folder, shared by every user, or (fake GPUs) the data folder."""
    env = os.environ.get("LAYOUTLAB_GPU_LOCK_DIR")
    if env:
        path = Path(env)
    elif fake:
        from storage.config import data_dir

        path = data_dir() / "fake-gpu-locks"
    else:
        path = Path(tempfile.gettempdir()) / "layoutlab-gpu-locks"
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        if not env and not fake:
            try:
                path.chmod(0o1777)  # every user's workers lock here; each keeps its own files (sticky)
            except OSError:
                pass
    return path


class GpuLock:
    """The host-wide lock of one GPU (an exclusive flock on ``<lock dir>/<uuid>.lock``, the holder's pid inside).

    Post-conditions: at most one open GpuLock per GPU holds it at a time, across processes (and within one); the
    kernel releases it when its holder exits, however it exits."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.path = lock_dir(gpu.fake) / f"{gpu.uuid}.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock without waiting; True when this object now holds it."""
        if self._fd is not None:
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except PermissionError:  # another user's worker made the file: lockable read-only, pid left as it is
            fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError:
            pass
        self._fd = fd
        return True

    def release(self) -> None:
        """Drop the lock (no-op when not held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def holder(self) -> int | None:
        """The pid written by the process that holds (or last held) the lock, when readable."""
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdecimal() else None


def held_by(gpu: Gpu) -> int | None:
    """The pid of the worker that holds ``gpu`` on this host (0 when held by an unknown process), or None when the
    GPU is free. Post-condition: the lock is free again when this returns None (it is only probed)."""
    lock = GpuLock(gpu)
    if lock.acquire():
        lock.release()
        return None
    return lock.holder() or 0


def benign_xids() -> frozenset[int]:
    """Xids recorded but not a fault: LAYOUTLAB_XID_BENIGN (comma-separated; empty: every Xid is a fault), default
    13 (graphics engine exception), 31 (memory page fault), 43 (GPU stopped processing), 45 (preemptive cleanup):
    what a faulty kernel causes, its own job failing with the CUDA error."""
    raw = os.environ.get("LAYOUTLAB_XID_BENIGN", "13,31,43,45")
    return frozenset(int(x) for x in raw.replace(" ", "").split(",") if x.isdecimal())


def fault_dir() -> Path:
    """Where fake GPUs' faults are written: LAYOUTLAB_FAKE_GPU_FAULTS, else ``<data dir>/fake-gpus``."""
    env = os.environ.get("LAYOUTLAB_FAKE_GPU_FAULTS")
    if env:
        return Path(env)
    from storage.config import data_dir

    return data_dir() / "fake-gpus"


class GpuWatch:
    """Whether one GPU is still usable. :meth:`check` answers None, or why not (sticky: once faulted, always).

    Real GPUs: :meth:`check` looks the GPU up by UUID in NVML (lost, not found, or needing a reset is a fault), and
    a thread waits on NVML's critical Xid events for it. Fake GPUs: the fault files (module docstring)."""

    def __init__(self, gpu: Gpu, poll_ms: int = 500) -> None:
        self.gpu, self.poll_ms = gpu, poll_ms
        self.fault: str | None = None
        self.xids: list[dict] = []
        self.xid_events = "fault files" if gpu.fake else "not started"
        self._benign = benign_xids()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> GpuWatch:
        """Start the Xid thread (real GPUs); returns self."""
        if not self.gpu.fake and self._thread is None:
            self._thread = threading.Thread(target=self._watch_xids, name=f"layoutlab-xid-{self.gpu.index}",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the Xid thread and wait for it."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=5)

    def report(self) -> dict:
        """What the worker's record shows: ``{"fault", "xids" (the last 8), "xid_events"}``."""
        with self._lock:
            return {"fault": self.fault, "xids": list(self.xids[-8:]), "xid_events": self.xid_events}

    def _set_fault(self, why: str) -> None:
        with self._lock:
            if self.fault is None:
                self.fault = f"{self.gpu.label()} {why}: this worker takes no more jobs"
                log.error("%s", self.fault)

    def saw_xid(self, xid: int) -> None:
        """Record Xid ``xid`` on this GPU; a fault unless it is benign. Post-condition: it is in ``xids``."""
        benign = xid in self._benign
        with self._lock:
            if not any(x["xid"] == xid for x in self.xids[-8:]) or not benign:
                self.xids.append({"xid": xid, "at": round(time.time(), 3), "benign": benign})
        if not benign:
            self._set_fault(f"reported Xid {xid} at {time.strftime('%H:%M:%S')}")

    def check(self) -> str | None:
        """None while the GPU is usable, else why not (the first fault seen)."""
        if self.fault is None:
            if self.gpu.fake:
                self._check_fake()
            else:
                self._check_nvml()
        return self.fault

    def _check_fake(self) -> None:
        root = fault_dir()
        if (root / f"{self.gpu.index}.lost").exists():
            self._set_fault("is gone (fault file)")
            return
        xid = root / f"{self.gpu.index}.xid"
        try:
            text = xid.read_text().strip()
        except OSError:
            return
        if text.isdecimal() and not any(x["xid"] == int(text) for x in self.xids):
            self.saw_xid(int(text))

    def _check_nvml(self) -> None:
        try:
            nv = telemetry.nvml()
        except RuntimeError as exc:
            self._set_fault(f"is gone: {exc}")
            return
        try:
            nv.nvmlDeviceGetPciInfo(nv.nvmlDeviceGetHandleByUUID(self.gpu.uuid))
        except nv.NVMLError as exc:
            if _nvml_error_name(nv, exc) in _LOST:
                self._set_fault(f"is gone: NVML: {exc}")

    def _watch_xids(self) -> None:
        try:
            nv = telemetry.nvml()
            events = nv.nvmlEventSetCreate()
        except Exception as exc:
            self.xid_events = f"not watched: {exc}"
            return
        try:
            try:
                nv.nvmlDeviceRegisterEvents(nv.nvmlDeviceGetHandleByUUID(self.gpu.uuid),
                                            nv.nvmlEventTypeXidCriticalError, events)
            except nv.NVMLError as exc:
                self.xid_events = f"not watched: NVML: {exc}"
                return
            self.xid_events = "watched"
            wait = getattr(nv, "nvmlEventSetWait_v2", None) or nv.nvmlEventSetWait
            while not self._stop.is_set():
                try:
                    data = wait(events, self.poll_ms)
                except nv.NVMLError as exc:
                    name = _nvml_error_name(nv, exc)
                    if name == "TIMEOUT":
                        continue
                    if name in _LOST:
                        self._set_fault(f"is gone: NVML: {exc}")
                        return
                    log.warning("%s: waiting for Xid events failed: %s", self.gpu.label(), exc)
                    self._stop.wait(self.poll_ms / 1000)
                    continue
                if data.eventType & nv.nvmlEventTypeXidCriticalError:
                    self.saw_xid(int(data.eventData))
        finally:
            try:
                nv.nvmlEventSetFree(events)
            except Exception:
                pass


def _nvml_error_name(nv, exc) -> str:
    """NVML's name of an error (``GPU_IS_LOST``, ``TIMEOUT``, ...), from its code."""
    value = getattr(exc, "value", None)
    for name in dir(nv):
        if name.startswith("NVML_ERROR_") and getattr(nv, name) == value:
            return name.removeprefix("NVML_ERROR_")
    return str(value)
