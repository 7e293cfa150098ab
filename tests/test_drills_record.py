"""The learning record is exact: answers racing over real HTTP promote a sub-skill once per drill, a whiteboard part
keeps one answer (the rest 409), separate processes on one SQLite file agree, a GET (every GET route) stores nothing,
a cookie-less request stores nothing, a copied key after a reveal raises nothing, and rows from nobody that an old
database holds are pruned when the store starts."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.drills import identity, service, store
from app.drills.core import from_id
from tests.conftest import race

ROOT = Path(__file__).resolve().parent.parent


def browser_cookie() -> tuple[str, dict[str, str]]:
    lid = store.learner_id(None)[0]
    return lid, {"layoutlab_learner": identity.sign(lid)}


def post(url: str, cookies: dict[str, str], json: dict[str, Any]) -> httpx.Response:
    with httpx.Client(cookies=cookies, timeout=30) as c:
        return c.post(url, json=json)


def test_twenty_racing_right_first_answers_promote_once(live_server: Any) -> None:
    lid, cookies = browser_cookie()
    d = from_id("offsets-4242")
    url = f"{live_server.url}/api/drills/{d.id}/answer"
    rs = race(20, lambda i: post(url, cookies, {"answer": d.expected}))
    assert [r.status_code for r in rs] == [200] * 20 and all(r.json()["correct"] for r in rs)
    assert all(r.json()["expected"] == d.expected for r in rs)
    got = store.attempts(lid)
    assert [(a.drill_id, a.attempt, a.correct) for a in got] == [(d.id, 1, True)]  # one recorded, once
    assert store.srs_boxes(lid)[d.skill][0] == 1  # one answer's promotion, not 2 or 20
    p = httpx.get(f"{live_server.url}/api/drills/progress", cookies=cookies).json()
    assert (p["attempts"], p["correct"], p["streak"]) == (1, 1, 1)


def test_racing_first_answers_to_distinct_drills_each_promote(live_server: Any) -> None:
    """The promotion is an atomic increment: three drills of one sub-skill answered at once give three boxes up."""
    lid, cookies = browser_cookie()
    ds = [d for d in (from_id(f"banks-{s}") for s in range(300)) if d.skill == "banks:ways"][:3]
    rs = race(6, lambda i: post(f"{live_server.url}/api/drills/{ds[i % 3].id}/answer", cookies,
                                {"answer": ds[i % 3].expected}))
    assert all(r.status_code == 200 and r.json()["correct"] for r in rs)
    assert len(store.attempts(lid)) == 3 and store.srs_boxes(lid)["banks:ways"][0] == 3


def test_ten_racing_answers_to_one_whiteboard_part_record_one(live_server: Any) -> None:
    lid, cookies = browser_cookie()
    with httpx.Client(cookies=cookies, timeout=60) as c:
        s = c.post(f"{live_server.url}/api/drills/whiteboard").json()
    sid, first, second = s["session"], s["parts"][0]["id"], s["parts"][1]["id"]
    url = f"{live_server.url}/api/drills/{first}/answer"
    rs = race(10, lambda i: post(url, cookies, {"answer": from_id(first).expected, "session": sid}))
    codes = sorted(r.status_code for r in rs)
    assert codes == [200] + [409] * 9, [r.text for r in rs]
    assert all("question 2" in r.json()["detail"] for r in rs if r.status_code == 409)
    assert [a.drill_id for a in store.attempts(lid, session=sid)] == [first]
    ok = post(f"{live_server.url}/api/drills/{second}/answer", cookies,
              {"answer": from_id(second).expected, "session": sid})
    assert ok.status_code == 200 and len(store.attempts(lid, session=sid)) == 2
    again = post(url, cookies, {"answer": from_id(first).expected, "session": sid})
    assert again.status_code == 409  # sequentially as well
    r = httpx.post(f"{live_server.url}/api/drills/{first}/answer", json={"answer": "1", "session": sid})
    assert r.status_code == 404  # another browser's session


_PROCESS = """
import sys, time
from app.drills import store
lid, at = sys.argv[1], float(sys.argv[2])
while time.time() < at:
    time.sleep(0.001)
