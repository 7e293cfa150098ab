"""Drill progress in the app database (SQLite in WAL mode, or PostgreSQL with LAYOUTLAB_DATABASE_URL): learners,
hints opened, attempts, reveals, per-sub-skill spaced repetition, whiteboard sessions.

A learner is an opaque random id (the browser's signed cookie) with an optional unique display name that only that
learner can hold. Every query is keyed by the learner id, so two browsers never see each other's rows, and nothing
is stored for a learner until they do something worth keeping (answer, open a hint, reveal a key, name the
profile): reading a drill, a page or the progress writes nothing. Spaced repetition is per sub-skill
(``kind:variant``), Leitner style: a right first answer moves the sub-skill one box up (it comes back later); a wrong
answer or a revealed key sends it to box 0 (it comes back next). Once a drill is solved (answered right or revealed)
later answers to it are graded but not recorded, so a copied key raises neither ``correct`` nor a streak.

Each write is one transaction (app.drills.store_db.atomically) that reads and decides inside it, holding the
learner's row lock: an attempt is numbered per (learner, drill) under a unique key, so however many answers race,
one of them is attempt 1 and only that one can promote; a whiteboard part has a unique key too, so it keeps exactly
one answer. The SQL is plain
(``?`` placeholders) so the PostgreSQL adapter runs it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from app.drills import names, store_db
from app.drills.store_db import DB_NAME
from storage import db

__all__ = ["DB_NAME", "BOX_DELAY", "Attempt", "NameTaken", "SessionRefused"]

#: Seconds until a kind in box b is due again (box 0: at once, after one other drill).
BOX_DELAY = [0, 120, 600, 3600, 86_400, 3 * 86_400]
_read = store_db.read


LEARNER_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")


def valid_learner(value: str | None) -> bool:
    return bool(value) and bool(LEARNER_RE.fullmatch(value or ""))


def learner_id(value: str | None) -> tuple[str, bool]:
    """(learner id, fresh): ``value`` when well formed, else a new random id (``fresh`` True: the caller sets the
    cookie). Post-condition: nothing is stored; a learner's row is written with its first record."""
    if valid_learner(value):
        return value, False  # type: ignore[return-value]
    return secrets.token_urlsafe(18), True


def _touch(c: Any, learner: str, now: float) -> None:
    """Inside a write: the learner's row exists (it is kept because of what the same transaction records)."""
    c.execute("INSERT OR IGNORE INTO learners (id, name, created) VALUES (?, NULL, ?)", (learner, now))


def _hold(c: Any, learner: str, now: float) -> None:
    """Inside a write: the learner's row exists and this transaction holds its row lock until it ends, so the
    learner's writes run one after another and each reads what the one before committed (PostgreSQL's READ
    COMMITTED reads a fresh snapshot per statement; on SQLite BEGIN IMMEDIATE already holds the file's lock)."""
    _touch(c, learner, now)
    c.execute("UPDATE learners SET created = created WHERE id = ?", (learner,))


def ensure_learner(value: str | None) -> str:
    """Return a known learner id: ``value`` if well formed (registered if new), else a fresh random id.

    Post-condition: the returned id has a row in ``learners`` (a row with nothing recorded and no name is pruned
    when the store next starts; the routes never call this: they store a learner with their first record).
    """
    lid = learner_id(value)[0]
    store_db.atomically(lambda c: _touch(c, lid, time.time()))
    return lid


def learner_name(learner: str) -> str | None:
    rows = _read("SELECT name FROM learners WHERE id = ?", (learner,))
    return rows[0]["name"] if rows else None


class NameTaken(ValueError):
    """A profile name already held by another learner; ``str(err)`` says so."""


def claim_name(learner: str, name: str) -> str:
    """Give the learner a display name. Post-condition: returns ``learner``, which now holds ``name`` as
    ``app.drills.names.check`` stores it (its row is created if it had none).

    Raises ValueError (stating the rule) for an empty or odd name, or one mixing scripts, and NameTaken when another
    learner holds a name with the same key (``names.name_key``: case, width and look-alike letters ignored, so
    ``ada`` or ``Adа`` cannot sit beside ``Ada``): a name never moves a browser onto someone else's progress. Two
    browsers claiming one name at once: one gets it, the other NameTaken (a unique key on ``name_key`` decides).
    """
    shown = names.check(name)
    key = names.name_key(shown)

    def run(c: Any) -> None:
        rows = c.execute("SELECT id, name FROM learners WHERE name_key = ?", (key,)).fetchall()
        if rows and rows[0]["id"] != learner:
            raise _taken(shown, rows[0]["name"])
        c.execute("INSERT INTO learners (id, name, name_key, created) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE"
                  " SET name = excluded.name, name_key = excluded.name_key", (learner, shown, key, time.time()))

    try:
        store_db.atomically(run)
    except db.IntegrityError:  # lost the name to a concurrent claim more times than the retries
        raise _taken(shown, None) from None
    return learner


