"""JSON routes of the GPU lab: submit, poll and cancel benchmark jobs; device and worker status.

The caller is the lab client of ``request.state.lab_client`` (the signed cookie, see app.services.lab_clients); a job
belongs to the client that submitted it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BeforeValidator

from app.budget import BudgetedRoute
from app.config import clip
from app.openapi import errors
from app.proxies import client_address
from app.services import bench as S
from app.services import lab_class, ladder_layouts
from app.services.lab_clients import is_admin
from gpu_worker.schemas import JobRequest

router = APIRouter(route_class=BudgetedRoute, prefix="/api/bench", tags=["bench"])
#: Every route here reads the job store: while its Redis or PostgreSQL is unreachable, 503 (app.outage).
#: A rung number as the rung pages read it: ASCII digits, an optional minus (``1.0`` or ``٣`` are refused).
RUNG_PATTERN = r"^-?[0-9]{1,24}$"
#: The most jobs one listing returns.
MAX_LISTED = 200
DOWN = {503: "the job queue's backend (Redis or PostgreSQL) is unreachable; see Retry-After"}


def client_of(request: Request) -> str | None:
    """The lab client id the middleware attached, or None."""
    return getattr(request.state, "lab_client", None)


def address_of(request: Request) -> str | None:
    """The remote address (the rate limit's second key): the peer, or what a trusted proxy forwarded
    (app.proxies)."""
    return client_address(request)


def refusal(exc: Exception) -> JSONResponse | None:
    """The JSON answer for a refused submission or action: 422, 409, 429 (with Retry-After), 503 or 403; its detail
    at most MAX_ECHO characters (``clip``), as every error message's."""
    detail = clip(str(exc))
    if isinstance(exc, S.ParamsError):
        return JSONResponse({"detail": detail}, status_code=422)
    if isinstance(exc, S.NoWorker):
        return JSONResponse({"detail": detail}, status_code=409)
    if isinstance(exc, S.RateLimited):
        return JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, S.QueueFull):
        return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": "30"})
    if isinstance(exc, S.Forbidden):
        return JSONResponse({"detail": detail}, status_code=403)
    return None


@router.post("/jobs", status_code=202,
             responses=errors({409: "no live worker can run this kind"}, 429,
                              {503: "the queue is full, or its backend is unreachable; see Retry-After"}))
def post_job(body: JobRequest, request: Request):
    """Queue a job: 202 ``{"id", "status"}``; 422 for bad kind/params (the field and cap named); 409 when no live
    worker can run it; 429 when this client (or address) submitted too many; 503 when the queue is full or its
    backend is unreachable."""
    try:
        return S.submit(body.kind, body.params, client_of(request), address_of(request),
                        lab_class.learner_of(request.cookies))
    except (S.ParamsError, S.NoWorker, S.RateLimited, S.QueueFull) as exc:
        return refusal(exc)


@router.get("/jobs", responses=errors(DOWN))
def list_jobs(request: Request,
              limit: int = Query(30, ge=1, le=MAX_LISTED, description=f"how many jobs, 1 to {MAX_LISTED}; a limit "
                                 "outside that range is refused (422 naming it), not clipped"),
              gpu: str | None = Query(None, max_length=96, pattern=S.GPU_PATTERN,
                                      description="only the jobs this GPU (its UUID) ran"),
              mine: Annotated[bool, BeforeValidator(S.mine_flag), Query(
                  description="only this client's jobs (1 / true / yes / on; 0 / false / no / off)")] = False,
              ) -> list[dict]:
    """The latest ``limit`` jobs, newest first (422 for a limit outside 1 to 200), each with its ``submitter`` (the
    drills' profile name of the browser that sent it, or null); ``mine`` marks this client's (``?mine=true`` keeps
    only those); ``gpu`` keeps the jobs of one GPU (422 for a value that is no GPU UUID)."""
    return S.history(limit, client_of(request), gpu=gpu, mine=mine)


@router.get("/jobs/{job_id}", responses=errors({404: "no such job"}, DOWN))
def get_job(job_id: str, request: Request) -> dict:
    """``{"id", "status", "progress", "result", "error", ...}``; 404 when unknown."""
    return _found(S.get_job(job_id, client_of(request)), job_id)


@router.post("/jobs/{job_id}/cancel",
             responses=errors({403: "another client's job (and no lab admin token)"}, {404: "no such job"}, DOWN))
def cancel_job(job_id: str, request: Request):
    """Cancel a queued or running job of this client (or any job, with the lab admin token); 403 for another
    client's job, 404 when unknown."""
    try:
        return _found(S.cancel(job_id, client_of(request), is_admin(request.headers)), job_id)
    except S.Forbidden as exc:
        return refusal(exc)


def _found(job: dict | None, job_id: str) -> dict:
    """The job, or 404 naming the id."""
    if not job:
        raise HTTPException(404, f"no job {job_id[:64]}")
    return job


@router.get("/device", responses=errors(DOWN))
def device(request: Request) -> dict:
    """``{"available", "name", "driver", "reason", "queue_depth", "queue_max", "workers", "toolkit"}``, each worker
    with its GPU (``gpu_index``, ``uuid``, ``gpu``: name, clocks, power, fault) and the job it holds; hosts, pids and
    paths only with the lab admin token."""
    return S.device_status(admin=is_admin(request.headers))


@router.get("/kinds")
def kinds() -> list[dict]:
    """Registered job kinds."""
    return S.kinds()


@router.get("/gemm/rungs", responses=errors())
def gemm_rungs(rung: str | None = Query(None, pattern=RUNG_PATTERN,
                                        description="only this rung (ASCII digits); 422 for one the ladder lacks")
               ) -> list[dict]:
    """The GEMM ladder's layouts, per rung (CONTRACT §6; no GPU needed): ``{"rung", "name", "tile", "stages",
    "smem": [{"operand", "layout", "swizzle", "bytes", "accesses": [{"name", "predicted_wavefronts", "ideal"}]}],
    "tma", "wgmma_desc", "atoms", "links"}``, from the rungs' declarations and the bank model; ``?rung=k`` keeps
    rung k (a list of one)."""
    try:
        return ladder_layouts.rungs_api(None if rung is None else int(rung))
    except ladder_layouts.UnknownRung as exc:
        raise HTTPException(422, f"rung: {exc}") from None
