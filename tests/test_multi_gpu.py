"""One worker process per GPU, on a CPU host with fake GPUs (LAYOUTLAB_FAKE_GPUS): ``--gpus`` specs and their
refusals, the environment each worker process is handed (read back from /proc), one worker per GPU (a host-wide lock),
N workers leasing from one queue (SQLite, a real PostgreSQL server, a real redis-server) with every job done once, on
one GPU at a time; a GPU that faults stops its worker, which says why; results record their GPU and the history
filters by it; ``layoutlab serve --gpus`` starts the same workers, and they die with it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_worker import telemetry
from gpu_worker.gpus import Gpu, GpuLock, GpuSpecError, GpuWatch, held_by, pin_env, select

ROOT = Path(__file__).resolve().parent.parent
FAKE = [Gpu(i, telemetry.fake_uuid(i), f"Fake GPU {i}", True) for i in range(3)]


def _env(tmp_path, monkeypatch, extra: dict | None = None) -> dict:
    """The environment of the test and of its worker processes: two fake GPUs, a fast heartbeat, a short lease."""
    env = {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_FAKE_GPUS": "2", "LAYOUTLAB_HEARTBEAT_S": "0.2",
           "LAYOUTLAB_LEASE_S": "1.5", "LAYOUTLAB_WORKER_STALE_S": "2", "LAYOUTLAB_EMBEDDED_WORKER": "0",
           "LAYOUTLAB_FAKE_GPU_FAULTS": str(tmp_path / "faults"), **(extra or {})}
    for k in ("LAYOUTLAB_DATABASE_URL", "LAYOUTLAB_REDIS_URL", "LAYOUTLAB_GPU_INDEX", "LAYOUTLAB_GPU_UUID",
              "LAYOUTLAB_GPU_LOCK_DIR", "LAYOUTLAB_XID_BENIGN"):
        monkeypatch.delenv(k, raising=False)
    (tmp_path / "faults").mkdir(exist_ok=True)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {**os.environ, **env, "PYTHONPATH": str(ROOT)}


@pytest.fixture(params=["sql", pytest.param("postgres", marks=pytest.mark.postgres),
                        pytest.param("redis", marks=pytest.mark.redis)])
def mode(request, tmp_path, monkeypatch):
    """_env in each queue mode: SQLite, a fresh PostgreSQL database, a fresh redis-server."""
    extra = {}
    if request.param == "redis":
        extra["LAYOUTLAB_REDIS_URL"] = request.getfixturevalue("redis_url")
    if request.param == "postgres":
        extra["LAYOUTLAB_DATABASE_URL"] = request.getfixturevalue("pg_database")
    return _env(tmp_path, monkeypatch, extra)


@pytest.fixture()
def sql_env(tmp_path, monkeypatch):
    """_env on SQLite."""
    return _env(tmp_path, monkeypatch)


def _cli(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _wait(pred, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _stop(*procs) -> None:
    for p in procs:
        if p is not None and p.poll() is None:
            p.terminate()
    for p in procs:
        if p is not None:
            p.wait(20)


def _pinned_workers(n: int):
    """The live workers once exactly ``n`` of them show n distinct GPUs (a worker record per GPU index)."""
    from gpu_worker import service

    def ready():
        live = [w for w in service.live_workers() if (w.get("device") or {}).get("uuid")]
        return live if len({w["device"]["index"] for w in live}) == n == len(live) else None
    return ready


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (no process, or a zombie not yet reaped by its parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


# ------------------------------------------------------------------------------------------- specs, pinning, locks
def test_select_reads_all_indices_and_uuids():
    assert select(None, FAKE) == select("all", FAKE) == select(" ALL ", FAKE) == FAKE
    assert select("2,0", FAKE) == [FAKE[2], FAKE[0]]
    assert select(f" 1 , {FAKE[0].uuid.upper()}", FAKE) == [FAKE[1], FAKE[0]]


@pytest.mark.parametrize("spec,needle", [("", "empty entry"), ("0,", "empty entry"), ("0,0", "twice"),
                                         (f"1,{FAKE[1].uuid}", "twice"), ("x", "neither a GPU index"),
                                         ("-1", "neither a GPU index"), ("3", "no GPU 3 on this host; GPUs here: 0"),
                                         ("GPU-nope", "no GPU GPU-nope")])
def test_select_refuses_bad_specs(spec, needle):
    with pytest.raises(GpuSpecError, match=needle):
        select(spec, FAKE)
    with pytest.raises(GpuSpecError, match="no GPU"):
        select("all", [])


def test_pin_env_hands_each_worker_its_gpu_alone():
    base = {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0,1,2", "LAYOUTLAB_GPU_INDEX": "2", "CUDA_DEVICE_ORDER": "X"}
    env = pin_env(FAKE[1], base, supervisor_pid=4242)
    assert env == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": FAKE[1].uuid, "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                   "LAYOUTLAB_GPU_INDEX": "1", "LAYOUTLAB_GPU_UUID": FAKE[1].uuid, "LAYOUTLAB_SUPERVISOR_PID": "4242"}
    assert base["CUDA_VISIBLE_DEVICES"] == "0,1,2"  # the caller's environment is left alone


def test_fake_gpus_are_listed_and_a_pinned_process_reads_its_own(monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_FAKE_GPUS", "3")
    assert [(g["index"], g["uuid"]) for g in telemetry.list_gpus()] == [(g.index, g.uuid) for g in FAKE]
    for k, v in pin_env(FAKE[2], {}).items():
        monkeypatch.setenv(k, v)
    info = telemetry.device_info()
    assert (info["index"], info["uuid"], info["fake"], info["available"]) == (2, FAKE[2].uuid, True, True)
    assert info["sm_clock_mhz"] is None and telemetry.snapshot()["fake"] is True  # no made-up clocks
    assert telemetry.device_info(5)["available"] is False and "does not exist" in telemetry.device_info(5)["reason"]
    for bad in ("x", "65", "-1"):
        monkeypatch.setenv("LAYOUTLAB_FAKE_GPUS", bad)
        with pytest.raises(ValueError, match="LAYOUTLAB_FAKE_GPUS"):
            telemetry.fake_count()
        from gpu_worker import multi

        with pytest.raises(GpuSpecError, match="LAYOUTLAB_FAKE_GPUS"):
            multi.run("0")


def test_a_gpu_lock_is_held_by_one_worker_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_GPU_LOCK_DIR", raising=False)
    a, b = GpuLock(FAKE[0]), GpuLock(FAKE[0])
    assert held_by(FAKE[0]) is None and a.acquire()
    assert not b.acquire() and b.holder() == os.getpid() == held_by(FAKE[0])
    assert held_by(FAKE[1]) is None  # another GPU is free
    a.release()
    assert b.acquire() and held_by(FAKE[0]) == os.getpid()
    b.release()
    assert held_by(FAKE[0]) is None


def test_the_watch_says_why_a_gpu_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_FAKE_GPU_FAULTS", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_XID_BENIGN", raising=False)
    watch = GpuWatch(FAKE[1])
    assert watch.check() is None
    (tmp_path / "1.xid").write_text("13")  # a kernel's own fault: recorded, the GPU stays in service
    assert watch.check() is None and watch.report()["xids"][0]["xid"] == 13 and watch.report()["xids"][0]["benign"]
    (tmp_path / "1.xid").write_text("79")
    reason = watch.check()
    assert "GPU 1" in reason and FAKE[1].uuid in reason and "Xid 79" in reason and "takes no more jobs" in reason
    (tmp_path / "1.xid").unlink()
    assert watch.check() == reason  # sticky
    monkeypatch.setenv("LAYOUTLAB_XID_BENIGN", "")
    strict = GpuWatch(FAKE[0])
    (tmp_path / "0.xid").write_text("13")
    assert "Xid 13" in strict.check()
    (tmp_path / "2.lost").write_text("")
    assert "is gone" in GpuWatch(FAKE[2]).check()


# --------------------------------------------------------------------------------------------- one attempt, in-process
def test_an_attempt_records_its_gpu_and_a_fake_gpu_runs_no_gpu_job(sql_env):
    from gpu_worker.service import execute_job
    from gpu_worker.store import get_store

    store = get_store()
    device = {**telemetry._fake_info(1), "available": True}
    store.create("compile_only", {"nvcc": "skip", "tag": "one"})
    done = execute_job(store.lease("w1", 30, 3), "w1", device, store, heartbeat_s=0.05)
    assert done["status"] == "done" and done["gpu"] == FAKE[1].uuid
    assert {k: done["result"]["gpu"][k] for k in ("index", "uuid", "fake")} == {"index": 1, "uuid": FAKE[1].uuid,
                                                                                   "fake": True}
    assert set(telemetry.SNAPSHOT_KEYS) <= set(done["result"]["gpu"]) and "start" in done["result"]["gpu"]
    store.create("smem", {})  # past submit()'s check (a fake GPU is no GPU): the worker refuses it itself
    refused = execute_job(store.lease("w1", 30, 3), "w1", device, store, heartbeat_s=0.05)
    assert refused["status"] == "failed" and "fake GPU" in refused["error"] and "smem" in refused["error"]
    assert refused["gpu"] == FAKE[1].uuid and refused["result"] is None


def test_an_attempt_whose_gpu_faults_writes_no_outcome_and_the_job_moves_on(sql_env):
    from gpu_worker.service import execute_job
    from gpu_worker.store import get_store

    store = get_store()
    job = store.create("compile_only", {"nvcc": "skip", "hold_ms": 300, "tag": "moved"})
    first = store.lease("w0", 0.5, 3)
    left = execute_job(first, "w0", telemetry._fake_info(0), store, heartbeat_s=0.05,
                       fault=lambda: "GPU 0 (x) reported Xid 79 at 12:00:00: this worker takes no more jobs")
    assert left["status"] == "running" and left["result"] is None and left["gpu"] is None
    assert "Xid 79" in left["progress"]["stage"] and "waits for another worker" in left["progress"]["stage"]
    time.sleep(0.6)  # its lease runs out: the next worker takes the job
    second = store.lease("w1", 30, 3)
    assert second["id"] == job["id"] and second["attempts"] == 2
    done = execute_job(second, "w1", telemetry._fake_info(1), store, heartbeat_s=0.05)
    assert done["status"] == "done" and done["worker"] == "w1" and done["gpu"] == FAKE[1].uuid


# ---------------------------------------------------------------------------------------------- worker processes
def test_two_pinned_workers_share_out_twenty_jobs_each_done_once(mode):
    """The acceptance check: `layoutlab worker --gpus 0,1` with two fake GPUs; /api/bench/device lists two workers
    with distinct GPU indices; 20 compile_only jobs each done exactly once, spread over both, one at a time a GPU."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from gpu_worker import service
    from gpu_worker.store import get_store

    store = get_store()
    if hasattr(store, "conn"):
        from tests.test_queue_stress import _log_outcomes

        _log_outcomes(store)
    sup = _cli(mode, "worker", "--gpus", "0,1")
    try:
        workers = _wait(_pinned_workers(2), 40, "two pinned workers")
        by_index = {w["device"]["index"]: w for w in workers}
        for index, w in by_index.items():  # what each worker process was handed, read back from the kernel
            env = _environ(w["pid"])
            assert env["CUDA_VISIBLE_DEVICES"] == env["LAYOUTLAB_GPU_UUID"] == FAKE[index].uuid == w["device"]["uuid"]
            assert env["LAYOUTLAB_GPU_INDEX"] == str(index) and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
            assert _ppid(w["pid"]) == sup.pid != w["pid"] and w["id"].endswith(f"-gpu{index}")
        second = subprocess.run([sys.executable, "-m", "app.cli", "worker", "--gpus", "1"], cwd=ROOT, env=mode,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and "GPU 1" in second.stderr and "already has a worker" in second.stderr
        with pytest.raises(service.NoWorker, match="fake"):
            service.submit("smem", {})
        ids = [service.submit("compile_only", {"nvcc": "skip", "tag": str(i)})["id"] for i in range(20)]
        long = service.submit("compile_only", {"nvcc": "skip", "hold_ms": 1500, "tag": "long"})  # (a job to see held)
        from app.services.bench import device_status

        holding = _wait(lambda: next((w for w in device_status()["workers"] if w["job"]), None), 30, "a held job")
        assert holding["busy"] and holding["job"]["kind"] == "compile_only" and holding["job"]["status"] == "running"
        assert holding["job"]["id"] in {*ids, long["id"]} and store.get(holding["job"]["id"])["worker"] == holding["id"]
        _wait(lambda: store.queue_depth() == 0, 90, "the queue to drain")
        with TestClient(create_app()) as c:
            d = c.get("/api/bench/device").json()
            listed = {w["gpu_index"]: w for w in d["workers"]}
            assert len(d["workers"]) == 2 and set(listed) == {0, 1} and d["available"] is True
            assert listed[1]["uuid"] == FAKE[1].uuid and listed[1]["gpu"]["name"] == "Fake GPU 1 (LAYOUTLAB_FAKE_GPUS)"
            assert listed[0]["job"] is None and "pid" not in listed[0] and "host" not in listed[0]
            on0 = c.get("/api/bench/jobs", params={"gpu": FAKE[0].uuid, "limit": 50}).json()
            assert c.get("/api/bench/jobs", params={"gpu": "../etc"}).status_code == 422
            page = c.get("/lab", params={"gpu": FAKE[0].uuid})
            assert page.status_code == 200 and f'value="{FAKE[0].uuid}" selected' in page.text
            nope = c.get("/lab", params={"gpu": "nope"})  # a value the page does not take: named inline
            assert nope.status_code == 200 and '<li data-field="gpu">' in nope.text
            polled = c.get("/lab/history", headers={"HX-Request": "true",
                                                    "HX-Current-URL": f"http://x/lab?gpu={FAKE[1].uuid}"})
            assert polled.status_code == 200
    finally:
        _stop(sup)
    assert store.get(long["id"])["status"] == "done"
    jobs = [store.get(i) for i in ids]
    assert all(j["status"] == "done" and j["attempts"] == 1 for j in jobs), [(j["status"], j["error"]) for j in jobs]
    for j in jobs:
        w = by_index[j["result"]["gpu"]["index"]]
        assert j["gpu"] == w["device"]["uuid"] and j["worker"] == j["result"]["worker"] == w["id"]
    per_gpu = {u: sorted((j["started"], j["finished"]) for j in jobs if j["gpu"] == u) for u in (g.uuid for g in FAKE)}
    assert all(per_gpu[g.uuid] for g in FAKE[:2]), {u: len(v) for u, v in per_gpu.items()}  # spread over both
    for spans in per_gpu.values():  # one job at a time on a GPU
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert sorted(j["id"] for j in on0) == sorted(j["id"] for j in [*jobs, store.get(long["id"])]
                                                  if j["gpu"] == FAKE[0].uuid)
    if hasattr(store, "conn"):  # the database's own record of outcome writes: one per job
        logged = [r[0] for r in store.conn.execute("SELECT id FROM outcome_log").fetchall()]
        assert sorted(logged) == sorted([*ids, long["id"]])
    assert all(_gone(w["pid"]) for w in workers)


def test_a_gpu_that_faults_stops_its_worker_which_says_why(sql_env, tmp_path):
    from app.services.bench import device_status
    from gpu_worker import service
    from gpu_worker.store import get_store

    store = get_store()
    sup = _cli(sql_env, "worker")  # default: every GPU
    try:
        workers = {w["device"]["index"]: w for w in _wait(_pinned_workers(2), 40, "two pinned workers")}
        os.kill(workers[1]["pid"], 9)  # a worker process that dies is restarted, pinned to the same GPU
        again = _wait(lambda: next((w for w in service.live_workers() if (w.get("device") or {}).get("index") == 1
                                    and w["pid"] != workers[1]["pid"]), None), 30, "GPU 1's worker restarted")
        assert _environ(again["pid"])["CUDA_VISIBLE_DEVICES"] == FAKE[1].uuid
        (tmp_path / "faults" / "1.xid").write_text("79")

        def view(index):
            return next((w for w in device_status()["workers"] if w["gpu_index"] == index), None)
        stopped = _wait(lambda: (v := view(1)) and not v["available"] and v, 20, "GPU 1's worker to stop")
        assert "Xid 79" in stopped["reason"] and "takes no more jobs" in stopped["reason"]
        assert stopped["gpu"]["fault"] == stopped["reason"] and stopped["gpu"]["xids"][0]["xid"] == 79
        (tmp_path / "faults" / "0.xid").write_text("13")  # benign: GPU 0 stays in service
        ids = [service.submit("compile_only", {"nvcc": "skip", "hold_ms": 50})["id"] for _ in range(4)]
        _wait(lambda: store.queue_depth() == 0, 40, "the jobs to end")
        assert {store.get(i)["gpu"] for i in ids} == {FAKE[0].uuid}
        assert view(0)["available"] and view(0)["gpu"]["xids"][0] == {**view(0)["gpu"]["xids"][0], "xid": 13,
                                                                      "benign": True}
        (tmp_path / "faults" / "0.lost").write_text("")
        gone = _wait(lambda: (v := view(0)) and not v["available"] and v, 20, "GPU 0's worker to stop")
        assert "GPU 0" in gone["reason"] and "is gone" in gone["reason"]
        late = service.submit("compile_only", {"nvcc": "skip"})
        time.sleep(1.0)
        assert store.get(late["id"])["status"] == "queued"  # no worker takes a job any more
        assert len(device_status()["workers"]) == 2  # both still there, each saying why it stopped
    finally:
        _stop(sup)


def test_serve_starts_pinned_workers_that_die_with_it_and_come_back_with_it(sql_env):
    from gpu_worker import service
    from tests.conftest import free_port

    env = {k: v for k, v in sql_env.items() if k != "LAYOUTLAB_EMBEDDED_WORKER"}
    plain = _cli(env, "serve", "--port", str(port := free_port()))
    serve = None
    try:
        _wait(lambda: _healthy(port), 40, "the plain server")
        time.sleep(1.0)
        assert service.live_workers() == []  # fake GPUs are used only when --gpus names them
        _stop(plain)
        serve = _cli(env, "serve", "--port", str(free_port()), "--gpus", "0,1")
        workers = _wait(_pinned_workers(2), 40, "the embedded workers")
        app_pid = _ppid(workers[0]["pid"])  # the app process: a child of gunicorn's master (app.serve)
        assert _ppid(app_pid) == serve.pid and all(_ppid(w["pid"]) == app_pid for w in workers)
        # the app process dies: its workers die with it, the master starts a new one, and it new workers
        os.kill(app_pid, 9)
        _wait(lambda: all(_gone(w["pid"]) for w in workers), 10, "the workers to die with the app process")
        old = {w["pid"] for w in workers}
        workers = _wait(lambda: (ws := _pinned_workers(2)()) and not old & {w["pid"] for w in ws} and ws, 60,
                        "the workers of the restarted app process")
        assert all(_ppid(_ppid(w["pid"])) == serve.pid for w in workers)
        serve.send_signal(9)
        serve.wait(10)
        _wait(lambda: all(_gone(w["pid"]) for w in workers), 10, "the workers to die with the server")
        bad = subprocess.run([sys.executable, "-m", "app.cli", "serve", "--gpus", "0,7"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "no GPU 7" in bad.stderr
    finally:
        _stop(plain, serve)


def _healthy(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False