a = store.record_attempt(lid, "offsets-77", "offsets", 77, "right", True, skill="offsets:table")
print(int(a.recorded), a.attempt, int(a.promoted))
"""


def test_processes_racing_on_one_sqlite_file_promote_once(tmp_path: Path) -> None:
    """No lock of one process makes this exact: six processes, each with its own connection, answer at once."""
    env = {**os.environ, "LAYOUTLAB_DATA": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("LAYOUTLAB_DATABASE_URL", None)
    lid = "p" * 20
    at = time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, "-c", _PROCESS, lid, str(at)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    lines = sorted(o.split() for o, _ in outs)
    assert lines == [["0", "None", "0"]] * 5 + [["1", "1", "1"]], lines  # one recorded and promoted, five nothing
    with sqlite3.connect(tmp_path / "drills.sqlite3") as c:
        assert c.execute("SELECT COUNT(*), MAX(attempt) FROM attempts").fetchone() == (1, 1)
        assert c.execute("SELECT box FROM srs").fetchall() == [(1,)]


def snapshot(folder: Path) -> dict[str, list[tuple]]:
    """Every row of every table of every SQLite file in the data folder (a schema created empty is no record)."""
    out: dict[str, list[str]] = {}
    for f in sorted(folder.glob("*.sqlite3")):
        with sqlite3.connect(f) as c:
            for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                rows = sorted(map(repr, c.execute(f'SELECT * FROM "{t}"').fetchall()))
                if rows:
                    out[f"{f.name}:{t}"] = rows
    return out


def all_routes(routes: list[Any]) -> list[Any]:
    """Every route, including those of included routers (FastAPI keeps them in their router)."""
    out: list[Any] = []
    for r in routes:
        inner = getattr(r, "original_router", None)
        out += all_routes(inner.routes) if inner is not None else [r]
    return out


def get_urls(app: Any, sid: str) -> list[str]:
    """One URL per GET route of the app; drill routes with the permalinks and parameters a cross-site link uses."""
    drills = {
        "/drills": ["/drills", "/drills?kind=offsets", "/drills?kind=offsets&seed=4242&hint=3",
                    "/drills?kind=offsets&seed=5&hint=1", "/drills?kind=nope&seed=1"],
        "/drills/progress": ["/drills/progress", "/drills/progress?error=x"],
        "/drills/whiteboard": ["/drills/whiteboard"],
        "/drills/whiteboard/{sid}": [f"/drills/whiteboard/{sid}", f"/drills/whiteboard/{sid}?last=0",
                                     "/drills/whiteboard/nope"],
        "/api/drills/kinds": ["/api/drills/kinds"],
        "/api/drills/next": ["/api/drills/next", "/api/drills/next?kind=banks&seed=3", "/api/drills/next?kind=x"],
        "/api/drills/progress": ["/api/drills/progress"],
        "/api/drills/whiteboard/{sid}": [f"/api/drills/whiteboard/{sid}", "/api/drills/whiteboard/nope"],
    }
    urls: list[str] = []
    for route in all_routes(app.routes):
        path = getattr(route, "path", "")
        if "GET" not in (getattr(route, "methods", None) or ()):
            continue
        if path.startswith(("/drills", "/api/drills")):
            assert path in drills, f"GET {path}: add its URLs to this test"
            urls += drills[path]
        elif not path.startswith("/static"):
            urls.append(path.replace("{", "").replace("}", "") if "{" in path else path)
    urls += ["/api/drills/offsets-1/hint?level=3"]  # hints are POST: a GET is refused
    return urls


def test_no_get_route_stores_anything(app: Any, layoutlab_data: Path) -> None:
    c = TestClient(app, raise_server_exceptions=False)
    d = from_id("offsets-3")
    c.post("/api/drills/offsets-3/answer", json={"answer": d.expected})  # a learner with a record ...
    c.post("/api/drills/offsets-5/hint", json={"level": 1})
    sid = c.post("/api/drills/whiteboard").json()["session"]  # ... and a session
    urls = get_urls(app, sid)
    assert len(urls) > 20
    before = snapshot(layoutlab_data)
    for who in (c, TestClient(app, raise_server_exceptions=False)):  # the learner, then a client with no cookie
        for url in urls:
            r = who.get(url, follow_redirects=True)
            assert r.status_code < 500, (url, r.status_code, r.text[:200])
            assert snapshot(layoutlab_data) == before, f"GET {url} stored something"
    assert c.get("/api/drills/offsets-1/hint?level=3").status_code == 405


def test_cookieless_requests_store_no_learner(app: Any, layoutlab_data: Path) -> None:
    db = layoutlab_data / "drills.sqlite3"
    TestClient(app).get("/api/drills/kinds")

    def learners() -> int:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT COUNT(*) FROM learners").fetchone()[0]

    n = learners()
    for _ in range(300):
        r = TestClient(app).get("/api/drills/progress")
        assert r.status_code == 200 and identity.unsign(r.cookies.get("layoutlab_learner"))  # the cookie is given
    assert learners() == n
    fresh = TestClient(app)
    fresh.get("/drills?kind=offsets&seed=1")
    assert learners() == n  # a page view is not worth keeping either ...
    fresh.post("/api/drills/offsets-1/hint", json={"level": 1})
    assert learners() == n + 1  # ... a hint is, under the cookie the first response gave
    named = TestClient(app)
    assert named.post("/api/drills/profile", json={"name": "Kept Name 7"}).status_code == 200
    assert learners() == n + 2 and store.learner_name(identity.unsign(named.cookies.get("layoutlab_learner"))) \
        == "Kept Name 7"


def test_a_copied_key_after_a_reveal_raises_nothing(app: Any) -> None:
    c = TestClient(app, raise_server_exceptions=False)
    solved = from_id("majorness-9")
    assert c.post("/api/drills/majorness-9/answer", json={"answer": solved.expected}).json()["correct"]
    d = from_id("natural_coord-11")
    assert c.post("/api/drills/natural_coord-11/reveal", json={}).json()["expected"] == d.expected
    before = c.get("/api/drills/progress").json()
    assert (before["attempts"], before["correct"], before["streak"]) == (2, 1, 0)
    for _ in range(3):  # the copied key, and again
        res = c.post("/api/drills/natural_coord-11/answer", json={"answer": d.expected}).json()
        assert res["correct"] and res["expected"] == d.expected  # graded, key shown ...
    after = c.get("/api/drills/progress").json()
    assert (after["attempts"], after["correct"], after["streak"]) == (2, 1, 0)  # ... nothing recorded
    st = {k["kind"]: k for k in after["kinds"]}["natural_coord"]
    assert (st["attempts"], st["correct"], st["box"]) == (1, 0, 0)
    again = c.post("/api/drills/majorness-9/answer", json={"answer": solved.expected}).json()
    assert again["correct"] and c.get("/api/drills/progress").json()["correct"] == 1  # a solved drill: once


def test_a_whiteboard_part_answered_with_its_revealed_key_is_a_miss(app: Any) -> None:
    """The part takes its one answer, graded, but the copied key counts for neither the session's score nor the
    learner's correct answers and streak."""
    c = TestClient(app, raise_server_exceptions=False)
    warm = from_id("offsets-77")
    assert c.post("/api/drills/offsets-77/answer", json={"answer": warm.expected}).json()["correct"]
    s = c.post("/api/drills/whiteboard").json()
    part = s["parts"][0]["id"]
    key = c.post(f"/api/drills/{part}/reveal", json={}).json()["expected"]
    res = c.post(f"/api/drills/{part}/answer", json={"answer": key, "session": s["session"]})
    assert res.status_code == 200 and res.json()["correct"]  # graded by meaning ...
    board = c.get(f"/api/drills/whiteboard/{s['session']}").json()
    assert board["score"] == 0 and board["parts"][0]["answered"] and not board["parts"][0]["correct"]  # ... a miss
    p = c.get("/api/drills/progress").json()
    assert (p["correct"], p["streak"]) == (1, 0)
    nxt = s["parts"][1]["id"]  # a part answered right without a reveal still counts
    assert c.post(f"/api/drills/{nxt}/answer", json={"answer": from_id(nxt).expected,
                                                       "session": s["session"]}).json()["correct"]
    assert c.get(f"/api/drills/whiteboard/{s['session']}").json()["score"] == 1


