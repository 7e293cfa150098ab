"""Jobs and their queue in Redis, for several hosts: a Redis Stream consumed by one consumer group.

Keys (prefix ``layoutlab:``): ``job:<id>`` a hash per job (every field JSON), ``jobs`` a sorted set of ids by creation
time (for paginated listing), ``queue`` the stream (one entry per live job, holding only its id), ``finished`` the
finished ids not yet copied into the history table, ``expiry`` copied ids by the time they leave Redis, ``workers``
one hash of worker records.

The stream's own semantics are the queue: XREADGROUP delivers a new entry to one worker; the entry stays in the
group's pending list until XACK. A worker's lease is the entry's idle time: its heartbeat renews it (XCLAIM ... JUSTID
resets the idle time), and when a worker dies, XAUTOCLAIM with min-idle-time = the lease hands the entry to the next
worker that asks. Scripts keep each step atomic (take, renew, progress, finish, cancel). Each take gives the
attempt a fresh ``lease_token``; renew, progress and finish act only while that token owns the running job, so a
stale attempt changes nothing. A listing only reads: archiving into the history table is :meth:`RedisStore.archive`,
run by the app's archiver (gpu_worker.archiver).
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis

from gpu_worker.jobs import FINAL, new_job, new_token

P = "layoutlab:"
GROUP = "workers"
INT_FIELDS = ("attempts", "cancel_requested")

_CREATE = """
local eid = redis.call('XADD', KEYS[3], '*', 'job', ARGV[1])
redis.call('HSET', KEYS[1], 'entry', cjson.encode(eid), unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return eid
"""
# KEYS: job, queue, finished. ARGV: entry id, worker (JSON), now, lease_until, max_attempts, group, job id, token
_TAKE = """
local function drop() redis.call('XACK', KEYS[2], ARGV[6], ARGV[1]); redis.call('XDEL', KEYS[2], ARGV[1]) end
local function fail(err)
  redis.call('HSET', KEYS[1], 'status', '"failed"', 'error', cjson.encode(err), 'finished', ARGV[3],
             'lease_until', 'null')
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[7]); drop()
end
if redis.call('EXISTS', KEYS[1]) == 0 then drop(); return 0 end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= '"queued"' and status ~= '"running"' then drop(); return 0 end
if redis.call('HGET', KEYS[1], 'cancel_requested') ~= '0' then fail('cancelled by user'); return 0 end
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts'))
if attempts >= tonumber(ARGV[5]) then
  local w = cjson.decode(redis.call('HGET', KEYS[1], 'worker'))
  if w == cjson.null then w = 'none' end
  fail('worker ' .. w .. ' stopped (its lease ran out) during attempt ' .. attempts .. ' of ' .. ARGV[5] ..
       '; gave up')
  return 0
end
redis.call('HSET', KEYS[1], 'status', '"running"', 'worker', ARGV[2], 'started', ARGV[3], 'lease_until', ARGV[4],
           'entry', cjson.encode(ARGV[1]), 'lease_token', cjson.encode(ARGV[8]))
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return 1
"""
# an attempt's guard: its token (JSON) owns the job hash KEYS[1] and the job runs
_OWNED = """
local function owned(key, token)
  return redis.call('HGET', key, 'lease_token') == token and redis.call('HGET', key, 'status') == '"running"'
