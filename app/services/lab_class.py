"""The class: an instructor runs the GPU lab for students behind one address.

- **Who ran what.** A lab client (the ``layoutlab_client`` cookie, app.services.lab_clients) that submits a job is
  linked to the drills learner of the same browser (the ``layoutlab_learner`` cookie); the job's submitter is that
  learner's profile name (the drills' profile form), read when the job is listed, so a renamed profile shows its new
  name. A client with no named profile shows as ``None``.
- **Class codes.** ``LAYOUTLAB_CLASS_CODES`` (comma-separated) names the classes. A client that joins one
  (``POST /api/class/join {"code"}``, or the code field of the drills' profile form, which joins the learner and so
  every lab client of that browser) counts its submissions against the class's bucket
  (``LAYOUTLAB_LAB_CLASS_RATE``, default 300 per 60 s) instead of its address's; the per-client limit still applies.
- **The instructor.** ``LAYOUTLAB_INSTRUCTOR_TOKEN`` (or the lab admin token, LAYOUTLAB_ADMIN_TOKEN), presented as
  ``Authorization: Bearer <token>`` or ``X-Instructor-Token``, or once on the ``/lab/class`` page (which then sets a
  signed ``layoutlab_instructor`` cookie), sees every job of a class with its submitter and the class's leaderboard:
  the best finished result per kernel. A member of a class sees its leaderboard too.

Memberships live in the lab's database (the job table's, gpu_worker.store.history_store, which creates their
tables), so every app server on it agrees. Nothing here runs on the event loop: the routes that call it are plain
``def``.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import time
import unicodedata
from typing import Any

from app.drills import identity
from app.drills import store as drill_store
from gpu_worker import store as job_store

#: The instructor's signed cookie (set by the class page once the token is given) and its purpose prefix.
INSTRUCTOR_COOKIE = "layoutlab_instructor"
INSTRUCTOR_PURPOSE = "instructor:"
#: How many of a class's jobs a listing reads at most.
MAX_JOBS = 500



class ClassError(ValueError):
    """A class request refused: ``status`` is the HTTP status (401, 403, 404, 422) and ``str(err)`` says why."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


#: The drills' learner cookie (app.routes.api_drills.COOKIE): the browser's profile.
LEARNER_COOKIE = "layoutlab_learner"


def learner_of(cookies: dict[str, str]) -> str | None:
    """The drills learner id the request's signed learner cookie carries, or None (no cookie, or not signed here)."""
    lid, fresh = drill_store.learner_id(identity.unsign(cookies.get(LEARNER_COOKIE)))
    return None if fresh else lid


def display_name(client: str | None, learner: str | None) -> str | None:
    """The name this browser's jobs show: its learner's profile name, else the one its lab client was last seen
    with."""
    if learner:
        return drill_store.learner_name(learner)
    return names([client]).get(client or "") if client else None


def codes() -> list[str]:
    """The class codes of this deployment (LAYOUTLAB_CLASS_CODES, comma-separated; blanks dropped)."""
    return [c.strip() for c in (os.environ.get("LAYOUTLAB_CLASS_CODES") or "").split(",") if c.strip()]


def class_rate() -> tuple[int, int]:
    """(submissions, window seconds) a class shares: LAYOUTLAB_LAB_CLASS_RATE, default 300 per 60 s."""
    count, _, seconds = (os.environ.get("LAYOUTLAB_LAB_CLASS_RATE") or "300/60").partition("/")
    return int(count), int(seconds or 60)


def match(code: str) -> str | None:
    """The configured class code equal to ``code`` (compared in constant time, both trimmed and in Unicode NFKC, so
    a composed ``Ü``, a decomposed ``U`` + diaeresis and a full-width ``Ｕ`` + diaeresis are one code; case counts),
    or None."""
    given = _code_form(code or "")
    found = None
    for c in codes():
        if hmac.compare_digest(given, _code_form(c)):
            found = c
    return found


def _code_form(code: str) -> bytes:
    return unicodedata.normalize("NFKC", code.strip()).strip().encode("utf-8", "surrogatepass")


def _db() -> Any:
    """The lab's SQL store; its tables (the class's ``lab_people`` and ``lab_class_learners`` among them,
    gpu_worker.store.PEOPLE_SCHEMA) are created when it opens, at start-up, so a full volume later only refuses
    writes."""
    return job_store.history_store()


