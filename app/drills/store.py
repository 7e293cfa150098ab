"""Drill progress in the app database (SQLite in WAL mode, or PostgreSQL with LAYOUTLAB_DATABASE_URL): learners,
served drills, attempts, reveals, per-sub-skill spaced repetition.

A learner is an opaque random id (the browser's signed cookie) with an optional unique display name that only that
learner can hold. Every query is keyed by the learner id, so two browsers never see each other's rows. Spaced
repetition is per sub-skill (``kind:variant``), Leitner style: a right first answer moves the sub-skill one box up
(it comes back later); a wrong answer or a revealed key sends it to box 0 (it comes back next), and a drill that was
missed or revealed never promotes it afterwards. The SQL is plain (``?`` placeholders) so another database adapter
can run it.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Any

from storage import db

DB_NAME = "drills"
#: Seconds until a kind in box b is due again (box 0: at once, after one other drill).
BOX_DELAY = [0, 120, 600, 3600, 86_400, 3 * 86_400]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS learners (
  id TEXT PRIMARY KEY, name TEXT UNIQUE, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS served (
  learner TEXT NOT NULL, drill_id TEXT NOT NULL, served_at REAL NOT NULL, hints INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (learner, drill_id));
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT, learner TEXT NOT NULL, drill_id TEXT NOT NULL, kind TEXT NOT NULL,
  seed INTEGER NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL, elapsed_s REAL, hints INTEGER NOT NULL,
  session TEXT, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_learner ON attempts (learner, kind, created);
CREATE TABLE IF NOT EXISTS srs (
  learner TEXT NOT NULL, kind TEXT NOT NULL, box INTEGER NOT NULL, due REAL NOT NULL, PRIMARY KEY (learner, kind));
CREATE TABLE IF NOT EXISTS reveals (
  learner TEXT NOT NULL, drill_id TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (learner, drill_id));
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, learner TEXT NOT NULL, started REAL NOT NULL, finished REAL, parts TEXT NOT NULL);
"""

_lock = threading.Lock()
_conns: dict[str, sqlite3.Connection] = {}


def conn() -> sqlite3.Connection:
    """The store's connection for the current data folder (schema created on first use)."""
    path = db.cache_key(DB_NAME)
    with _lock:
        c = _conns.get(path)
        if c is None:
            c = db.connect(DB_NAME)
            c.executescript(_SCHEMA)
            _conns[path] = c
        return c


def _write(sql: str, args: tuple = ()) -> sqlite3.Cursor:
    c = conn()
    with _lock, c:
        return c.execute(sql, args)


def _read(sql: str, args: tuple = ()) -> list[sqlite3.Row]:
    c = conn()
    with _lock:
        return c.execute(sql, args).fetchall()


LEARNER_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
NAME_RE = re.compile(r"[\w .'-]{1,40}")


def valid_learner(value: str | None) -> bool:
    return bool(value) and bool(LEARNER_RE.fullmatch(value or ""))


def ensure_learner(value: str | None) -> str:
    """Return a known learner id: ``value`` if well formed (registered if new), else a fresh random id.

    Post-condition: the returned id has a row in ``learners``.
    """
    lid = value if valid_learner(value) else secrets.token_urlsafe(18)
    _write("INSERT OR IGNORE INTO learners (id, name, created) VALUES (?, NULL, ?)", (lid, time.time()))
    return lid


def learner_name(learner: str) -> str | None:
    rows = _read("SELECT name FROM learners WHERE id = ?", (learner,))
    return rows[0]["name"] if rows else None


class NameTaken(ValueError):
    """A profile name already held by another learner; ``str(err)`` says so."""


