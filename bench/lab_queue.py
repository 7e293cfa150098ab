"""The lab queue's cost per poll as finished jobs pile up: an empty poll (a worker asking for work), a lease of one
waiting job, and the newest page of the listing, with 0, 3,000 and 11,000 finished jobs, in both modes (the SQL table
through SQLite, and Redis Streams on a real redis-server started here when it is installed).

    python bench/lab_queue.py [--sizes 0,3000,11000] [--polls 200]

Prints a table and writes bench/results/lab_queue.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _fill(store, n: int) -> None:
    """``n`` finished jobs, as the lab leaves them."""
    from gpu_worker.store import COLUMNS, SqlStore, new_job

    if isinstance(store, SqlStore):
        rows = []
        for _ in range(n):
            job = {**new_job("compile_only", {"nvcc": "skip"}), "status": "done", "result": {"ok": True},
                   "finished": time.time()}
            rows.append([store._value(c, job.get(c)) for c in COLUMNS])
        with store.conn:
            store.conn.executemany(f"INSERT INTO bench_jobs ({', '.join(COLUMNS)}) VALUES "
                                   f"({', '.join('?' * len(COLUMNS))})", rows)
        return
    for _ in range(n):
        job = store.create("compile_only", {"nvcc": "skip"})
        got = store.lease("filler", 30, 3, block_ms=None)
        store.finish(got["id"], got["lease_token"], status="done", result={"ok": True}, finished=time.time())
        assert got["id"] == job["id"]


def measure(mode: str, sizes: list[int], polls: int) -> list[dict]:
    from gpu_worker import store as job_store

    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["LAYOUTLAB_DATA"] = tmp
            server = None
            if mode == "redis":
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                                          stdout=subprocess.DEVNULL)
                os.environ["LAYOUTLAB_REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
                time.sleep(0.5)
            else:
                os.environ.pop("LAYOUTLAB_REDIS_URL", None)
            try:
                store = job_store.get_store()
                _fill(store, n)
                while job_store.sync_history(1000):  # the history catches up once, as the app's archiver does
                    pass
                kw = {"block_ms": None} if mode == "redis" else {}
                empty = _ms(lambda: store.lease("w", 30, 3, **kw), polls)  # noqa: B023

                def one() -> None:
                    store.create("compile_only", {})  # noqa: B023
                    job = store.lease("w", 30, 3, **kw)  # noqa: B023
                    store.finish(job["id"], job["lease_token"], status="done", finished=time.time())  # noqa: B023

                cycle = _ms(one, max(20, polls // 10))
                listing = _ms(lambda: job_store.history(30), polls)
                rows.append({"mode": mode, "finished_jobs": n, "empty_poll_ms": round(empty, 3),
                             "submit_lease_finish_ms": round(cycle, 3), "list_newest_30_ms": round(listing, 3)})
            finally:
                job_store._stores.clear()
                if server:
                    server.terminate()
                    server.wait(10)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="0,3000,11000")
    ap.add_argument("--polls", type=int, default=200)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    modes = ["sql"] + (["redis"] if shutil.which("redis-server") else [])
    rows = [r for m in modes for r in measure(m, sizes, args.polls)]
    print(f"{'mode':6} {'finished':>9} {'empty poll ms':>14} {'submit+lease+finish ms':>23} {'list 30 ms':>11}")
    for r in rows:
        print(f"{r['mode']:6} {r['finished_jobs']:>9} {r['empty_poll_ms']:>14.3f} "
              f"{r['submit_lease_finish_ms']:>23.3f} {r['list_newest_30_ms']:>11.3f}")
    out = ROOT / "bench" / "results" / "lab_queue.json"
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
                               "cpus": os.cpu_count(), "command": "python bench/lab_queue.py " + " ".join(sys.argv[1:]),
                               "rows": rows}, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
