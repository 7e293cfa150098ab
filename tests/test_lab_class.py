"""The class (CONTRACT §7): jobs name their submitter (the drills' profile name) with a "mine" filter; a class code
lifts the per-address limit for its members (who then share the class's quota, the per-client limit still
applying); the instructor's class view lists every job of the class with its submitter and a leaderboard of the best
result per kernel; the data folder and code version are named, and a worker from other code is pointed out."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

TOKEN = "teach-me-cute"


@pytest.fixture()
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    for name in ("LAYOUTLAB_REDIS_URL", "LAYOUTLAB_DATABASE_URL", "LAYOUTLAB_ADMIN_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    monkeypatch.setenv("LAYOUTLAB_CLASS_CODES", "cute-101, hopper-202")
    monkeypatch.setenv("LAYOUTLAB_INSTRUCTOR_TOKEN", TOKEN)
    monkeypatch.setenv("LAYOUTLAB_LAB_RATE", "3/60")
    monkeypatch.setenv("LAYOUTLAB_LAB_ADDRESS_RATE", "4/60")
    monkeypatch.setenv("LAYOUTLAB_LAB_CLASS_RATE", "50/60")
    from app.main import create_app
    from gpu_worker.store import get_store

    get_store().heartbeat({"id": "w-test", "host": "h", "pid": 1, "device": {"available": False, "reason": "no GPU"},
                           "kinds": ["compile_only"], "busy": None})
    return create_app()


def _student(app, name: str | None) -> TestClient:
    c = TestClient(app)
    if name:
        assert c.post("/api/drills/profile", json={"name": name}).status_code == 200
    return c


def _submit(c: TestClient):
    return c.post("/api/bench/jobs", json={"kind": "compile_only", "params": {"nvcc": "skip"}})


def _finish(job_id: str, result: dict, kind: str) -> None:
    """Write a finished result as a worker would (no GPU here): the job's kind and result replaced."""
    from gpu_worker.store import get_store

    get_store().update(job_id, kind=kind, status="done", result=result, finished=time.time())


def test_jobs_name_their_submitter_and_mine_keeps_ones_own(app):
    ada, bob, anon = _student(app, "Ada"), _student(app, "Bob"), _student(app, None)
    a = _submit(ada).json()["id"]
    b = _submit(bob).json()["id"]
    n = _submit(anon).json()["id"]
    listed = {j["id"]: j for j in ada.get("/api/bench/jobs").json()}
    assert (listed[a]["submitter"], listed[b]["submitter"], listed[n]["submitter"]) == ("Ada", "Bob", None)
    assert listed[a]["mine"] and not listed[b]["mine"] and "client" not in listed[a]
    assert [j["id"] for j in ada.get("/api/bench/jobs?mine=true").json()] == [a]
    assert [j["id"] for j in bob.get("/api/bench/jobs", params={"mine": 1}).json()] == [b]
    assert bob.get(f"/api/bench/jobs/{a}").json()["submitter"] == "Ada"
    assert ada.post("/api/drills/profile", json={"name": "Ada L."}).status_code == 200  # a rename shows at once
    assert bob.get(f"/api/bench/jobs/{a}").json()["submitter"] == "Ada L."
    page = ada.get("/lab?mine=1")
    assert page.status_code == 200 and a in page.text and b not in page.text.split('id="history-jobs"')[1]
    assert "Ada L." in bob.get("/lab").text


