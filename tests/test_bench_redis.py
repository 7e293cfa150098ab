"""Redis mode with a real redis-server and two `layoutlab worker` processes: compile-only jobs spread over both,
and none is lost when one worker is killed in the middle of a job."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.redis,
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def redis_env(tmp_path, monkeypatch):
    port = _free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                             "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    env = {"LAYOUTLAB_REDIS_URL": url, "LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_HEARTBEAT_S": "0.3",
           "LAYOUTLAB_WORKER_STALE_S": "2"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    yield {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    proc.terminate()
    proc.wait(10)


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
        pid = int(victim_job["worker"].split(":")[1])
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
