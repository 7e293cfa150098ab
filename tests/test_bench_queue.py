"""The lease queue in every mode (the SQL table on SQLite and on a real PostgreSQL server, and Redis Streams on a real
redis-server): a `layoutlab worker` process (or a `layoutlab serve` with its embedded worker) killed with SIGKILL in
the middle of a job, restarted, finishes the job; leases are renewed while a job runs
and taken over once they run out; a job fails only after MAX_ATTEMPTS; a poll reads only the live jobs; finished jobs
leave Redis after the retention period, their results kept in the history table."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["sql", pytest.param("postgres", marks=pytest.mark.postgres),
                        pytest.param("redis", marks=pytest.mark.redis)])
def mode(request, tmp_path, monkeypatch):
    """The environment of one queue mode; the test process and its worker processes share it."""
    env = {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_HEARTBEAT_S": "0.2", "LAYOUTLAB_LEASE_S": "1.5",
           "LAYOUTLAB_WORKER_STALE_S": "2", "LAYOUTLAB_EMBEDDED_WORKER": "0"}
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    if request.param == "redis":
        env["LAYOUTLAB_REDIS_URL"] = request.getfixturevalue("redis_url")
    if request.param == "postgres":
        env["LAYOUTLAB_DATABASE_URL"] = request.getfixturevalue("pg_database")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {**os.environ, **env, "PYTHONPATH": str(ROOT)}


def _start_worker(env: dict, embedded: bool = False) -> subprocess.Popen:
    """`layoutlab worker`, or (``embedded``) `layoutlab serve` with its in-process worker forced on."""
    if embedded:
        from tests.conftest import free_port

        cmd = ["serve", "--port", str(free_port())]
        env = {**env, "LAYOUTLAB_EMBEDDED_WORKER": "1"}
    else:
        cmd = ["worker"]
    return subprocess.Popen([sys.executable, "-m", "app.cli", *cmd], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _tree(pid: int) -> set[int]:
    """``pid`` and its children."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    return {pid, *map(int, kids)}


def _wait(pred, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("embedded", [False, True], ids=["worker", "embedded"])
def test_killed_worker_restarted_finishes_the_job(mode, embedded):
    from gpu_worker import service
    from gpu_worker.store import get_store

    if embedded and mode.get("LAYOUTLAB_REDIS_URL"):
        pytest.skip("Redis mode runs its workers as `layoutlab worker`, never embedded")
    store = get_store()
    first = _start_worker(mode, embedded)
    second = None
    try:
        # embedded: the worker runs in the app process, a child of `layoutlab serve`'s master (app.serve)
        w1 = _wait(lambda: next((w for w in service.live_workers() if w["pid"] in _tree(first.pid)), None), 30,
                   "worker 1")
        job = service.submit("compile_only", {"nvcc": "skip", "hold_ms": 4000, "tag": "crash"})
        running = _wait(lambda: (j := store.get(job["id"]))["status"] == "running" and j, 20, "the job to start")
        assert running["worker"] == w1["id"] and running["attempts"] == 1
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)  # the whole server dies at once: the master, and the process of the worker
        if w1["pid"] != first.pid:
            os.kill(w1["pid"], signal.SIGKILL)
        first.wait(10)
        time.sleep(2.5)  # the lease (1.5 s) runs out with no worker alive: the job waits, it does not fail
        waiting = store.get(job["id"])
        assert waiting["status"] == "running" and waiting["worker"] == w1["id"], waiting
        from app.services.bench import get_job

        assert "waiting for a worker" in get_job(job["id"])["progress"]["stage"]
        second = _start_worker(mode, embedded)
        done = _wait(lambda: (j := store.get(job["id"]))["status"] in ("done", "failed") and j, 40, "the job to end")
        assert done["status"] == "done", done
        assert done["attempts"] == 2 and done["worker"] != w1["id"]
        assert done["result"]["tag"] == "crash" and done["result"]["worker"] == done["worker"]
        assert store.queue_depth() == 0
        second.terminate()
        second.wait(10)
        if hasattr(store, "r"):  # a clean exit leaves no consumer behind; the killed one is gone once finished
            from gpu_worker.redis_store import GROUP

            left = {c["name"] for c in store.r.xinfo_consumers(store.queue, GROUP)}
            assert done["worker"] not in left and w1["id"] in left
            store.remove_worker(w1["id"])
            assert store.r.xinfo_consumers(store.queue, GROUP) == []
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(10)


