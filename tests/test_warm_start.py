"""A fresh worker's first pages: what a start-up pays for once (the OpenAPI document, every template compiled, the
drill generators) is paid at start-up before the first request is served (``app.main._warm``), not by the first
requests inside their CPU budget, nor by a thread that holds the GIL against them. Before, the TV atlas with every
section open answered 422 "over the work budget" on a fresh worker (0.83 s of CPU, 0.49 s of it compiling
templates), and a fresh ``/lab`` took 0.66 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TV_ALL_OPEN = "/tv?tbits=16&cw_t=0&mw_t=0&kp_t=0&bw_warp=0&tm_cta=0,0"

SCRIPT = """
import gc, json, sys
from fastapi.testclient import TestClient
from app.main import create_app
from app.templating import templates

env = templates.env
compiled = []
compile_ = env.compile


def counting(source, name=None, *args, **kw):
    compiled.append(name)
    return compile_(source, name, *args, **kw)


with TestClient(create_app(), base_url="http://127.0.0.1") as client:
    frozen = gc.get_freeze_count()  # the warm-up ended before the first request: start-up's objects are frozen
    env.compile = counting
    answers = {url: client.get(url) for url in sys.argv[1:]}
print(json.dumps({"compiled": compiled, "frozen": frozen, "status": {u: r.status_code for u, r in answers.items()},
                  "closed": {u: r.text.count("(loads when opened)") for u, r in answers.items()},
                  "sections": {u: r.text.count("-sec") for u, r in answers.items()},
                  "body": {u: r.text[:300] for u, r in answers.items() if r.status_code != 200}}))
"""


def test_a_fresh_worker_compiles_no_template_in_a_request_and_its_heaviest_pages_fit_the_budget(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("LAYOUTLAB_WARM", "LAYOUTLAB_CPU_BUDGET_S")}
    env["LAYOUTLAB_DATA"] = str(tmp_path)
    urls = [TV_ALL_OPEN, "/lab", "/", "/algebra", "/banks", "/doctor", "/drills"]
    out = subprocess.run([sys.executable, "-c", SCRIPT, *urls], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["compiled"] == [], got["compiled"]  # every template was compiled by the warm-up
    assert got["frozen"] > 10_000, got["frozen"]  # ... which was over when the app began to serve
    assert all(s == 200 for s in got["status"].values()), got  # within the default CPU budget of 0.6 s
    assert got["closed"][TV_ALL_OPEN] == 0 and got["sections"][TV_ALL_OPEN] >= 6, got  # every section open, filled
