"""The drill store's database: schema, migrations, a small pool of connections and the one way to write.

Every write is one transaction (:func:`atomically`) whose rules hold in the database itself, not in this process:

- On SQLite the transaction starts with ``BEGIN IMMEDIATE``: it holds the file's write lock from its first read, so
  what it read stays true until it commits, whichever process or connection writes next.
- On PostgreSQL (READ COMMITTED) unique keys arbitrate: two transactions that read the same state and write the same
  key collide on the key; the loser is rolled back and run again, and then reads the winner's rows.

Connections come from a pool per database (``LAYOUTLAB_DB_POOL``, default 8), one connection per thread at a time,
so threads of one server are as independent of each other as separate servers are.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from app.drills import names
from storage import db

DB_NAME = "drills"
T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS learners (
  id TEXT PRIMARY KEY, name TEXT UNIQUE, created REAL NOT NULL, name_key TEXT);
CREATE TABLE IF NOT EXISTS served (
  learner TEXT NOT NULL, drill_id TEXT NOT NULL, served_at REAL NOT NULL, hints INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (learner, drill_id));
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT, learner TEXT NOT NULL, drill_id TEXT NOT NULL, kind TEXT NOT NULL,
  seed INTEGER NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL, elapsed_s REAL, hints INTEGER NOT NULL,
  session TEXT, created REAL NOT NULL, attempt INTEGER);
CREATE INDEX IF NOT EXISTS attempts_learner ON attempts (learner, kind, created);
CREATE TABLE IF NOT EXISTS srs (
  learner TEXT NOT NULL, kind TEXT NOT NULL, box INTEGER NOT NULL, due REAL NOT NULL, PRIMARY KEY (learner, kind));
CREATE TABLE IF NOT EXISTS reveals (
  learner TEXT NOT NULL, drill_id TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (learner, drill_id));
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, learner TEXT NOT NULL, started REAL NOT NULL, finished REAL, parts TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_learner ON sessions (learner);
"""

#: The keys that make the record exact: one attempt per (learner, drill, attempt number), one per whiteboard part.
KEYS = """
CREATE UNIQUE INDEX IF NOT EXISTS attempts_once ON attempts (learner, drill_id, attempt);
CREATE UNIQUE INDEX IF NOT EXISTS attempts_part ON attempts (session, drill_id) WHERE session IS NOT NULL;
"""

#: Activity that makes a learner worth keeping; a learner row with none of it (and no name) is pruned.
_IDLE_LEARNER = ("name IS NULL"
                 " AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.learner = learners.id)"
                 " AND NOT EXISTS (SELECT 1 FROM served s WHERE s.learner = learners.id)"
                 " AND NOT EXISTS (SELECT 1 FROM reveals r WHERE r.learner = learners.id)"
                 " AND NOT EXISTS (SELECT 1 FROM srs k WHERE k.learner = learners.id)"
                 " AND NOT EXISTS (SELECT 1 FROM sessions w WHERE w.learner = learners.id)")


def _columns(c: Any, table: str) -> set[str]:
    return {d[0] for d in c.execute(f"SELECT * FROM {table} WHERE 1 = 0").description}


def migrate(c: Any) -> dict[str, int]:
    """Bring an existing database to the current schema, in one transaction. Post-conditions: every attempt has its
    number (1, 2, ... per learner and drill, in the order they were stored); a whiteboard part keeps only its first
    answer (the later ones were races the old code let through); served rows that only say a page was opened
    (no hint) are gone; learners with nothing recorded and no name are gone; every name has its key
    (``names.name_key``), unique: of names stored before the key that are one name under it (``Ada`` and ``ada``),
    the oldest keeps it and each later one is renamed ``<name>-2``, ``-3``, ...; the unique keys exist. Returns how
    many rows each step changed."""
    out = {"numbered": 0, "duplicate_parts": 0, "empty_served": 0, "idle_learners": 0, "renamed": 0}
    with _begin(c):
        if c.backend == "postgres":
            c.execute("SELECT pg_advisory_xact_lock(2020)")  # one server migrates at a time
        if not _has_index(c, "attempts_once"):  # a database of the old schema: number, clean, then key
            if "attempt" not in _columns(c, "attempts"):
                c.execute("ALTER TABLE attempts ADD COLUMN attempt BIGINT")
            out["numbered"] = c.execute(
                "UPDATE attempts SET attempt = (SELECT COUNT(*) FROM attempts b WHERE b.learner = attempts.learner"
                " AND b.drill_id = attempts.drill_id AND b.id <= attempts.id) WHERE attempt IS NULL").rowcount
            out["duplicate_parts"] = c.execute(
                "DELETE FROM attempts WHERE session IS NOT NULL AND EXISTS (SELECT 1 FROM attempts b WHERE"
                " b.session = attempts.session AND b.drill_id = attempts.drill_id AND b.id < attempts.id)").rowcount
            out["empty_served"] = c.execute("DELETE FROM served WHERE hints = 0").rowcount
            for statement in (s for s in KEYS.split(";") if s.strip()):
                c.execute(statement)
        if not _has_index(c, "learners_name_once"):
            out["renamed"] = _key_names(c)
        out["idle_learners"] = c.execute(f"DELETE FROM learners WHERE {_IDLE_LEARNER}").rowcount
    return out


