"""The benchmark queue (huey): ``SqliteHuey`` under data_dir() by default, ``RedisHuey`` when LAYOUTLAB_REDIS_URL is
set so that several GPU hosts can consume one site's jobs. A queued message carries only the job id; the job itself
lives in gpu_worker.store."""

from __future__ import annotations

import threading

from huey import Huey, RedisHuey, SqliteHuey

QUEUE_NAME = "layoutlab-bench"
_lock = threading.Lock()
_hueys: dict[tuple, tuple[Huey, object]] = {}


def _make(key: tuple) -> tuple[Huey, object]:
    if key[0] == "redis":
        huey: Huey = RedisHuey(QUEUE_NAME, url=key[1], results=False, read_timeout=1)
    else:
        huey = SqliteHuey(QUEUE_NAME, filename=key[1], results=False)

    @huey.task(name="execute_job")
    def execute_job(job_id: str) -> None:  # the worker loop runs jobs itself; this names the message
        from gpu_worker.service import execute_job as run

        run(job_id)

    return huey, execute_job


def get_queue() -> tuple[Huey, object]:
    """(huey instance, the execute_job task) for the current configuration; one per configuration and process."""
    from app.config import data_dir, redis_url

    url = redis_url()
    key = ("redis", url) if url else ("sqlite", str(data_dir() / "queue.sqlite3"))
    with _lock:
        if key not in _hueys:
            _hueys[key] = _make(key)
        return _hueys[key]


def enqueue(job_id: str) -> None:
    """Put one message for ``job_id`` on the queue. Post-condition: a worker's next dequeue can return it."""
    _, task = get_queue()
    task(job_id)


def dequeue_job_id() -> str | None:
    """Take the next message off the queue and return its job id (None when the queue is empty)."""
    huey, _ = get_queue()
    task = huey.dequeue()
    if task is None:
        return None
    return str(task.args[0]) if task.args else None


def pending_count() -> int:
    """Messages waiting in the queue."""
    huey, _ = get_queue()
    return huey.pending_count()
