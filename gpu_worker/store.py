"""Job and worker persistence: SQLite (``data_dir()/bench.sqlite3``) by default, Redis when LAYOUTLAB_REDIS_URL is set.

A job is a dict: id, kind, params, status (queued / running / done / failed), progress, result, error, worker,
attempts, cancel_requested, created, started, finished. A worker is a dict: id, host, pid, device, kinds, busy,
last_seen. Both stores keep the same shapes; every value is JSON-serialisable.
"""

from __future__ import annotations

import functools
import json
import threading
import time
import uuid
from typing import Any, Protocol

STATUSES = ("queued", "running", "done", "failed")
JSON_FIELDS = ("params", "progress", "result", "device", "kinds")


class Store(Protocol):
    """What the service and the app need from a job store."""

    def create(self, kind: str, params: dict) -> dict: ...
    def get(self, job_id: str) -> dict | None: ...
    def update(self, job_id: str, **fields: Any) -> None: ...
    def claim(self, job_id: str, worker_id: str) -> bool: ...
    def list_jobs(self, limit: int = 50, status: str | None = None) -> list[dict]: ...
    def heartbeat(self, worker: dict) -> None: ...
    def workers(self) -> list[dict]: ...
    def remove_worker(self, worker_id: str) -> None: ...


def new_job(kind: str, params: dict) -> dict:
    """A fresh queued job record."""
    return {"id": uuid.uuid4().hex[:16], "kind": kind, "params": params, "status": "queued", "progress": None,
            "result": None, "error": None, "worker": None, "attempts": 0, "cancel_requested": 0,
            "created": time.time(), "started": None, "finished": None}


