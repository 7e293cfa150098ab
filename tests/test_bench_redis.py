"""Redis mode with a real redis-server and two `layoutlab worker` processes: compile-only jobs spread over both,
and none is lost when one worker is killed in the middle of a job."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.redis,
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")]


@pytest.fixture()
def redis_env(redis_url, tmp_path, monkeypatch):
    """The environment of a worker process in Redis mode on the fresh server of ``redis_url``; set here too."""
    env = {"LAYOUTLAB_REDIS_URL": redis_url, "LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_HEARTBEAT_S": "0.3",
           "LAYOUTLAB_WORKER_STALE_S": "2", "LAYOUTLAB_LEASE_S": "2",
           "LAYOUTLAB_ARCHIVE_S": "0.1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {**os.environ, **env, "PYTHONPATH": str(ROOT)}


def _start_worker(env: dict, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_two_workers_share_jobs_and_survive_a_kill(redis_env):
    from gpu_worker import service
    from gpu_worker.store import get_store

    workers = [_start_worker(redis_env, "a"), _start_worker(redis_env, "b")]
    try:
        deadline = time.time() + 30
        while len(service.live_workers()) < 2 and time.time() < deadline:
            time.sleep(0.1)
        live = service.live_workers()
        assert len(live) == 2, live
        store = get_store()
        ids = [service.submit("compile_only", {"nvcc": "skip", "hold_ms": 600, "tag": str(i)})["id"]
               for i in range(10)]
        # wait until both workers have finished a job and both are busy again, then kill one of them mid-job
        victim_job = None
        deadline = time.time() + 20
        while victim_job is None and time.time() < deadline:
            jobs = [store.get(i) for i in ids]
            running = [j for j in jobs if j["status"] == "running"]
            finished_by = {j["result"]["worker"] for j in jobs if j["status"] == "done"}
            if len(finished_by) == 2 and len({j["worker"] for j in running}) == 2:
                victim_job = running[0]
            time.sleep(0.05)
        assert victim_job, "the two workers never both finished a job and ran another at once"
        pid = next(w["pid"] for w in store.workers() if w["id"] == victim_job["worker"])
        victim = next(w for w in workers if w.pid == pid)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        deadline = time.time() + 60
        while time.time() < deadline:
            jobs = [store.get(i) for i in ids]
            if all(j["status"] in ("done", "failed") for j in jobs):
                break
            time.sleep(0.2)
        jobs = [store.get(i) for i in ids]
        assert [j["status"] for j in jobs] == ["done"] * len(ids), [(j["id"], j["status"], j["error"]) for j in jobs]
        assert {j["tag"] for j in (job["result"] for job in jobs)} == {str(i) for i in range(10)}
        done_by = {j["result"]["worker"] for j in jobs}
        assert len(done_by) == 2, done_by  # jobs spread over both workers
        retried = store.get(victim_job["id"])
        assert retried["attempts"] == 2 and retried["result"]["worker"] != victim_job["worker"]
    finally:
        for w in workers:
            if w.poll() is None:
                w.terminate()
                w.wait(10)


def test_finished_jobs_are_copied_into_the_sqlite_history(redis_env):
    import threading

    import redis

    from app.services import bench as S
    from gpu_worker import archiver, service
    from gpu_worker import store as job_store
    from gpu_worker.redis_store import RedisStore

    stop = threading.Event()
    worker = threading.Thread(target=service.run_worker, args=(stop,), kwargs={"worker_id": "hist-worker"},
                              daemon=True)
    worker.start()
    try:
        deadline = time.time() + 20
        while not service.live_workers() and time.time() < deadline:
            time.sleep(0.05)
        ids = [S.submit("compile_only", {"nvcc": "skip", "tag": f"h{i}"})["id"] for i in range(3)]
        live = job_store.get_store()
        assert isinstance(live, RedisStore)
        deadline = time.time() + 30
        while time.time() < deadline and any(live.get(i)["status"] != "done" for i in ids):
            time.sleep(0.05)
        assert [live.get(i)["status"] for i in ids] == ["done"] * 3
        sqlite = job_store.history_store()
        listed = {j["id"]: j for j in S.history(10)}
        assert set(ids) <= set(listed)
        assert all(sqlite.get(i) is None for i in ids)  # a listing copies nothing: it only reads
        stop_archiver = threading.Event()
        archiving = archiver.start(stop_archiver)  # the app's periodic task does, every LAYOUTLAB_ARCHIVE_S
        try:
            deadline = time.time() + 10
            while any(sqlite.get(i) is None for i in ids) and time.time() < deadline:
                time.sleep(0.05)
        finally:
            stop_archiver.set()
            archiving.join(10)
        for i in ids:
            saved = sqlite.get(i)
            assert saved["status"] == "done" and saved["result"] == live.get(i)["result"]
        assert archiver.archive_once() == 0  # already copied: nothing to do
    finally:
        stop.set()
        worker.join(10)
    redis.Redis.from_url(os.environ["LAYOUTLAB_REDIS_URL"]).flushall()  # Redis forgets; the history does not
    after = {j["id"]: j for j in S.history(10)}
    assert set(ids) <= set(after) and {after[i]["result"]["tag"] for i in ids} == {"h0", "h1", "h2"}
    assert S.get_job(ids[0])["status"] == "done"