def note(client: str | None, learner: str | None) -> None:
    """Remember which drills learner the lab client ``client`` belongs to (its browser's); the client's class, if
    any, is kept. Post-condition: one row per client."""
    if not client:
        return
    store = _db()
    with store._lock, store.conn:
        store.conn.execute("INSERT INTO lab_people (client, learner, class_code, seen) VALUES (?, ?, NULL, ?) "
                           "ON CONFLICT (client) DO UPDATE SET learner = COALESCE(excluded.learner, "
                           "lab_people.learner), seen = excluded.seen", (client, learner, time.time()))


def find(code: str, address: str | None = None) -> str:
    """The class that ``code`` names, as this server spells it, checked without joining it (a form that also names
    the profile checks the code before it writes anything). ClassError 404 when this server has no classes, 429
    while ``address`` is over its limit of wrong codes, 403 for a code that is none of them (counted)."""
    if not codes():
        raise ClassError(404, "this server has no classes: LAYOUTLAB_CLASS_CODES is not set")
    check_attempt_rate(address)
    found = match(code)
    if found is None:
        count_wrong_attempt(address)
        raise ClassError(403, "not a class code of this server")
    return found


def join(code: str, client: str | None = None, learner: str | None = None, address: str | None = None) -> str:
    """Put the lab client and/or the learner in the class ``code``. Post-condition: returns the class code; its
    submissions from now on count against the class's bucket. ClassError 404 when this server has no classes,
    429 while ``address`` is over its limit of wrong codes (JOIN_RATE; a right code never counts, so a whole class
    behind one address joins), 403 for a code that is none of them (counted), 422 when neither a client nor a
    learner is given."""
    found = find(code, address)
    if not client and not learner:
        raise ClassError(422, "nobody to join: no lab client and no drills profile")
    store = _db()
    now = time.time()
    with store._lock, store.conn:
        if client:
            store.conn.execute("INSERT INTO lab_people (client, learner, class_code, seen) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT (client) DO UPDATE SET class_code = excluded.class_code, learner = "
                               "COALESCE(excluded.learner, lab_people.learner), seen = excluded.seen",
                               (client, learner, found, now))
        if learner:
            store.conn.execute("INSERT INTO lab_class_learners (learner, class_code, joined) VALUES (?, ?, ?) "
                               "ON CONFLICT (learner) DO UPDATE SET class_code = excluded.class_code, "
                               "joined = excluded.joined", (learner, found, now))
    return found


def class_of(client: str | None, learner: str | None = None) -> str | None:
    """The class of a lab client (joined through the lab) or of its learner (joined through the profile form);
    None when neither joined one, or the class's code is no longer configured."""
    store = _db()
    with store._lock:
        row = None
        if client:
            row = store.conn.execute("SELECT class_code FROM lab_people WHERE client = ? AND class_code IS NOT "
                                     "NULL", (client,)).fetchone()
        if row is None and learner:
            row = store.conn.execute("SELECT class_code FROM lab_class_learners WHERE learner = ?",
                                     (learner,)).fetchone()
        if row is None and client:
            row = store.conn.execute("SELECT c.class_code FROM lab_people p JOIN lab_class_learners c ON "
                                     "c.learner = p.learner WHERE p.client = ?", (client,)).fetchone()
    code = row[0] if row else None
    return code if code in codes() else None


def members(code: str) -> list[str]:
    """The lab clients of class ``code``: joined themselves, or of a learner who joined."""
    store = _db()
    with store._lock:
        rows = store.conn.execute("SELECT client FROM lab_people WHERE class_code = ? OR learner IN (SELECT learner "
                                  "FROM lab_class_learners WHERE class_code = ?)", (code, code)).fetchall()
    return sorted({r[0] for r in rows})


def names(clients: list[str]) -> dict[str, str | None]:
    """client -> the display name of its learner (the drills' profile name), None where it has none."""
    wanted = sorted({c for c in clients if c})
    if not wanted:
        return {}
    store = _db()
    out: dict[str, str | None] = dict.fromkeys(wanted)
    learners: dict[str, str] = {}
    with store._lock:
        for k in range(0, len(wanted), 200):
            part = wanted[k:k + 200]
            marks = ", ".join("?" * len(part))
            for client, learner in store.conn.execute(
                    f"SELECT client, learner FROM lab_people WHERE client IN ({marks})", tuple(part)).fetchall():
                if learner:
                    learners[client] = learner
    cache: dict[str, str | None] = {}
    for client, learner in learners.items():
        if learner not in cache:
            cache[learner] = drill_store.learner_name(learner)
        out[client] = cache[learner]
    return out