def claim_name(learner: str, name: str) -> str:
    """Give the learner a display name. Post-condition: returns ``learner``, which now holds ``name``.

    Raises ValueError for an empty or odd name and NameTaken when another learner holds it: a name never moves a
    browser onto someone else's progress.
    """
    name = (name or "").strip()
    if not NAME_RE.fullmatch(name):
        raise ValueError("a profile name is 1-40 letters, digits, spaces, . ' _ or -")
    rows = _read("SELECT id FROM learners WHERE name = ?", (name,))
    if rows and rows[0]["id"] != learner:
        raise NameTaken(f"the profile name {name!r} belongs to another browser; choose another name")
    if rows:
        return learner
    try:
        _write("UPDATE learners SET name = ? WHERE id = ?", (name, learner))
    except db.IntegrityError:  # taken between the check and the write
        raise NameTaken(f"the profile name {name!r} belongs to another browser; choose another name") from None
    return learner


def mark_served(learner: str, drill_id: str, now: float | None = None) -> None:
    """Remember when a learner first saw a drill (for time taken). Post-condition: a later call keeps the first time."""
    _write("INSERT OR IGNORE INTO served (learner, drill_id, served_at) VALUES (?, ?, ?)",
           (learner, drill_id, time.time() if now is None else now))


def note_hint(learner: str, drill_id: str, level: int) -> None:
    """Record the highest hint level a learner opened on a drill."""
    mark_served(learner, drill_id)
    _write("UPDATE served SET hints = MAX(hints, ?) WHERE learner = ? AND drill_id = ?", (level, learner, drill_id))


def served_info(learner: str, drill_id: str) -> tuple[float | None, int]:
    rows = _read("SELECT served_at, hints FROM served WHERE learner = ? AND drill_id = ?", (learner, drill_id))
    return (rows[0]["served_at"], rows[0]["hints"]) if rows else (None, 0)


@dataclass
class Attempt:
    drill_id: str
    kind: str
    seed: int
    correct: bool
    elapsed_s: float | None
    hints: int
    created: float


def record_attempt(learner: str, drill_id: str, kind: str, seed: int, answer: str, correct: bool,
                   elapsed_s: float | None = None, session: str | None = None, now: float | None = None,
                   skill: str | None = None) -> Attempt:
    """Store one graded attempt and update the sub-skill's repetition box (``skill``, default the kind).

    Post-conditions: ``elapsed_s`` defaults to the time since the drill was served to this learner; a right answer
    moves the box up by one (max 5) only when it is the learner's first attempt at this drill, the key was not
    revealed and fewer than two hints were opened; a wrong one resets the box to 0 and makes it due now.
    """
    now = time.time() if now is None else now
    skill = skill or kind
    served_at, hints = served_info(learner, drill_id)
    if elapsed_s is None and served_at is not None:
        elapsed_s = max(0.0, now - served_at)
    earlier = _read("SELECT COUNT(*) AS n FROM attempts WHERE learner = ? AND drill_id = ?", (learner, drill_id))
    first_try = earlier[0]["n"] == 0 and not revealed(learner, drill_id)
    _write("INSERT INTO attempts (learner, drill_id, kind, seed, answer, correct, elapsed_s, hints, session, created)"
           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
           (learner, drill_id, kind, seed, answer[:2000], int(correct), elapsed_s, hints, session, now))
    rows = _read("SELECT box, due FROM srs WHERE learner = ? AND kind = ?", (learner, skill))
    box = rows[0]["box"] if rows else 0
    due = now + BOX_DELAY[box]
    if not correct:
        box, due = 0, now
    elif first_try and hints < 2:
        box = min(box + 1, len(BOX_DELAY) - 1)
        due = now + BOX_DELAY[box]
    elif rows:
        due = rows[0]["due"]
    _write("INSERT INTO srs (learner, kind, box, due) VALUES (?, ?, ?, ?) "
           "ON CONFLICT (learner, kind) DO UPDATE SET box = excluded.box, due = excluded.due",
           (learner, skill, box, due))
    return Attempt(drill_id, kind, seed, correct, elapsed_s, hints, now)