def _taken(name: str, held: str | None) -> NameTaken:
    like = f" (as {held!r}, which is the same name)" if held and held != name else ""
    return NameTaken(f"the profile name {name!r} belongs to another browser{like}: names that differ only in case, "
                     "width or letters that look alike are one name; choose another name")


def mark_served(learner: str, drill_id: str, now: float | None = None) -> None:
    """Remember when a learner first saw a drill (for time taken). Post-condition: a later call keeps the first time.
    The routes do not call this (a GET stores nothing): they carry the served time in a signed token instead."""
    now = time.time() if now is None else now

    def run(c: Any) -> None:
        _touch(c, learner, now)
        c.execute("INSERT OR IGNORE INTO served (learner, drill_id, served_at) VALUES (?, ?, ?)",
                  (learner, drill_id, now))

    store_db.atomically(run)


def note_hint(learner: str, drill_id: str, level: int, now: float | None = None) -> None:
    """Record the highest hint level a learner opened on a drill. Post-condition: the stored level is the maximum
    of every level noted, however many notes race; the first note's time stands as the drill's served time."""
    now = time.time() if now is None else now

    def run(c: Any) -> None:
        _touch(c, learner, now)
        c.execute("INSERT INTO served (learner, drill_id, served_at, hints) VALUES (?, ?, ?, ?) "
                  "ON CONFLICT (learner, drill_id) DO UPDATE SET hints = MAX(served.hints, excluded.hints)",
                  (learner, drill_id, now, level))

    store_db.atomically(run)


def served_info(learner: str, drill_id: str) -> tuple[float | None, int]:
    rows = _read("SELECT served_at, hints FROM served WHERE learner = ? AND drill_id = ?", (learner, drill_id))
    return (rows[0]["served_at"], rows[0]["hints"]) if rows else (None, 0)


@dataclass
class Attempt:
    """One stored attempt; from :func:`record_attempt` also what the write did: ``recorded`` (False: the drill was
    already solved, nothing stored), ``attempt`` (1 for the first), ``promoted``, ``solved`` (the key may now be
    shown) and ``box`` (the sub-skill's box afterwards, when recorded); from :func:`attempts` also the ``answer``
    as typed."""

    drill_id: str
    kind: str
    seed: int
    correct: bool
    elapsed_s: float | None
    hints: int
    created: float
    attempt: int | None = None
    recorded: bool = True
    promoted: bool = False
    solved: bool = False
    box: int | None = None
    answer: str = ""


