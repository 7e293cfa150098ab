"""The learning record across a SIGKILL of the app: one learner answers drills from several threads against a
``layoutlab serve --no-worker`` while the app's process is killed with SIGKILL (gunicorn's master starts another).
Every answer the server acknowledged (200) must be in the record, and the record may hold at most the answers whose
reply was lost in the kill besides: ``acked <= attempts <= acked + lost``.

    python bench/learning_kill.py --answers 120 --seed 17220

Prints the counts; exit status 1 when the record is not exact."""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from bench._server import stop_group
    from tests.conftest import free_port

    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=120)
    ap.add_argument("--seed", type=int, default=17220)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="learning-kill-"))
    port = free_port()
    env = {**os.environ, "LAYOUTLAB_DATA": str(tmp), "LAYOUTLAB_EMBEDDED_WORKER": "0", "PYTHONPATH": str(ROOT),
           "LAYOUTLAB_ALLOWED_HOSTS": "127.0.0.1"}
    with open(tmp / "serve.log", "wb") as log:
        serve = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--no-worker", "--port", str(port)],
                                 cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        c = httpx.Client(base_url=base, timeout=30)
        deadline = time.monotonic() + 120
        while True:
            try:
                if c.get("/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server did not start")
            time.sleep(0.3)
        c.post("/api/drills/profile", json={"name": f"k{args.seed}"})  # the learner exists from here
        cookies = dict(c.cookies)
        drills = []
        for _ in range(args.answers):
            d = c.get("/api/drills/next", params={"kind": "layout_stats", "seed": rng.randrange(1 << 30)}).json()
            drills.append(d)
        before = c.get("/api/drills/progress").json()["attempts"]
        acked, lost, other = [], [], []
        lock = threading.Lock()

        def answer(chunk: list[dict]) -> None:
            with httpx.Client(base_url=base, timeout=30, cookies=cookies) as mine:
                for d in chunk:
                    try:
                        body = {"answer": "0 0 0 0", "served": d["served"]}  # size 0: always wrong, readable
                        r = mine.post(f"/api/drills/{d['id']}/answer", json=body)
                        with lock:
                            (acked if r.status_code == 200 else other).append((d["id"], r.status_code))
                    except httpx.HTTPError as exc:
                        with lock:
                            lost.append((d["id"], type(exc).__name__))

        threads = [threading.Thread(target=answer, args=(drills[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        kids = Path(f"/proc/{serve.pid}/task/{serve.pid}/children").read_text().split()
        for pid in kids:
            os.kill(int(pid), signal.SIGKILL)
        print("app process killed with SIGKILL:", kids, "after", len(acked), "acknowledged answers")
        for t in threads:
            t.join()
        deadline = time.monotonic() + 120
        while True:
            try:
                after = c.get("/api/drills/progress").json()["attempts"] - before
                break
            except (httpx.HTTPError, ValueError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        codes: dict[int, int] = {}
        for _, code in other:
            codes[code] = codes.get(code, 0) + 1
        ok = len(acked) <= after <= len(acked) + len(lost) + sum(v for k, v in codes.items() if k >= 500)
        print(f"answers sent {len(drills)}: acknowledged {len(acked)}, reply lost {len(lost)}, other {codes}; "
              f"attempts recorded {after}; exact: {ok}")
        return 0 if ok and not any(k >= 500 and k != 503 for k in codes) else 1
    finally:
        stop_group(serve)


if __name__ == "__main__":
    sys.exit(main())
