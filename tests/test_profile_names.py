"""Profile names are one name under NFKC + casefold with look-alike letters read alike (app.drills.names): ``Ada``,
``ada``, ``Ａｄａ`` and the Cyrillic ``Рома`` / Latin ``Poma`` cannot be held by two browsers, a name mixing scripts
(``Adа`` with a Cyrillic ``а``) is refused with the rule in a 422, and a unique key on the normalised name decides races
on SQLite and on a real PostgreSQL; an old database holding clashing names migrates at startup (the oldest keeps its
name, the later ones are renamed) instead of failing."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi.testclient import TestClient

from app.drills import names
from tests.conftest import race

CLASHING = ["Ada", "ada", "ADA", "Ａｄａ", "aDA", " Ada ", "ａｄａ", "AdA"]


def test_the_key_and_the_rule():
    assert {names.name_key(x) for x in CLASHING} == {"ada"}
    assert names.name_key("Рома") == names.name_key("Poma") == names.name_key("POMA")
    assert names.name_key("Ada  L.") == names.name_key("ada l.") and names.name_key("Ada") != names.name_key("Adam")
    assert names.check(" Ａｄａ  L. ") == "Ada L." and names.check("ﬁona") == "fiona"
    for fine in ("Рома", "Αλέξης", "山田 たろう", "हिन्दी", "O'Neil_2", "José"):
        assert names.check(fine) == fine
    with pytest.raises(ValueError, match="mixes Cyrillic and Latin letters"):
        names.check("Adа")
    with pytest.raises(ValueError, match="mixes Greek and Latin letters"):
        names.check("Αda")
    for bad in ("", "   ", "x" * 41, "a<b", "١٢", "Ada\u200b", "\u0301a"):
        with pytest.raises(ValueError, match="1-40 letters of one script"):
            names.check(bad)


@pytest.fixture()
def sqlite_store(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    from app.drills import store

    store.reset_connections()
    yield store
    store.reset_connections()


@pytest.fixture()
def pg_store(drills_pg):
    from app.drills import store

    return store


def test_look_alike_names_are_refused_through_the_api_and_the_page(sqlite_store, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    from app.main import create_app

    app = create_app()
    ada, eve = TestClient(app), TestClient(app)
    r = ada.post("/api/drills/profile", json={"name": "Ａｄａ"})
    assert r.status_code == 200 and r.json()["name"] == "Ada"
    for other in ("ada", "ADA", "Ada", " ａｄａ "):
        r = eve.post("/api/drills/profile", json={"name": other})
        assert r.status_code == 409, other
        assert "belongs to another browser" in r.json()["detail"] and "case, width" in r.json()["detail"]
    r = eve.post("/api/drills/profile", json={"name": "Adа"})  # Cyrillic а
    assert r.status_code == 422 and "mixes Cyrillic and Latin letters" in r.json()["detail"]
    page = eve.post("/drills/profile", data={"name": "aDa"}, follow_redirects=False)
    assert page.status_code == 409 and "belongs to another browser" in page.text
    page = eve.post("/drills/profile", data={"name": "Adа"}, follow_redirects=False)
    assert page.status_code == 422 and "mixes Cyrillic and Latin letters" in page.text
    assert eve.post("/api/drills/profile", json={"name": "Рома"}).json()["name"] == "Рома"
    assert ada.post("/api/drills/profile", json={"name": "Poma"}).status_code == 409  # the Cyrillic Рома holds it
    r = ada.post("/api/drills/profile", json={"name": "ADA"})  # one's own name in another case: a rename
    assert r.status_code == 200 and r.json()["name"] == "ADA"


def _one_holder(store):
    out = race(len(CLASHING), lambda i: store.claim_name(store.learner_id(None)[0], CLASHING[i]))
    won = [x for x in out if isinstance(x, str)]
    assert len(won) == 1 and all(isinstance(x, store.NameTaken) for x in out if not isinstance(x, str)), out
    held = store_db_rows(store, "SELECT name, name_key FROM learners WHERE name IS NOT NULL")
    assert len(held) == 1 and held[0][1] == "ada"


def store_db_rows(store, sql):
    from app.drills import store_db

    return [tuple(r[i] for i in range(len(r))) for r in store_db.read(sql)]


def test_racing_look_alike_claims_leave_one_holder_on_sqlite(sqlite_store):
    _one_holder(sqlite_store)


@pytest.mark.postgres
def test_racing_look_alike_claims_leave_one_holder_on_postgres(pg_store):
    _one_holder(pg_store)


OLD_ROWS = [("l-ada2-000000000001", "ada-2", 0.5), ("l-ada-0000000000001", "Ada", 1.0),
            ("l-ada-0000000000002", "ada", 2.0), ("l-ada-0000000000003", "ADA", 3.0),
            ("l-ada-0000000000004", "Adа", 4.0), ("l-bob-0000000000001", "Bob", 5.0),
            ("l-long-000000000001", "x" * 40, 6.0), ("l-long-000000000002", "X" * 40, 7.0)]
MIGRATED = {"l-ada2-000000000001": "ada-2", "l-ada-0000000000001": "Ada", "l-ada-0000000000002": "ada-3",
            "l-ada-0000000000003": "ADA-4", "l-ada-0000000000004": "Adа-5", "l-bob-0000000000001": "Bob",
            "l-long-000000000001": "x" * 40, "l-long-000000000002": "X" * 38 + "-2"}


def _migrated(store):
    """Startup on the old rows: no error, the oldest of each clash keeps its name, every key unique, and a new claim
    of a look-alike is refused by the key."""
    assert {k: store.learner_name(k) for k in MIGRATED} == MIGRATED
    rows = store_db_rows(store, "SELECT name, name_key FROM learners WHERE name IS NOT NULL")
    assert len({k for _, k in rows}) == len(rows) == len(MIGRATED)
    assert all(k == names.name_key(n) for n, k in rows)
    with pytest.raises(store.NameTaken, match="'Ada'"):
        store.claim_name(store.learner_id(None)[0], "aDa")
    assert store.claim_name("l-ada-0000000000002", "ADA-3") == "l-ada-0000000000002"  # its own, in another case
    store.reset_connections()  # a second start migrates nothing more
    assert {k: store.learner_name(k) for k in MIGRATED} == {**MIGRATED, "l-ada-0000000000002": "ADA-3"}


def test_an_old_sqlite_database_with_clashing_names_migrates(sqlite_store):
    from storage import db

    with sqlite3.connect(db.db_path("drills")) as c:
        c.execute("CREATE TABLE learners (id TEXT PRIMARY KEY, name TEXT UNIQUE, created REAL NOT NULL)")
        c.executemany("INSERT INTO learners VALUES (?, ?, ?)", OLD_ROWS)
    _migrated(sqlite_store)


@pytest.mark.postgres
def test_an_old_postgres_database_with_clashing_names_migrates(pg_store, pg_database):
    import psycopg

    with psycopg.connect(pg_database, autocommit=True) as c:
        c.execute("CREATE TABLE learners (id TEXT PRIMARY KEY, name TEXT UNIQUE, created DOUBLE PRECISION NOT NULL)")
        for row in OLD_ROWS:
            c.execute("INSERT INTO learners VALUES (%s, %s, %s)", row)
    _migrated(pg_store)
    with psycopg.connect(pg_database) as c:
        assert c.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'learners_name_once'").fetchone()[0] \
            .startswith("CREATE UNIQUE INDEX")
