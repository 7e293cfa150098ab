"""One owner per outcome, in both queue modes (the SQL table, and Redis Streams on a real redis-server): every write
of an attempt (renew, progress, finish) is keyed on the attempt's lease token, so a stale attempt (its job finished,
or taken over, even by the same worker) changes nothing; each attempt's lease heartbeat (gpu_worker.lease) sets only
its own ``lost`` flag; a job ends "cancelled by user" only when a user cancelled it."""

from __future__ import annotations

import threading
import time

import pytest


@pytest.fixture(params=["sql", pytest.param("redis", marks=pytest.mark.redis)])
def store(request, tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    if request.param == "redis":
        monkeypatch.setenv("LAYOUTLAB_REDIS_URL", request.getfixturevalue("redis_url"))
    from gpu_worker.store import get_store

    return get_store()


def _wait(pred, timeout: float = 10.0) -> None:
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


def test_a_stale_token_changes_nothing_even_for_the_same_worker(store):
    job = store.create("compile_only", {"nvcc": "skip"})
    first = store.lease("w", 0.05, 3)
    time.sleep(0.1)  # its lease runs out; the same worker id takes the job again (a restarted worker, say)
    second = store.lease("w", 0.05, 3)  # (Redis takes an entry over once it sat idle for the taker's lease)
    assert first["id"] == second["id"] == job["id"] and second["attempts"] == 2
    assert store.renew(job["id"], second["lease_token"], 30)
    assert first["lease_token"] and second["lease_token"] != first["lease_token"]
    assert not store.renew(job["id"], first["lease_token"], 30)
    assert not store.progress(job["id"], first["lease_token"], {"stage": "stale"})
    assert not store.finish(job["id"], first["lease_token"], status="failed", error="stale")
    assert store.get(job["id"])["status"] == "running" and store.get(job["id"])["progress"] is None
    assert store.progress(job["id"], second["lease_token"], {"stage": "building"})
    assert store.finish(job["id"], second["lease_token"], status="done", result={"ok": 1}, finished=time.time())
    assert not store.finish(job["id"], second["lease_token"], status="failed", error="twice")  # written once
    assert not store.renew(job["id"], second["lease_token"], 30)
    done = store.get(job["id"])
    assert done["status"] == "done" and done["result"] == {"ok": 1} and done["error"] is None
    assert done["lease_until"] is None and done["progress"] == {"stage": "building"}


def test_finish_refuses_bad_input(store):
    store.create("compile_only", {})
    job = store.lease("w", 30, 3)
    with pytest.raises(ValueError, match="status done or failed"):
        store.finish(job["id"], job["lease_token"], status="running")
    assert not store.finish(job["id"], None, status="done")  # no token owns nothing
    assert not store.finish("no-such-job", job["lease_token"], status="done")
    assert store.get(job["id"])["status"] == "running"


def test_a_late_renew_of_a_finished_attempt_touches_only_that_attempt(store):
    """The interleaving that failed jobs as "cancelled by user": the heartbeat's renew of job A is refused (A has
    just finished) while the worker already runs job B. Only A's lease object learns it; B runs to done."""
    from gpu_worker.lease import AttemptLease
    from gpu_worker.service import execute_job

    a = store.create("compile_only", {"nvcc": "skip", "tag": "a"})
    b = store.create("compile_only", {"nvcc": "skip", "tag": "b"})
    job_a = store.lease("w", 30, 3)
    lease_a = AttemptLease(store, job_a, 30, 0.01).start()
    assert store.finish(a["id"], job_a["lease_token"], status="done", result={}, finished=time.time())
    job_b = store.lease("w", 30, 3)
    assert job_b["id"] == b["id"]
    _wait(lease_a.lost.is_set)  # A's next renew is refused, after B was leased
    lease_a.stop()
    done = execute_job(job_b, "w", store=store, heartbeat_s=0.01)
    assert done["status"] == "done" and done["result"]["tag"] == "b" and done["error"] is None
    assert store.get(a["id"])["status"] == "done"


def test_an_attempt_taken_over_writes_no_outcome(store):
    from gpu_worker.service import execute_job

    job = store.create("compile_only", {"nvcc": "skip", "hold_ms": 400})
    slow = store.lease("w1", 0.1, 3)
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(execute_job(slow, "w1", store=store, heartbeat_s=30)))
    t.start()  # its heartbeat never beats in time: the lease runs out while it holds the job
    time.sleep(0.2)
    fast = store.lease("w2", 0.1, 3)
    assert fast["id"] == job["id"] and fast["attempts"] == 2 and store.renew(job["id"], fast["lease_token"], 30)
    assert store.finish(job["id"], fast["lease_token"], status="done", result={"by": "w2"}, finished=time.time())
    t.join(10)
    assert out["status"] == "done" and out["result"] == {"by": "w2"} and out["worker"] == "w2"