class SessionRefused(ValueError):
    """A whiteboard answer the session does not take: ``status`` 404 (no such session for this learner) or 409 (the
    session is finished, or the drill is not its current question, e.g. a part answered already); 429 when a
    learner starting a session already holds MAX_OPEN_SESSIONS unfinished ones with answers."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _session_part(c: Any, learner: str, sid: str, drill_id: str) -> bool:
    """Inside a write: raise SessionRefused unless ``drill_id`` is the session's current question; returns whether
    it is the last one."""
    rows = c.execute("SELECT parts, finished FROM sessions WHERE id = ? AND learner = ?", (sid, learner)).fetchall()
    if not rows:
        raise SessionRefused(404, f"no whiteboard session {sid!r} for this learner")
    qs = [q["id"] if isinstance(q, dict) else q for q in json.loads(rows[0]["parts"])]
    done = {r["drill_id"] for r in c.execute("SELECT drill_id FROM attempts WHERE session = ?", (sid,)).fetchall()}
    cur = next((i for i, q in enumerate(qs) if q not in done), None)
    if cur is None or rows[0]["finished"] is not None:
        raise SessionRefused(409, "this whiteboard session is finished")
    if qs[cur] != drill_id:
        raise SessionRefused(409, f"question {cur + 1} of this session is {qs[cur]}, not {drill_id}")
    return cur == len(qs) - 1


def _solved(c: Any, learner: str, drill_id: str) -> bool:
    return bool(c.execute("SELECT 1 FROM reveals WHERE learner = ? AND drill_id = ? UNION ALL SELECT 1 FROM attempts"
                          " WHERE learner = ? AND drill_id = ? AND correct = 1",
                          (learner, drill_id, learner, drill_id)).fetchall())


def _insert_attempt(c: Any, learner: str, drill_id: str, kind: str, seed: int, answer: str, correct: bool,
                    elapsed_s: float | None, session: str | None, now: float) -> tuple[int, int, float | None]:
    """Inside a write: store the learner's next attempt at the drill; returns (its number, hints opened, time
    taken). Two
    transactions that read the same count collide on the key (learner, drill_id, attempt): one of them is retried."""
    n = c.execute("SELECT COUNT(*) AS n FROM attempts WHERE learner = ? AND drill_id = ?",
                  (learner, drill_id)).fetchone()["n"]
    served = c.execute("SELECT served_at, hints FROM served WHERE learner = ? AND drill_id = ?",
                       (learner, drill_id)).fetchall()
    served_at, hints = (served[0]["served_at"], served[0]["hints"]) if served else (None, 0)
    if elapsed_s is None and served_at is not None:
        elapsed_s = max(0.0, now - served_at)
    c.execute("INSERT INTO attempts (learner, drill_id, kind, seed, answer, correct, elapsed_s, hints, session,"
              " created, attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (learner, drill_id, kind, seed, answer[:2000], int(correct), elapsed_s, hints, session, now, n + 1))
    return n + 1, hints, elapsed_s


def _repeat(c: Any, learner: str, skill: str, correct: bool, promote: bool, now: float) -> int:
    """Inside a write: update the sub-skill's box (wrong: box 0, due now; promote: one box up, atomically; else
    unchanged, box 0 if new). Returns the box afterwards."""
    if not correct:
        c.execute("INSERT INTO srs (learner, kind, box, due) VALUES (?, ?, 0, ?) "
                  "ON CONFLICT (learner, kind) DO UPDATE SET box = 0, due = excluded.due", (learner, skill, now))
    elif promote:
        c.execute("INSERT INTO srs (learner, kind, box, due) VALUES (?, ?, 1, ?) ON CONFLICT (learner, kind) "
                  f"DO UPDATE SET box = MIN(srs.box + 1, {len(BOX_DELAY) - 1})", (learner, skill, now))
    else:
        c.execute("INSERT OR IGNORE INTO srs (learner, kind, box, due) VALUES (?, ?, 0, ?)", (learner, skill, now))
    box = c.execute("SELECT box FROM srs WHERE learner = ? AND kind = ?", (learner, skill)).fetchone()["box"]
    if promote:
        c.execute("UPDATE srs SET due = ? WHERE learner = ? AND kind = ?", (now + BOX_DELAY[box], learner, skill))
    return box


def record_attempt(learner: str, drill_id: str, kind: str, seed: int, answer: str, correct: bool,
                   elapsed_s: float | None = None, session: str | None = None, now: float | None = None,
                   skill: str | None = None) -> Attempt:
    """Store one graded attempt and update the sub-skill's repetition box (``skill``, default the kind), in one
    transaction.

    Post-conditions: a drill already solved (answered right, or revealed) records nothing (``recorded`` False),
    except as a whiteboard part, where an answer after a reveal is recorded as a miss whatever its grade (the key
    was copied: it raises neither the part's score nor ``correct`` and ``streak``); ``elapsed_s`` defaults to the
    time since the learner's first hint on the drill; a right answer moves the box up by one (max 5) only when it is
    attempt 1 of this learner at this drill and fewer than two hints were opened, so the sub-skill is promoted at
    most once per drill however many answers race; a wrong one resets the box to 0 and makes it due now. With
    ``session``: raises SessionRefused unless the drill is that session's current question, so each part keeps
    exactly one answer; the last one finishes the session.
    """
    now = time.time() if now is None else now
    skill = skill or kind

    def run(c: Any) -> Attempt:
        _hold(c, learner, now)
        last = _session_part(c, learner, session, drill_id) if session else False
        done = _solved(c, learner, drill_id)
        if done and not session:
            return Attempt(drill_id, kind, seed, correct, elapsed_s, 0, now, recorded=False, solved=True)
        copied = done and bool(c.execute("SELECT 1 FROM reveals WHERE learner = ? AND drill_id = ?",
                                         (learner, drill_id)).fetchall())
        right = correct and not copied  # a whiteboard part answered after its key was shown: the copy is a miss
        number, hints, elapsed = _insert_attempt(c, learner, drill_id, kind, seed, answer, right, elapsed_s,
                                                 session, now)
        promote = right and number == 1 and not done and hints < 2
        box = _repeat(c, learner, skill, right, promote, now)
        if last:
            c.execute("UPDATE sessions SET finished = ? WHERE id = ? AND finished IS NULL", (now, session))
        return Attempt(drill_id, kind, seed, right, elapsed, hints, now, number, True, promote, done or right,
                       box)

    return store_db.atomically(run)


def record_reveal(learner: str, drill_id: str, kind: str, seed: int, skill: str | None = None,
                  now: float | None = None) -> bool:
    """The learner asked for the key: remember it (the drill can no longer promote its sub-skill) and, unless the
    drill was already solved or revealed, count it as a miss, in one transaction. Post-condition:
    ``solved(learner, drill_id)``; returns whether this call counted the miss."""
    now = time.time() if now is None else now
    skill = skill or kind

    def run(c: Any) -> bool:
        _hold(c, learner, now)
        if _solved(c, learner, drill_id):
            return False
        _insert_attempt(c, learner, drill_id, kind, seed, "(revealed)", False, None, None, now)
        _repeat(c, learner, skill, False, False, now)
        c.execute("INSERT OR IGNORE INTO reveals (learner, drill_id, created) VALUES (?, ?, ?)",
                  (learner, drill_id, now))
        return True

    return store_db.atomically(run)


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
    return [Attempt(r["drill_id"], r["kind"], r["seed"], bool(r["correct"]), r["elapsed_s"], r["hints"], r["created"],
                    r["attempt"], answer=r["answer"]) for r in rows]


def srs_boxes(learner: str) -> dict[str, tuple[int, float]]:
    """sub-skill (``kind:variant`` or kind) -> (box, due time) for the sub-skills this learner has attempted."""
    return {r["kind"]: (r["box"], r["due"]) for r in _read("SELECT kind, box, due FROM srs WHERE learner = ?",
                                                           (learner,))}


#: An unfinished whiteboard session with no attempt is dropped once it is this many seconds old.
STALE_SESSION_S = 86_400
#: Unfinished whiteboard sessions one learner may hold at once (LAYOUTLAB_MAX_SESSIONS).
MAX_OPEN_SESSIONS = int(os.environ.get("LAYOUTLAB_MAX_SESSIONS") or 8)


def create_session(learner: str, parts: list[str], now: float | None = None) -> str:
    """Start a timed whiteboard session over ``parts`` (drill ids, or ``{"part", "id"}`` per question).
    Post-condition: returns its id, and every session (anyone's) older than STALE_SESSION_S with no attempt recorded
    against it is gone. The learner's own row waits for their first answer. A learner holds at most
    MAX_OPEN_SESSIONS unfinished sessions: the oldest of theirs with no answer make room for a new one, and when
    every one has answers SessionRefused (429) names the cap."""
    now = time.time() if now is None else now
    sid = secrets.token_urlsafe(9)
    cutoff = now - STALE_SESSION_S

    def run(c: Any) -> None:
        _drop_stale(c, cutoff)
        open_ = c.execute("SELECT id, EXISTS (SELECT 1 FROM attempts WHERE attempts.session = sessions.id) AS used "
                          "FROM sessions WHERE learner = ? AND finished IS NULL ORDER BY started",
                          (learner,)).fetchall()
        unused = [r["id"] for r in open_ if not r["used"]]
        excess = len(open_) + 1 - MAX_OPEN_SESSIONS
        if excess > len(unused):
            raise SessionRefused(429, f"too many unfinished whiteboard sessions: {len(open_)} (the cap is "
                                      f"{MAX_OPEN_SESSIONS} per learner); finish one before starting another")
        for old in unused[:max(0, excess)]:
            c.execute("DELETE FROM sessions WHERE id = ? AND learner = ?", (old, learner))
        c.execute("INSERT INTO sessions (id, learner, started, finished, parts) VALUES (?, ?, ?, NULL, ?)",
                  (sid, learner, now, json.dumps(parts)))

    store_db.atomically(run)
    return sid


def _drop_stale(c: Any, cutoff: float) -> int:
    return c.execute("DELETE FROM sessions WHERE started < ? AND NOT EXISTS "
                     "(SELECT 1 FROM attempts WHERE attempts.session = sessions.id)", (cutoff,)).rowcount


def drop_stale_sessions(now: float | None = None) -> int:
    """Delete sessions started more than STALE_SESSION_S ago that have no attempts. Returns how many went."""
    cutoff = (time.time() if now is None else now) - STALE_SESSION_S
    return store_db.atomically(lambda c: _drop_stale(c, cutoff))


def get_session(learner: str, sid: str) -> dict[str, Any] | None:
    """The session row as a dict (parts decoded), or None if it does not exist or belongs to someone else."""
    rows = _read("SELECT * FROM sessions WHERE id = ? AND learner = ?", (sid, learner))
    if not rows:
        return None
    r = rows[0]
    return {"id": r["id"], "started": r["started"], "finished": r["finished"], "parts": json.loads(r["parts"])}


def finish_session(sid: str, now: float | None = None) -> None:
    """Mark a session finished (its last answer does this itself). Post-condition: the first finish time stands."""
    now = time.time() if now is None else now
    store_db.atomically(lambda c: c.execute("UPDATE sessions SET finished = ? WHERE id = ? AND finished IS NULL",
                                            (now, sid)))


def reset_connections() -> None:
    """Close the pooled connections (tests use this to simulate a server restart)."""
    store_db.reset()