def test_a_class_code_lifts_the_per_address_limit_but_not_the_per_client_one(app):
    outsiders = [_student(app, f"Out {k}") for k in range(3)]
    codes = [_submit(c).status_code for c in outsiders for _ in range(2)]
    assert codes[:4] == [202] * 4 and set(codes[4:]) == {429}  # 4 per address, whoever sends them
    r = _submit(outsiders[2])
    assert r.status_code == 429 and "this address" in r.json()["detail"] and int(r.headers["Retry-After"]) >= 1

    students = [_student(app, f"Student {k}") for k in range(4)]
    for k, s in enumerate(students):
        if k % 2:
            j = s.post("/api/class/join", json={"code": "cute-101"})
            assert j.status_code == 200 and j.json() == {"class": "cute-101", "quota": {"limit": 50, "window_s": 60}}
        else:  # the drills' profile form has the field too
            assert s.post("/drills/profile", data={"name": f"Student {k}", "class_code": " cute-101 "},
                          follow_redirects=False).status_code == 303
        assert s.get("/api/class").json()["class"] == "cute-101"
    done = [_submit(s).status_code for s in students for _ in range(3)]
    assert done == [202] * 12  # 12 jobs from one address: the class's quota, not the address's
    r = _submit(students[0])
    assert r.status_code == 429 and "this client" in r.json()["detail"]  # the per-client limit still applies

    assert students[0].post("/api/class/join", json={"code": "nope"}).status_code == 403
    assert students[0].post("/api/class/join", json={"code": ""}).status_code == 422
    assert students[0].post("/api/class/join", json={}).status_code == 422
    assert students[0].post("/api/class/join", json={"code": 101}).status_code == 422
    bad = students[0].post("/drills/profile", data={"name": "Student 0", "class_code": "nope"})
    assert bad.status_code == 403 and "not a class code" in bad.text


def test_no_classes_configured_answers_404(app, monkeypatch):
    monkeypatch.delenv("LAYOUTLAB_CLASS_CODES")
    r = TestClient(app).post("/api/class/join", json={"code": "cute-101"})
    assert r.status_code == 404 and "LAYOUTLAB_CLASS_CODES" in r.json()["detail"]


def test_the_instructor_sees_every_job_of_the_class_and_the_leaderboard(app):
    ada, bob, eve = _student(app, "Ada"), _student(app, "Bob"), _student(app, "Eve")
    for s in (ada, bob):
        assert s.post("/api/class/join", json={"code": "cute-101"}).status_code == 200
    assert eve.post("/api/class/join", json={"code": "hopper-202"}).status_code == 200
    ja = [_submit(ada).json()["id"] for _ in range(3)]
    jb = [_submit(bob).json()["id"] for _ in range(2)]
    je = _submit(eve).json()["id"]
    _finish(ja[0], {"tflops": 410.5, "params": {"rung": 7, "m": 4096}}, "gemm")
    _finish(jb[0], {"tflops": 455.0, "params": {"rung": 7, "m": 4096}}, "gemm")
    _finish(ja[1], {"tflops": 120.0, "params": {"rung": 3, "m": 4096}}, "gemm")
    _finish(ja[2], {"variants": {"padded": {"gbps": 2900.0}, "naive": {"gbps": 900.0}}, "config": {"n": 8192}},
            "transpose")
    _finish(jb[1], {"variants": {"padded": {"gbps": 2500.0}}, "config": {"n": 8192}}, "transpose")
    _finish(je, {"tflops": 999.0, "params": {"rung": 7, "m": 4096}}, "gemm")  # another class: not on this board

    assert ada.get("/api/class/cute-101/jobs").status_code == 401
    assert ada.get("/api/class/cute-101/jobs", headers={"Authorization": "Bearer wrong"}).status_code == 403
    auth = {"Authorization": f"Bearer {TOKEN}"}
    inst = TestClient(app)
    view = inst.get("/api/class/cute-101/jobs", headers=auth).json()
    assert {j["id"] for j in view["jobs"]} == set(ja + jb) and view["members"] == 2
    assert {j["id"]: j["submitter"] for j in view["jobs"]} == {**dict.fromkeys(ja, "Ada"), **dict.fromkeys(jb, "Bob")}
    board = {r["kernel"]: r for r in view["leaderboard"]}
    assert board["gemm rung 7 m=4096"]["value"] == 455.0 and board["gemm rung 7 m=4096"]["submitter"] == "Bob"
    assert board["gemm rung 7 m=4096"]["runs"] == 2 and board["gemm rung 7 m=4096"]["better"] == "higher"
    assert board["gemm rung 3 m=4096"]["submitter"] == "Ada"
    assert board["transpose padded n=8192"]["value"] == 2900.0 and board["transpose padded n=8192"]["submitter"] \
        == "Ada"
    assert inst.get("/api/class/nope/jobs", headers=auth).status_code == 404
    assert inst.get("/api/class/hopper-202/jobs", headers={"X-Instructor-Token": TOKEN}).json()["leaderboard"][0][
        "value"] == 999.0

    lb = bob.get("/api/class/cute-101/leaderboard")  # a member sees the board, not the job list
    assert lb.status_code == 200 and "jobs" not in lb.json() and len(lb.json()["leaderboard"]) == 4
    assert eve.get("/api/class/cute-101/leaderboard").status_code == 403
    assert TestClient(app).get("/api/class/cute-101/leaderboard").status_code == 403

    page = inst.post("/lab/class/instructor", data={"token": TOKEN}, follow_redirects=True)
    assert page.status_code == 200 and "cute-101" in page.text
    page = inst.get("/lab/class?code=cute-101")
    assert 'id="class-jobs"' in page.text and "Ada" in page.text and "455.00 TFLOP/s" in page.text
    assert inst.post("/lab/class/instructor", data={"token": "wrong"}).status_code == 403