def test_a_lost_lease_stops_the_attempt_without_calling_it_cancelled(store):
    from gpu_worker.service import execute_job

    job = store.create("compile_only", {"nvcc": "skip", "hold_ms": 800})  # past the 0.5 s between cancel checks
    held = store.lease("w1", 30, 3)
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(execute_job(held, "w1", store=store, heartbeat_s=0.02)))
    t.start()
    time.sleep(0.1)
    store.cancel(job["id"])  # a user cancels the running job: asked to stop, and it does
    t.join(10)
    assert out["status"] == "failed" and out["error"] == "cancelled by user"
    other = store.create("compile_only", {"nvcc": "skip", "hold_ms": 400})
    held = store.lease("w1", 0.05, 3)
    t = threading.Thread(target=lambda: out.update(execute_job(held, "w1", store=store, heartbeat_s=0.15)))
    t.start()  # the first renew comes after the lease ran out and w2 took the job: the attempt stops
    time.sleep(0.08)
    taken = store.lease("w2", 0.05, 3)
    assert taken["id"] == other["id"] and store.renew(other["id"], taken["lease_token"], 30)
    t.join(10)
    assert store.get(other["id"])["status"] == "running" and store.get(other["id"])["error"] is None
    assert store.finish(other["id"], taken["lease_token"], status="done", result={}, finished=time.time())


def test_an_attempt_lease_needs_a_leased_job(store):
    from gpu_worker.lease import AttemptLease

    with pytest.raises(ValueError, match="lease_token"):
        AttemptLease(store, store.create("compile_only", {}), 30, 1)


def _old_table(conn) -> None:
    """A job table from before attempt tokens and GPUs (no lease_token or gpu column), holding one queued job."""
    conn.execute("CREATE TABLE bench_jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, params TEXT, status TEXT NOT NULL, "
                 "progress TEXT, result TEXT, error TEXT, worker TEXT, attempts INTEGER DEFAULT 0, cancel_requested "
                 "INTEGER DEFAULT 0, client TEXT, lease_until REAL, created REAL, started REAL, finished REAL)")
    conn.execute("INSERT INTO bench_jobs (id, kind, params, status, created) VALUES ('old', 'compile_only', '{}', "
                 "'queued', 1.0)")


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_table_from_before_tokens_gains_the_column(backend, request, tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    if backend == "postgres":
        import psycopg

        url = request.getfixturevalue("pg_database")
        monkeypatch.setenv("LAYOUTLAB_DATABASE_URL", url)
        with psycopg.connect(url, autocommit=True) as c:
            _old_table(c)
    else:
        with sqlite3.connect(tmp_path / "bench.sqlite3") as c:
            _old_table(c)
    from gpu_worker.store import SqlStore

    store = SqlStore()
    job = store.lease("w", 30, 3)
    assert job["id"] == "old" and job["lease_token"]
    assert store.finish("old", job["lease_token"], status="done", result={}, finished=time.time(), gpu="GPU-1")
    SqlStore()  # opening it again changes nothing
    assert store.get("old")["status"] == "done" and store.get("old")["gpu"] == "GPU-1"  # (the gpu column too)
    assert [j["id"] for j in store.list_jobs(gpu="GPU-1")] == ["old"] and store.list_jobs(gpu="GPU-2") == []
