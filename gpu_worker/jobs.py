"""A job record and its attempts, shared by both stores (gpu_worker.store's SQL table, gpu_worker.redis_store's
Streams): the statuses, a fresh queued job, an attempt's lease token, and the error of a job whose last lease ran out.

A job is a dict: id, kind, params, status (queued / running / done / failed), progress, result, error, worker,
attempts, cancel_requested, client (who submitted it), lease_until, created, started, finished, lease_token (the
current attempt's id, never shown by the API), gpu (the UUID of the GPU whose worker wrote the outcome, or None).
Every value is JSON (never pickle).
"""

from __future__ import annotations

import time
import uuid

STATUSES = ("queued", "running", "done", "failed")
FINAL = ("done", "failed")


def new_job(kind: str, params: dict, client: str | None = None) -> dict:
    """A fresh queued job record."""
    return {"id": uuid.uuid4().hex[:16], "kind": kind, "params": params, "status": "queued", "progress": None,
            "result": None, "error": None, "worker": None, "attempts": 0, "cancel_requested": 0, "client": client,
            "lease_until": None, "created": time.time(), "started": None, "finished": None, "lease_token": None,
            "gpu": None}


def new_token() -> str:
    """A fresh attempt id (lease token)."""
    return uuid.uuid4().hex


def gave_up(worker: str | None, attempts: int, max_attempts: int) -> str:
    """The error of a job whose last lease ran out."""
    return (f"worker {worker} stopped (its lease ran out) during attempt {attempts} of {max_attempts}; gave up")