def test_the_data_folder_and_code_version_are_named(app, tmp_path):
    from gpu_worker.store import get_store
    from storage.version import code_version

    c = TestClient(app)
    h = c.get("/healthz").json()
    assert h["data_dir"] == str(tmp_path) and h["code_version"] == code_version()
    dev = c.get("/api/bench/device").json()
    assert dev["data_dir"] == str(tmp_path) and {w["id"] for w in dev["mixed_versions"]} == {"w-test"}
    get_store().heartbeat({"id": "w-test", "host": "h", "pid": 1, "kinds": ["compile_only"], "busy": None,
                           "device": {"available": False, "reason": "no GPU", "code_version": code_version()}})
    assert c.get("/api/bench/device").json()["mixed_versions"] == []
    get_store().heartbeat({"id": "w-test", "host": "h", "pid": 1, "kinds": ["compile_only"], "busy": None,
                           "device": {"available": False, "reason": "no GPU", "code_version": "0123456789ab"}})
    page = c.get("/lab").text
    assert 'id="mixed-versions"' in page and "0123456789ab" in page and str(tmp_path) in page


def test_guessing_a_class_code_or_the_instructor_token_is_limited(app):
    c = TestClient(app)
    codes = [c.post("/api/class/join", json={"code": f"guess-{k}"}).status_code for k in range(11)]
    assert codes[:10] == [403] * 10 and codes[10] == 429
    r = c.post("/api/class/join", json={"code": "cute-101"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    pages = [c.post("/lab/class/instructor", data={"token": f"t{k}"}).status_code for k in range(11)]
    assert pages[:10] == [403] * 10 and pages[10] == 429
    from app.services import lab_class

    cookie = lab_class.instructor_cookie(TOKEN)
    assert TOKEN not in cookie  # the cookie holds a fingerprint, never the token
    assert lab_class.is_instructor({}, {lab_class.INSTRUCTOR_COOKIE: cookie})
    assert not lab_class.is_instructor({}, {lab_class.INSTRUCTOR_COOKIE: lab_class.instructor_cookie("other")})


def test_a_name_given_after_the_jobs_still_names_them(app):
    c = TestClient(app)
    job = _submit(c).json()["id"]  # no drills profile yet: no name
    assert c.get(f"/api/bench/jobs/{job}").json()["submitter"] is None
    assert c.post("/api/drills/profile", json={"name": "Late Lin"}).status_code == 200
    assert TestClient(app).get(f"/api/bench/jobs/{job}").json()["submitter"] == "Late Lin"


def test_the_leaderboard_keeps_a_best_result_older_than_the_newest_jobs_listed(app, monkeypatch):
    """The board is the best of every finished job of the class, however many jobs came after it: the job list is
    capped (MAX_JOBS, here 3), the record is not."""
    from app.services import lab_class
    from gpu_worker.store import get_store

    monkeypatch.setattr(lab_class, "MAX_JOBS", 3)
    ada, bob = _student(app, "Ada"), _student(app, "Bob")
    for s in (ada, bob):
        assert s.post("/api/class/join", json={"code": "cute-101"}).status_code == 200
    best = _submit(ada).json()["id"]
    _finish(best, {"tflops": 600.0, "params": {"rung": 8, "m": 4096}}, "gemm")
    bob_client = get_store().get(_submit(bob).json()["id"])["client"]
    later = [get_store().create("compile_only", {"nvcc": "skip"}, client=bob_client)["id"] for _ in range(4)]
    for k, job in enumerate(later):
        _finish(job, {"tflops": 500.0 + k, "params": {"rung": 8, "m": 4096}}, "gemm")
    view = TestClient(app).get("/api/class/cute-101/jobs", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert len(view["jobs"]) == 3 and best not in {j["id"] for j in view["jobs"]}
    row = next(r for r in view["leaderboard"] if r["kernel"] == "gemm rung 8 m=4096")
    assert (row["value"], row["submitter"], row["job"], row["runs"]) == (600.0, "Ada", best, 5)
    assert bob.get("/api/class/cute-101/leaderboard").json()["leaderboard"] == view["leaderboard"]


def test_the_mine_flag_is_read_one_way_by_the_json_route_and_the_pages(app):
    """One parser (app.services.bench.mine_flag) for ``?mine=``: the spellings the JSON route takes keep the same jobs
    on /lab and /lab/history, and a value it refuses with 422 (``maybe``, ``x``) the pages refuse too, naming it
    inline."""
    import random

    ada, bob = _student(app, "Ada"), _student(app, "Bob")
    a, b = _submit(ada).json()["id"], _submit(bob).json()["id"]
    rng = random.Random(13700)
    spellings = ["1", "true", "yes", "on", "t", "y", "0", "false", "no", "off", "f", "n", "", "maybe", "x", "2",
                 "truee", "-1", "none", "null", "ja"]
    spellings += ["".join(ch.upper() if rng.random() < 0.5 else ch for ch in s) for s in spellings]
    for value in spellings:
        api = ada.get("/api/bench/jobs", params={"mine": value})
        for path in ("/lab/history", "/lab"):
            page = ada.get(path, params={"mine": value})
            if api.status_code == 422:  # a page names a value it does not take inline (app/page_query.py)
                assert page.status_code == 200 and '<li data-field="mine">' in page.text, (path, value)
                assert "is not a flag" in api.json()["detail"] and "is not a flag" in page.text, (path, value)
                continue
            assert page.status_code == api.status_code, (path, value, page.status_code, api.status_code)
            listed = page.text.split('id="history-jobs"')[1]
            assert a in listed and (b in listed) == (b in {j["id"] for j in api.json()}), (path, value)
        if api.status_code == 200:
            assert {j["id"] for j in api.json()} == ({a} if value.lower() in ("1", "true", "yes", "on", "t", "y")
                                                     else {a, b}), value
    assert [api.status_code for api in (ada.get("/api/bench/jobs?mine=maybe"), ada.get("/lab/history?mine=x"))] \
        == [422, 200]
    poll = ada.get("/lab/history", headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/lab?mine=x"})
    assert poll.status_code == 200 and '<li data-field="mine">' in poll.text  # the poll reads the page's URL alike


def test_a_class_of_many_behind_one_address_joins_and_only_wrong_codes_count_as_guesses(app):
    """A class behind one NAT: 25 students join with the right code within a minute (a right code is no guess, so it
    never counts against the address's limit on attempts), in any Unicode normal form of the code, then submit
    on the class's quota; wrong codes still count, and past JOIN_RATE's worth of them every attempt from the address
    is 429 with Retry-After, on the API and on the page form alike. A right instructor token never counts either."""
    from app.services import lab_class

    students = [_student(app, None) for _ in range(25)]
    for k, s in enumerate(students):
        code = "cute-101" if k % 3 else "  cute-101 "
        r = s.post("/api/class/join", json={"code": code}) if k % 2 else s.post("/lab/class/join", data={"code": code},
                                                                                 follow_redirects=False)
        assert r.status_code in (200, 303), (k, r.status_code, r.text[:200])
    assert {s.get("/api/class").json()["class"] for s in students} == {"cute-101"}
    assert [_submit(s).status_code for s in students] == [202] * 25  # far over the address's 4 a minute
    c = TestClient(app)
    signed = [c.post("/lab/class/instructor", data={"token": TOKEN}, follow_redirects=False).status_code
              for _ in range(12)]
    assert signed == [303] * 12
    wrong = [c.post("/api/class/join", json={"code": f"guess-{k}"}).status_code for k in range(lab_class.JOIN_RATE[0])]
    assert wrong == [403] * lab_class.JOIN_RATE[0]
    for r in (c.post("/api/class/join", json={"code": "cute-101"}),
              c.post("/lab/class/join", data={"code": "cute-101"}),
              c.post("/api/drills/profile", json={"name": "Late", "class_code": "cute-101"}),
              c.post("/drills/profile", data={"name": "Late", "class_code": "cute-101"})):
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, (r.status_code, r.text[:200])


def test_a_class_code_matches_in_any_unicode_normal_form(app, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_CLASS_CODES", "Übung-3, cute-101")
    c = TestClient(app)
    for given in ("Übung-3", "U\u0308bung-3", " \uff35\u0308bung-3 "):  # composed, decomposed, full width
        r = c.post("/api/class/join", json={"code": given})
        assert r.status_code == 200 and r.json()["class"] == "Übung-3", (given, r.text)
    for wrong in ("übung-3", "Ubung-3", "Übung-3\u0000", "Übung"):
        assert c.post("/api/class/join", json={"code": wrong}).status_code == 403, wrong


def test_guessing_the_instructor_token_through_the_api_is_limited_too(app):
    """The class view's Bearer token is the class page's sign-in token: wrong ones count against the address as
    the page's do (they were unlimited on the API), and past the limit even the right one waits (429)."""
    from app.services import lab_class

    c = TestClient(app)
    assert c.get("/api/class/cute-101/jobs", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    wrong = [c.get("/api/class/cute-101/jobs", headers={"Authorization": f"Bearer t{k}"}).status_code
             for k in range(lab_class.JOIN_RATE[0])]
    assert wrong == [403] * lab_class.JOIN_RATE[0]
    for r in (c.get("/api/class/cute-101/jobs", headers={"X-Instructor-Token": "t-last"}),
              c.get("/api/class/cute-101/jobs", headers={"Authorization": f"Bearer {TOKEN}"}),
              c.post("/lab/class/instructor", data={"token": TOKEN})):
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, r.text[:200]
    assert c.get("/api/class/cute-101/jobs").status_code == 401  # no token at all: nothing guessed


def test_a_refused_name_joins_no_class(app):
    """The drills profile's name and class code are one form: a name refused (mixing scripts: 422; another browser's:
    409) leaves the class unjoined, on the API and on the page form alike, and a right name with the code joins."""
    owner = _student(app, "Taken")
    assert owner.get("/api/class").json()["class"] is None
    for name, status in (("Αlice", 422), ("taken", 409)):  # a Greek capital alpha before Latin letters
        c = TestClient(app)
        r = c.post("/api/drills/profile", json={"name": name, "class_code": "cute-101"})
        assert r.status_code == status, r.text[:200]
        assert c.get("/api/class").json()["class"] is None, name
        r = c.post("/drills/profile", data={"name": name, "class_code": "cute-101"}, follow_redirects=False)
        assert r.status_code == status, r.text[:200]
        assert c.get("/api/class").json()["class"] is None, name
    c = TestClient(app)
    assert c.post("/api/drills/profile", json={"name": "Bob", "class_code": "cute-101"}).status_code == 200
    assert c.get("/api/class").json()["class"] == "cute-101"
