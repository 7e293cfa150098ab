"""The worker rides out its backend: a real redis-server or PostgreSQL server is stopped in the middle of a job and
started again on the same port. The `layoutlab worker` process lives on, the job's outcome (due during the outage)
is written once the backend is back, a job submitted afterwards is done, and during the outage the job routes
answer 503 with Retry-After, never 500. A worker stopped with SIGTERM says why it stopped."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import _pg_bin, free_port

ROOT = Path(__file__).resolve().parent.parent
HOLD_MS = 2500


class RedisServer:
    """redis-server on a fixed port, its data kept in ``folder`` (append-only file, synced on every write), so that a
    restart finds the jobs again."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        import redis

        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                                      str(self.folder), "--appendonly", "yes", "--appendfsync", "always", "--save",
                                      ""], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        for _ in range(200):
            try:
                client.ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class PostgresServer:
    """A PostgreSQL server on a fixed port over one data folder, stopped and started again by the test."""

    def __init__(self, folder: Path) -> None:
        import pwd

        initdb, self.postgres = _pg_bin("initdb"), _pg_bin("postgres")
        if not initdb or not self.postgres:
            pytest.skip("PostgreSQL server binaries (initdb, postgres) not installed")
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            self.prefix = [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]
            os.chown(folder, user.pw_uid, user.pw_gid)
        self.folder, self.data, self.port = folder, folder / "data", free_port()
        subprocess.run([*self.prefix, initdb, "-D", str(self.data), "-U", "layoutlab", "--auth=trust", "-E", "UTF8",
                        "--no-sync"], check=True, capture_output=True)
        self.url = f"postgresql://layoutlab@127.0.0.1:{self.port}/postgres"
        self.proc: subprocess.Popen | None = None

    def start(self) -> PostgresServer:
        import psycopg

        self.proc = subprocess.Popen([*self.prefix, self.postgres, "-D", str(self.data), "-p", str(self.port), "-h",
                                      "127.0.0.1", "-k", str(self.folder), "-c", "fsync=off"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("PostgreSQL did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # fast shutdown: clients are disconnected
            self.proc.wait(30)


@pytest.fixture(params=[pytest.param("redis", marks=pytest.mark.redis),
                        pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request, tmp_path, monkeypatch):
    """A backend server of each kind, started, with the environment of the test process and its worker set."""
    import tempfile

    if request.param == "redis":
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server not installed")
        server = RedisServer(tmp_path).start()
        var = "LAYOUTLAB_REDIS_URL"
    else:
        pytest.importorskip("psycopg")
        # not under pytest's basetemp: the server's user must reach it
        server = PostgresServer(Path(tempfile.mkdtemp(prefix="layoutlab-pg-outage-"))).start()
        var = "LAYOUTLAB_DATABASE_URL"
    env = {"LAYOUTLAB_DATA": str(tmp_path), var: server.url, "LAYOUTLAB_HEARTBEAT_S": "0.3",
           "LAYOUTLAB_WORKER_STALE_S": "3", "LAYOUTLAB_LEASE_S": "30", "LAYOUTLAB_EMBEDDED_WORKER": "0",
           "LAYOUTLAB_ARCHIVE_S": "0.5"}
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    yield server, {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    server.stop()
    if request.param == "postgres":
        shutil.rmtree(server.folder, ignore_errors=True)


def _wait(pred, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            value = pred()
        except Exception:  # the backend is down, or just back
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_the_worker_rides_out_a_backend_restart(backend, tmp_path):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from gpu_worker import service

    server, env = backend
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
    try:
        with TestClient(create_app(), raise_server_exceptions=False) as client:
            _wait(service.live_workers, 30, "the worker")
            params = {"nvcc": "skip", "hold_ms": HOLD_MS, "tag": "across"}
            r = client.post("/api/bench/jobs", json={"kind": "compile_only", "params": params})
            assert r.status_code == 202, r.text
            first = r.json()["id"]
            _wait(lambda: client.get(f"/api/bench/jobs/{first}").json()["status"] == "running", 20, "the job to run")

            server.stop()  # the job's outcome falls due while the backend is down
            start = time.monotonic()
            read = client.get(f"/api/bench/jobs/{first}")
            assert read.status_code == 503 and int(read.headers["Retry-After"]) > 0, (read.status_code, read.text)
            assert "unreachable" in read.json()["detail"]
            page = client.get("/lab", headers={"Accept": "text/html"})
            assert page.status_code == 503 and page.headers.get("Retry-After"), page.status_code
            submit = client.post("/api/bench/jobs", json={"kind": "compile_only", "params": params})
            assert submit.status_code == 503 and submit.headers.get("Retry-After"), submit.status_code
            time.sleep(max(0.0, 4.0 - (time.monotonic() - start)))  # a 4 s outage
            assert worker.poll() is None, log_path.read_text()[-3000:]
            server.start()

            done = _wait(lambda: (j := client.get(f"/api/bench/jobs/{first}").json())["status"] in ("done", "failed")
                         and j, 40, "the first job's outcome")
            assert done["status"] == "done" and done["attempts"] == 1, done  # written once the backend was back
            assert done["result"]["tag"] == "across"
            r = client.post("/api/bench/jobs", json={"kind": "compile_only",
                                                     "params": {"nvcc": "skip", "hold_ms": 10, "tag": "after"}})
            assert r.status_code == 202, r.text
            later = r.json()["id"]
            after = _wait(lambda: (j := client.get(f"/api/bench/jobs/{later}").json())["status"] in ("done", "failed")
                          and j, 30, "the job submitted after the outage")
            assert after["status"] == "done", after
        assert worker.poll() is None
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(20) == 0
        text = log_path.read_text()
        assert "unreachable" in text and "outcome written after" in text, text[-3000:]
        assert "stopped: SIGTERM received" in text, text[-3000:]
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)


@pytest.mark.redis
def test_an_idle_worker_rides_out_a_redis_restart_that_lost_its_data(tmp_path, monkeypatch):
    """Redis comes back empty (no persistence): the consumer group is made again and the next job is done."""
    from gpu_worker import service
    from gpu_worker.store import get_store

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    server = RedisServer(tmp_path / "redis")
    server.folder.mkdir()
    server.start()
    env = {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_REDIS_URL": server.url, "LAYOUTLAB_HEARTBEAT_S": "0.3",
           "LAYOUTLAB_WORKER_STALE_S": "3", "LAYOUTLAB_EMBEDDED_WORKER": "0"}
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT,
                                  env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, stdout=log,
                                  stderr=subprocess.STDOUT)
    try:
        _wait(service.live_workers, 30, "the worker")
        server.stop()
        shutil.rmtree(server.folder)
        server.folder.mkdir()
        time.sleep(4)
        assert worker.poll() is None, log_path.read_text()[-3000:]
        server.start()
        _wait(service.live_workers, 20, "the worker's heartbeat in the new Redis")
        job = service.submit("compile_only", {"nvcc": "skip", "hold_ms": 10, "tag": "fresh"})
        store = get_store()
        done = _wait(lambda: (j := store.get(job["id"]))["status"] in ("done", "failed") and j, 30, "the job")
        assert done["status"] == "done", done
        assert "answers again" in log_path.read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(20)
        server.stop()


def test_the_embedded_worker_thread_is_started_again_after_an_unexpected_error(monkeypatch):
    """`layoutlab serve`'s unpinned worker thread (gpu_worker.service.supervised): a worker that ends by an error that
    is no outage (a bug) is started again; a stop ends the loop."""
    import threading

    from gpu_worker import service

    runs: list[int] = []
    stop = threading.Event()

    def failing_twice(stop_: threading.Event) -> int:
        runs.append(1)
        if len(runs) < 3:
            raise RuntimeError("an unexpected error")
        stop_.set()
        return 0

    monkeypatch.setattr(service, "run_worker", failing_twice)
    service.supervised(stop, restart_s=0.01)
    assert len(runs) == 3 and stop.is_set()


def test_the_worker_rides_out_a_full_data_volume(tmp_path, monkeypatch):
    """The SQLite queue on a real tmpfs filled to its last byte while a job runs: the `layoutlab worker` process
    waits for space as it waits for a backend (it exited with "database or disk is full", and its supervisor started
    it again and again), the job's outcome is written once space is freed, and a job submitted afterwards is done."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from gpu_worker import service
    from tests.test_front_door import _fill, _root_reason, _tmpfs

    if _root_reason() is not None:
        pytest.skip(_root_reason())
    with _tmpfs(tmp_path / "data", "8m") as data:
        env = {"LAYOUTLAB_DATA": str(data), "LAYOUTLAB_HEARTBEAT_S": "0.3", "LAYOUTLAB_WORKER_STALE_S": "3",
               "LAYOUTLAB_LEASE_S": "30", "LAYOUTLAB_EMBEDDED_WORKER": "0"}
        for var in ("LAYOUTLAB_REDIS_URL", "LAYOUTLAB_DATABASE_URL", "LAYOUTLAB_FAKE_GPUS"):
            monkeypatch.delenv(var, raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        log_path = tmp_path / "worker.log"
        with open(log_path, "wb") as log:
            worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, stdout=log,
                                      stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            with TestClient(create_app(), raise_server_exceptions=False) as client:
                _wait(service.live_workers, 30, "the worker")
                params = {"nvcc": "skip", "hold_ms": HOLD_MS, "tag": "full"}
                first = client.post("/api/bench/jobs", json={"kind": "compile_only", "params": params}).json()["id"]
                _wait(lambda: client.get(f"/api/bench/jobs/{first}").json()["status"] == "running", 20, "the job")
                _fill(data)  # the job's outcome and the worker's heartbeats fall due on a full volume
                time.sleep(HOLD_MS / 1000 + 3)
                assert worker.poll() is None, log_path.read_text()[-3000:]
                assert "Traceback" not in log_path.read_text(), log_path.read_text()[-3000:]
                for f in data.glob("filler*"):
                    f.unlink()
                done = _wait(lambda: (j := client.get(f"/api/bench/jobs/{first}").json())["status"]
                             in ("done", "failed") and j, 40, "the first job's outcome")
                assert done["status"] == "done" and done["attempts"] == 1, done
                r = client.post("/api/bench/jobs", json={"kind": "compile_only", "params": {"nvcc": "skip"}})
                assert r.status_code == 202, r.text
                later = r.json()["id"]
                after = _wait(lambda: (j := client.get(f"/api/bench/jobs/{later}").json())["status"]
                              in ("done", "failed") and j, 30, "the job submitted after")
                assert after["status"] == "done", after
            assert worker.poll() is None
            assert "the data volume is full" in log_path.read_text()
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()


@pytest.mark.redis
def test_a_redis_that_stops_answering_is_an_outage_within_the_socket_timeout(tmp_path, monkeypatch):
    """A frozen Redis (SIGSTOP: the port accepts, nothing answers) is a 503 with Retry-After on the job routes within
    ``SOCKET_TIMEOUT_S``, not after a long wait; once it answers again (SIGCONT) the routes answer again."""
    from fastapi.testclient import TestClient

    from app.main import create_app

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    server = RedisServer(tmp_path).start()
    for k, v in {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_REDIS_URL": server.url,
                 "LAYOUTLAB_EMBEDDED_WORKER": "0"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    try:
        with TestClient(create_app(), raise_server_exceptions=False) as client:
            assert client.get("/api/bench/jobs").status_code == 200
            server.proc.send_signal(signal.SIGSTOP)
            try:
                start = time.monotonic()
                r = client.get("/api/bench/jobs")
                took = time.monotonic() - start
                assert r.status_code == 503 and int(r.headers["Retry-After"]) > 0, (r.status_code, r.text[:300])
                assert took < 8, took  # (it waited 15 s before)
            finally:
                server.proc.send_signal(signal.SIGCONT)
            assert _wait(lambda: client.get("/api/bench/jobs").status_code == 200, 20, "the routes again")
    finally:
        server.stop()
