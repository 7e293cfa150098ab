"""Device telemetry through NVML (``import pynvml`` from nvidia-ml-py) and the CUDA driver (SM count, compute
capability). Without a GPU every function answers ``available: False`` with NVML's own reason.

A worker pinned to one GPU (gpu_worker.gpus.pin_env: LAYOUTLAB_GPU_INDEX and LAYOUTLAB_GPU_UUID beside
CUDA_VISIBLE_DEVICES) reads that GPU by default: NVML ignores CUDA_VISIBLE_DEVICES, so NVML index 0 would be another
GPU. ``LAYOUTLAB_FAKE_GPUS=N`` stands N fake GPUs in for NVML (CPU tests of the multi-GPU workers): they have an index,
a UUID and a name, no clocks or power, and ``fake: true``; they run only jobs that need no GPU."""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

FAKE_ENV = "LAYOUTLAB_FAKE_GPUS"
#: What a snapshot reads: clocks (MHz), temperature (C), power (W).
SNAPSHOT_KEYS = ("sm_clock_mhz", "mem_clock_mhz", "temperature_c", "power_w")

_lock = threading.Lock()
_init_error: str | None = None
_initialised = False


def _nvml():
    """The initialised pynvml module; raises RuntimeError with NVML's reason when it cannot start."""
    global _initialised, _init_error
    with _lock:
        if _initialised:
            import pynvml

            return pynvml
        if _init_error is not None:
            raise RuntimeError(_init_error)
        try:
            import pynvml
        except ImportError as exc:
            _init_error = f"nvidia-ml-py is not installed ({exc})"
            raise RuntimeError(_init_error) from None
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            _init_error = f"NVML: {exc}"
            raise RuntimeError(_init_error) from None
        _initialised = True
        return pynvml


def nvml():
    """The initialised pynvml module; raises RuntimeError with NVML's reason when it cannot start."""
    return _nvml()


def fake_count() -> int:
    """N of ``LAYOUTLAB_FAKE_GPUS=N`` (0 when unset or empty). Raises ValueError naming the variable when it is not an
    integer in 0..64."""
    raw = (os.environ.get(FAKE_ENV) or "").strip()
    if not raw:
        return 0
    if not raw.isdecimal() or int(raw) > 64:
        raise ValueError(f"{FAKE_ENV} must be a number of fake GPUs from 0 to 64, got {raw[:32]!r}")
    return int(raw)


def fake_uuid(index: int) -> str:
    """The UUID of fake GPU ``index``: shaped like NVML's, never a real GPU's (CUDA sees no device by it)."""
    return f"GPU-fa4e0000-0000-4000-8000-{index:012x}"


def pinned() -> dict | None:
    """The GPU this process is pinned to: ``{"index", "uuid"}`` from LAYOUTLAB_GPU_INDEX / LAYOUTLAB_GPU_UUID, or None
    when the process is not pinned."""
    uuid, index = os.environ.get("LAYOUTLAB_GPU_UUID"), os.environ.get("LAYOUTLAB_GPU_INDEX")
    if not uuid or not (index or "").isdecimal():
        return None
    return {"index": int(index), "uuid": uuid}


def _fake_info(index: int) -> dict:
    n = fake_count()
    if index >= n:
        return {"available": False, "name": None, "driver": None, "index": index, "fake": True,
                "reason": f"{FAKE_ENV}={n}: fake GPU {index} does not exist"}
    return {"available": True, "name": f"Fake GPU {index} ({FAKE_ENV})", "driver": "fake", "reason": None,
            "index": index, "uuid": fake_uuid(index), "fake": True, "gpu_count": n,
            **dict.fromkeys(SNAPSHOT_KEYS), "clock_event_reasons": None}


def list_gpus() -> list[dict]:
    """Every GPU of this host, in NVML's (PCI bus) order: ``[{"index", "uuid", "name", "fake"}]`` (the fake ones
    when LAYOUTLAB_FAKE_GPUS is set). Raises RuntimeError with NVML's reason when NVML cannot start."""
    n = fake_count()
    if n:
        return [{"index": i, "uuid": fake_uuid(i), "name": _fake_info(i)["name"], "fake": True} for i in range(n)]
    nv = _nvml()
    out = []
    for i in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        out.append({"index": i, "uuid": _text(nv.nvmlDeviceGetUUID(h)), "name": _text(nv.nvmlDeviceGetName(h)),
                    "fake": False})
    return out


