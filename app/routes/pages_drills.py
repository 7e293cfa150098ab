"""Drill pages: ``/drills?kind=&seed=`` (permalink of one drill), answers and hints as htmx fragments, the progress
page with the optional profile name, and the timed whiteboard mode with its score page.

Every form also works without JavaScript: the same routes answer the whole page when the request is not htmx.
GET pages change nothing: a drill page shows the hints its learner already opened (``hint=`` in an old permalink is
ignored); opening the next hint is a POST (``/drills/hint``), as are answers, reveals, profiles and whiteboards.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.budget import BudgetedRoute, cpu_scale
from app.drills import progress, service, store
from app.drills.core import MAX_SEED, Drill, DrillError, Grade, Grid, check, from_id, kinds, random_seed
from app.drills.parsing import MAX_ANSWER_CHARS
from app.page_query import pick
from app.proxies import client_address
from app.routes.api_drills import WHITEBOARD_CPU_SCALE, current_learner, set_learner_cookie
from app.services import lab_class, lab_clients
from app.templating import is_htmx, templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


def _learner(request: Request) -> tuple[str, bool]:
    """(learner id, whether the cookie must be set on the response)."""
    return current_learner(request)


def _render(request: Request, name: str, ctx: dict[str, Any], learner: tuple[str, bool], block: str | None = None,
            status: int = 200) -> Response:
    ctx.setdefault("request", request)
    resp = templates.TemplateResponse(request, name, ctx, block_name=block, status_code=status)
    if learner[1]:
        set_learner_cookie(resp, learner[0])
    return resp


def grid_view(g: Grid, gid: str) -> Any:
    """The shared grid renderer's view of a drill Grid (cells coloured by offset mod 32 when they are offsets)."""
    from app.services.grid import GridView, offset_colours

    rows = g.rows
    numeric = all(isinstance(v, int) for row in rows for v in row)
    marks = {(i, j): m for i, row in enumerate(g.marks or []) for j, m in enumerate(row) if m}
    return GridView(id=gid, rows=len(rows), cols=len(rows[0]) if rows else 0, text=rows,
                    colour=g.colours or (offset_colours(rows) if numeric and "bank" not in g.title.lower() else None),
                    row_labels=g.row_labels, col_labels=g.col_labels, marks=marks,
                    caption=g.caption or g.title, css="drill-grid wide" if not numeric else "drill-grid")


def _hints(drill: Drill, level: int) -> list[dict[str, Any]]:
    return [drill.hint(k) for k in range(1, max(0, min(level, 3)) + 1)]


def _sidebar(learner: str) -> dict[str, Any]:
    summ = progress.summary(learner)
    return {"summary": summ, "stats": {k.kind: k for k in summ.kinds}}


def _result_ctx(drill: Drill, verdict: Grade, answer: str, solved: bool) -> dict[str, Any]:
    res = service.result_json(drill, verdict, solved)
    mine = service.answer_grid(drill, verdict)
    res["answer_view"] = grid_view(mine, f"mine-{drill.id}") if mine else None
    res["grid_views"] = [grid_view(g, f"rg{i}-{drill.id}") for i, g in enumerate(drill.grids)] if solved else []
    res["answer"] = answer
    res["solved"] = solved
    return {"result": res}


def _shown(drill: Drill) -> list[Any]:
    return [grid_view(g, f"given{i}") for i, g in enumerate(drill.shown)]


@router.get("/drills", response_class=HTMLResponse, include_in_schema=False)
def drills_page(request: Request, kind: str | None = Query(None, max_length=40),
                seed: int | None = Query(None, ge=0, le=MAX_SEED), hint: int = Query(0, ge=0, le=3),
                numbers: Literal["fresh", "sheet"] = Query("fresh")) -> Response:
    """One drill, or a redirect to a fresh permalink (``kind`` defaults to the spaced-repetition pick).
    Post-condition: nothing is stored; ``hint`` (old permalinks) is accepted and ignored: the page shows the hints
    this learner has opened on the drill."""
    learner = _learner(request)
    if kind is not None:  # a kind the menu does not offer (blank included): app.page_query
        kind = pick(kind, tuple(k.kind for k in kinds()), None, "kind")
    if numbers == "sheet" and seed is None:  # the interview sheet's own numbers: a seed that has them
        try:
            found = service.sheet_drill(kind)
        except DrillError as err:
            ctx = {"error": str(err), "kinds": kinds(), "drill": None, **_sidebar(learner[0])}
            return _render(request, "drills.html", ctx, learner, status=422)
        resp = RedirectResponse(f"/drills?kind={found.kind}&seed={found.seed}", status_code=303)  # its permalink
        if learner[1]:
            set_learner_cookie(resp, learner[0])
        return resp
    if kind is None or seed is None:
        if kind is None:  # the sub-skill spaced repetition asks for
            due = service.drill_for_skill(progress.next_skill(learner[0]))
            kind, seed = due.kind, due.seed
        resp = RedirectResponse(f"/drills?kind={kind}&seed={random_seed() if seed is None else seed}",
                                status_code=303)
        if learner[1]:
            set_learner_cookie(resp, learner[0])
        return resp
    check(kind, seed)
    drill = service.next_drill(learner[0], kind, seed)
    opened = store.served_info(learner[0], drill.id)[1]
    ctx = {"drill": drill, "kinds": kinds(), "hints": _hints(drill, opened), "hint_level": opened, "error": None,
           "given_views": _shown(drill), "session": None, "served": service.served_token(drill.id),
           **_sidebar(learner[0])}
    return _render(request, "drills.html", ctx, learner)