def record_reveal(learner: str, drill_id: str, kind: str, seed: int, skill: str | None = None,
                  now: float | None = None) -> None:
    """The learner asked for the key: remember it (the drill can no longer promote its sub-skill) and, unless the
    drill was already solved or revealed, count it as a miss. Post-condition: ``solved(learner, drill_id)``."""
    now = time.time() if now is None else now
    if solved(learner, drill_id):
        return
    record_attempt(learner, drill_id, kind, seed, "(revealed)", False, now=now, skill=skill)
    _write("INSERT INTO reveals (learner, drill_id, created) VALUES (?, ?, ?) ON CONFLICT (learner, drill_id) "
           "DO NOTHING", (learner, drill_id, now))


def revealed(learner: str, drill_id: str) -> bool:
    return bool(_read("SELECT 1 FROM reveals WHERE learner = ? AND drill_id = ?", (learner, drill_id)))


def solved(learner: str, drill_id: str) -> bool:
    """True once the learner answered the drill right or had its key revealed (the key may then be shown)."""
    return revealed(learner, drill_id) or bool(
        _read("SELECT 1 FROM attempts WHERE learner = ? AND drill_id = ? AND correct = 1", (learner, drill_id)))


def attempts(learner: str, kind: str | None = None, session: str | None = None) -> list[Attempt]:
    """A learner's attempts, oldest first, optionally of one kind or one whiteboard session."""
    sql = "SELECT * FROM attempts WHERE learner = ?"
    args: list[Any] = [learner]
    if kind:
        sql += " AND kind = ?"
        args.append(kind)
    if session:
        sql += " AND session = ?"
        args.append(session)
    rows = _read(sql + " ORDER BY created, id", tuple(args))
    return [Attempt(r["drill_id"], r["kind"], r["seed"], bool(r["correct"]), r["elapsed_s"], r["hints"], r["created"])
            for r in rows]


def srs_boxes(learner: str) -> dict[str, tuple[int, float]]:
    """sub-skill (``kind:variant`` or kind) -> (box, due time) for the sub-skills this learner has attempted."""
    return {r["kind"]: (r["box"], r["due"]) for r in _read("SELECT kind, box, due FROM srs WHERE learner = ?",
                                                           (learner,))}


#: An unfinished whiteboard session with no attempt is dropped once it is this many seconds old.
STALE_SESSION_S = 86_400


def create_session(learner: str, parts: list[str], now: float | None = None) -> str:
    """Start a timed whiteboard session over ``parts`` (drill ids). Post-condition: returns its id, and every
    session (anyone's) older than STALE_SESSION_S with no attempt recorded against it is gone."""
    import json

    now = time.time() if now is None else now
    drop_stale_sessions(now)
    sid = secrets.token_urlsafe(9)
    _write("INSERT INTO sessions (id, learner, started, finished, parts) VALUES (?, ?, ?, NULL, ?)",
           (sid, learner, now, json.dumps(parts)))
    return sid


def drop_stale_sessions(now: float | None = None) -> int:
    """Delete sessions started more than STALE_SESSION_S ago that have no attempts. Returns how many went."""
    cutoff = (time.time() if now is None else now) - STALE_SESSION_S
    cur = _write("DELETE FROM sessions WHERE started < ? AND NOT EXISTS "
                 "(SELECT 1 FROM attempts WHERE attempts.session = sessions.id)", (cutoff,))
    return cur.rowcount


def get_session(learner: str, sid: str) -> dict[str, Any] | None:
    """The session row as a dict (parts decoded), or None if it does not exist or belongs to someone else."""
    import json

    rows = _read("SELECT * FROM sessions WHERE id = ? AND learner = ?", (sid, learner))
    if not rows:
        return None
    r = rows[0]
    return {"id": r["id"], "started": r["started"], "finished": r["finished"], "parts": json.loads(r["parts"])}


def finish_session(sid: str, now: float | None = None) -> None:
    _write("UPDATE sessions SET finished = ? WHERE id = ? AND finished IS NULL", (time.time() if now is None else now,
                                                                                 sid))


def reset_connections() -> None:
    """Close cached connections (tests use this to simulate a server restart)."""
    with _lock:
        for c in _conns.values():
            c.close()
        _conns.clear()