def jobs_of(clients: list[str], limit: int | None = MAX_JOBS, done: bool = False) -> list[dict]:
    """The newest ``limit`` jobs (all of them for None; with ``done``, the finished ones only) submitted by any of
    ``clients``, newest first: the SQL job table, and in Redis mode the live page merged in (Redis's copy wins)."""
    if not clients:
        return []
    hist = job_store.history_store()
    found: dict[str, dict] = {}
    status = " AND status = 'done'" if done else ""
    with hist._lock:
        for k in range(0, len(clients), 200):
            part = clients[k:k + 200]
            marks = ", ".join("?" * len(part))
            rows = hist.conn.execute(f"SELECT * FROM bench_jobs WHERE client IN ({marks}){status} ORDER BY created "
                                     "DESC" + (" LIMIT ?" if limit else ""), (*part, *([limit] if limit else []))
                                     ).fetchall()
            found.update({j["id"]: j for j in (hist._row(r) for r in rows)})
    live = job_store.get_store()
    if live is not hist:
        wanted = set(clients)
        found.update({j["id"]: j for j in live.list_jobs(limit or MAX_JOBS) if j.get("client") in wanted
                      and (j.get("status") == "done" or not done)})
    return sorted(found.values(), key=lambda j: float(j.get("created") or 0), reverse=True)[:limit]


def scores(job: dict) -> list[dict]:
    """A finished job's entries for a leaderboard: ``{"kernel", "metric", "unit", "better", "value"}`` each (GEMM:
    TFLOP/s per rung and size; transpose: GB/s per variant and size; smem: cycles per warp access per layout and
    access). [] for a job that is not done or has no such number."""
    r = job.get("result") or {}
    if job.get("status") != "done" or not isinstance(r, dict):
        return []
    kind = job.get("kind")
    if kind == "gemm" and isinstance(r.get("tflops"), int | float):
        p = r.get("params") or job.get("params") or {}
        return [{"kernel": f"gemm rung {p.get('rung')} m={p.get('m')}", "metric": "TFLOP/s", "unit": "TFLOP/s",
                 "better": "higher", "value": float(r["tflops"])}]
    if kind == "transpose" and isinstance(r.get("variants"), dict):
        n = (r.get("config") or {}).get("n")
        return [{"kernel": f"transpose {name} n={n}", "metric": "GB/s", "unit": "GB/s", "better": "higher",
                 "value": float(v["gbps"])}
                for name, v in r["variants"].items() if isinstance(v, dict) and isinstance(v.get("gbps"), int | float)]
    if kind == "smem" and isinstance((r.get("derived") or {}).get("cycles_per_warp_access"), int | float):
        p = job.get("params") or {}
        access = p.get("access") or p.get("pattern") or ""
        return [{"kernel": f"smem {r.get('layout') or p.get('layout')} {access}".strip(), "metric": "cycles per warp "
                 "access", "unit": "cycles", "better": "lower", "value": float(r["derived"]["cycles_per_warp_access"])}]
    return []


def leaderboard(jobs: list[dict], who: dict[str, str | None]) -> list[dict]:
    """The best result per kernel among ``jobs`` (higher or lower is better as the kernel's metric says; a tie goes
    to the earlier job): ``{"kernel", "metric", "unit", "better", "value", "submitter", "job", "finished", "runs"}``,
    sorted by kernel."""
    best: dict[str, dict] = {}
    runs: dict[str, int] = {}
    for job in sorted(jobs, key=lambda j: float(j.get("finished") or j.get("created") or 0)):
        for s in scores(job):
            k = s["kernel"]
            runs[k] = runs.get(k, 0) + 1
            old = best.get(k)
            better = old is None or (s["value"] > old["value"] if s["better"] == "higher" else
                                     s["value"] < old["value"])
            if better:
                best[k] = {**s, "submitter": who.get(job.get("client") or ""), "job": job["id"],
                           "finished": job.get("finished")}
    return [{**best[k], "runs": runs[k]} for k in sorted(best)]


def instructor_token_ok(given: str | None) -> bool:
    """Whether ``given`` is LAYOUTLAB_INSTRUCTOR_TOKEN or LAYOUTLAB_ADMIN_TOKEN (never true for unset ones)."""
    if not given:
        return False
    ok = False
    for name in ("LAYOUTLAB_INSTRUCTOR_TOKEN", "LAYOUTLAB_ADMIN_TOKEN"):
        token = os.environ.get(name)
        if token and hmac.compare_digest(given.encode(), token.encode()):
            ok = True
    return ok


