"""The SQL queue under a fast heartbeat (LAYOUTLAB_HEARTBEAT_S=0.05): hundreds of short compile-only jobs (nvcc
skipped) through two `layoutlab worker` processes, on SQLite and on a real PostgreSQL server. Every job ends done,
none failed, and each job's outcome is written exactly once (a trigger in the database logs every write of a final
status), by its first and only attempt.

LAYOUTLAB_STRESS_JOBS sets the number of jobs (default 600; e.g. 5000 for the long run)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JOBS = int(os.environ.get("LAYOUTLAB_STRESS_JOBS", "600"))
WORKERS = 2

_SQLITE_LOG = """
CREATE TABLE outcome_log (id TEXT, status TEXT, worker TEXT, attempts INTEGER);
CREATE TRIGGER outcome_logged AFTER UPDATE OF status ON bench_jobs WHEN NEW.status IN ('done', 'failed')
BEGIN INSERT INTO outcome_log VALUES (NEW.id, NEW.status, NEW.worker, NEW.attempts); END
"""
_PG_LOG = [
    "CREATE TABLE outcome_log (id TEXT, status TEXT, worker TEXT, attempts BIGINT)",
    "CREATE FUNCTION log_outcome() RETURNS trigger AS $$ BEGIN INSERT INTO outcome_log VALUES (NEW.id, NEW.status, "
    "NEW.worker, NEW.attempts); RETURN NEW; END $$ LANGUAGE plpgsql",
    "CREATE TRIGGER outcome_logged AFTER UPDATE OF status ON bench_jobs FOR EACH ROW WHEN (NEW.status IN "
    "('done', 'failed')) EXECUTE FUNCTION log_outcome()",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sql_env(request, tmp_path, monkeypatch):
    """The environment of the test and of its workers: a fast heartbeat, SQLite under tmp_path or a fresh
    PostgreSQL database."""
    env = {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_HEARTBEAT_S": "0.05", "LAYOUTLAB_EMBEDDED_WORKER": "0"}
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    if request.param == "postgres":
        env["LAYOUTLAB_DATABASE_URL"] = request.getfixturevalue("pg_database")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {**os.environ, **env, "PYTHONPATH": str(ROOT)}


def _log_outcomes(store) -> None:
    """Install the outcome log (a real trigger of the database under test)."""
    if store.conn.backend == "sqlite":
        store.conn.executescript(_SQLITE_LOG)
        return
    with store.conn:
        for sql in _PG_LOG:
            store.conn.execute(sql)


def test_hundreds_of_short_jobs_at_a_fast_heartbeat_all_end_done_once(sql_env):
    from gpu_worker.store import SqlStore

    store = SqlStore()
    _log_outcomes(store)
    ids = [store.create("compile_only", {"nvcc": "skip", "tag": str(i)})["id"] for i in range(JOBS)]
    workers = [subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, env=sql_env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(WORKERS)]
    try:
        deadline = time.time() + 30 + JOBS * 0.2
        while store.queue_depth() and time.time() < deadline:
            time.sleep(0.2)
        assert store.queue_depth() == 0, f"{store.queue_depth()} jobs still live"
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(10)
    jobs = [store.get(i) for i in ids]
    bad = [(j["id"], j["status"], j["error"], j["attempts"]) for j in jobs if j["status"] != "done"]
    assert not bad, f"{len(bad)} of {JOBS} not done: {bad[:5]}"
    assert all(j["attempts"] == 1 and j["result"]["worker"] == j["worker"] for j in jobs)
    assert sorted(j["result"]["tag"] for j in jobs) == sorted(str(i) for i in range(JOBS))
    logged = store.conn.execute("SELECT id, COUNT(*) AS n FROM outcome_log GROUP BY id").fetchall()
    twice = [r["id"] for r in logged if r["n"] != 1]
    assert len(logged) == JOBS and not twice, f"outcomes written more than once: {twice[:5]}"
    assert {r["status"] for r in store.conn.execute("SELECT status FROM outcome_log").fetchall()} == {"done"}
