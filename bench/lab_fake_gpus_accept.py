"""The multi-GPU lab's acceptance on a clean data folder, through HTTP only: ``layoutlab worker --gpus 0,1`` with
LAYOUTLAB_FAKE_GPUS=2 on SQLite, 20 compile_only jobs from fresh lab clients (one client may submit 10 a minute),
then /api/bench/device and every job read back. Run from the repository root:
``.venv/bin/python bench/lab_fake_gpus_accept.py [auto|skip|require]`` (nvcc mode; default: the kind's own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]  # bench/algebra.py


def main() -> int:
    data = tempfile.mkdtemp(prefix="lab-fake-gpus-")
    env = {**os.environ, "LAYOUTLAB_DATA": data, "LAYOUTLAB_FAKE_GPUS": "2", "LAYOUTLAB_EMBEDDED_WORKER": "0"}
    for k in ("LAYOUTLAB_DATABASE_URL", "LAYOUTLAB_REDIS_URL"):
        env.pop(k, None)
        os.environ.pop(k, None)
    os.environ.update({**env, "LAYOUTLAB_WARM": os.environ.get("LAYOUTLAB_WARM", "0")})
    params = {"nvcc": sys.argv[1]} if len(sys.argv) > 1 else {}
    with open(os.path.join(data, "worker.log"), "w") as log:
        sup = subprocess.Popen([".venv/bin/layoutlab", "worker", "--gpus", "0,1"], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
        try:
            return _check(params)
        finally:
            sup.terminate()
            sup.wait(30)


def _check(params: dict) -> int:
    from fastapi.testclient import TestClient

    from app.main import create_app

    app, t0 = create_app(), time.time()

    def client() -> TestClient:
        return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)

    with client() as c:
        while time.time() - t0 < 60:
            d = c.get("/api/bench/device").json()
            if len(d.get("workers", [])) == 2:
                break
            time.sleep(0.5)
    ids = []
    for _ in range(20):
        with client() as c:  # a fresh client each: the per-client rate limit is 10 a minute
            r = c.post("/api/bench/jobs", json={"kind": "compile_only", "params": params})
            assert r.status_code == 202, r.text
            ids.append(r.json()["id"])
    with client() as c:
        while time.time() - t0 < 400:
            jobs = [c.get(f"/api/bench/jobs/{i}").json() for i in ids]
            if all(j["status"] in ("done", "failed") for j in jobs):
                break
            time.sleep(1)
        d = c.get("/api/bench/device").json()
    out = {"workers": [(w.get("gpu_index"), w.get("uuid")) for w in d["workers"]],
           "statuses": {s: sum(j["status"] == s for j in jobs) for s in {j["status"] for j in jobs}},
           "attempts": sorted({j.get("attempts") for j in jobs}),
           "per_gpu": {g: sum(j.get("gpu") == g for j in jobs) for g in {j.get("gpu") for j in jobs}},
           "errors": [j["error"] for j in jobs if j["error"]][:3], "seconds": round(time.time() - t0, 1)}
    print(json.dumps(out, indent=1))
    ok = (len({w[0] for w in out["workers"]}) == 2 and out["statuses"] == {"done": 20} and out["attempts"] == [1]
          and len(out["per_gpu"]) == 2)
    print("acceptance:", "holds" if ok else "FAILS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
