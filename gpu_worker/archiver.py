"""The history archiver of Redis mode: a periodic task of the app that copies finished jobs from Redis into the
history table (gpu_worker.store.sync_history), so that a listing only reads.

It runs in the app (the history table is the app's database: a worker on another host has a SQLite file of its own),
every LAYOUTLAB_ARCHIVE_S seconds (default 5; 0 turns it off), and only when LAYOUTLAB_REDIS_URL is set at start-up.
Each round copies in batches until no finished job is left uncopied (at most MAX_ROUND jobs), and deletes the jobs
whose retention ran out.
"""

from __future__ import annotations

import logging
import os
import threading
import traceback

from gpu_worker import store as job_store

log = logging.getLogger("layoutlab.archiver")
BATCH = 500
#: The most jobs one round copies (a backlog larger than this is worked off over several rounds).
MAX_ROUND = 20 * BATCH


def archive_s() -> float:
    """Seconds between rounds (LAYOUTLAB_ARCHIVE_S, default 5); 0 or less: no archiver. A value that is not a number
    raises ValueError naming the variable."""
    raw = os.environ.get("LAYOUTLAB_ARCHIVE_S", "5")
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"LAYOUTLAB_ARCHIVE_S must be a number of seconds, got {raw!r}") from None


def archive_once(batch: int = BATCH, most: int = MAX_ROUND) -> int:
    """One round: copy finished jobs into the history table, ``batch`` at a time, until none is left or ``most``
    were copied. Returns how many were copied (0 in SQL mode, where the job table is the history)."""
    total = 0
    while total < most:
        copied = job_store.sync_history(min(batch, most - total))
        total += copied
        if copied < batch:
            break
    return total


def run(stop: threading.Event, every_s: float) -> None:
    """Archive every ``every_s`` seconds until ``stop`` is set; a failed round is logged and retried next time."""
    while not stop.wait(every_s):
        try:
            archive_once()
        except Exception as exc:
            from storage.outage import describe, is_outage

            why = describe(exc) if is_outage(exc) else traceback.format_exc()
            log.warning("archiving finished jobs failed: %s", why)


def start(stop: threading.Event) -> threading.Thread | None:
    """Start the archiver thread when Redis mode is on and LAYOUTLAB_ARCHIVE_S > 0; None otherwise. It ends once
    ``stop`` is set."""
    from storage.config import redis_url

    every = archive_s()
    if not redis_url() or every <= 0:
        return None
    thread = threading.Thread(target=run, args=(stop, every), name="layoutlab-archiver", daemon=True)
    thread.start()
    return thread
