"""Jobs, their queue, and workers: a SQL table (SQLite under data_dir(), or PostgreSQL with LAYOUTLAB_DATABASE_URL) by
default, Redis Streams (gpu_worker.redis_store) when LAYOUTLAB_REDIS_URL is set.

A job is the dict of gpu_worker.jobs (one module for both stores: gpu_worker.redis_store imports it, never this one).
A worker is a dict: id, host, pid, device, kinds, busy, last_seen. Every value is JSON (never pickle).

The queue's semantics, the same in both stores: :meth:`lease` hands a worker the oldest job that is queued or whose
lease ran out (its worker died), counting the attempt and giving it a fresh ``lease_token``. Every later write of
that attempt is keyed on its token: :meth:`renew` extends the lease, :meth:`progress` records progress, and
:meth:`finish` writes the outcome, in one statement, only while the token still owns the running job. So an attempt's
outcome is written once, by the attempt that owns the lease, and a stale attempt (its lease taken over, or its job
finished) can change nothing. A job whose lease ran out after ``max_attempts`` attempts fails with the reason.
Delivery is at least once; no poll reads more than the live jobs.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from typing import Any, Protocol

from gpu_worker.jobs import FINAL, STATUSES, gave_up, new_job, new_token
from gpu_worker.quota import QUOTA_SCHEMA, Quota

__all__ = ["FINAL", "STATUSES", "SqlStore", "Store", "find_job", "gave_up", "get_store", "history", "history_store",
           "new_job", "new_token", "sync_history"]

JSON_FIELDS = ("params", "progress", "result", "device", "kinds")
COLUMNS = ("id", "kind", "params", "status", "progress", "result", "error", "worker", "attempts", "cancel_requested",
           "client", "lease_until", "created", "started", "finished", "lease_token", "gpu")
#: Seconds a finished job stays in Redis after its copy reached the history table.
RETENTION_S = float(os.environ.get("LAYOUTLAB_JOB_RETENTION_S", str(7 * 86_400)))


class Store(Protocol):
    """What the service and the app need from a job store."""

    def create(self, kind: str, params: dict, client: str | None = None) -> dict: ...
    def get(self, job_id: str) -> dict | None: ...
    def update(self, job_id: str, **fields: Any) -> None: ...
    def lease(self, worker_id: str, lease_s: float, max_attempts: int) -> dict | None: ...
    def renew(self, job_id: str, token: str, lease_s: float) -> bool: ...
    def progress(self, job_id: str, token: str, progress: dict) -> bool: ...
    def finish(self, job_id: str, token: str, **fields: Any) -> bool: ...
    def cancel(self, job_id: str) -> dict | None: ...
    def queue_depth(self) -> int: ...
    def list_jobs(self, limit: int = 50, offset: int = 0) -> list[dict]: ...
    def heartbeat(self, worker: dict) -> None: ...
    def workers(self) -> list[dict]: ...
    def remove_worker(self, worker_id: str) -> None: ...


def _locked(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return fn(self, *args, **kwargs)

    return wrapper


LIVE = "status IN ('queued', 'running')"
#: A write of one attempt ({set}: its assignments): it changes the job only while the attempt's token owns it running.
OWNED = "UPDATE bench_jobs SET {set} WHERE id = ? AND lease_token = ? AND status = 'running'"
#: The jobs a lease may take (its one parameter: now): queued, or running with the lease run out.
PICK = f"{LIVE} AND cancel_requested = 0 AND (status = 'queued' OR lease_until < ?)"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS bench_jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, params TEXT, status TEXT NOT NULL, progress TEXT, result TEXT, error TEXT,
  worker TEXT, attempts INTEGER DEFAULT 0, cancel_requested INTEGER DEFAULT 0, client TEXT, lease_until REAL,
  created REAL, started REAL, finished REAL, lease_token TEXT, gpu TEXT);
CREATE INDEX IF NOT EXISTS bench_jobs_created ON bench_jobs (created);
CREATE INDEX IF NOT EXISTS bench_jobs_live ON bench_jobs (created) WHERE {LIVE};
CREATE TABLE IF NOT EXISTS bench_workers (
  id TEXT PRIMARY KEY, host TEXT, pid INTEGER, device TEXT, kinds TEXT, busy TEXT, last_seen REAL);
"""
#: The class's tables (app.services.lab_class): which drills learner and class a lab client belongs to. Created with
#: the job table, when the store opens at start-up: a volume that fills up later still answers their reads.
PEOPLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS lab_people (client TEXT PRIMARY KEY, learner TEXT, class_code TEXT, seen REAL NOT NULL);
CREATE INDEX IF NOT EXISTS lab_people_class ON lab_people (class_code);
CREATE INDEX IF NOT EXISTS lab_people_learner ON lab_people (learner);
CREATE TABLE IF NOT EXISTS lab_class_learners (
  learner TEXT PRIMARY KEY, class_code TEXT NOT NULL, joined REAL NOT NULL);