def _handle(nv, index: int | None, uuid: str | None):
    """NVML's handle of GPU ``uuid`` (preferred: NVML's order need not be CUDA's), else of ``index``."""
    return nv.nvmlDeviceGetHandleByUUID(uuid) if uuid else nv.nvmlDeviceGetHandleByIndex(index or 0)


def _target(index: int | None) -> tuple[int, str | None]:
    """(index, uuid) to read: ``index`` when given, else the pinned GPU, else GPU 0."""
    pin = pinned()
    if index is None and pin:
        return pin["index"], pin["uuid"]
    return (index or 0), None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cuda_attributes(index: int) -> dict:
    """SM count and compute capability from libcuda (the driver); empty when the driver cannot be loaded."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        if cuda.cuInit(0) != 0:
            return {}
        dev = ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(dev), index) != 0:
            return {}
        out = {}
        for name, attr in (("sms", 16), ("cc_major", 75), ("cc_minor", 76), ("smem_per_sm", 81)):
            val = ctypes.c_int()
            if cuda.cuDeviceGetAttribute(ctypes.byref(val), attr, dev) == 0:
                out[name] = val.value
        if "cc_major" in out:
            out["cc"] = f"{out.pop('cc_major')}.{out.pop('cc_minor', 0)}"
        return out
    except OSError:
        return {}


def _safe(fn, *args):
    try:
        return fn(*args)
    except Exception:  # NVML answers NotSupported for some fields on some boards
        return None


def snapshot(index: int | None = None) -> dict:
    """Clocks (MHz), temperature (C), power (W) and clock-event reasons now, of GPU ``index`` (default: the pinned GPU,
    else GPU 0). Post-condition: ``available`` is set; when False, ``reason`` holds NVML's message. A fake GPU
    answers ``available: True, fake: True`` with every reading None."""
    index, uuid = _target(index)
    if fake_count():
        info = _fake_info(index)
        return {"available": info["available"], "fake": True, **dict.fromkeys(SNAPSHOT_KEYS),
                "clock_event_reasons": None, **({"reason": info["reason"]} if not info["available"] else {})}
    try:
        nv = _nvml()
        h = _handle(nv, index, uuid)
    except (RuntimeError, Exception) as exc:  # pynvml raises NVMLError subclasses
        return {"available": False, "reason": str(exc)}
    power = _safe(nv.nvmlDeviceGetPowerUsage, h)
    reasons = _safe(getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", nv.nvmlDeviceGetCurrentClocksThrottleReasons),
                    h)
    return {
        "available": True,
        "sm_clock_mhz": _safe(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
        "mem_clock_mhz": _safe(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
        "temperature_c": _safe(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
        "power_w": round(power / 1000.0, 1) if power is not None else None,
        "clock_event_reasons": reasons,
    }


def device_info(index: int | None = None) -> dict:
    """Static and current facts of GPU ``index`` (default: the pinned GPU, else GPU 0): NVML index and UUID, name,
    driver, SMs, compute capability, memory, max and current clocks. Post-condition: ``available`` is a bool; when
    False, ``reason`` is NVML's message and name/driver are None."""
    index, uuid = _target(index)
    if fake_count():
        return _fake_info(index)
    base = {"available": False, "name": None, "driver": None, "reason": None, "index": index}
    try:
        nv = _nvml()
        count = nv.nvmlDeviceGetCount()
        if uuid is None and index >= count:
            return {**base, "reason": f"NVML sees {count} GPU(s); index {index} does not exist"}
        h = _handle(nv, index, uuid)
        mem = _safe(nv.nvmlDeviceGetMemoryInfo, h)
        info = {
            **base,
            "available": True,
            "index": nv.nvmlDeviceGetIndex(h),
            "uuid": _text(nv.nvmlDeviceGetUUID(h)),
            "pci_bus_id": _safe(lambda: _text(nv.nvmlDeviceGetPciInfo(h).busId)),
            "name": _text(nv.nvmlDeviceGetName(h)),
            "driver": _text(nv.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": _safe(nv.nvmlSystemGetCudaDriverVersion),
            "gpu_count": count,
            "memory_total_mib": mem.total // (1 << 20) if mem else None,
            "max_sm_clock_mhz": _safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
            "max_mem_clock_mhz": _safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM),
        }
    except Exception as exc:
        return {**base, "reason": str(exc) if uuid is None else f"GPU {index} ({uuid}): {exc}"}
    info.update(_cuda_attributes(0 if uuid else index))  # pinned: the one GPU CUDA sees is device 0
    snap = snapshot(info["index"] if uuid is None else None)
    snap.pop("available", None)
    info.update(snap)
    return info
