"""SQLite access for the app (WAL mode): one file per store under the data folder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.config import data_dir


def db_path(name: str = "layoutlab") -> Path:
    """Path of the SQLite file ``<data_dir>/<name>.sqlite3``."""
    return data_dir() / f"{name}.sqlite3"


def connect(name: str = "layoutlab") -> sqlite3.Connection:
    """Open a connection in WAL mode with row access by name. Post-condition: foreign keys on, busy timeout 5 s."""
    conn = sqlite3.connect(db_path(name), timeout=5.0, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn
