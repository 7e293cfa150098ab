"""The GPU lab end to end over HTTP: start ``layoutlab serve`` (with its in-process GPU worker), submit one job of
every GPU kind through ``POST /api/bench/jobs`` as one lab client (the signed cookie), poll
``GET /api/bench/jobs/{id}`` until each ends, check that a bad submission is refused with 422 and that ``/lab`` and
the job listing show the jobs.

    python3 bench/lab_http.py [--out FILE] [--gemm-size 4096] [--skip gemm,...]

Prints a table and writes bench/results/lab_http_<device>_<date>.json (or --out). The client side is the standard
library only; the server needs the app's own dependencies.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from _server import free_port  # noqa: E402
from solve_smem import CASES as SOLVE_CASES  # noqa: E402


def jobs(gemm_size: int) -> dict[str, dict]:
    """One job of each GPU kind, named; the figures each is expected to show are in ``summary``."""
    col = {"kind": "column", "index": 0}
    return {
        "smem fp32 32x32 column, naive": {"kind": "smem", "params": {"rows": 32, "cols": 32, "access": col,
                                                                      "profile": True}},
        "smem fp32 32x32 column, padded +1": {"kind": "smem", "params": {"rows": 32, "cols": 32, "variant": "padded",
                                                                          "pad": 1, "access": col, "profile": True}},
        "smem fp32 32x32 column, Sw<5,0,5>": {"kind": "smem", "params": {
            "rows": 32, "cols": 32, "variant": "swizzle", "swizzle": "Sw<5,0,5>", "access": col, "profile": True}},
        "transpose fp32 8192": {"kind": "transpose", "params": {"n": 8192}},
        f"gemm rung 8 bf16 {gemm_size}^3": {"kind": "gemm", "params": {"rung": 8, "m": gemm_size, "n": gemm_size,
                                                                       "k": gemm_size, "iters": 20}},
        "layout doctor fp16 64x64 cp.async + ldmatrix": {"kind": "smem_solve",
                                                         "params": SOLVE_CASES["fp16_64x64_cpasync_ldmatrix_x4"]},
    }


def summary(kind: str, result: dict) -> dict:
    """The figures of a finished job that a reader compares: wavefronts, bandwidth, TFLOP/s, % of cuBLAS."""
    if kind == "smem":
        m = result.get("measured") or {}
        return {"predicted_wavefronts": result["prediction"]["wavefronts_per_access"],
                "measured_wavefronts": m.get("wavefronts_per_instruction"), "check": result["check"]["passed"],
                "median_ms": result["timing"]["median"]}
    if kind == "transpose":
        return {name: {"gbps": round(v["gbps"], 1), "pct_of_copy": round(v["pct_of_copy"], 1)}
                for name, v in result["variants"].items()}
    if kind == "gemm":
        return {"check": result["check"]["passed"], "tflops": result["tflops"],
                "cublas_tflops": result["cublas_tflops"], "pct_of_cublas": result["pct_of_cublas"]}
    if kind == "smem_solve":
        return {"all_match": result["all_match"],
                "layouts": {lay["layout"]: [(a["predicted"], a["measured"]) for a in lay["accesses"]]
                            for lay in result["layouts"]}}
    return result


class Lab:
    """``layoutlab serve`` on a free port with a fresh data folder; one cookie jar (one lab client)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, LAYOUTLAB_DATA=tempfile.mkdtemp(prefix="lab-http-"), LAYOUTLAB_EMBEDDED_WORKER="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(self.port)], cwd=ROOT,
                                     env=env)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.call("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        self.proc.terminate()
        raise SystemExit("the server did not start")

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, object]:
        """(status, parsed JSON or text) of one request; an HTTP error status is returned, not raised."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with self.opener.open(req, timeout=60) as r:
                status, raw, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            status, raw, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
        return status, json.loads(raw) if "json" in ctype else raw.decode()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--gemm-size", type=int, default=4096)
    ap.add_argument("--skip", default="", help="kinds to leave out, comma-separated")
    ap.add_argument("--timeout", type=float, default=400, help="seconds for all jobs to end")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    lab = Lab()
    rows, failures = [], []
    try:
        status, device = lab.call("GET", "/api/bench/device")
        status_bad, bad = lab.call("POST", "/api/bench/jobs", {"kind": "smem", "params": {"rows": 4096}})
        if status_bad != 422:
            failures.append(f"a tile over the cap answered {status_bad}, not 422")
        submitted = {}
        for name, job in jobs(args.gemm_size).items():
            if job["kind"] in skip:
                continue
            st, ans = lab.call("POST", "/api/bench/jobs", job)
            if st != 202:
                failures.append(f"{name}: submit answered {st}: {ans}")
                continue
            submitted[name] = (job, ans["id"], time.monotonic())
        deadline = time.monotonic() + args.timeout
        for name, (job, job_id, t0) in submitted.items():
            while True:
                _, ans = lab.call("GET", f"/api/bench/jobs/{job_id}")
                if ans["status"] in ("done", "failed") or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            row = {"name": name, "kind": job["kind"], "id": job_id, "status": ans["status"],
                   "seconds_since_submit": round(time.monotonic() - t0, 1), "error": ans.get("error")}
            if ans["status"] == "done":
                row["summary"] = summary(job["kind"], ans["result"])
            else:
                failures.append(f"{name}: {ans['status']} {ans.get('error')}")
            rows.append(row)
        _, listing = lab.call("GET", "/api/bench/jobs?limit=50")
        mine = {j["id"] for j in listing if j.get("mine")}
        missing = [r["name"] for r in rows if r["id"] not in mine]
        if missing:
            failures.append(f"the job listing does not show {missing} as this client's")
        page_status, page = lab.call("GET", "/lab")
        if page_status != 200:
            failures.append(f"/lab answered {page_status}")
    finally:
        lab.stop()
    for r in rows:
        figures = json.dumps(r.get("summary"))[:150]
        print(f"{r['name']:48s} {r['status']:7s} {r['seconds_since_submit']:7.1f} s  {figures}")
    print("bad submission:", status_bad, bad)
    print("FAILURES:" if failures else "all jobs done", *failures, sep="\n  ")
    name = str(device.get("name", "nogpu")).replace("NVIDIA ", "").replace(" ", "_")
    out = Path(args.out or ROOT / "bench" / "results" / f"lab_http_{name}_{datetime.now(UTC):%Y-%m-%d}.json")
    out.write_text(json.dumps({
        "command": "python3 bench/lab_http.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "device": device,
        "bad_submission": {"status": status_bad, "answer": bad}, "jobs": rows, "failures": failures}, indent=1))
    print("wrote", out)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