def test_time_taken_comes_from_the_signed_served_token(app: Any) -> None:
    c = TestClient(app, raise_server_exceptions=False)
    d = c.get("/api/drills/next?kind=offsets&seed=31").json()
    assert service.served_time(d["served"], d["id"]) is not None
    lid = identity.unsign(c.cookies.get("layoutlab_learner"))
    old = service.served_token(d["id"], now=time.time() - 42)
    c.post(f"/api/drills/{d['id']}/answer", json={"answer": from_id(d["id"]).expected, "served": old})
    assert 41 < store.attempts(lid)[0].elapsed_s < 60
    forged = old[:-3] + "AAA"
    other = service.served_token("offsets-32", now=time.time() - 42)
    for token in (forged, other, "junk"):
        assert service.served_time(token, "offsets-31") is None
    assert service.served_time(service.served_token("x-1", now=time.time() + 60), "x-1") is None  # the future
    r = c.post("/api/drills/offsets-33/answer", json={"answer": "1", "served": "x" * 201})
    assert r.status_code == 422


_OLD_SCHEMA = """
CREATE TABLE learners (id TEXT PRIMARY KEY, name TEXT UNIQUE, created REAL NOT NULL);
CREATE TABLE served (learner TEXT NOT NULL, drill_id TEXT NOT NULL, served_at REAL NOT NULL,
  hints INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (learner, drill_id));
CREATE TABLE attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, learner TEXT NOT NULL, drill_id TEXT NOT NULL,
  kind TEXT NOT NULL, seed INTEGER NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL, elapsed_s REAL,
  hints INTEGER NOT NULL, session TEXT, created REAL NOT NULL);
CREATE TABLE srs (learner TEXT NOT NULL, kind TEXT NOT NULL, box INTEGER NOT NULL, due REAL NOT NULL,
  PRIMARY KEY (learner, kind));
CREATE TABLE reveals (learner TEXT NOT NULL, drill_id TEXT NOT NULL, created REAL NOT NULL,
  PRIMARY KEY (learner, drill_id));
CREATE TABLE sessions (id TEXT PRIMARY KEY, learner TEXT NOT NULL, started REAL NOT NULL, finished REAL,
  parts TEXT NOT NULL);
"""


