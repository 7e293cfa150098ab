"""JSON routes of the drills: kinds, next drill, answer, reveal, hints, progress, profile, whiteboard sessions.

Errors: an unknown kind or a seed out of range in the query is a 422; an unknown or malformed drill id or session
is a 404; an empty or over-long answer is a 422 (schema). An answer that is present but cannot be read is graded:
200 with ``correct: false``, ``readable: false`` and a format hint, and it is not recorded as an attempt. The key is
in the answer only once the drill is solved or revealed. A profile name held by another browser is a 409.

GET routes change nothing: they read the learner's cookie (a client without one is given one) but store no row;
answers, hints, reveals, profile names and whiteboard sessions are POST, each one transaction in the store.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field, field_validator

from app.budget import BudgetedRoute, cpu_scale
from app.drills import identity, progress, service, store
from app.drills.core import MAX_SEED, DrillError, parse_id
from app.drills.parsing import MAX_ANSWER_CHARS
from app.openapi import errors
from app.proxies import client_address
from app.schemas import RequestBody
from app.services import lab_class, lab_clients

router = APIRouter(route_class=BudgetedRoute, prefix="/api/drills", tags=["drills"])
COOKIE = "layoutlab_learner"
COOKIE_AGE = 365 * 86_400
#: A whiteboard start searches fresh seeds for the sheet's 28 questions: a fixed amount of work that no input
#: changes (bounded by app.drills.whiteboard.SEARCH), given this many times the per-request CPU budget.
WHITEBOARD_CPU_SCALE = 3.0


def current_learner(request: Request) -> tuple[str, bool]:
    """(learner id, whether the cookie must be (re)set): the id the signed cookie carries, or a fresh one when the
    cookie is missing, malformed or not signed by this site. Post-condition: nothing is stored."""
    return store.learner_id(identity.unsign(request.cookies.get(COOKIE)))


def learner_cookie(request: Request, response: Response) -> str:
    """The learner id from the signed cookie (a new one is created and set when missing or not valid)."""
    lid, fresh = current_learner(request)
    if fresh:
        set_learner_cookie(response, lid)
    return lid


def set_learner_cookie(response: Response, lid: str) -> None:
    response.set_cookie(COOKIE, identity.sign(lid), max_age=COOKIE_AGE, httponly=True, samesite="lax")


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
    skill: str = ""
    variant: str = ""
    seed: int = 0
    given: dict[str, Any] = Field(default_factory=dict, description="the question's inputs (op drills: op, args)")
    shown: list[dict[str, Any]] = []
    table: list[int] | None = None
    hints: int = 3
    served: str = Field("", description="signed time the drill was served: send it back with the answer")
    sheet: bool = Field(False, description="the drill carries the interview sheet's own numbers")


class AnswerIn(RequestBody):
    answer: str = Field(..., max_length=MAX_ANSWER_CHARS, description="the typed answer, in any equivalent form")
    elapsed_ms: int | None = Field(None, ge=0, le=7 * 86_400_000, description="time taken (else: since served)")
    session: str | None = Field(None, max_length=64, description="whiteboard session id, when answering a part")
    served: str | None = Field(None, max_length=200, description="the drill's `served` token (for time taken)")

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the answer is empty")
        return v


class AnswerOut(BaseModel):
    id: str
    correct: bool
    readable: bool = True
    feedback: str = ""
    reason: str = ""
    mistake: str | None = None
    expected: str | None = Field(None, description="the key: only once the drill is answered right or revealed")
    steps: list[dict[str, Any]] | None = None
    items: list[bool] | None = None
    cells: list[list[bool]] | None = None
    answer_grid: dict[str, Any] | None = None
    grids: list[dict[str, Any]] | None = None


class RevealOut(BaseModel):
    id: str
    expected: str
    steps: list[dict[str, Any]]
    grids: list[dict[str, Any]] = []


class HintIn(RequestBody):
    level: int = Field(1, ge=1, le=3)


class ProfileIn(RequestBody):
    name: str = Field(..., min_length=1, max_length=40)
    class_code: str | None = Field(None, max_length=100, description="a class code to join (LAYOUTLAB_CLASS_CODES)")


@router.get("/kinds", response_model=list[KindOut])
def list_kinds() -> list[dict[str, str]]:
    """Every drill kind, in syllabus order."""
    return service.kind_list()


@router.get("/next", response_model=DrillOut)
def next_drill(kind: str | None = Query(None, max_length=40), seed: int | None = Query(None, ge=0, le=MAX_SEED),
               numbers: Literal["fresh", "sheet"] = Query("fresh", description="fresh numbers, or the interview "
                                                          "sheet's own (a kind the sheet asks)"),
               learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """A drill of ``kind`` (default: the learner's spaced-repetition pick) with ``seed`` (default: fresh);
    ``numbers=sheet`` gives one with the interview sheet's own numbers (422 for a kind the sheet never asks)."""
    try:
        drill = service.next_drill(learner, kind, seed, numbers)
    except DrillError as err:
        raise HTTPException(422, str(err)) from None
    return {**service.drill_json(drill), "served": service.served_token(drill.id)}


@router.post("/{drill_id}/answer", response_model=AnswerOut, response_model_exclude_none=True,
             responses=errors({404: "malformed drill id, or no such whiteboard session for this learner"},
                              {409: "the whiteboard session is finished, or this drill is not its current part"}))
def answer(drill_id: str, body: AnswerIn, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Grade an answer by meaning; record it (unless unreadable, or the drill is already solved or revealed) with
    the time taken, in one transaction. A whiteboard part takes exactly one answer: any other is a 409."""
    try:
        parse_id(drill_id)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    if body.session:
        check_session_part(learner, body.session, drill_id)
    elapsed = body.elapsed_ms / 1000 if body.elapsed_ms is not None else None
    try:
        drill, verdict, solved = service.grade_answer(learner, drill_id, body.answer, session=body.session,
                                                      elapsed_s=elapsed, served=body.served)
    except store.SessionRefused as err:
        raise HTTPException(err.status, str(err)) from None
    return service.result_json(drill, verdict, solved)


@router.post("/{drill_id}/reveal", response_model=RevealOut, responses=errors({404: "malformed drill id"}))
def reveal(drill_id: str, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """The key and the derivation. Counts as a miss for spaced repetition; the drill no longer promotes its
    sub-skill, even when answered right afterwards."""
    try:
        parse_id(drill_id)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    return service.reveal(learner, drill_id)


def check_session_part(learner: str, sid: str, drill_id: str) -> None:
    """Raise 404 unless ``sid`` is this learner's session, 409 unless ``drill_id`` is its current part (a read
    ahead of grading; the store's transaction decides again when it records)."""
    try:
        res = progress.session_results(learner, sid)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    cur = res["current"]
    if cur is None:
        raise HTTPException(409, "this whiteboard session is finished")
    if res["parts"][cur].drill_id != drill_id:
        raise HTTPException(409, f"question {cur + 1} of this session is {res['parts'][cur].drill_id}, not {drill_id}")


@router.post("/{drill_id}/hint", responses=errors({404: "malformed drill id"}))
def record_hint(drill_id: str, body: HintIn, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Hint ``level`` (1 the rule, 2 the first step, 3 the whole derivation), recorded for the learner's next
    answer (two or more hints: a right answer does not promote). POST only: opening a hint is a record."""
    try:
        return service.hint(learner, drill_id, body.level)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None


@router.get("/progress")
def get_progress(learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """This learner's per-kind accuracy, streaks and repetition boxes, and the kind due next."""
    out = progress.summary(learner).to_dict()
    out["next_kind"] = progress.next_kind(learner)
    return out


@router.post("/profile", responses=errors({403: "class_code is not a class code of this server"},
                                          {404: "class_code given, but this server has no classes"},
                                          {409: "the name belongs to another browser"},
                                          {429: "too many wrong class codes from this address"}))
def set_profile(body: ProfileIn, request: Request, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Name this browser's profile (stored NFKC-normalised, as the answer's ``name`` shows). A name another browser
    holds, or one that differs from it only in case, width or look-alike letters, is refused with 409: a name never
    takes over someone else's progress; a name mixing scripts is refused with 422. ``class_code`` joins a class
    (app.services.lab_class): this browser's GPU-lab jobs then share the class's quota; 403 for a code that is no
    class here, 404 when the server has none."""
    klass = None
    if body.class_code is not None:  # checked first, joined last: a refused name or code changes nothing
        try:
            klass = lab_class.find(body.class_code, client_address(request))
        except lab_class.ClassError as err:
            raise HTTPException(err.status, str(err), headers={"Retry-After": str(err.retry_after)}
                                if err.retry_after else None) from None
    try:
        store.claim_name(learner, body.name)
    except store.NameTaken as err:
        raise HTTPException(409, str(err)) from None
    except ValueError as err:
        raise HTTPException(422, str(err)) from None
    if klass:
        lab_class.join(klass, None, learner)
    lab_class.note(lab_clients.verify(request.cookies.get(lab_clients.COOKIE)), learner)  # its jobs show the name
    return {"name": store.learner_name(learner), "switched": False, **({"class": klass} if klass else {})}


class WhiteboardIn(RequestBody):
    numbers: Literal["fresh", "sheet"] = "fresh"


@router.post("/whiteboard", responses=errors({429: "this learner holds too many unfinished sessions"}))
@cpu_scale(WHITEBOARD_CPU_SCALE)
def start_whiteboard(body: WhiteboardIn | None = None, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """Start a timed whiteboard session (the seed's seven parts, 3-8 questions each); answer its questions in order
    with ``session`` set. ``{"numbers": "sheet"}`` asks every question with the interview sheet's own numbers; once
    every question is answered, each part carries the answer beside its key (``expected``) and worked ``steps``.
    A learner holds at most ``MAX_OPEN_SESSIONS`` unfinished sessions (429 past it; the oldest unanswered ones make
    room first)."""
    try:
        sid = progress.start_whiteboard(learner, numbers=body.numbers if body else "fresh")
    except store.SessionRefused as err:
        raise HTTPException(err.status, str(err)) from None
    return whiteboard_json(learner, sid)


@router.get("/whiteboard/{sid}", responses=errors({404: "no such whiteboard session for this learner"}))
def get_whiteboard(sid: str, learner: str = Depends(learner_cookie)) -> dict[str, Any]:
    """A session's questions, per-part times, score and the redo verdict for parts 6 and 7 (over ten minutes or
    wrong)."""
    return whiteboard_json(learner, sid)


def whiteboard_json(learner: str, sid: str) -> dict[str, Any]:
    try:
        res = progress.session_results(learner, sid)
    except DrillError as err:
        raise HTTPException(404, str(err)) from None
    parts = [{"index": p.index, "part": p.part, "label": p.label, "id": p.drill_id, "answered": p.answered,
              "correct": p.correct, "elapsed_s": p.elapsed_s, "redo": p.redo, "why": p.why,
              **({"answer": p.answer, "expected": p.expected, "steps": p.steps} if res["finished"] else {})}
             for p in res["parts"]]
    sheet = [{"part": s.part, "label": s.label, "questions": s.questions, "answered": s.answered,
              "correct": s.correct, "elapsed_s": s.elapsed_s, "redo": s.redo, "why": s.why} for s in res["sheet"]]
    return {"session": sid, "finished": res["finished"], "current": res["current"], "score": res["score"],
            "total": res["total"], "elapsed_s": res["elapsed_s"], "part_limit_s": progress.PART_LIMIT_S,
            "parts": parts, "sheet": sheet, "redo": [s["part"] for s in sheet if s["redo"]]}
