"""The drill learning record on PostgreSQL (LAYOUTLAB_DATABASE_URL, a real server; skipped without one): reveals,
first-try promotion per sub-skill, hints, profile names that cannot be taken over, and whiteboard sessions of the
full sheet, through the same store code as on SQLite."""

from __future__ import annotations

import pytest

from app.drills.core import DrillError, from_id

pytestmark = pytest.mark.postgres


@pytest.fixture()
def pg(pg_database, tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATABASE_URL", pg_database)
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    from app.drills import store

    store.reset_connections()
    yield pg_database
    store.reset_connections()


def test_learning_record_on_postgres(pg):
    from app.drills import progress, store

    a, b = store.ensure_learner(None), store.ensure_learner(None)
    assert store.claim_name(a, "Grace") == a
    with pytest.raises(store.NameTaken):
        store.claim_name(b, "Grace")
    d = from_id("banks-3")
    store.note_hint(a, d.id, 1)
    store.record_attempt(a, d.id, d.kind, d.seed, "x", False, skill=d.skill)
    store.record_reveal(a, d.id, d.kind, d.seed, skill=d.skill)
    store.record_reveal(a, d.id, d.kind, d.seed, skill=d.skill)  # a second reveal changes nothing
    assert store.revealed(a, d.id) and store.solved(a, d.id) and not store.solved(b, d.id)
    store.record_attempt(a, d.id, d.kind, d.seed, d.expected, True, skill=d.skill)
    assert store.srs_boxes(a)[d.skill][0] == 0  # right after a reveal: not promoted
    e = from_id("offsets-4")
    store.record_attempt(a, e.id, e.kind, e.seed, e.expected, True, skill=e.skill)
    assert store.srs_boxes(a)[e.skill][0] == 1  # right at the first try: promoted
    assert [x.correct for x in store.attempts(a)] == [False, False, True, True]
    sid = progress.start_whiteboard(a)
    res = progress.session_results(a, sid)
    assert len(res["sheet"]) == 7 and res["total"] >= 21 and res["current"] == 0
    with pytest.raises(DrillError):
        progress.session_results(b, sid)