def _key_names(c: Any) -> int:
    """Inside the migration: give every named learner its name key, renaming the later of two names that share one,
    then key them uniquely. Returns how many were renamed."""
    if "name_key" not in _columns(c, "learners"):
        c.execute("ALTER TABLE learners ADD COLUMN name_key TEXT")
    rows = c.execute("SELECT id, name FROM learners WHERE name IS NOT NULL ORDER BY created, id").fetchall()
    taken = {str(r["name"]) for r in rows}
    keys: set[str] = set()
    renamed = 0
    for r in rows:
        name, key = r["name"], names.name_key(r["name"])
        n = 1
        while key in keys:
            n += 1
            name = f"{r['name'][:40 - len(str(n)) - 1]}-{n}"
            key = names.name_key(name) if name not in taken else key
        keys.add(key)
        if name != r["name"]:
            taken.add(name)
            renamed += 1
        c.execute("UPDATE learners SET name = ?, name_key = ? WHERE id = ?", (name, key, r["id"]))
    # not learners_name_key: PostgreSQL names the UNIQUE constraint on learners.name so
    c.execute("CREATE UNIQUE INDEX IF NOT EXISTS learners_name_once ON learners (name_key)")
    return renamed


def _has_index(c: Any, name: str) -> bool:
    if c.backend == "postgres":
        return bool(c.execute("SELECT 1 FROM pg_indexes WHERE indexname = ?", (name,)).fetchall())
    return bool(c.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchall())


def prune_idle_learners() -> int:
    """Delete learner rows with nothing recorded and no name. Returns how many went."""
    return atomically(lambda c: c.execute(f"DELETE FROM learners WHERE {_IDLE_LEARNER}").rowcount)


class _Pool:
    """At most ``size`` connections to one database, each used by one thread at a time."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: list[Any] = []
        self.made = 0
        self.closed = False
        self.cv = threading.Condition()

    def get(self, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        with self.cv:
            while not self.idle and self.made >= self.size:
                left = deadline - time.monotonic()
                if left <= 0 or not self.cv.wait(left):
                    raise TimeoutError(f"no free drill-store connection in {timeout:.0f} s (LAYOUTLAB_DB_POOL)")
            if self.idle:
                return self.idle.pop()
            self.made += 1
        try:
            return db.connect(DB_NAME)
        except BaseException:
            with self.cv:
                self.made -= 1
                self.cv.notify()
            raise

    def put(self, c: Any) -> None:
        with self.cv:
            if self.closed:
                self.made -= 1
                c.close()
            else:
                self.idle.append(c)
            self.cv.notify()

    def close(self) -> None:
        with self.cv:
            self.closed = True
            for c in self.idle:
                c.close()
            self.made -= len(self.idle)
            self.idle.clear()


_setup = threading.Lock()
_pools: dict[str, _Pool] = {}


def _pool() -> _Pool:
    """The pool of the current database; the first call per database creates the schema and migrates it."""
    key = db.cache_key(DB_NAME)
    pool = _pools.get(key)
    if pool is not None:
        return pool
    with _setup:
        pool = _pools.get(key)
        if pool is None:
            pool = _Pool(max(1, int(os.environ.get("LAYOUTLAB_DB_POOL") or 8)))
            c = pool.get()
            try:
                c.executescript(SCHEMA)
                migrate(c)
            finally:
                pool.put(c)
            _pools[key] = pool
        return pool


@contextmanager
def connection() -> Iterator[Any]:
    """A connection of the pool for the duration of the block (reads outside a transaction see committed rows)."""
    pool = _pool()
    c = pool.get()
    try:
        yield c
    except BaseException:
        if c.backend == "sqlite" and c.in_transaction:
            c.rollback()
        raise
    finally:
        pool.put(c)


@contextmanager
def _begin(c: Any) -> Iterator[Any]:
    """One transaction on ``c``: BEGIN IMMEDIATE on SQLite, a plain transaction on PostgreSQL."""
    if c.backend != "sqlite":
        with c:
            yield c
        return
    c.execute("BEGIN IMMEDIATE")
    try:
        yield c
    except BaseException:
        c.rollback()
        raise
    c.commit()


def _retryable() -> tuple[type[BaseException], ...]:
    """Errors after which a transaction is run again: a unique key lost to a concurrent transaction, a lock wait
    that timed out (SQLite), a deadlock or serialization failure (PostgreSQL)."""
    errs: list[type[BaseException]] = [sqlite3.IntegrityError, sqlite3.OperationalError]
    try:
        import psycopg

        errs += [psycopg.IntegrityError, psycopg.errors.TransactionRollback]
    except ImportError:
        pass
    return tuple(errs)


def atomically(fn: Callable[[Any], T], attempts: int = 8) -> T:
    """Run ``fn(connection)`` in one transaction and return its value. Post-condition: either every statement of
    one run of ``fn`` is committed, or none is; a run that lost a unique key or a lock to a concurrent transaction
    is rolled back and ``fn`` runs again (it must decide from what it reads), up to ``attempts`` times."""
    retry = _retryable()
    for n in range(attempts):
        try:
            with connection() as c, _begin(c):
                return fn(c)
        except retry as exc:
            if n == attempts - 1 or (isinstance(exc, sqlite3.OperationalError) and "locked" not in str(exc)):
                raise
            time.sleep(random.uniform(0, 0.002 * 2**n))
    raise AssertionError("unreachable")


def read(sql: str, args: tuple = ()) -> list[Any]:
    """Rows of one query, outside any transaction."""
    with connection() as c:
        return c.execute(sql, args).fetchall()


def reset() -> None:
    """Close every pooled connection (tests use this to simulate a server restart); the next use reopens."""
    with _setup:
        for pool in _pools.values():
            pool.close()
        _pools.clear()
