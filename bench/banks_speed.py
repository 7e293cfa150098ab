#!/usr/bin/env python3
"""The bank model's cost where people feel it, before and after in one sitting: starting a whiteboard
(``POST /drills/whiteboard``, fresh and sheet numbers), generating one ``banks`` drill, ``POST /api/banks`` and the
banks page's comparison (``app.services.banks.compare``: the padding and swizzle searches of ``algebra.hw.bankfix``).

Each tree (git revision BEFORE unpacked with ``git archive``, and this tree) runs in a fresh process, alternating
BEFORE / this tree for --rounds rounds (the machine's load changes over minutes, so both sides see it alike); CPU time
(``time.process_time``: the TestClient and the handler share the process) per request, drill or comparison: median,
p90 and p99 over the rounds. Each side also hashes what the model decides: the JSON of the banks drills it generated
(public view, key, steps, grids, examples and the grades of a fixed list of answers), the /api/banks answers and the
comparisons, and the questions and keys of --sessions seeded whiteboard sheets (``random.Random(seed)``, seeds
12100..); both hashes must be the same. A table on stdout and JSON under bench/results/.

Usage:  python3 bench/banks_speed.py BEFORE_REV [--requests 30] [--drills 300] [--sessions 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = r'''
import hashlib, json, os, random, sys, tempfile, time
os.environ.update(LAYOUTLAB_DATA=tempfile.mkdtemp(), LAYOUTLAB_WARM="0", LAYOUTLAB_ALLOWED_HOSTS="testserver")
sys.path.insert(0, os.getcwd())
from fastapi.testclient import TestClient
from app.main import create_app
from app.drills import whiteboard
from app.drills.core import generate, parse_id
from app.drills.service import drill_json
n, ndrills, sessions = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cpu, h = {}, hashlib.sha256()
with TestClient(create_app()) as c:
    whiteboard.warm()  # what app.main runs in its background thread at start-up

    def timed(name, fn, times):
        ts = cpu.setdefault(name, [])
        for i in range(times):
            t = time.process_time()
            fn(i)
            ts.append(time.process_time() - t)

    def start(numbers):
        def go(i):
            r = c.post("/drills/whiteboard", data={"numbers": numbers}, follow_redirects=False)
            assert r.status_code == 303, r.status_code
        return go

    timed("POST /drills/whiteboard (fresh)", start("fresh"), n)
    timed("POST /drills/whiteboard (sheet numbers)", start("sheet"), n)
    rng = random.Random(12100)
    seeds = [rng.randrange(2**31 - 1) for _ in range(ndrills)]
    answers = ["Sw<3,0,5>", "Sw<5,0,5>", "Sw<3,3,3>", "pad 1", "ld=33", "(32,32):(33,1)", "1, 2, 3, 4", "2",
               "Sw<3,0,5> o 0 o (32,32):(32,1)", "(33*r + 5) mod 32"]
    drills = []
    timed("banks drill: generate", lambda i: drills.append(generate("banks", seeds[i])), ndrills)
    for d in drills:
        h.update(json.dumps([drill_json(d), d.expected, d.steps, [g.to_dict() for g in d.grids], d.examples,
                             [[x.correct, x.reason] for x in map(d.grade, [d.expected] + answers)]],
                            sort_keys=True, default=str).encode())
    bodies = []
    for lay, e in (("(32,32):(32,1)", 4), ("(32,64):(64,1)", 4), ("(64,64):(64,1)", 2), ("(32,128):(128,1)", 4),
                   ("(16,64):(64,1)", 8)):
        cols = int(lay.split(",")[1].split(")")[0])
        for j in range(0, cols, max(1, cols // 16)):
            for sw in (None, "Sw<3,0,5>" if e == 4 else "Sw<3,3,3>"):
                bodies.append({"layout": lay, "swizzle": sw, "element_bytes": e,
                               "access": {"kind": "column", "index": j}})
                bodies.append({"layout": lay, "swizzle": sw, "element_bytes": e,
                               "access": {"kind": "row", "index": j % 16, "vector": 1}})

    def api(i):
        r = c.post("/api/banks", json=bodies[i])
        assert r.status_code == 200, r.text
        h.update(r.content)
    timed("POST /api/banks (distinct bodies)", api, len(bodies))
    from app.services import banks as S
    cmp = [b for b in bodies if b["swizzle"] is None]

    def compare(i):  # the banks page's comparison: naive, the smallest padding, the preferred swizzle
        b = cmp[i]
        out = S.compare(b["layout"], None, b["element_bytes"], b["access"])
        h.update(json.dumps([[p["title"], p.get("why"), p.get("note"), p["view"] and p["view"].to_json()]
                             for p in out], sort_keys=True, default=str).encode())
    timed("banks page: fix comparison (services)", compare, len(cmp))
slots = [(p, k, t) for p, (_, qs) in enumerate(whiteboard.SHEET) for k, t in qs]
sheets = hashlib.sha256()
for seed in range(12100, 12100 + sessions):
    for did in whiteboard.pick_sheet(random.Random(seed), slots):
        sheets.update(f"{did}={generate(*parse_id(did)).expected}\n".encode())
print(json.dumps({"cpu": cpu, "drills": h.hexdigest(), "sheets": sheets.hexdigest()}))
'''


def side(tree: str, args: argparse.Namespace) -> dict:
    out = subprocess.run([sys.executable, "-c", RUN, str(args.requests), str(args.drills), str(args.sessions)],
                         cwd=tree, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.splitlines()[-1])


def pct(ts: list[float], q: float) -> float:
    ts = sorted(ts)
    return round(1e3 * ts[min(len(ts) - 1, int(q * len(ts)))], 2)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--drills", type=int, default=300)
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "banks_speed.json")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        for _ in range(args.rounds):
            runs["before"].append(side(tmp, args))
            runs["after"].append(side(str(ROOT), args))
    pooled = {k: {name: [t for r in rs for t in r["cpu"][name]] for name in rs[0]["cpu"]} for k, rs in runs.items()}
    rows = [{"what": name, **{f"{k}_{q}_ms": pct(pooled[k][name], v) for k in ("before", "after")
                              for q, v in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))},
             "before_mean_ms": round(1e3 * sum(pooled["before"][name]) / len(pooled["before"][name]), 2),
             "after_mean_ms": round(1e3 * sum(pooled["after"][name]) / len(pooled["after"][name]), 2),
             "samples_per_side": len(pooled["after"][name])} for name in pooled["before"]]
    same = {h: len({r[h] for rs in runs.values() for r in rs}) == 1 for h in ("drills", "sheets")}
    print(f"{'CPU ms per request / drill':<42}{'before p50':>11}{'p90':>8}{'p99':>8}{'mean':>8}"
          f"{'after p50':>11}{'p90':>8}{'p99':>8}{'mean':>8}")
    for r in rows:
        print(f"{r['what']:<42}{r['before_p50_ms']:>11}{r['before_p90_ms']:>8}{r['before_p99_ms']:>8}"
              f"{r['before_mean_ms']:>8}{r['after_p50_ms']:>11}{r['after_p90_ms']:>8}{r['after_p99_ms']:>8}"
              f"{r['after_mean_ms']:>8}")
    print(f"{args.drills} banks drills (and the /api/banks answers) the same: {same['drills']}; "
          f"{args.sessions} seeded whiteboard sheets the same: {same['sheets']}")
    args.out.write_text(json.dumps({
        "machine": f"{platform.platform()} ({platform.processor() or platform.machine()}), load "
                   f"{Path('/proc/loadavg').read_text().split()[:3] if Path('/proc/loadavg').exists() else '?'}",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": f"python3 bench/banks_speed.py {args.before} --requests {args.requests} --drills {args.drills} "
                   f"--sessions {args.sessions} --rounds {args.rounds}", "before": args.before,
        "same": same, "hashes": {k: [[r["drills"], r["sheets"]] for r in rs] for k, rs in runs.items()},
        "rows": rows}, indent=1) + "\n")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
