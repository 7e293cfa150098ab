"""Device telemetry through NVML (``import pynvml`` from nvidia-ml-py) and the CUDA driver (SM count, compute
capability). Without a GPU every function answers ``available: False`` with NVML's own reason."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

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


def snapshot(index: int = 0) -> dict:
    """Clocks (MHz), temperature (C), power (W) and clock-event reasons now. Post-condition: ``available`` is set;
    when False, ``reason`` holds NVML's message."""
    try:
        nv = _nvml()
        h = nv.nvmlDeviceGetHandleByIndex(index)
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


def device_info(index: int = 0) -> dict:
    """Static and current facts of GPU ``index``: name, driver, SMs, compute capability, memory, max and current
    clocks. Post-condition: ``available`` is a bool; when False, ``reason`` is NVML's message and name/driver are
    None."""
    base = {"available": False, "name": None, "driver": None, "reason": None, "index": index}
    try:
        nv = _nvml()
        count = nv.nvmlDeviceGetCount()
        if index >= count:
            return {**base, "reason": f"NVML sees {count} GPU(s); index {index} does not exist"}
        h = nv.nvmlDeviceGetHandleByIndex(index)
        mem = _safe(nv.nvmlDeviceGetMemoryInfo, h)
        info = {
            **base,
            "available": True,
            "name": _text(nv.nvmlDeviceGetName(h)),
            "driver": _text(nv.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": _safe(nv.nvmlSystemGetCudaDriverVersion),
            "gpu_count": count,
            "memory_total_mib": mem.total // (1 << 20) if mem else None,
            "max_sm_clock_mhz": _safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
            "max_mem_clock_mhz": _safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM),
        }
    except Exception as exc:
        return {**base, "reason": str(exc)}
    info.update(_cuda_attributes(index))
    snap = snapshot(index)
    snap.pop("available", None)
    info.update(snap)
    return info
