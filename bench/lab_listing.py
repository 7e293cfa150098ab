"""Server CPU of one job listing (GET /api/bench/jobs?limit=200) in Redis mode with thousands of finished jobs not
yet archived into the history table, as a worker leaves them. A real redis-server and a real `layoutlab serve`
(no worker, archiver off) are started here; the server's CPU is read from /proc/<pid>/stat around the calls, Redis's
from INFO cpu, and Redis's writes from INFO persistence (rdb_changes_since_last_save).

    python bench/lab_listing.py [--jobs 5200] [--calls 20] [--tree PATH --label before]

``--tree`` serves from another source tree (e.g. ``git archive <commit> | tar -x -C /tmp/old``) to measure an
earlier version; the jobs are always written by this tree's queue scripts. Also measured (this tree, in-process):
the archiver's CPU per 1,000 jobs copied, the work that moved out of the listing. Prints a table and writes
bench/results/lab_listing.json (one row per label; a new run of a label replaces its row).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "results" / "lab_listing.json"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(pred, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while True:
        try:
            if pred():
                return
        except Exception:
            pass
        if time.time() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.1)


def fill(store, n: int) -> list[str]:
    """``n`` jobs created, taken and finished through the queue's scripts (pipelined), none archived."""
    from gpu_worker.redis_store import GROUP
    from gpu_worker.store import new_job, new_token

    jobs = [new_job("compile_only", {"nvcc": "skip", "tag": str(i)}) for i in range(n)]
    pipe = store.r.pipeline(transaction=False)
    for job in jobs:
        store._scripts["create"](keys=[store._key(job["id"]), "layoutlab:jobs", store.queue],
                                 args=[job["id"], job["created"], *store._encode(job)], client=pipe)
    pipe.execute()
    entries = [e for _, msgs in store.r.xreadgroup(GROUP, "filler", {store.queue: ">"}, count=n) for e in msgs]
    now = time.time()
    for (eid, _), job in zip(entries, jobs, strict=True):
        job["lease_token"] = new_token()
        store._scripts["take"](keys=[store._key(job["id"]), store.queue, store.finished],
                               args=[eid, '"filler"', now, now + 30, 3, GROUP, job["id"], job["lease_token"]],
                               client=pipe)
    pipe.execute()
    for i, job in enumerate(jobs):
        store._scripts["finish"](keys=[store._key(job["id"]), store.queue, store.finished],
                                 args=[GROUP, json.dumps(job["lease_token"]), now, job["id"],
                                       *store._encode({"status": "done", "result": {"n": i}, "finished": now})],
                                 client=pipe)
    pipe.execute()
    return [j["id"] for j in jobs]


def _cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (`layoutlab serve`: gunicorn's master and its app processes)."""
    try:
        kids = [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        kids = []
    total = 0
    for p in (pid, *kids):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def measure(jobs: int, calls: int, tree: Path) -> dict:
    import httpx
    import redis

    from gpu_worker import archiver
    from gpu_worker import store as job_store

    with tempfile.TemporaryDirectory() as tmp:
        rport, port = _port(), _port()
        rsrv = subprocess.Popen(["redis-server", "--port", str(rport), "--save", "", "--appendonly", "no", "--bind",
                                 "127.0.0.1"], stdout=subprocess.DEVNULL)
        url = f"redis://127.0.0.1:{rport}/0"
        env = {**os.environ, "LAYOUTLAB_REDIS_URL": url, "LAYOUTLAB_DATA": tmp, "LAYOUTLAB_ARCHIVE_S": "0",
               "LAYOUTLAB_EMBEDDED_WORKER": "0", "PYTHONPATH": str(tree)}
        env.pop("LAYOUTLAB_DATABASE_URL", None)
        server = None
        try:
            r = redis.Redis.from_url(url)
            _wait(r.ping, 10, "redis-server")
            os.environ.update(LAYOUTLAB_REDIS_URL=url, LAYOUTLAB_DATA=tmp)
            os.environ.pop("LAYOUTLAB_DATABASE_URL", None)
            fill(job_store.get_store(), jobs)
            server = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--no-worker", "--port", str(port)],
                                      cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(timeout=60) as c:
                _wait(lambda: c.get(f"{base}/healthz").status_code == 200, 60, "layoutlab serve")
                c.get(f"{base}/api/bench/jobs", params={"limit": 1})  # the route's first call (imports, caches)
                cpu0, rcpu0 = _cpu_s(server.pid), r.info("cpu")
                changes0 = r.info("persistence")["rdb_changes_since_last_save"]
                t0 = time.perf_counter()
                for _ in range(calls):
                    page = c.get(f"{base}/api/bench/jobs", params={"limit": 200})
                    assert page.status_code == 200 and len(page.json()) == 200, page.text[:200]
                wall = (time.perf_counter() - t0) / calls
                cpu, rcpu = _cpu_s(server.pid) - cpu0, r.info("cpu")
                writes = r.info("persistence")["rdb_changes_since_last_save"] - changes0
            left = r.zcard("layoutlab:finished")
            redis_cpu = sum(rcpu[k] - rcpu0[k] for k in ("used_cpu_user", "used_cpu_sys"))
            t_cpu = time.process_time()
            copied = archiver.archive_once(most=jobs)
            archive_cpu = time.process_time() - t_cpu
        finally:
            job_store._stores.clear()
            for p in (server, rsrv):
                if p is not None:
                    p.terminate()
                    p.wait(20)
    return {"finished_jobs": jobs, "calls": calls, "server_cpu_ms_per_call": round(cpu / calls * 1000, 2),
            "redis_cpu_ms_per_call": round(redis_cpu / calls * 1000, 2), "wall_ms_per_call": round(wall * 1000, 2),
            "redis_writes_per_call": round(writes / calls, 1), "finished_left_unarchived": left,
            "archiver_copied": copied,
            "archiver_cpu_ms_per_1000_jobs": round(archive_cpu / max(copied, 1) * 1e6, 1) if copied else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=5200)
    ap.add_argument("--calls", type=int, default=20, help="listings measured (the old code archived 200 per call)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="source tree to serve from (default: this one)")
    ap.add_argument("--label", default="after")
    args = ap.parse_args()
    if args.jobs < 1 or args.calls < 1:
        ap.error("--jobs and --calls must be at least 1")
    row = {"label": args.label, "tree": "this" if args.tree.resolve() == ROOT else str(args.tree),
           **measure(args.jobs, args.calls, args.tree.resolve())}
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    rows = [r for r in old.get("rows", []) if r["label"] != args.label] + [row]
    print(f"{'label':8} {'finished':>9} {'server CPU ms':>14} {'redis CPU ms':>13} {'wall ms':>8} {'writes':>7} "
          f"{'unarchived after':>17} {'archiver ms/1000':>17}")
    for r in rows:
        print(f"{r['label']:8} {r['finished_jobs']:>9} {r['server_cpu_ms_per_call']:>14.2f} "
              f"{r['redis_cpu_ms_per_call']:>13.2f} {r['wall_ms_per_call']:>8.2f} {r['redis_writes_per_call']:>7.1f} "
              f"{r['finished_left_unarchived']:>17} {r['archiver_cpu_ms_per_1000_jobs'] or '-':>17}")
    OUT.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
                               "cpus": os.cpu_count(), "what": "GET /api/bench/jobs?limit=200, per call",
                               "command": "python bench/lab_listing.py [--tree T --label L]", "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
