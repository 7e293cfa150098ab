"""JSON routes of the class (CONTRACT §7): join a class with its code, see your class, and (the instructor) every job
of a class with its submitter and the class's leaderboard. See app.services.lab_class for who is who."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import Field

from app.budget import BudgetedRoute
from app.openapi import errors
from app.routes.api_bench import address_of, client_of
from app.schemas import RequestBody
from app.services import bench as S
from app.services import lab_class

router = APIRouter(route_class=BudgetedRoute, prefix="/api/class", tags=["class"])


class JoinIn(RequestBody):
    code: str = Field(..., min_length=1, max_length=100, description="a class code (LAYOUTLAB_CLASS_CODES)")


def _refuse(err: lab_class.ClassError) -> HTTPException:
    return HTTPException(err.status, str(err),
                         headers={"Retry-After": str(err.retry_after)} if err.retry_after else None)


@router.post("/join", responses=errors({403: "not a class code of this server"},
                                       {404: "this server has no classes (LAYOUTLAB_CLASS_CODES unset)"},
                                       {429: "too many wrong class codes from this address"}))
def join(body: JoinIn, request: Request) -> dict[str, Any]:
    """Join the class ``code``: this lab client (and the drills profile of this browser, when it has one) then
    counts its submissions against the class's quota instead of its address's; the per-client limit still
    applies. 403 for a code that is no class here, 404 when the server has no classes."""
    try:
        code = lab_class.join(body.code, client_of(request), lab_class.learner_of(request.cookies),
                              address_of(request))
    except lab_class.ClassError as err:
        raise _refuse(err) from None
    limit, window = lab_class.class_rate()
    return {"class": code, "quota": {"limit": limit, "window_s": window}}


@router.get("")
def mine(request: Request) -> dict[str, Any]:
    """This client's class (``null`` when none) and its display name (the drills' profile name)."""
    client, learner = client_of(request), lab_class.learner_of(request.cookies)
    return {"class": lab_class.class_of(client, learner), "name": lab_class.display_name(client, learner),
            "instructor": lab_class.is_instructor(request.headers, request.cookies)}


@router.get("/{code}/jobs", responses=errors({401: "no instructor token"}, {403: "a wrong instructor token"},
                                             {404: "no such class"},
                                             {429: "too many wrong instructor tokens from this address"}))
def class_jobs(code: str, request: Request, limit: int = Query(200, ge=1, le=lab_class.MAX_JOBS)) -> dict[str, Any]:
    """Every job of the class, newest first, each with its ``submitter`` (display name), the class's ``students``
    and its ``leaderboard``. The instructor only: LAYOUTLAB_INSTRUCTOR_TOKEN (or the lab admin token) as
    ``Authorization: Bearer``; 401 without a token, 403 with a wrong one."""
    _instructor(request)
    try:
        return S.class_view(code, True, client_of(request), limit=limit)
    except lab_class.ClassError as err:
        raise _refuse(err) from None


@router.get("/{code}/leaderboard", responses=errors({403: "neither the instructor nor a member of the class"},
                                                    {404: "no such class"}))
def class_leaderboard(code: str, request: Request) -> dict[str, Any]:
    """The class's best finished result per kernel (GEMM TFLOP/s per rung, transpose GB/s per variant, smem
    cycles per access): ``{"class", "members", "leaderboard": [{"kernel", "metric", "unit", "better", "value",
    "submitter", "job", "finished", "runs"}]}``. For the instructor and the class's members."""
    instructor = lab_class.is_instructor(request.headers, request.cookies)
    try:
        view = S.class_view(code, instructor, client_of(request), lab_class.learner_of(request.cookies))
    except lab_class.ClassError as err:
        raise _refuse(err) from None
    return {k: view[k] for k in ("class", "members", "leaderboard")}


def _instructor(request: Request) -> None:
    """401 without any instructor credential, 403 with a wrong one; a wrong one counts as a guess of the address
    (lab_class.JOIN_RATE, as on the class page's sign-in), and past that limit every token given is 429."""
    given = (request.headers.get("authorization") or request.headers.get("x-instructor-token")
             or request.headers.get("x-admin-token"))
    try:
        if given:
            lab_class.check_attempt_rate(address_of(request), "instructor")
        if lab_class.is_instructor(request.headers, request.cookies):
            return
        if given:
            lab_class.count_wrong_attempt(address_of(request), "instructor")
    except lab_class.ClassError as err:
        raise _refuse(err) from None
    if given:
        raise HTTPException(403, "not the instructor token (LAYOUTLAB_INSTRUCTOR_TOKEN)")
    raise HTTPException(401, "the class view is the instructor's: send LAYOUTLAB_INSTRUCTOR_TOKEN as "
                             "Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
