"""Cross-site writes (app.origin): a browser's POST from another site is refused before any route runs, so it
stores nothing; same-origin pages and scripts without browser headers are unaffected."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.origin import cross_site


@pytest.mark.parametrize(("headers", "refused"), [
    ({}, False),
    ({b"origin": b"http://testserver", b"host": b"testserver"}, False),
    ({b"origin": b"http://127.0.0.1:8000", b"host": b"127.0.0.1:8000"}, False),
    ({b"origin": b"https://example.org", b"host": b"example.org:443"}, False),
    ({b"origin": b"https://evil.example", b"host": b"testserver"}, True),
    ({b"origin": b"http://127.0.0.1:9000", b"host": b"127.0.0.1:8000"}, True),
    ({b"origin": b"null", b"host": b"testserver"}, True),
    ({b"sec-fetch-site": b"cross-site", b"host": b"testserver"}, True),
    ({b"sec-fetch-site": b"same-site", b"host": b"testserver"}, True),
    ({b"sec-fetch-site": b"same-origin", b"origin": b"http://testserver", b"host": b"testserver"}, False),
    ({b"sec-fetch-site": b"none", b"host": b"testserver"}, False),
])
def test_cross_site_reads_the_browsers_headers(headers: dict, refused: bool) -> None:
    assert (cross_site(headers) is not None) == refused


def _learners(data: Path) -> int:
    with sqlite3.connect(data / "drills.sqlite3") as c:
        return c.execute("SELECT COUNT(*) FROM learners").fetchone()[0]


def test_a_cross_site_write_stores_nothing(app: Any, layoutlab_data: Path) -> None:
    same = TestClient(app).post("/api/drills/profile", json={"name": "Same Site"},
                                headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200
    n = _learners(layoutlab_data)
    evil = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    for path, body in (("/api/drills/profile", {"name": "Nobody"}), ("/api/drills/offsets-1/hint", {"level": 1}),
                       ("/api/drills/offsets-1/answer", {"answer": "3"}), ("/api/bench/jobs", {"kind": "smem"})):
        r = TestClient(app).post(path, json=body, headers=evil)
        assert r.status_code == 403 and "cross-site request refused" in r.json()["detail"], path
        assert r.headers.get("x-content-type-options") == "nosniff"  # the security headers still apply
    assert _learners(layoutlab_data) == n