def old_database(folder: Path) -> None:
    """A drills database as the old code left it: 500 learners from nobody, page views in ``served``, a whiteboard
    part answered four times by a race."""
    with sqlite3.connect(folder / "drills.sqlite3") as c:
        c.executescript(_OLD_SCHEMA)
        c.executemany("INSERT INTO learners VALUES (?, NULL, 1.0)", [(f"nobody{i:014d}",) for i in range(500)])
        c.executemany("INSERT INTO learners VALUES (?, ?, 1.0)", [("a" * 20, None), ("n" * 20, "Named"),
                                                                  ("h" * 20, None)])
        c.executemany("INSERT INTO served VALUES (?, ?, 1.0, ?)", [(f"nobody{i:014d}", "offsets-1", 0)
                                                                  for i in range(50)] + [("h" * 20, "offsets-2", 2)])
        rows = [("a" * 20, "offsets-1", 0, None), ("a" * 20, "offsets-1", 1, None)]
        rows += [("a" * 20, "banks-1", 1, "S1")] * 4
        c.executemany("INSERT INTO attempts (learner, drill_id, kind, seed, answer, correct, hints, session, created)"
                      " VALUES (?, ?, 'k', 1, 'x', ?, 0, ?, 1.0)", rows)
        c.execute("INSERT INTO sessions VALUES ('S1', ?, 1.0, NULL, '[\"banks-1\", \"banks-2\"]')", ("a" * 20,))


def test_an_old_database_is_numbered_keyed_and_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    old_database(tmp_path)
    store.reset_connections()
    try:
        assert store.learner_name("n" * 20) == "Named"  # the first use migrates
        with sqlite3.connect(tmp_path / "drills.sqlite3") as c:
            assert sorted(r[0] for r in c.execute("SELECT id FROM learners")) == ["a" * 20, "h" * 20, "n" * 20]
            assert c.execute("SELECT COUNT(*) FROM served").fetchone()[0] == 1  # only the hint is kept
            assert c.execute("SELECT drill_id, attempt FROM attempts ORDER BY id").fetchall() == \
                [("offsets-1", 1), ("offsets-1", 2), ("banks-1", 1)]  # numbered; the raced part keeps one answer
        assert [a.attempt for a in store.attempts("a" * 20)] == [1, 2, 1]
        with pytest.raises(store.SessionRefused) as err:
            store.record_attempt("a" * 20, "banks-1", "banks", 1, "x", True, session="S1")
        assert err.value.status == 409
        assert store.record_attempt("a" * 20, "banks-2", "banks", 2, "x", True, session="S1").recorded
        assert store.get_session("a" * 20, "S1")["finished"] is not None  # the last answer finished it
    finally:
        store.reset_connections()
