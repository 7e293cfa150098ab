"""Submission limits kept in the lab's database: a generic cell rate algorithm (GCRA) per key.

Each key holds one number, its theoretical arrival time (tat). A limit of N events per W seconds admits an event at
``now`` when ``max(tat, now) + W / N - now <= W`` and then moves tat to ``max(tat, now) + W / N``: a burst of N from
a full bucket, then one every W / N seconds. One SQL statement does the test and the move, so app servers sharing a
database (SQLite or PostgreSQL) never double-count, and a fixed window's reset at its edge cannot happen.
"""

from __future__ import annotations

import threading
import time
from typing import Any

QUOTA_SCHEMA = """
DROP TABLE IF EXISTS lab_rate;
CREATE TABLE IF NOT EXISTS lab_quota (key TEXT PRIMARY KEY, tat REAL NOT NULL);
CREATE INDEX IF NOT EXISTS lab_quota_tat ON lab_quota (tat)
"""
#: One GCRA step (parameters: key, first tat, then now, now, interval, now, now, interval, now, window): tat moves one
#: interval past max(tat, now) unless that would put it more than a window ahead; no row comes back when refused.
_ADMIT = ("INSERT INTO lab_quota (key, tat) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
          "tat = (CASE WHEN lab_quota.tat > ? THEN lab_quota.tat ELSE ? END) + ? "
          "WHERE (CASE WHEN lab_quota.tat > ? THEN lab_quota.tat ELSE ? END) + ? - ? <= ? RETURNING tat")


class _Refused(Exception):
    """Rolls back an admission that one of its rules refused."""


class Quota:
    """The rate-limit half of gpu_worker.store.SqlStore (its ``conn`` and ``_lock``)."""

    conn: Any
    _lock: threading.RLock

    def admit(self, rules: list[tuple[str, int, float]], now: float | None = None) -> tuple[str, float] | None:
        """Count one event against every ``(key, limit, window_s)`` rule at once, as a generic cell rate algorithm
        (GCRA) shared by every app server on this database: a key admits a burst of ``limit`` events, then one
        every ``window_s / limit`` seconds, whenever the burst began (a fixed window reset a burst at its edge).

        Returns None when every rule admits the event (each key has then counted it), else ``(key, seconds)``: the
        refusing key that waits longest and the seconds until it admits one; no key has then counted the event.
        Post-condition: one row per key whose bucket is not full again (rows whose time has come are dropped whenever
        a new key arrives)."""
        with self._lock:
            return self._admit(rules, time.time() if now is None else now)

    def waiting(self, key: str, limit: int, window: float, now: float | None = None) -> float | None:
        """The seconds until the rule ``(key, limit, window_s)`` admits an event, or None when it would admit one now.
        Counts nothing: for limits that count only some events (a wrong guess), checked before the event is judged."""
        now = time.time() if now is None else now
        step = window / max(1, limit)
        with self._lock:
            row = self.conn.execute("SELECT tat FROM lab_quota WHERE key = ?", (key,)).fetchone()
        wait = float(row[0]) + step - window - now if row else 0.0
        return wait if wait > 1e-6 else None

    def _admit(self, rules: list[tuple[str, int, float]], now: float) -> tuple[str, float] | None:
        refused: tuple[str, float] | None = None
        try:
            with self.conn:
                fresh = False
                for key, limit, window in rules:
                    step = window / max(1, limit)
                    got = self.conn.execute(_ADMIT, (key, now + step, now, now, step, now, now, step, now,
                                                     window + 1e-6)).fetchall()
                    if not got:
                        tat = float(self.conn.execute("SELECT tat FROM lab_quota WHERE key = ?",
                                                      (key,)).fetchone()[0])
                        wait = max(tat + step - window - now, 1e-6)
                        if refused is None or wait > refused[1]:
                            refused = (key, wait)
                    else:
                        fresh = fresh or abs(float(got[0][0]) - (now + step)) < 1e-9
                if refused is not None:
                    raise _Refused
        except _Refused:
            return refused
        if fresh:
            self._drop_full_buckets(now)
        return None

    def _drop_full_buckets(self, now: float) -> None:
        """Delete the keys whose theoretical arrival time has passed (their buckets are full: the same as absent).
        PostgreSQL skips rows another server holds, so two cleaners never wait on each other."""
        skip = " FOR UPDATE SKIP LOCKED" if getattr(self.conn, "backend", "sqlite") == "postgres" else ""
        with self.conn:
            self.conn.execute("DELETE FROM lab_quota WHERE key IN (SELECT key FROM lab_quota WHERE tat <= ?"
                              f"{skip})", (now,))

    def rate_rows(self) -> int:
        """Rows in the rate-limit table (keys whose buckets are not full again, or full since the last new key)."""
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM lab_quota").fetchone()[0])