"""


class SqlStore(Quota):
    """Jobs, queue and workers in one SQL table set through storage.db (SQLite in WAL mode, or PostgreSQL): one
    connection per process behind a lock. The queue is the ``bench_jobs_live`` partial index: a poll reads only
    queued and running jobs."""

    def __init__(self, name: str = "bench") -> None:
        from storage.db import connect

        self._lock = threading.RLock()
        self.conn = connect(name)
        if getattr(self.conn, "backend", "sqlite") == "sqlite":
            have = {r[1] for r in self.conn.execute("PRAGMA table_info(bench_jobs)").fetchall()}
            with self.conn:  # files from before the lease queue: add its columns first
                for col, kind in (("client", "TEXT"), ("lease_until", "REAL"), ("lease_token", "TEXT"),
                                  ("gpu", "TEXT")):
                    if have and col not in have:
                        self.conn.execute(f"ALTER TABLE bench_jobs ADD COLUMN {col} {kind}")
        self.conn.executescript(_SCHEMA)
        self.conn.executescript(QUOTA_SCHEMA)
        self.conn.executescript(PEOPLE_SCHEMA)
        if getattr(self.conn, "backend", "sqlite") == "postgres":
            have = {r[0] for r in self.conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'bench_jobs' AND "
                "table_schema = current_schema()").fetchall()}
            for col in ("lease_token", "gpu"):  # a database from before attempt tokens, or before GPUs
                if col not in have:
                    with self.conn:
                        self.conn.execute(f"ALTER TABLE bench_jobs ADD COLUMN IF NOT EXISTS {col} TEXT")
        with self.conn:
            self.conn.execute("CREATE INDEX IF NOT EXISTS bench_jobs_gpu ON bench_jobs (gpu, created)")

    @staticmethod
    def _row(row) -> dict:
        d = dict(row)
        for k in JSON_FIELDS:
            if k in d and d[k] is not None:
                d[k] = json.loads(d[k])
        return d

    @staticmethod
    def _value(k: str, v: Any) -> Any:
        return json.dumps(v) if k in JSON_FIELDS and v is not None else v

    @_locked
    def create(self, kind: str, params: dict, client: str | None = None) -> dict:
        """Insert a queued job. Post-condition: ``get(job["id"])["status"] == "queued"`` and a lease can take it."""
        job = new_job(kind, params, client)
        self.upsert(job)
        return job

    @_locked
    def get(self, job_id: str) -> dict | None:
        row = self.conn.execute("SELECT * FROM bench_jobs WHERE id = ?", (job_id,)).fetchone()
        return self._row(row) if row else None

    def upsert(self, job: dict) -> None:
        """Insert or overwrite a whole job record. Post-condition: ``get(job["id"])`` equals ``job`` on every column
        of the table."""
        self.upsert_many([job])

    @_locked
    def upsert_many(self, jobs: list[dict]) -> None:
        """:meth:`upsert` for each job (finished jobs copied from Redis into the history), in one transaction."""
        sets = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])
        sql = (f"INSERT INTO bench_jobs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
               f" ON CONFLICT (id) DO UPDATE SET {sets}")
        with self.conn:
            for job in jobs:
                self.conn.execute(sql, [self._value(c, job.get(c)) for c in COLUMNS])

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
        cols = ", ".join(f"{k} = ?" for k in fields if k in COLUMNS)
        with self.conn:
            self.conn.execute(f"UPDATE bench_jobs SET {cols} WHERE id = ?",
                              (*[self._value(k, v) for k, v in fields.items() if k in COLUMNS], job_id))

    @_locked
    def lease(self, worker_id: str, lease_s: float, max_attempts: int) -> dict | None:
        """Take the oldest job that is queued, or running with its lease run out, for ``lease_s`` seconds; counts the
        attempt. Jobs whose lease ran out after ``max_attempts`` attempts (or that were cancelled) fail first.
        Post-condition: the returned job is running for ``worker_id`` under a fresh ``lease_token`` (every earlier
        attempt's token is void); None when nothing is waiting."""
        now = time.time()
        with self.conn:
            stale = self.conn.execute(f"SELECT id, worker, attempts, cancel_requested FROM bench_jobs WHERE {LIVE} AND "
                                      "status = 'running' AND lease_until < ? AND (attempts >= ? OR "
                                      "cancel_requested = 1)", (now, max_attempts)).fetchall()
            for r in stale:
                error = "cancelled by user" if r["cancel_requested"] else gave_up(r["worker"], r["attempts"],
                                                                                  max_attempts)
                self.conn.execute("UPDATE bench_jobs SET status = 'failed', error = ?, finished = ?, lease_until = NULL"
                                  " WHERE id = ? AND status = 'running' AND lease_until < ?",
                                  (error, now, r["id"], now))
            rows = self.conn.execute(
                f"UPDATE bench_jobs SET status = 'running', worker = ?, started = ?, lease_until = ?, lease_token = ?, "
                f"attempts = attempts + 1 WHERE id = (SELECT id FROM bench_jobs WHERE {PICK} ORDER BY created LIMIT 1)"
                f" AND {PICK} RETURNING *", (worker_id, now, now + lease_s, new_token(), now, now)).fetchall()
        return self._row(rows[0]) if rows else None

    @_locked
    def renew(self, job_id: str, token: str, lease_s: float) -> bool:
        """Extend the lease of the attempt ``token`` to now + ``lease_s``. Post-condition: True and the lease extended,
        or False and nothing changed (the job is final, or another attempt owns it)."""
        with self.conn:
            cur = self.conn.execute(OWNED.replace("{set}", "lease_until = ?"), (time.time() + lease_s, job_id, token))
        return cur.rowcount == 1

    @_locked
    def progress(self, job_id: str, token: str, progress: dict) -> bool:
        """Record the progress of the attempt ``token``; False (nothing written) when it no longer owns the job."""
        with self.conn:
            cur = self.conn.execute(OWNED.replace("{set}", "progress = ?"), (json.dumps(progress), job_id, token))
        return cur.rowcount == 1

    @_locked
    def finish(self, job_id: str, token: str, **fields: Any) -> bool:
        """Write the outcome (status done/failed, result, error, ...) of the attempt ``token``, in one statement.
        Post-condition: True and the job is final with these fields, or False and nothing changed (the job was final
        already, or another attempt owns it); so a job's outcome is written at most once."""
        final = {k: v for k, v in fields.items() if k in COLUMNS and k not in ("id", "lease_token")}
        if final.get("status") not in FINAL:
            raise ValueError(f"finish needs status done or failed, got {final.get('status')!r}")
        sets = ", ".join(f"{k} = ?" for k in final)
        with self.conn:
            cur = self.conn.execute(OWNED.replace("{set}", f"{sets}, lease_until = NULL"),
                                    (*[self._value(k, v) for k, v in final.items()], job_id, token))
        return cur.rowcount == 1

    @_locked
    def cancel(self, job_id: str) -> dict | None:
        """A queued job, or a running one whose lease ran out (its worker died), fails at once with "cancelled by
        user"; a running one gets cancel_requested (its worker stops at its next check); a finished one is
        unchanged. Returns the job, or None when unknown."""
        now = time.time()
        with self.conn:
            self.conn.execute("UPDATE bench_jobs SET status = 'failed', cancel_requested = 1, error = "
                              "'cancelled by user', finished = ?, lease_until = NULL WHERE id = ? AND "
                              "(status = 'queued' OR (status = 'running' AND lease_until < ?))", (now, job_id, now))
            self.conn.execute("UPDATE bench_jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running'",
                              (job_id,))
        return self.get(job_id)

    @_locked
    def queue_depth(self) -> int:
        """Jobs queued or running."""
        return int(self.conn.execute(f"SELECT COUNT(*) FROM bench_jobs WHERE {LIVE}").fetchone()[0])

    @_locked
    def list_jobs(self, limit: int = 50, offset: int = 0, gpu: str | None = None) -> list[dict]:
        """One page of jobs, newest first; with ``gpu``, only the jobs whose outcome that GPU (its UUID) wrote."""
        where, args = ("WHERE gpu = ? ", (gpu,)) if gpu else ("", ())
        rows = self.conn.execute(f"SELECT * FROM bench_jobs {where}ORDER BY created DESC LIMIT ? OFFSET ?",
                                 (*args, limit, offset)).fetchall()
        return [self._row(r) for r in rows]

    @_locked
    def heartbeat(self, worker: dict) -> None:
        """Upsert the worker with ``last_seen = now``."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO bench_workers (id, host, pid, device, kinds, busy, last_seen) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET device = excluded.device, "
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


_stores: dict[tuple, Any] = {}
_stores_lock = threading.Lock()


def history_store() -> SqlStore:
    """The app's SQL job table: the job store itself without Redis, the results history in Redis mode."""
    from storage.db import cache_key

    key = ("sql", cache_key("bench"))
    with _stores_lock:
        if key not in _stores:
            _stores[key] = SqlStore()
        return _stores[key]


def get_store() -> Store:
    """The store for the current configuration (Redis when LAYOUTLAB_REDIS_URL is set, else the SQL store); one
    instance per configuration and process."""
    from storage.config import redis_url

    url = redis_url()
    if not url:
        return history_store()
    from gpu_worker.redis_store import RedisStore

    key = ("redis", url)
    with _stores_lock:
        if key not in _stores:
            _stores[key] = RedisStore(url)
        return _stores[key]


def sync_history(limit: int = 500) -> int:
    """Redis mode: copy up to ``limit`` newly finished jobs into the history table, schedule them to expire from
    Redis after RETENTION_S, and delete those whose time has come. SQL mode: nothing to do (the job table is the
    history). Returns how many were copied. Post-condition: no job leaves Redis before its copy is in the history.
    Called by the app's archiver (gpu_worker.archiver), never by a listing."""
    src = get_store()
    if not hasattr(src, "archive"):
        return 0
    return src.archive(history_store(), limit, RETENTION_S)


def history(limit: int = 50, gpu: str | None = None) -> list[dict]:
    """The newest ``limit`` jobs, newest first; with ``gpu`` (a GPU's UUID), only the jobs that GPU ran. Redis mode:
    the newest page in Redis (filtered) merged with the history table, so finished jobs stay listed after Redis
    forgets them (Redis's copy wins). Post-condition: reads only (at most ``limit`` jobs from each store); nothing is
    written to either."""
    src = get_store()
    if src is history_store():
        return src.list_jobs(limit, gpu=gpu)
    jobs = [j for j in src.list_jobs(limit) if not gpu or j.get("gpu") == gpu]
    merged = {j["id"]: j for j in history_store().list_jobs(limit, gpu=gpu)}
    merged.update({j["id"]: j for j in jobs})
    return sorted(merged.values(), key=lambda j: float(j.get("created") or 0), reverse=True)[:limit]


def find_job(job_id: str) -> dict | None:
    """A job from the live store, or (Redis mode) from the history table once Redis no longer holds it."""
    src = get_store()
    job = src.get(job_id)
    if job is None and src is not history_store():
        return history_store().get(job_id)
    return job