@router.post("/drills/hint", response_class=HTMLResponse, include_in_schema=False)
def hint_page(request: Request, id: str = Form(..., max_length=60), level: int = Form(1, ge=1, le=3)) -> Response:
    """Open hint ``level`` of a drill and record it: the ``hints`` block for htmx, else back to the drill's
    permalink (which shows every hint opened)."""
    learner = _learner(request)
    try:
        drill = from_id(id)
    except DrillError as err:
        return _render(request, "drills.html", {"error": str(err), "kinds": kinds(), "drill": None,
                                                **_sidebar(learner[0])}, learner, status=404)
    service.hint(learner[0], drill.id, level)
    if not is_htmx(request):
        resp = RedirectResponse(f"/drills?kind={drill.kind}&seed={drill.seed}", status_code=303)
        if learner[1]:
            set_learner_cookie(resp, learner[0])
        return resp
    opened = max(level, store.served_info(learner[0], drill.id)[1])
    ctx = {"drill": drill, "hints": _hints(drill, opened), "hint_level": opened}
    return _render(request, "drills.html", ctx, learner, block="hints")


@router.post("/drills/answer", response_class=HTMLResponse, include_in_schema=False)
def answer_page(request: Request, id: str = Form(..., max_length=60),
                answer: str = Form("", max_length=MAX_ANSWER_CHARS),
                served: str | None = Form(None, max_length=200)) -> Response:
    """Grade a form answer: the ``result`` block for htmx, else the whole drill page with the verdict."""
    learner = _learner(request)
    try:
        drill = from_id(id)
    except DrillError as err:
        return _render(request, "drills.html", {"error": str(err), "kinds": kinds(), "drill": None,
                                                **_sidebar(learner[0])}, learner, status=404)
    if not answer.strip():
        verdict = Grade(False, f"the answer is empty: type it in the box first ({drill.answer_format})",
                        readable=False)
        solved = store.solved(learner[0], drill.id)
    else:
        drill, verdict, solved = service.grade_answer(learner[0], id, answer, served=served)
    ctx = {"drill": drill, "served": served or "", "kinds": kinds(), "hints": [], "hint_level": 0, "error": None,
           "session": None,
           "given_views": _shown(drill), "oob": is_htmx(request), **_result_ctx(drill, verdict, answer, solved),
           **_sidebar(learner[0])}
    return _render(request, "drills.html", ctx, learner, block="result" if is_htmx(request) else None)


@router.post("/drills/reveal", response_class=HTMLResponse, include_in_schema=False)
def reveal_page(request: Request, id: str = Form(..., max_length=60)) -> Response:
    """Show the key and the derivation (counts as a miss): the ``result`` block for htmx, else the whole page."""
    learner = _learner(request)
    try:
        drill = from_id(id)
    except DrillError as err:
        return _render(request, "drills.html", {"error": str(err), "kinds": kinds(), "drill": None,
                                                **_sidebar(learner[0])}, learner, status=404)
    service.reveal(learner[0], drill.id)
    verdict = Grade(False, "revealed: this drill counts as a miss and comes back soon")
    ctx = {"drill": drill, "kinds": kinds(), "hints": [], "hint_level": 0, "error": None, "session": None,
           "given_views": _shown(drill), "oob": is_htmx(request), "revealed": True,
           **_result_ctx(drill, verdict, "", True), **_sidebar(learner[0])}
    return _render(request, "drills.html", ctx, learner, block="result" if is_htmx(request) else None)


@router.get("/drills/progress", response_class=HTMLResponse, include_in_schema=False)
def progress_page(request: Request) -> Response:
    """Per-kind accuracy, streaks, typical time and when each kind comes back; the profile name form."""
    learner = _learner(request)
    ctx = {"next_kind": progress.next_kind(learner[0]), "error": request.query_params.get("error"),
           **_sidebar(learner[0])}
    return _render(request, "drills_progress.html", ctx, learner)


