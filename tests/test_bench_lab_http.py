"""bench/lab_http.py without a GPU: it starts the app, is refused with 422 for a tile over the cap, sees /lab, and
records a GPU kind that no worker can run as a failure (409), not as done."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import lab_http  # noqa: E402


def test_lab_http_runs_against_a_server_without_gpu(tmp_path):
    out = tmp_path / "lab.json"
    rc = lab_http.main(["--out", str(out), "--skip", "smem,transpose,gemm", "--timeout", "5"])
    got = json.loads(out.read_text())
    assert got["bad_submission"]["status"] == 422 and "1024" in got["bad_submission"]["answer"]["detail"]
    assert rc == 1 and got["jobs"] == []
    assert [f.split(":")[0] for f in got["failures"]] == ["layout doctor fp16 64x64 cp.async + ldmatrix"]
    assert "409" in got["failures"][0] and "no live worker has a GPU" in got["failures"][0]