end
"""
# KEYS: job, queue. ARGV: group, token (JSON), lease_until
_RENEW = _OWNED + """
if not owned(KEYS[1], ARGV[2]) then return 0 end
local eid = cjson.decode(redis.call('HGET', KEYS[1], 'entry'))
local worker = cjson.decode(redis.call('HGET', KEYS[1], 'worker'))
local p = redis.call('XPENDING', KEYS[2], ARGV[1], eid, eid, 1)
if #p == 0 or p[1][2] ~= worker then return 0 end
redis.call('XCLAIM', KEYS[2], ARGV[1], worker, 0, eid, 'JUSTID')
redis.call('HSET', KEYS[1], 'lease_until', ARGV[3])
return 1
"""
# KEYS: job. ARGV: token (JSON), progress (JSON)
_PROGRESS = _OWNED + """
if not owned(KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
"""
# KEYS: job, queue, finished. ARGV: group, token (JSON), now, job id, field/value pairs...
_FINISH = _OWNED + """
if not owned(KEYS[1], ARGV[2]) then return 0 end
local eid = cjson.decode(redis.call('HGET', KEYS[1], 'entry'))
redis.call('HSET', KEYS[1], 'lease_until', 'null', unpack(ARGV, 5))
redis.call('XACK', KEYS[2], ARGV[1], eid); redis.call('XDEL', KEYS[2], eid)
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return 1
"""
# KEYS: job, queue, finished. ARGV: now, job id, group
_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
local lease = cjson.decode(redis.call('HGET', KEYS[1], 'lease_until') or 'null')
if status == '"queued"' or (status == '"running"' and lease ~= cjson.null and lease < tonumber(ARGV[1])) then
  redis.call('HSET', KEYS[1], 'status', '"failed"', 'cancel_requested', 1, 'error', '"cancelled by user"',
             'finished', ARGV[1], 'lease_until', 'null')
  local eid = cjson.decode(redis.call('HGET', KEYS[1], 'entry'))
  redis.call('XACK', KEYS[2], ARGV[3], eid); redis.call('XDEL', KEYS[2], eid)
  redis.call('ZADD', KEYS[3], ARGV[1], ARGV[2])
elseif status == '"running"' then
  redis.call('HSET', KEYS[1], 'cancel_requested', 1)
end
return 1
"""


#: Seconds a Redis call may wait for its answer: a Redis that stops answering (SIGSTOP, a frozen host) is an outage
#: (503 with Retry-After on the job routes, a retry with back-off in the worker) after this long. Redis answers in
#: well under a millisecond; the longest wait is the 1 s XREADGROUP block of a lease.
SOCKET_TIMEOUT_S = 5


class RedisStore:
    """Jobs, queue and workers in Redis (see the module docstring); shared by every host that points at it."""

    def __init__(self, url: str) -> None:
        # a Redis that stops answering (not only one that refuses) fails a call within SOCKET_TIMEOUT_S instead of
        # hanging it: longer than the 1 s XREADGROUP block of a lease; the caller retries (storage.outage)
        self.r = redis.Redis.from_url(url, decode_responses=True, socket_connect_timeout=SOCKET_TIMEOUT_S,
                                      socket_timeout=SOCKET_TIMEOUT_S, health_check_interval=15)
        self.queue, self.finished, self.expiry = P + "queue", P + "finished", P + "expiry"
        self._scripts = {name: self.r.register_script(src) for name, src in
                         (("create", _CREATE), ("take", _TAKE), ("renew", _RENEW), ("progress", _PROGRESS),
                          ("finish", _FINISH), ("cancel", _CANCEL))}
        self._ensure_group()

    def _ensure_group(self) -> None:
        try:
            self.r.xgroup_create(self.queue, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    @staticmethod
    def _key(job_id: str) -> str:
        return f"{P}job:{job_id}"

    @staticmethod
    def _encode(fields: dict) -> list:
        out: list = []
        for k, v in fields.items():
            out += [k, int(v or 0) if k in INT_FIELDS else json.dumps(v)]
        return out

    @staticmethod
    def _decode(raw: dict) -> dict | None:
        if not raw:
            return None
        raw.pop("entry", None)
        return {k: int(v) if k in INT_FIELDS else json.loads(v) for k, v in raw.items()}

    def create(self, kind: str, params: dict, client: str | None = None) -> dict:
        """Store a queued job and add its stream entry, atomically."""
        job = new_job(kind, params, client)
        self._scripts["create"](keys=[self._key(job["id"]), P + "jobs", self.queue],
                                args=[job["id"], job["created"], *self._encode(job)])
        return job

    def get(self, job_id: str) -> dict | None:
        return self._decode(self.r.hgetall(self._key(job_id)))

    def update(self, job_id: str, **fields: Any) -> None:
        if fields:
            self.r.hset(self._key(job_id), items=self._encode(fields))

    def _next_entry(self, worker_id: str, lease_ms: int, block_ms: int | None) -> tuple[str, str] | None:
        """An entry whose worker's lease ran out (XAUTOCLAIM), else a new one (XREADGROUP, blocking)."""
        try:
            _, claimed, *_ = self.r.xautoclaim(self.queue, GROUP, worker_id, lease_ms, "0-0", count=1)
            entries = [e for e in claimed if e and e[1]]
            if not entries:
                got = self.r.xreadgroup(GROUP, worker_id, {self.queue: ">"}, count=1, block=block_ms)
                entries = [e for _, msgs in got for e in msgs if e and e[1]]
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._ensure_group()
            return None
        return (entries[0][0], entries[0][1]["job"]) if entries else None

    def lease(self, worker_id: str, lease_s: float, max_attempts: int, block_ms: int | None = 1000) -> dict | None:
        """Take the next job (see gpu_worker.store.Store.lease); blocks up to ``block_ms`` for a new one (None: does
        not block)."""
        for _ in range(8):
            entry = self._next_entry(worker_id, int(lease_s * 1000), block_ms)
            if entry is None:
                return None
            eid, job_id = entry
            now = time.time()
            if self._scripts["take"](keys=[self._key(job_id), self.queue, self.finished],
                                     args=[eid, json.dumps(worker_id), now, now + lease_s, max_attempts, GROUP,
                                           job_id, new_token()]):
                return self.get(job_id)
        return None

    def renew(self, job_id: str, token: str, lease_s: float) -> bool:
        """Reset the entry's idle time (XCLAIM ... JUSTID) if the attempt ``token`` still owns the job and its worker
        still holds the entry. Post-condition: True and the lease extended, or False and nothing changed."""
        return bool(self._scripts["renew"](keys=[self._key(job_id), self.queue],
                                           args=[GROUP, json.dumps(token), time.time() + lease_s]))

    def progress(self, job_id: str, token: str, progress: dict) -> bool:
        """Record the progress of the attempt ``token``; False (nothing written) when it no longer owns the job."""
        return bool(self._scripts["progress"](keys=[self._key(job_id)], args=[json.dumps(token), json.dumps(progress)]))

    def finish(self, job_id: str, token: str, **fields: Any) -> bool:
        """Write the outcome of the attempt ``token`` and acknowledge the entry, in one script. Post-condition: True
        and the job is final, or False and nothing changed (final already, or another attempt owns it)."""
        final = {k: v for k, v in fields.items() if k not in ("id", "lease_token", "entry")}
        if final.get("status") not in FINAL:
            raise ValueError(f"finish needs status done or failed, got {final.get('status')!r}")
        return bool(self._scripts["finish"](keys=[self._key(job_id), self.queue, self.finished],
                                            args=[GROUP, json.dumps(token), time.time(), job_id,
                                                  *self._encode(final)]))

    def cancel(self, job_id: str) -> dict | None:
        """As gpu_worker.store.SqlStore.cancel; the stream entry of a job failed at once is acknowledged and
        deleted."""
        if not self.r.exists(self._key(job_id)):
            return None
        self._scripts["cancel"](keys=[self._key(job_id), self.queue, self.finished],
                                args=[time.time(), job_id, GROUP])
        return self.get(job_id)

    def queue_depth(self) -> int:
        """Jobs queued or running: the stream's length (finished and cancelled jobs' entries are deleted)."""
        return int(self.r.xlen(self.queue))

    def list_jobs(self, limit: int = 50, offset: int = 0) -> list[dict]:
        """One page of jobs, newest first. Post-condition: reads only (one ZREVRANGE and ``limit`` hashes, never the
        whole set); an id whose hash is gone is skipped (:meth:`archive` removes such ids)."""
        ids = self.r.zrevrange(P + "jobs", offset, offset + limit - 1)
        pipe = self.r.pipeline(transaction=False)
        for i in ids:
            pipe.hgetall(self._key(i))
        return [j for j in (self._decode(raw) for raw in pipe.execute()) if j]

    def archive(self, dst: Any, limit: int, retention_s: float) -> int:
        """Copy up to ``limit`` finished jobs into ``dst`` (the history table), schedule them to leave Redis after
        ``retention_s``, and delete the jobs whose time has come. Returns how many were copied. Post-condition: a
        job leaves ``finished`` only after its copy is in ``dst`` (one transaction for the batch)."""
        ids = self.r.zrange(self.finished, 0, limit - 1)
        now = time.time()
        if ids:
            pipe = self.r.pipeline(transaction=False)
            for job_id in ids:
                pipe.hgetall(self._key(job_id))
            dst.upsert_many([j for j in (self._decode(raw) for raw in pipe.execute()) if j])
            pipe = self.r.pipeline()
            pipe.zrem(self.finished, *ids)
            pipe.zadd(self.expiry, {i: now + retention_s for i in ids})
            pipe.execute()
        due = self.r.zrangebyscore(self.expiry, "-inf", now, start=0, num=500)
        if due:
            pipe = self.r.pipeline()
            pipe.delete(*[self._key(i) for i in due])
            pipe.zrem(P + "jobs", *due)
            pipe.zrem(self.expiry, *due)
            pipe.execute()
        return len(ids)

    def heartbeat(self, worker: dict) -> None:
        self.r.hset(f"{P}workers", worker["id"], json.dumps({**worker, "last_seen": time.time()}))

    def workers(self) -> list[dict]:
        return [json.loads(v) for _, v in sorted(self.r.hgetall(f"{P}workers").items())]

    def remove_worker(self, worker_id: str) -> None:
        """Forget the worker's record, and its consumer in the group when it holds no pending entry (an entry it
        holds stays for XAUTOCLAIM to hand on)."""
        self.r.hdel(f"{P}workers", worker_id)
        try:
            consumers = {c["name"]: c for c in self.r.xinfo_consumers(self.queue, GROUP)}
        except redis.ResponseError:
            return
        if worker_id in consumers and not consumers[worker_id].get("pending"):
            self.r.xgroup_delconsumer(self.queue, GROUP, worker_id)
