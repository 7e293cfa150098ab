"""Cancelling a running job ends it promptly: a compile_only job holding for 20 s, cancelled after it started, is
``failed: cancelled by user`` within a few seconds (it used to run its whole hold first), through the real worker
thread and the SQLite queue; its record and the history say the same."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from gpu_worker import service


@pytest.fixture()
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    from app.main import create_app

    stop = threading.Event()
    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        t = threading.Thread(target=service.run_worker, args=(stop,), kwargs={"worker_id": "hold-worker"},
                             daemon=True)
        t.start()
        deadline = time.time() + 10
        while not service.live_workers() and time.time() < deadline:
            time.sleep(0.05)
        yield c
        stop.set()
        t.join(10)


def _job(c, job_id):
    return c.get(f"/api/bench/jobs/{job_id}").json()


def test_a_running_hold_ends_soon_after_its_cancel(lab):
    r = lab.post("/api/bench/jobs", json={"kind": "compile_only",
                                          "params": {"nvcc": "skip", "hold_ms": 20000, "tag": "t14601"}})
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    deadline = time.time() + 15
    while _job(lab, job_id)["status"] != "running" and time.time() < deadline:
        time.sleep(0.05)
    assert _job(lab, job_id)["status"] == "running"
    t0 = time.time()
    assert lab.post(f"/api/bench/jobs/{job_id}/cancel").status_code == 200
    while _job(lab, job_id)["status"] == "running" and time.time() - t0 < 15:
        time.sleep(0.05)
    job = _job(lab, job_id)
    assert (job["status"], job["error"], job["result"]) == ("failed", "cancelled by user", None)
    assert time.time() - t0 < 5, "the hold ran on after the cancel"
    assert job["finished"] - job["started"] < 10 and job["attempts"] == 1
    listed = [j for j in lab.get("/api/bench/jobs").json() if j["id"] == job_id]
    assert [(j["status"], j["error"]) for j in listed] == [("failed", "cancelled by user")]


def test_the_lab_form_reads_numbers_as_the_json_api_does(lab):
    """The form's fields become the JSON API's params: ASCII digits are numbers; unicode digits, ``1_024`` or a
    non-number index are refused by the field's name (the index used to be dropped silently, reading column 0)."""
    for field, value in (("rows", "٣٢"), ("cols", "1_024"), ("index", "x3"), ("nacc", "１６")):
        r = lab.post("/lab/jobs", data={"kind": "smem", "variant": "naive", "access": "column", field: value})
        assert r.status_code == 422 and field in r.text, (field, r.status_code)
    r = lab.post("/lab/jobs", data={"kind": "smem", "variant": "naive", "access": "column", "rows": "32",
                                    "cols": "32", "index": "3", "nacc": "16"})
    assert r.status_code == 409 and "no live worker" in r.text, r.text[:300]  # valid; no GPU worker here
