"""Redis mode on a real redis-server: listing jobs (GET /api/bench/jobs) only reads, however many finished jobs wait
to be archived: no write command reaches Redis (every command it ran is one Redis flags read-only, and the server's
count of changes does not move), the history table gains no row, and each call reads one page of hashes. Archiving
is the app's periodic task (gpu_worker.archiver), which then copies every finished job once."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.redis
FINISHED = 3000


@pytest.fixture()
def redis_client(redis_url, tmp_path, monkeypatch):
    """A TestClient on an app in Redis mode whose archiver is off (LAYOUTLAB_ARCHIVE_S=0), and no worker."""
    from fastapi.testclient import TestClient

    for k, v in {"LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_REDIS_URL": redis_url, "LAYOUTLAB_ARCHIVE_S": "0",
                 "LAYOUTLAB_EMBEDDED_WORKER": "0"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    from app.main import create_app

    with TestClient(create_app()) as c:
        yield c


def _finish_many(store, n: int) -> list[str]:
    """``n`` jobs taken and finished through the queue's own scripts, as a worker leaves them (none archived yet):
    the steps of create, lease and finish, batched in pipelines so that thousands take a moment."""
    from gpu_worker.redis_store import GROUP
    from gpu_worker.store import new_job, new_token

    jobs = [new_job("compile_only", {"nvcc": "skip", "tag": str(i)}) for i in range(n)]
    pipe = store.r.pipeline(transaction=False)
    for job in jobs:
        store._scripts["create"](keys=[store._key(job["id"]), "layoutlab:jobs", store.queue],
                                 args=[job["id"], job["created"], *store._encode(job)], client=pipe)
    pipe.execute()
    entries = [e for _, msgs in store.r.xreadgroup(GROUP, "filler", {store.queue: ">"}, count=n) for e in msgs]
    assert [e[1]["job"] for e in entries] == [j["id"] for j in jobs]
    tokens, now = [new_token() for _ in jobs], time.time()
    for (eid, _), job, token in zip(entries, jobs, tokens, strict=True):
        store._scripts["take"](keys=[store._key(job["id"]), store.queue, store.finished],
                               args=[eid, '"filler"', now, now + 30, 3, GROUP, job["id"], token], client=pipe)
    assert pipe.execute() == [1] * n
    for i, (job, token) in enumerate(zip(jobs, tokens, strict=True)):
        store._scripts["finish"](keys=[store._key(job["id"]), store.queue, store.finished],
                                 args=[GROUP, f'"{token}"', now, job["id"],
                                       *store._encode({"status": "done", "result": {"n": i}, "finished": now})],
                                 client=pipe)
    assert pipe.execute() == [1] * n
    return [j["id"] for j in jobs]


def _writes(r) -> tuple[int, list[str]]:
    """The server's change count, and the commands run since the last CONFIG RESETSTAT that Redis flags as writes,
    or that are scripts (which may write)."""
    called = [k.removeprefix("cmdstat_") for k in r.info("commandstats")]
    info = r.execute_command("COMMAND", "INFO", *called) if called else {}
    flagged = sorted(c for c in called if c.startswith(("eval", "fcall")) or
                     "write" in (info.get(c) or {}).get("flags", ()))
    return int(r.info("persistence")["rdb_changes_since_last_save"]), flagged


def test_listing_thousands_of_finished_jobs_does_no_writes(redis_client):
    from gpu_worker import archiver
    from gpu_worker import store as job_store

    live = job_store.get_store()
    ids = _finish_many(live, FINISHED)
    assert live.r.zcard(live.finished) == FINISHED
    history = job_store.history_store()
    changes, _ = _writes(live.r)
    keys = live.r.dbsize()
    live.r.config_resetstat()
    for _ in range(5):
        page = redis_client.get("/api/bench/jobs", params={"limit": 200})
        assert page.status_code == 200, page.text
        assert [j["id"] for j in page.json()] == ids[::-1][:200]
    after, flagged = _writes(live.r)
    assert after == changes and not flagged, flagged
    assert live.r.dbsize() == keys and live.r.zcard(live.finished) == FINISHED
    assert live.r.info("commandstats")["cmdstat_hgetall"]["calls"] == 5 * 200  # one page a call, not the backlog
    assert history.queue_depth() == 0 and history.list_jobs(5) == []
    assert archiver.archive_once() == FINISHED  # the periodic task copies them all, once
    assert archiver.archive_once() == 0 and live.r.zcard(live.finished) == 0
    assert {j["id"] for j in history.list_jobs(FINISHED + 1)} == set(ids)
    assert len(redis_client.get("/api/bench/jobs", params={"limit": 1}).json()) == 1
    for bad in (0, 201):  # outside 1..200: refused by name, not clipped
        r = redis_client.get("/api/bench/jobs", params={"limit": bad})
        assert r.status_code == 422 and r.json()["detail"].startswith("limit:"), r.text
    assert redis_client.get("/api/bench/jobs", params={"limit": "many"}).status_code == 422


def test_archiver_setting_is_checked(monkeypatch):
    from gpu_worker import archiver

    monkeypatch.setenv("LAYOUTLAB_ARCHIVE_S", "soon")
    with pytest.raises(ValueError, match="LAYOUTLAB_ARCHIVE_S"):
        archiver.archive_s()
    monkeypatch.setenv("LAYOUTLAB_ARCHIVE_S", "0")
    import threading

    assert archiver.start(threading.Event()) is None
