"""The GPU lab on a host with one or more GPUs: `layoutlab worker --gpus SPEC` (one worker process per GPU, pinned
with CUDA_VISIBLE_DEVICES) runs a mix of 16 jobs (6 smem reads, 5 transposes, 5 GEMMs at rung 8) from a fresh SQLite
queue, once per GPU set given. For each set: the wall time from the first submission to the last outcome; how long
two or more GPUs ran jobs at once (from the jobs' own start and finish); the job each worker held in
``/api/bench/device`` while it ran, with its GPU's clocks; and every job's figure beside the first set's figure for
the same job (median over its repeats; the first set's own spread is the noise).

    python3 bench/lab_gpus.py --sets 0 0,1 [--out FILE] [--gemm-size 4096]

A warm-up (one job of each kind, not counted) builds the kernels first. Prints a table; writes
bench/results/lab_gpus_<device>_<date>.json (or --out). Needs the app's own dependencies (bench/lab_device.sh carries
them as wheels).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def mix(gemm_size: int) -> list[tuple[str, str, dict]]:
    """The 16 jobs: (label, kind, params); a label repeats, so that each job has a spread of its own."""
    col = {"kind": "column", "index": 0}
    smem = {"smem naive": {"rows": 32, "cols": 32, "access": col},
            "smem padded +1": {"rows": 32, "cols": 32, "variant": "padded", "pad": 1, "access": col},
            "smem Sw<5,0,5>": {"rows": 32, "cols": 32, "variant": "swizzle", "swizzle": "Sw<5,0,5>", "access": col}}
    gemm = {"rung": 8, "m": gemm_size, "n": gemm_size, "k": gemm_size, "iters": 20}
    jobs = [(label, "smem", p) for label, p in smem.items() for _ in range(2)]
    jobs += [("transpose fp32 8192", "transpose", {"n": 8192})] * 5
    jobs += [(f"gemm rung 8 {gemm_size}^3", "gemm", gemm)] * 5
    order = [0, 6, 11, 1, 7, 12, 2, 8, 13, 3, 9, 14, 4, 10, 15, 5]  # kinds interleaved, as a class submits them
    return [jobs[i] for i in order]


def figures(kind: str, r: dict) -> dict[str, float]:
    """The figures a reader compares for one result."""
    if kind == "smem":
        return {"cycles_per_warp_access": r["derived"]["cycles_per_warp_access"], "median_ms": r["timing"]["median"]}
    if kind == "transpose":
        return {f"{name}_gbps": v["gbps"] for name, v in r["variants"].items()}
    if kind == "gemm":
        return {"tflops": r["tflops"], "cublas_tflops": r["cublas_tflops"]}
    return {}


def concurrent_s(spans: list[tuple[float, float]], at_least: int = 2) -> float:
    """Seconds during which at least ``at_least`` of the spans were open."""
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    total, open_, last = 0.0, 0, None
    for t, step in events:
        if open_ >= at_least and last is not None:
            total += t - last
        open_ += step
        last = t
    return total


def run_set(spec: str, labels: list[tuple[str, str, dict]], build_dir: str, warm: bool, timeout: float) -> dict:
    """One GPU set: fresh queue, its workers, (the warm-up,) the 16 jobs, the workers stopped."""
    data = tempfile.mkdtemp(prefix="lab-gpus-")
    os.environ.update(LAYOUTLAB_DATA=data, LAYOUTLAB_BUILD_DIR=build_dir, LAYOUTLAB_EMBEDDED_WORKER="0",
                      LAYOUTLAB_HEARTBEAT_S="0.5", LAYOUTLAB_QUEUE_MAX="64")
    from app.services.bench import device_status
    from gpu_worker import service
    from gpu_worker.store import get_store

    n = len(spec.split(","))
    sup = subprocess.Popen([sys.executable, "-m", "app.cli", "worker", "--gpus", spec], cwd=ROOT,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                               p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)))
    store = get_store()
    out: dict = {"gpus": spec}
    try:
        deadline = time.time() + 120
        while len([w for w in service.live_workers() if (w.get("device") or {}).get("uuid")]) < n:
            if time.time() > deadline or sup.poll() is not None:
                raise SystemExit(f"--gpus {spec}: the workers did not come up")
            time.sleep(0.2)
        workers = service.live_workers()
        out["workers"] = [{"id": w["id"], "pid": w["pid"], "gpu_index": w["device"].get("index"),
                           "uuid": w["device"].get("uuid"), "name": w["device"].get("name"),
                           "xid_events": w["device"].get("xid_events"), "environ": _pins(w["pid"])} for w in workers]
        if warm:
            seen, t0 = {}, time.time()
            for _label, kind, params in labels:
                if kind not in seen:
                    seen[kind] = service.submit(kind, params)["id"]
            _drain(store, list(seen.values()), timeout)
            out["warmup"] = {k: _brief(store.get(i), t0) for k, i in seen.items()}
        t0 = time.time()
        ids = [(label, kind, service.submit(kind, params)["id"]) for label, kind, params in labels]
        samples = []
        while store.queue_depth() and time.time() < t0 + timeout:
            d = device_status()
            samples.append({"t": round(time.time() - t0, 2),
                            "workers": [{"gpu_index": w["gpu_index"], "job": w["job"],
                                         "sm_clock_mhz": (w["gpu"] or {}).get("sm_clock_mhz"),
                                         "power_w": (w["gpu"] or {}).get("power_w")} for w in d["workers"]]})
            time.sleep(1.0)
        jobs = []
        for label, kind, job_id in ids:
            j = store.get(job_id)
            r = j.get("result") or {}
            jobs.append({"label": label, "kind": kind, "id": job_id, "status": j["status"], "error": j.get("error"),
                         "attempts": j["attempts"], "worker": j["worker"], "gpu": j.get("gpu"),
                         "gpu_index": (r.get("gpu") or {}).get("index"), "started": round(j["started"] - t0, 3),
                         "finished": round((j["finished"] or time.time()) - t0, 3),
                         "seconds": round((j["finished"] or time.time()) - j["started"], 3),
                         "figures": figures(kind, r) if j["status"] == "done" else {},
                         "nvml": r.get("gpu")})
        spans = [(j["started"], j["finished"]) for j in jobs]
        per_gpu = {}
        for j in jobs:
            per_gpu.setdefault(str(j["gpu_index"]), []).append((j["started"], j["finished"]))
        out.update(wall_s=round(max(b for _, b in spans), 2), jobs=jobs,
                   concurrent_s=round(concurrent_s(spans), 2),
                   overlap_within_a_gpu_s=round(sum(concurrent_s(s) for s in per_gpu.values()), 3),
                   busy_s={g: round(sum(b - a for a, b in s), 2) for g, s in per_gpu.items()},
                   jobs_per_gpu={g: len(s) for g, s in per_gpu.items()},
                   held_samples=[s for s in samples if any(w["job"] for w in s["workers"])][:6])
    finally:
        sup.send_signal(signal.SIGTERM)
        sup.wait(60)
    return out


def _pins(pid: int) -> dict:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return {}
    env = dict(x.decode().split("=", 1) for x in raw if b"=" in x)
    return {k: env.get(k) for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LAYOUTLAB_GPU_INDEX")}


def _drain(store, ids: list[str], timeout: float) -> None:
    deadline = time.time() + timeout
    while any(store.get(i)["status"] not in ("done", "failed") for i in ids) and time.time() < deadline:
        time.sleep(0.5)


def _brief(job: dict, t0: float) -> dict:
    return {"status": job["status"], "error": job.get("error"), "seconds": round((job["finished"] or t0) - t0, 1)}


def compare(base: dict, other: dict) -> list[dict]:
    """Per (label, figure): the median in ``base`` and ``other``, their ratio, and the spread of ``base``'s repeats
    ((max - min) / median): a ratio within about that spread of 1 is noise."""
    def medians(s: dict) -> dict:
        acc: dict = {}
        for j in s["jobs"]:
            for k, v in j["figures"].items():
                if v is not None:
                    acc.setdefault((j["label"], k), []).append(v)
        return acc
    a, b = medians(base), medians(other)
    rows = []
    for key in sorted(a):
        if key not in b:
            continue
        ma, mb = statistics.median(a[key]), statistics.median(b[key])
        spread = (max(a[key]) - min(a[key])) / ma if ma else None
        rows.append({"label": key[0], "figure": key[1], "base": round(ma, 4), "other": round(mb, 4),
                     "ratio": round(mb / ma, 4) if ma else None, "base_spread": round(spread, 4) if spread else 0.0,
                     "n": [len(a[key]), len(b[key])]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["0"], help="GPU sets, e.g. 0 0,1 (the first is the baseline)")
    ap.add_argument("--gemm-size", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=300, help="seconds for one set's jobs to end")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    from gpu_worker import telemetry

    gpus = telemetry.list_gpus()
    before = [telemetry.device_info(g["index"]) for g in gpus]
    build_dir = os.environ.get("LAYOUTLAB_BUILD_DIR") or tempfile.mkdtemp(prefix="lab-gpus-build-")
    labels = mix(args.gemm_size)
    sets = [run_set(spec, labels, build_dir, warm=i == 0, timeout=args.timeout) for i, spec in enumerate(args.sets)]
    after = [telemetry.device_info(g["index"]) for g in gpus]
    keep = ("index", "uuid", "name", "pci_bus_id", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz",
            "temperature_c", "power_w", "clock_event_reasons")
    name = (before[0].get("name") or "cpu").replace("NVIDIA ", "").replace(" ", "_")
    out = {"command": "python3 bench/lab_gpus.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "date": datetime.now(UTC).isoformat(timespec="seconds"), "host": platform.node(),
           "device": {"name": before[0].get("name"), "driver": before[0].get("driver"), "gpu_count": len(gpus),
                      "cuda_driver_version": before[0].get("cuda_driver_version")},
           "nvml_before": [{k: d.get(k) for k in keep} for d in before],
           "nvml_after": [{k: d.get(k) for k in keep} for d in after],
           "sets": sets, "comparison": {s["gpus"]: compare(sets[0], s) for s in sets[1:]}}
    path = Path(args.out or ROOT / "bench" / "results" / f"lab_gpus_{name}_{datetime.now(UTC):%Y-%m-%d}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"{'gpus':>6} {'wall s':>7} {'2+ GPUs at once s':>18} {'jobs per GPU':>16} {'failed':>6}")
    for s in sets:
        failed = sum(j["status"] != "done" for j in s["jobs"])
        print(f"{s['gpus']:>6} {s['wall_s']:>7.1f} {s['concurrent_s']:>18.1f} {json.dumps(s['jobs_per_gpu']):>16} "
              f"{failed:>6}")
    for spec, rows in out["comparison"].items():
        print(f"\n--gpus {spec} against --gpus {sets[0]['gpus']}: figure, median ratio, baseline spread")
        for r in rows:
            print(f"  {r['label']:<24} {r['figure']:<24} {r['ratio']:>7.3f}  ±{100 * r['base_spread']:.1f} %")
    print(f"\nwrote {path}")
    return int(any(j["status"] != "done" for s in sets for j in s["jobs"]))


if __name__ == "__main__":
    sys.exit(main())