def test_lease_is_renewed_while_held_and_taken_over_when_not(mode):
    from gpu_worker.store import get_store

    store = get_store()
    job = store.create("compile_only", {"nvcc": "skip"}, client="c1")
    held = store.lease("a", 1.0, 3)  # leases long against the sleeps, so that a loaded machine cannot let one lapse
    assert held["id"] == job["id"] and held["status"] == "running" and held["client"] == "c1"
    for _ in range(6):  # 1.5 s of renewals: one and a half leases' worth
        time.sleep(0.25)
        assert store.renew(job["id"], held["lease_token"], 1.0)
        assert store.lease("b", 1.0, 3) is None
    time.sleep(1.1)
    taken = store.lease("b", 1.0, 3)
    assert taken["id"] == job["id"] and taken["worker"] == "b" and taken["attempts"] == 2
    assert taken["lease_token"] != held["lease_token"]
    assert not store.renew(job["id"], held["lease_token"], 0.4)  # a lost it
    assert not store.finish(job["id"], held["lease_token"], status="done", result={"by": "a"})
    assert store.finish(job["id"], taken["lease_token"], status="done", result={"by": "b"}, finished=time.time())
    assert store.get(job["id"])["result"] == {"by": "b"} and store.get(job["id"])["lease_until"] is None


def test_attempts_are_bounded_and_cancel_reaches_a_queued_job(mode):
    from gpu_worker.store import get_store

    store = get_store()
    doomed = store.create("compile_only", {})
    for attempt in (1, 2):
        assert store.lease(f"ghost{attempt}", 0.05, 2)["attempts"] == attempt
        time.sleep(0.1)
    queued = store.create("compile_only", {})
    assert store.cancel(queued["id"])["status"] == "failed"
    assert store.lease("w", 0.05, 2) is None  # the doomed job gives up; the cancelled one is never handed out
    failed = store.get(doomed["id"])
    assert failed["status"] == "failed" and "ghost2 stopped" in failed["error"] and "attempt 2 of 2" in failed["error"]
    assert store.get(queued["id"])["error"] == "cancelled by user"
    assert store.queue_depth() == 0
    orphan = store.create("compile_only", {})
    assert store.lease("dies", 1.0, 2)["id"] == orphan["id"]
    assert store.cancel(orphan["id"])["status"] == "running"  # its worker may still be alive: it is asked to stop
    time.sleep(1.1)
    assert store.cancel(orphan["id"])["error"] == "cancelled by user"  # its lease ran out: failed at once
    assert store.queue_depth() == 0 and store.lease("w", 0.05, 2) is None


def test_sql_poll_reads_only_live_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    from gpu_worker.store import PICK, history_store

    store = history_store()
    plan = [str(r[-1]) for r in store.conn.execute(
        f"EXPLAIN QUERY PLAN SELECT id FROM bench_jobs WHERE {PICK} ORDER BY created LIMIT 1", (0,)).fetchall()]
    # the partial index holds only queued and running jobs: finished ones are never read by a poll
    assert plan == ["SCAN bench_jobs USING INDEX bench_jobs_live"], plan


@pytest.mark.redis
def test_redis_listing_is_paged_and_finished_jobs_expire_into_the_history(redis_url, tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.setenv("LAYOUTLAB_REDIS_URL", redis_url)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    from gpu_worker import store as job_store

    live = job_store.get_store()
    ids = [live.create("compile_only", {"tag": str(i)})["id"] for i in range(30)]
    live.r.config_resetstat()
    page = live.list_jobs(5, offset=5)
    assert [j["id"] for j in page] == ids[::-1][5:10]
    assert live.r.info("commandstats")["cmdstat_hgetall"]["calls"] == 5  # one page read, not every job
    job = live.lease("w", 5, 3)
    assert job["id"] == ids[0] and live.finish(job["id"], job["lease_token"], status="done", result={"ok": 1},
                                               finished=time.time())
    assert job_store.history_store().get(job["id"]) is None
    assert live.archive(job_store.history_store(), 100, retention_s=0.0) == 1
    assert live.archive(job_store.history_store(), 100, retention_s=0.0) == 0  # copied once; now gone from Redis
    assert live.get(job["id"]) is None and job["id"] not in {j["id"] for j in live.list_jobs(50)}
    kept = job_store.find_job(job["id"])
    assert kept["status"] == "done" and kept["result"] == {"ok": 1}
    assert live.queue_depth() == 29
