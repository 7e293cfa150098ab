"""SQLite access for the app (WAL mode): one file per store under the data folder."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from app.config import data_dir


def db_path(name: str = "layoutlab") -> Path:
    """Path of the SQLite file ``<data_dir>/<name>.sqlite3``."""
    return data_dir() / f"{name}.sqlite3"


def _pragma_with_retry(conn: sqlite3.Connection, sql: str, seconds: float = 10.0) -> str | None:
    """Run a PRAGMA that may need a brief exclusive lock. SQLite can answer "database is locked" at once (without
    its busy handler) while another process creates the file or switches it to WAL, so retry for a while."""
    deadline = time.monotonic() + seconds
    delay = 0.01
    while True:
        try:
            row = conn.execute(sql).fetchone()
            return None if row is None else str(row[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def connect(name: str = "layoutlab") -> sqlite3.Connection:
    """Open a connection in WAL mode with row access by name.

    Post-condition: WAL journal, foreign keys on, busy timeout 5 s; safe when several processes (the app and its
    workers) open the same file at the same moment.
    """
    conn = sqlite3.connect(db_path(name), timeout=5.0, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=5000")
    if (_pragma_with_retry(conn, "PRAGMA journal_mode") or "").lower() != "wal":
        _pragma_with_retry(conn, "PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn
