"""Faults with real components, against the served app: ``layoutlab serve --no-worker`` (gunicorn) and a
``layoutlab worker`` on a real redis-server (or PostgreSQL with ``--backend postgres``). Jobs are queued, then the
backend is stopped for 4 s while they wait and run, the worker is killed with SIGKILL with a job in flight and
started again, and the app's process is killed with SIGKILL (gunicorn's master starts another). Every job must end
``done``, none lost, none failed; a read during the outage must be a 503 with Retry-After, never a 500.

    python bench/fault_drill.py --jobs 6 [--backend postgres]

Prints what happened and the counts; exit status 1 on any failure."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from bench._server import stop_group
    from tests.conftest import free_port
    from tests.test_worker_outage import PostgresServer, RedisServer

    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--backend", choices=("redis", "postgres"), default="redis")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fault-drill-"))
    if args.backend == "redis":
        server, var = RedisServer(tmp).start(), "LAYOUTLAB_REDIS_URL"
    else:
        server, var = PostgresServer(Path(tempfile.mkdtemp(prefix="fault-drill-pg-"))).start(), "LAYOUTLAB_DATABASE_URL"
    port = free_port()
    env = {**os.environ, "LAYOUTLAB_DATA": str(tmp), var: server.url, "LAYOUTLAB_HEARTBEAT_S": "0.3",
           "LAYOUTLAB_WORKER_STALE_S": "3", "LAYOUTLAB_LEASE_S": "6", "LAYOUTLAB_EMBEDDED_WORKER": "0",
           "LAYOUTLAB_ARCHIVE_S": "0.5", "PYTHONPATH": str(ROOT), "LAYOUTLAB_ALLOWED_HOSTS": "127.0.0.1"}
    logs = {n: open(tmp / f"{n}.log", "wb") for n in ("serve", "worker", "worker2")}
    serve = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--no-worker", "--port", str(port)],
                             cwd=ROOT, env=env, stdout=logs["serve"], stderr=subprocess.STDOUT,
                             start_new_session=True)
    worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=env,
                              stdout=logs["worker"], stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    failures: list[str] = []
    seen: dict[int, int] = {}
    try:
        c = httpx.Client(base_url=base, timeout=20)
        deadline = time.monotonic() + 90
        while True:
            try:
                if c.get("/healthz").status_code == 200 and c.get("/api/bench/device").json().get("workers"):
                    break
            except (httpx.HTTPError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server or worker did not start")
            time.sleep(0.3)
        ids = []
        for i in range(args.jobs):
            r = c.post("/api/bench/jobs", json={"kind": "compile_only",
                                                "params": {"nvcc": "skip", "hold_ms": 1500, "tag": f"j{i}"}})
            if r.status_code != 202:
                failures.append(f"submit {i}: {r.status_code} {r.text[:200]}")
                continue
            ids.append(r.json()["id"])
        print(f"queued {len(ids)} jobs")

        def read(job: str) -> dict | None:
            r = c.get(f"/api/bench/jobs/{job}")
            seen[r.status_code] = seen.get(r.status_code, 0) + 1
            if r.status_code >= 500 and not (r.status_code == 503 and r.headers.get("Retry-After")):
                failures.append(f"read {job}: {r.status_code} {r.text[:200]}")
            return r.json() if r.status_code == 200 else None

        time.sleep(1.0)
        server.stop()  # a 4 s outage with jobs queued and one running
        t = time.monotonic()
        while time.monotonic() - t < 4:
            read(ids[0])
            time.sleep(0.2)
        if worker.poll() is not None:
            failures.append("the worker exited during the outage")
        server.start()
        print("backend back after", round(time.monotonic() - t, 1), "s; worker alive:", worker.poll() is None)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any((read(j) or {}).get("status") == "running" for j in ids):
            time.sleep(0.2)
        os.killpg(worker.pid, signal.SIGKILL)  # a job in flight
        worker.wait(10)
        print("worker killed with SIGKILL")
        app_pids = Path(f"/proc/{serve.pid}/task/{serve.pid}/children").read_text().split()
        for pid in app_pids:
            os.kill(int(pid), signal.SIGKILL)  # the app's process; gunicorn's master starts another
        print("app process killed with SIGKILL:", app_pids)
        worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=env,
                                  stdout=logs["worker2"], stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 150
        final: dict[str, dict] = {}
        while time.monotonic() < deadline and len(final) < len(ids):
            for j in ids:
                if j in final:
                    continue
                try:
                    got = read(j)
                except httpx.HTTPError:
                    got = None
                if got and got["status"] in ("done", "failed", "cancelled"):
                    final[j] = got
            time.sleep(0.5)
        done = sum(1 for j in final.values() if j["status"] == "done")
        lost = [j for j in ids if j not in final]
        bad = [(j["id"], j["status"], j.get("error")) for j in final.values() if j["status"] != "done"]
        attempts = sorted(j.get("attempts", 0) for j in final.values())
        print(f"jobs: {len(ids)} queued, {done} done, {len(lost)} not finished, {len(bad)} not done {bad}; "
              f"attempts {attempts}; job reads by status {dict(sorted(seen.items()))}")
        if lost or bad:
            failures.append(f"lost {lost}, not done {bad}")
    finally:
        for p in (worker, serve):
            stop_group(p)
        server.stop()
    for f in failures:
        print("FAIL", f)
    print(f"failures: {len(failures)} (logs in {tmp})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