def is_instructor(headers: Any, cookies: dict[str, str]) -> bool:
    """Whether a request comes from the instructor: the token as ``Authorization: Bearer``, ``X-Instructor-Token``
    or ``X-Admin-Token``, or the signed instructor cookie (valid while the token it was set with is still set)."""
    auth = headers.get("authorization") or ""
    for given in (headers.get("x-instructor-token"), headers.get("x-admin-token"),
                  auth[7:].strip() if auth.lower().startswith("bearer ") else None):
        if instructor_token_ok(given):
            return True
    inner = identity.unsign(cookies.get(INSTRUCTOR_COOKIE))
    if not inner or not inner.startswith(INSTRUCTOR_PURPOSE):
        return False
    given = inner[len(INSTRUCTOR_PURPOSE):]
    return any(hmac.compare_digest(given, _fingerprint(t)) for t in _instructor_tokens())


def _instructor_tokens() -> list[str]:
    return [t for t in (os.environ.get("LAYOUTLAB_INSTRUCTOR_TOKEN"), os.environ.get("LAYOUTLAB_ADMIN_TOKEN")) if t]


def _fingerprint(token: str) -> str:
    """A one-way mark of a token (the cookie never carries the token itself)."""
    return hashlib.sha256(b"layoutlab-instructor:" + token.encode()).hexdigest()[:32]


def instructor_cookie(token: str) -> str:
    """The signed cookie value that keeps an instructor signed in on the class page: a fingerprint of the token,
    valid while that token is still configured (a new token signs everyone out)."""
    return identity.sign(INSTRUCTOR_PURPOSE + _fingerprint(token))


#: Wrong attempts to join a class (or to give the instructor token) per address: a class code cannot be guessed by
#: trying many. Right ones never count: a class of any size behind one address joins at once.
JOIN_RATE = (10, 60)


def check_attempt_rate(address: str | None, what: str = "join") -> None:
    """Before an attempt to join a class (or, ``what="instructor"``, to give the instructor token) is judged:
    ClassError 429 (with ``retry_after``) while ``address`` has made JOIN_RATE's worth of wrong attempts, whatever
    this one gives. Counts nothing (``count_wrong_attempt`` counts a wrong one)."""
    if not address:
        return
    wait = job_store.history_store().waiting(f"{what}:{address}", *JOIN_RATE)
    if wait is not None:
        raise _too_many(wait)


def count_wrong_attempt(address: str | None, what: str = "join") -> None:
    """Count one wrong class code (or instructor token) against ``address``; ClassError 429 when that was one too
    many (two servers sharing the database judged at once)."""
    if not address:
        return
    refused = job_store.history_store().admit([(f"{what}:{address}", *JOIN_RATE)])
    if refused is not None:
        raise _too_many(refused[1])


def _too_many(wait: float) -> ClassError:
    wait = max(1, math.ceil(wait))
    return ClassError(429, f"too many wrong attempts from this address: {JOIN_RATE[0]} per {JOIN_RATE[1]} s; try "
                           f"again in {wait} s", retry_after=wait)


def class_view(code: str, instructor: bool, client: str | None = None, learner: str | None = None,
               limit: int = 200) -> dict:
    """The class ``code``: ``{"class", "members", "leaderboard"}`` and, for the instructor, ``"jobs"`` (raw job
    dicts, newest first, each with its ``submitter``) and ``"students"`` (their names). ClassError 404 for a code
    that is no class (403 to anyone but the instructor, so codes cannot be guessed), 403 for anyone but the
    instructor or (for the leaderboard alone) a member of the class."""
    found = match(code)
    if found is None:
        raise ClassError(404 if instructor else 403, "no such class" if instructor else "not a class you are in")
    if not instructor and class_of(client, learner) != found:
        raise ClassError(403, "only the instructor (LAYOUTLAB_INSTRUCTOR_TOKEN) or a member of the class sees it")
    clients = members(found)
    jobs = jobs_of(clients, MAX_JOBS)
    who = names(clients)  # the board: every finished job of the class, not only the newest listed
    out: dict[str, Any] = {"class": found, "members": len(clients),
                           "leaderboard": leaderboard(jobs_of(clients, None, done=True), who)}
    if instructor:
        out["jobs"] = [{**j, "submitter": who.get(j.get("client") or "")} for j in jobs[:limit]]
        out["students"] = sorted({n or "(no name)" for n in who.values()})
    return out


__all__ = ["ClassError", "check_attempt_rate", "class_of", "class_rate", "class_view", "codes", "count_wrong_attempt",
           "display_name", "instructor_cookie", "is_instructor", "join", "jobs_of", "leaderboard", "learner_of",
           "match", "members", "names", "note", "scores"]
