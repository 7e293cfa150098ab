"""JSON routes of the drills (CONTRACT §2): kinds, next drill, answer, hints, progress, profile, whiteboard sessions.

Errors: an unknown kind or a seed out of range in the query is a 422; an unknown or malformed drill id or session
is a 404; an empty or over-long answer is a 422 (schema). An answer that is present but cannot be read is graded:
200 with ``correct: false``, ``readable: false`` and the reason, and it is not recorded as an attempt.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field, field_validator

from app.drills import progress, service, store
from app.drills.core import MAX_SEED, DrillError, parse_id
from app.drills.parsing import MAX_ANSWER_CHARS

router = APIRouter(prefix="/api/drills", tags=["drills"])
COOKIE = "layoutlab_learner"
COOKIE_AGE = 365 * 86_400


def learner_cookie(request: Request, response: Response) -> str:
    """The learner id from the cookie (a new one is created and set when missing or malformed)."""
    current = request.cookies.get(COOKIE)
    lid = store.ensure_learner(current)
    if lid != current:
        set_learner_cookie(response, lid)
    return lid


def set_learner_cookie(response: Response, lid: str) -> None:
    response.set_cookie(COOKIE, lid, max_age=COOKIE_AGE, httponly=True, samesite="lax")


class KindOut(BaseModel):
    kind: str
    title: str
    skill: str = ""


class DrillOut(BaseModel):
    id: str
    kind: str
    prompt: str
    answer_format: str
    title: str = ""
    seed: int = 0
    given: list[dict[str, Any]] = []
    table: list[int] | None = None
    hints: int = 3


class AnswerIn(BaseModel):
    answer: str = Field(..., max_length=MAX_ANSWER_CHARS, description="the typed answer, in any equivalent form")
    elapsed_ms: int | None = Field(None, ge=0, le=7 * 86_400_000, description="time taken (else: since served)")
    session: str | None = Field(None, max_length=64, description="whiteboard session id, when answering a part")

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the answer is empty")
        return v


class AnswerOut(BaseModel):
    id: str
    correct: bool
    expected: str
    steps: list[dict[str, Any]]
    reason: str = ""
    readable: bool = True
    items: list[bool] | None = None
    cells: list[list[bool]] | None = None
    answer_grid: dict[str, Any] | None = None
    grids: list[dict[str, Any]] = []


class ProfileIn(BaseModel):
    name: str = Field(..., min_length=1, max_length=40)


@router.get("/kinds", response_model=list[KindOut])
def list_kinds() -> list[dict[str, str]]:
    """Every drill kind, in syllabus order."""
    return service.kind_list()


@router.get("/next", response_model=DrillOut)
def next_drill(kind: str | None = Query(None, max_length=40), seed: int | None = Query(None, ge=0, le=MAX_SEED),
               learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """A drill of ``kind`` (default: the learner's spaced-repetition pick) with ``seed`` (default: fresh)."""
    try:
        drill = service.next_drill(learner, kind, seed)
    except DrillError as err:
        raise HTTPException(422, str(err)) from None
    return service.drill_json(drill)


@router.post("/{drill_id}/answer", response_model=AnswerOut)
def answer(drill_id: str, body: AnswerIn, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Grade an answer by meaning; record it (unless unreadable) with the time taken."""
    try:
        parse_id(drill_id)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    if body.session:
        check_session_part(learner, body.session, drill_id)
    elapsed = body.elapsed_ms / 1000 if body.elapsed_ms is not None else None
    drill, verdict = service.grade_answer(learner, drill_id, body.answer, session=body.session, elapsed_s=elapsed)
    return service.result_json(drill, verdict)


def check_session_part(learner: str, sid: str, drill_id: str) -> None:
    """Raise 404 unless ``sid`` is this learner's session, 409 unless ``drill_id`` is its current part."""
    try:
        res = progress.session_results(learner, sid)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    cur = res["current"]
    if cur is None:
        raise HTTPException(409, "this whiteboard session is finished")
    if res["parts"][cur].drill_id != drill_id:
        raise HTTPException(409, f"part {cur + 1} of this session is {res['parts'][cur].drill_id}, not {drill_id}")


@router.get("/{drill_id}/hint")
def hint(drill_id: str, level: int = Query(1, ge=1, le=3), learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Hint ``level``: 1 the rule, 2 the first step, 3 the whole derivation."""
    try:
        return service.hint(learner, drill_id, level)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None


@router.get("/progress")
def get_progress(learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """This learner's per-kind accuracy, streaks and repetition boxes, and the kind due next."""
    out = progress.summary(learner).to_dict()
    out["next_kind"] = progress.next_kind(learner)
    return out


@router.post("/profile")
def set_profile(body: ProfileIn, response: Response, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Name this learner's profile, or switch to the profile that already has that name (its cookie is set)."""
    try:
        owner = store.claim_name(learner, body.name)
    except ValueError as err:
        raise HTTPException(422, str(err)) from None
    set_learner_cookie(response, owner)
    return {"name": body.name.strip(), "switched": owner != learner}


@router.post("/whiteboard")
def start_whiteboard(learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Start a timed seven-part whiteboard session; answer its parts in order with ``session`` set."""
    sid = progress.start_whiteboard(learner)
    return whiteboard_json(learner, sid)


@router.get("/whiteboard/{sid}")
def get_whiteboard(sid: str, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """A session's parts, times, score and the redo verdict for parts 6 and 7 (over ten minutes or wrong)."""
    return whiteboard_json(learner, sid)


def whiteboard_json(learner: str, sid: str) -> dict[str, Any]:
    try:
        res = progress.session_results(learner, sid)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    parts = [{"index": p.index, "label": p.label, "id": p.drill_id, "answered": p.answered, "correct": p.correct,
              "elapsed_s": p.elapsed_s, "redo": p.redo, "why": p.why} for p in res["parts"]]
    return {"session": sid, "finished": res["finished"], "current": res["current"], "score": res["score"],
            "total": res["total"], "elapsed_s": res["elapsed_s"], "part_limit_s": progress.PART_LIMIT_S,
            "parts": parts, "redo": [p["index"] for p in parts if p["redo"]]}