@router.post("/drills/profile", include_in_schema=False)
def profile_page(request: Request, name: str = Form("", max_length=40),
                 class_code: str = Form("", max_length=100)) -> Response:
    """Name the profile (or switch to an existing one), join a class with its code (the GPU lab's submissions of
    this browser then share the class's quota), and go back to the progress page."""
    learner = _learner(request)
    client = lab_clients.verify(request.cookies.get(lab_clients.COOKIE))
    try:  # the code is checked first and joined last: a refused name or code changes nothing
        found = lab_class.find(class_code, client_address(request)) if class_code.strip() else None
        if name.strip() or not class_code.strip():
            store.claim_name(learner[0], name)
            lab_class.note(client, learner[0])
        if found:
            lab_class.join(found, client, learner[0])
    except (ValueError, lab_class.ClassError) as err:  # NameTaken: the page says the name is another browser's
        ctx = {"next_kind": progress.next_kind(learner[0]), "error": str(err), **_sidebar(learner[0])}
        status = err.status if isinstance(err, lab_class.ClassError) else \
            409 if isinstance(err, store.NameTaken) else 422
        resp = _render(request, "drills_progress.html", ctx, learner, status=status)
        if getattr(err, "retry_after", None):  # too many wrong class codes: when to try again, as the API says
            resp.headers["Retry-After"] = str(err.retry_after)
        return resp
    resp = RedirectResponse("/drills/progress", status_code=303)
    if learner[1]:
        set_learner_cookie(resp, learner[0])
    return resp


@router.get("/drills/whiteboard", response_class=HTMLResponse, include_in_schema=False)
def whiteboard_intro(request: Request) -> Response:
    """The whiteboard mode's rules and a start button."""
    learner = _learner(request)
    ctx = {"parts": progress.WHITEBOARD, "sheet": progress.SHEET, "limit_min": progress.PART_LIMIT_S // 60,
           "res": None, "drill": None}
    return _render(request, "drills_whiteboard.html", ctx, learner)


@router.post("/drills/whiteboard", include_in_schema=False)
@cpu_scale(WHITEBOARD_CPU_SCALE)
def whiteboard_start(request: Request, numbers: Literal["fresh", "sheet"] = Form("fresh")) -> Response:
    learner = _learner(request)
    try:
        sid = progress.start_whiteboard(learner[0], numbers=numbers)
    except store.SessionRefused as err:
        ctx = {"error": str(err), "res": None, "drill": None, "parts": progress.WHITEBOARD, "sheet": progress.SHEET,
               "limit_min": progress.PART_LIMIT_S // 60}
        return _render(request, "drills_whiteboard.html", ctx, learner, status=err.status)
    resp = RedirectResponse(f"/drills/whiteboard/{sid}", status_code=303)
    if learner[1]:
        set_learner_cookie(resp, learner[0])
    return resp


@router.get("/drills/whiteboard/{sid}", response_class=HTMLResponse, include_in_schema=False)
def whiteboard_session(request: Request, sid: str, last: int | None = Query(None, ge=0, le=200)) -> Response:
    """The current part against the clock, or the score page once every part is answered."""
    learner = _learner(request)
    try:
        res = progress.session_results(learner[0], sid)
    except DrillError as err:
        ctx = {"error": str(err), "res": None, "drill": None, "parts": progress.WHITEBOARD, "sheet": progress.SHEET}
        return _render(request, "drills_whiteboard.html", ctx, learner, status=404)
    drill = None
    if res["current"] is not None:
        drill = progress.session_drill(learner[0], sid, res["current"])
    prev = res["parts"][last] if last is not None and last < len(res["parts"]) else None
    ctx = {"res": res, "drill": drill, "sid": sid, "prev": prev, "parts": progress.WHITEBOARD,
           "limit_min": progress.PART_LIMIT_S // 60, "session": sid, "hints": [], "hint_level": 0,
           "given_views": _shown(drill) if drill else [], "served": service.served_token(drill.id) if drill else ""}
    return _render(request, "drills_whiteboard.html", ctx, learner)


@router.post("/drills/whiteboard/{sid}/answer", include_in_schema=False)
def whiteboard_answer(request: Request, sid: str, id: str = Form(..., max_length=60),
                      answer: str = Form("", max_length=MAX_ANSWER_CHARS),
                      served: str | None = Form(None, max_length=200)) -> Response:
    """Record the current part's single answer (an unreadable one may be retyped) and move on; an answer to a part
    already answered, however close behind the first, goes back to the session page unrecorded."""
    learner = _learner(request)
    try:
        res = progress.session_results(learner[0], sid)
    except DrillError as err:
        ctx = {"error": str(err), "res": None, "drill": None, "parts": progress.WHITEBOARD, "sheet": progress.SHEET}
        return _render(request, "drills_whiteboard.html", ctx, learner, status=404)
    cur = res["current"]
    if cur is None or res["parts"][cur].drill_id != id:
        return RedirectResponse(f"/drills/whiteboard/{sid}", status_code=303)
    try:
        _, verdict, _ = service.grade_answer(learner[0], id, answer or " ", session=sid, served=served)
    except store.SessionRefused:
        return RedirectResponse(f"/drills/whiteboard/{sid}", status_code=303)
    if not verdict.readable:
        drill = from_id(id)
        ctx = {"res": res, "drill": drill, "sid": sid, "prev": None, "parts": progress.WHITEBOARD,
               "limit_min": progress.PART_LIMIT_S // 60, "session": sid, "unreadable": verdict.reason,
               "answer": answer, "given_views": _shown(drill), "served": served or ""}
        return _render(request, "drills_whiteboard.html", ctx, learner, status=200)
    return RedirectResponse(f"/drills/whiteboard/{sid}?last={cur}", status_code=303)
