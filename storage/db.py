"""Database access for the app: SQLite files under the data folder (the default), or one PostgreSQL database when
``LAYOUTLAB_DATABASE_URL=postgresql://...`` is set, so that several app servers on several machines share drill
progress, profiles, job history and the lab's rate limits.

Stores are written once, in SQLite's dialect with ``?`` placeholders, against the DB-API subset that
``sqlite3.Connection`` offers: ``execute(sql, args)`` (a cursor with ``fetchone``/``fetchall``/``rowcount``),
``executescript``, ``with conn:`` (one transaction: commit, or roll back on an exception) and ``close``. Rows read by
column name (``row["kind"]``) or position. On PostgreSQL, :class:`PgConnection` offers the same subset through
psycopg 3 and :func:`translate` rewrites the few SQLite-only forms the stores use (see its docstring).
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from storage.config import data_dir

#: Seconds a PostgreSQL connection attempt may take (an unreachable server fails the call instead of hanging it).
CONNECT_TIMEOUT_S = 5
#: Exceptions a unique-key violation raises, on either backend.
IntegrityError: tuple[type[Exception], ...] = (sqlite3.IntegrityError,)


def database_url() -> str | None:
    """``LAYOUTLAB_DATABASE_URL`` when it names PostgreSQL (``postgresql://`` or ``postgres://``), else None
    (SQLite under the data folder). Any other scheme raises ValueError naming the ones accepted."""
    url = os.environ.get("LAYOUTLAB_DATABASE_URL") or None
    if url and not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"LAYOUTLAB_DATABASE_URL must start with postgresql:// (got {url.split(':', 1)[0]}://...)")
    return url


def db_path(name: str = "layoutlab") -> Path:
    """Path of the SQLite file ``<data_dir>/<name>.sqlite3``."""
    return data_dir() / f"{name}.sqlite3"


def cache_key(name: str = "layoutlab") -> str:
    """A key that changes whenever :func:`connect` would reach another database (stores cache connections by it)."""
    return database_url() or str(db_path(name))


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


class SqliteConnection(sqlite3.Connection):
    """sqlite3's connection, tagged with its backend."""

    backend = "sqlite"


def connect(name: str = "layoutlab") -> Any:
    """Open the app's database: a :class:`PgConnection` when :func:`database_url` is set (``name`` is ignored: every
    store shares the one database), else the SQLite file ``name`` in WAL mode.

    Post-condition (SQLite): WAL journal, foreign keys on, busy timeout 5 s, rows by name; safe when several processes
    (the app and its workers) open the same file at the same moment.
    """
    url = database_url()
    if url:
        return PgConnection(url)
    conn = sqlite3.connect(db_path(name), timeout=5.0, check_same_thread=False, factory=SqliteConnection)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=5000")
    if (_pragma_with_retry(conn, "PRAGMA journal_mode") or "").lower() != "wal":
        _pragma_with_retry(conn, "PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


# ------------------------------------------------------------------------------------------------------ PostgreSQL
_SCALAR_MINMAX = re.compile(r"\b(MAX|MIN)\(([^(),]+),([^(),]+)\)", re.IGNORECASE)


def _placeholders(sql: str) -> str:
    """``?`` -> ``%s`` and ``%`` -> ``%%`` outside single-quoted literals."""
    out, quoted = [], False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if not quoted and ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """SQLite's dialect -> PostgreSQL's, for the forms the stores use. Post-condition: the statement means the same:

    - ``?`` placeholders become ``%s`` (a literal ``%`` is doubled);
    - ``INSERT OR IGNORE INTO ...`` becomes ``INSERT INTO ... ON CONFLICT DO NOTHING``;
    - two-argument ``MAX(a, b)`` / ``MIN(a, b)`` become ``GREATEST`` / ``LEAST`` (one-argument aggregates stay);
    - in ``CREATE TABLE``: ``REAL`` becomes ``DOUBLE PRECISION`` (SQLite's REAL is 8 bytes, PostgreSQL's 4) and
      ``INTEGER PRIMARY KEY AUTOINCREMENT`` an identity column, other ``INTEGER`` ``BIGINT`` (SQLite's are 8 bytes).

    ``INSERT OR REPLACE`` has no one-to-one form (PostgreSQL needs the conflict target): it raises ValueError.
    """
    s = sql.strip().rstrip(";")
    head = s.lstrip().upper()
    if re.match(r"INSERT\s+OR\s+REPLACE\b", head):
        raise ValueError("INSERT OR REPLACE is SQLite-only: write INSERT ... ON CONFLICT (key) DO UPDATE")
    m = re.match(r"(\s*)INSERT\s+OR\s+IGNORE\s+INTO\b", s, re.IGNORECASE)
    if m:
        s = f"{m.group(1)}INSERT INTO{s[m.end():]} ON CONFLICT DO NOTHING"
    s = _SCALAR_MINMAX.sub(lambda x: f"{'GREATEST' if x.group(1).upper() == 'MAX' else 'LEAST'}"
                                     f"({x.group(2)},{x.group(3)})", s)
    if head.startswith("CREATE TABLE"):
        s = re.sub(r"INTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                   s, flags=re.IGNORECASE)
        s = re.sub(r"\bREAL\b", "DOUBLE PRECISION", s, flags=re.IGNORECASE)
        s = re.sub(r"\bINTEGER\b", "BIGINT", s, flags=re.IGNORECASE)
    return _placeholders(s)


class Row(dict):
    """A row readable by column name or by position, like sqlite3.Row."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


def _row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]
    return lambda values: Row(zip(names, values, strict=True))


class PgConnection:
    """sqlite3's connection subset over psycopg 3 (autocommit; ``with conn:`` is one transaction). Safe across
    threads when callers serialise their use, as the stores do with their own locks."""

    backend = "postgres"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise RuntimeError("LAYOUTLAB_DATABASE_URL needs psycopg: pip install 'layoutlab[postgres]'") from exc
        global IntegrityError
        IntegrityError = (sqlite3.IntegrityError, psycopg.IntegrityError)
        self._psycopg = psycopg
        self.url = url
        self._conn = psycopg.connect(url, autocommit=True, row_factory=_row_factory,
                                     connect_timeout=CONNECT_TIMEOUT_S)
        self._tx: list[Any] = []
        self._lock = threading.RLock()

    def execute(self, sql: str, args: tuple | list = ()) -> Any:
        """Run one statement; returns its cursor (fetchone / fetchall / rowcount). A connection the server dropped
        (a restart, a network cut) is replaced before the next statement outside a transaction."""
        with self._lock:
            if not self._tx and (self._conn.closed or self._conn.broken):
                self._conn = self._psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                                                  connect_timeout=CONNECT_TIMEOUT_S)
            return self._conn.execute(translate(sql), tuple(args))  # always params: "%%" means "%"

    def executescript(self, script: str) -> None:
        """Run ``;``-separated statements in one transaction (the schemas' CREATE ... IF NOT EXISTS)."""
        statements = [s for s in script.split(";") if s.strip()]
        for attempt in range(3):
            try:
                with self:
                    for s in statements:
                        self.execute(s)
                return
            except self._psycopg.errors.UniqueViolation:  # two servers creating one table at once
                if attempt == 2:
                    raise
                time.sleep(0.1)

    def __enter__(self) -> PgConnection:
        self._lock.acquire()
        try:
            if not self._tx and (self._conn.closed or self._conn.broken):
                self._conn = self._psycopg.connect(self.url, autocommit=True, row_factory=_row_factory,
                                                  connect_timeout=CONNECT_TIMEOUT_S)
            tx = self._conn.transaction()
            tx.__enter__()
        except BaseException:
            self._lock.release()
            raise
        self._tx.append(tx)
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._tx.pop().__exit__(*exc)
        finally:
            self._lock.release()

    def commit(self) -> None:
        """Nothing to do: statements outside ``with`` commit on their own."""

    def close(self) -> None:
        self._conn.close()