def _locked(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return fn(self, *args, **kwargs)

    return wrapper


class SqliteStore:
    """Jobs and workers in SQLite (WAL) through app.db.connect; safe across processes on one host and across threads
    of one process (one connection behind a lock)."""

    def __init__(self, name: str = "bench") -> None:
        from app.db import connect

        self._lock = threading.RLock()
        self.conn = connect(name)
        with self.conn:
            self.conn.execute("""CREATE TABLE IF NOT EXISTS bench_jobs (
                id TEXT PRIMARY KEY, kind TEXT NOT NULL, params TEXT, status TEXT NOT NULL, progress TEXT,
                result TEXT, error TEXT, worker TEXT, attempts INTEGER DEFAULT 0, cancel_requested INTEGER DEFAULT 0,
                created REAL, started REAL, finished REAL)""")
            self.conn.execute("CREATE INDEX IF NOT EXISTS bench_jobs_created ON bench_jobs(created)")
            self.conn.execute("""CREATE TABLE IF NOT EXISTS bench_workers (
                id TEXT PRIMARY KEY, host TEXT, pid INTEGER, device TEXT, kinds TEXT, busy TEXT, last_seen REAL)""")

    @staticmethod
    def _row(row) -> dict:
        d = dict(row)
        for k in JSON_FIELDS:
            if k in d and d[k] is not None:
                d[k] = json.loads(d[k])
        return d

    @_locked
    def create(self, kind: str, params: dict) -> dict:
        """Insert a queued job. Post-condition: ``get(job["id"])["status"] == "queued"``."""
        job = new_job(kind, params)
        with self.conn:
            self.conn.execute("INSERT INTO bench_jobs (id, kind, params, status, attempts, cancel_requested, created) "
                              "VALUES (?, ?, ?, 'queued', 0, 0, ?)", (job["id"], kind, json.dumps(params),
                                                                       job["created"]))
        return job

    @_locked
    def get(self, job_id: str) -> dict | None:
        row = self.conn.execute("SELECT * FROM bench_jobs WHERE id = ?", (job_id,)).fetchone()
        return self._row(row) if row else None

    @_locked
    def upsert(self, job: dict) -> None:
        """Insert or replace a whole job record (a finished job copied from another store).
        Post-condition: ``get(job["id"])`` equals ``job`` on every column of the table."""
        cols = ("id", "kind", "params", "status", "progress", "result", "error", "worker", "attempts",
                "cancel_requested", "created", "started", "finished")
        vals = [json.dumps(job.get(k)) if k in JSON_FIELDS and job.get(k) is not None else job.get(k) for k in cols]
        with self.conn:
            self.conn.execute(f"INSERT OR REPLACE INTO bench_jobs ({', '.join(cols)}) "
                              f"VALUES ({', '.join('?' * len(cols))})", vals)

    @_locked
    def final_ids(self, ids: list[str]) -> set[str]:
        """The ids among ``ids`` stored here as done or failed."""
        found: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            rows = self.conn.execute(f"SELECT id FROM bench_jobs WHERE status IN ('done', 'failed') AND id IN "
                                     f"({', '.join('?' * len(part))})", part).fetchall()
            found |= {r["id"] for r in rows}
        return found

    @_locked
    def update(self, job_id: str, **fields: Any) -> None:
        if not fields:
            return
        cols = ", ".join(f"{k} = ?" for k in fields)
        vals = [json.dumps(v) if k in JSON_FIELDS and v is not None else v for k, v in fields.items()]
        with self.conn:
            self.conn.execute(f"UPDATE bench_jobs SET {cols} WHERE id = ?", (*vals, job_id))

    @_locked
    def claim(self, job_id: str, worker_id: str) -> bool:
        """Atomically move a queued job to running for ``worker_id``; False when it is not queued any more."""
        with self.conn:
            cur = self.conn.execute(
                "UPDATE bench_jobs SET status = 'running', worker = ?, started = ?, attempts = attempts + 1 "
                "WHERE id = ? AND status = 'queued' AND cancel_requested = 0", (worker_id, time.time(), job_id))
        return cur.rowcount == 1

    @_locked
    def list_jobs(self, limit: int = 50, status: str | None = None) -> list[dict]:
        if status:
            rows = self.conn.execute("SELECT * FROM bench_jobs WHERE status = ? ORDER BY created DESC LIMIT ?",
                                     (status, limit)).fetchall()
        else:
            rows = self.conn.execute("SELECT * FROM bench_jobs ORDER BY created DESC LIMIT ?", (limit,)).fetchall()
        return [self._row(r) for r in rows]

    @_locked
    def heartbeat(self, worker: dict) -> None:
        """Upsert the worker with ``last_seen = now``."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO bench_workers (id, host, pid, device, kinds, busy, last_seen) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET device = excluded.device, "
                "kinds = excluded.kinds, busy = excluded.busy, last_seen = excluded.last_seen",
                (worker["id"], worker.get("host"), worker.get("pid"), json.dumps(worker.get("device")),
                 json.dumps(worker.get("kinds")), worker.get("busy"), time.time()))

    @_locked
    def workers(self) -> list[dict]:
        return [self._row(r) for r in self.conn.execute("SELECT * FROM bench_workers ORDER BY id").fetchall()]

    @_locked
    def remove_worker(self, worker_id: str) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM bench_workers WHERE id = ?", (worker_id,))


class RedisStore:
    """Jobs and workers in Redis: a hash per job (``layoutlab:job:<id>``), a sorted set of job ids by creation time,
    and one hash of workers; shared by every host that points at the same Redis."""

    PREFIX = "layoutlab:"
    _CLAIM = """
    if redis.call('HGET', KEYS[1], 'status') == '"queued"' and redis.call('HGET', KEYS[1], 'cancel_requested') == '0'
    then
      redis.call('HSET', KEYS[1], 'status', '"running"', 'worker', ARGV[1], 'started', ARGV[2])
      redis.call('HINCRBY', KEYS[1], 'attempts', 1)
      return 1
    end
    return 0
    """

    def __init__(self, url: str) -> None:
        import redis

        self.r = redis.Redis.from_url(url, decode_responses=True)
        self._claim = self.r.register_script(self._CLAIM)

    def _key(self, job_id: str) -> str:
        return f"{self.PREFIX}job:{job_id}"

    def _encode(self, fields: dict) -> dict:
        out = {}
        for k, v in fields.items():
            out[k] = v if k in ("attempts", "cancel_requested") else json.dumps(v)
        return out

    def create(self, kind: str, params: dict) -> dict:
        job = new_job(kind, params)
        pipe = self.r.pipeline()
        pipe.hset(self._key(job["id"]), mapping=self._encode(job))
        pipe.zadd(f"{self.PREFIX}jobs", {job["id"]: job["created"]})
        pipe.execute()
        return job

    def get(self, job_id: str) -> dict | None:
        raw = self.r.hgetall(self._key(job_id))
        if not raw:
            return None
        return {k: int(v) if k in ("attempts", "cancel_requested") else json.loads(v) for k, v in raw.items()}

    def update(self, job_id: str, **fields: Any) -> None:
        if fields:
            self.r.hset(self._key(job_id), mapping=self._encode(fields))

    def claim(self, job_id: str, worker_id: str) -> bool:
        return bool(self._claim(keys=[self._key(job_id)], args=[json.dumps(worker_id), json.dumps(time.time())]))

    def recent_ids(self, limit: int) -> list[str]:
        """The ``limit`` newest job ids, newest first."""
        return self.r.zrevrange(f"{self.PREFIX}jobs", 0, limit - 1)

    def list_jobs(self, limit: int = 50, status: str | None = None) -> list[dict]:
        ids = self.r.zrevrange(f"{self.PREFIX}jobs", 0, -1 if status else limit - 1)
        jobs = [j for j in (self.get(i) for i in ids) if j and (not status or j["status"] == status)]
        return jobs[:limit]

    def heartbeat(self, worker: dict) -> None:
        self.r.hset(f"{self.PREFIX}workers", worker["id"], json.dumps({**worker, "last_seen": time.time()}))

    def workers(self) -> list[dict]:
        return [json.loads(v) for _, v in sorted(self.r.hgetall(f"{self.PREFIX}workers").items())]

    def remove_worker(self, worker_id: str) -> None:
        self.r.hdel(f"{self.PREFIX}workers", worker_id)


_stores: dict[tuple, Store] = {}
FINAL = ("done", "failed")


def get_store() -> Store:
    """The store for the current configuration (Redis when LAYOUTLAB_REDIS_URL is set, else SQLite under
    data_dir()); one instance per configuration and process."""
    from app.config import data_dir, redis_url

    url = redis_url()
    key = ("redis", url) if url else ("sqlite", str(data_dir()))
    if key not in _stores:
        _stores[key] = RedisStore(url) if url else SqliteStore()
    return _stores[key]


def history_store() -> SqliteStore:
    """The app's SQLite job table under data_dir(): the job store itself in SQLite mode, the results history in
    Redis mode (finished jobs copied by :func:`sync_history`)."""
    from app.config import data_dir

    key = ("sqlite", str(data_dir()))
    if key not in _stores:
        _stores[key] = SqliteStore()
    return _stores[key]  # type: ignore[return-value]


def sync_history(limit: int = 500) -> int:
    """Redis mode: copy the finished (done or failed) jobs among the ``limit`` newest into the app's SQLite history,
    skipping those already copied as finished. SQLite mode: nothing to do. Returns how many were copied.
    Post-condition: every finished job among the ``limit`` newest in Redis is in ``history_store()``."""
    src = get_store()
    if not isinstance(src, RedisStore):
        return 0
    dst = history_store()
    ids = src.recent_ids(limit)
    have = dst.final_ids(ids)
    copied = 0
    for job_id in ids:
        if job_id in have:
            continue
        job = src.get(job_id)
        if job and job.get("status") in FINAL:
            dst.upsert(job)
            copied += 1
    return copied


def history(limit: int = 50) -> list[dict]:
    """The newest ``limit`` jobs, newest first. Redis mode: after :func:`sync_history`, the live jobs in Redis merged
    with the SQLite history, so finished jobs stay listed after Redis forgets them (Redis's copy wins for an id in
    both)."""
    src = get_store()
    jobs = src.list_jobs(limit)
    if not isinstance(src, RedisStore):
        return jobs
    sync_history(max(limit, 200))
    merged = {j["id"]: j for j in history_store().list_jobs(limit)}
    merged.update({j["id"]: j for j in jobs})
    return sorted(merged.values(), key=lambda j: float(j.get("created") or 0), reverse=True)[:limit]


def find_job(job_id: str) -> dict | None:
    """A job from the live store, or (Redis mode) from the SQLite history when Redis no longer holds it. A finished
    job read from Redis is copied into the history on the way."""
    src = get_store()
    job = src.get(job_id)
    if not isinstance(src, RedisStore):
        return job
    if job is None:
        return history_store().get(job_id)
    if job.get("status") in FINAL and not history_store().final_ids([job_id]):
        history_store().upsert(job)
    return job
