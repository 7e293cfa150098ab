"""The class pages: ``/lab/class`` (a student's class and its leaderboard; the instructor's view of every job of a
class with its submitter and the leaderboard), the instructor's sign-in and a class-code form. See
app.services.lab_class."""

from __future__ import annotations

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.budget import BudgetedRoute
from app.routes.api_bench import address_of, client_of
from app.services import bench as S
from app.services import lab_class
from app.templating import templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


def _page(request: Request, code: str | None, error: str | None = None, status: int = 200) -> HTMLResponse:
    instructor = lab_class.is_instructor(request.headers, request.cookies)
    client, learner = client_of(request), lab_class.learner_of(request.cookies)
    mine = lab_class.class_of(client, learner)
    code = code or (None if instructor else mine)
    view = None
    if code and not error:
        try:
            view = S.class_view(code, instructor, client, learner)
        except lab_class.ClassError as err:
            error, status = str(err), err.status
    ctx = {"request": request, "instructor": instructor, "mine": mine, "view": view, "error": error,
           "codes": lab_class.codes() if instructor else [], "code": code,
           "name": lab_class.display_name(client, learner)}
    return templates.TemplateResponse(request, "lab_class.html", ctx, status_code=status)


def _refused(request: Request, err: lab_class.ClassError) -> HTMLResponse:
    """The class page with a refusal's reason and status (a 429 with its Retry-After, as the JSON route sends)."""
    page = _page(request, None, str(err), err.status)
    if err.retry_after:
        page.headers["Retry-After"] = str(err.retry_after)
    return page


@router.get("/lab/class", response_class=HTMLResponse, include_in_schema=False)
def class_page(request: Request, code: str | None = Query(None, max_length=100)) -> HTMLResponse:
    """A student: their class's leaderboard (or the form to join one). The instructor: the classes, and for
    ``?code=`` every job of that class with its submitter and the leaderboard."""
    return _page(request, code)


@router.post("/lab/class/join", include_in_schema=False)
def class_join(request: Request, code: str = Form("", max_length=100)) -> Response:
    """Join a class with its code (the lab's form; the drills' profile form has the same field)."""
    try:
        lab_class.join(code, client_of(request), lab_class.learner_of(request.cookies), address_of(request))
    except lab_class.ClassError as err:
        return _refused(request, err)
    return RedirectResponse("/lab/class", status_code=303)


@router.post("/lab/class/instructor", include_in_schema=False)
def instructor_sign_in(request: Request, token: str = Form("", max_length=200)) -> Response:
    """The instructor gives LAYOUTLAB_INSTRUCTOR_TOKEN once; a signed cookie keeps the class view open."""
    try:
        lab_class.check_attempt_rate(address_of(request), "instructor")
        if not lab_class.instructor_token_ok(token.strip()):
            lab_class.count_wrong_attempt(address_of(request), "instructor")
            return _page(request, None, "not the instructor token (LAYOUTLAB_INSTRUCTOR_TOKEN)", 403)
    except lab_class.ClassError as err:
        return _refused(request, err)
    resp = RedirectResponse("/lab/class", status_code=303)
    resp.set_cookie(lab_class.INSTRUCTOR_COOKIE, lab_class.instructor_cookie(token.strip()), max_age=12 * 3600,
                    httponly=True, samesite="lax", path="/")
    return resp
