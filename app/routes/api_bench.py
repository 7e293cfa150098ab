"""JSON routes of the GPU lab: submit, poll and cancel benchmark jobs; device and worker status."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse

from app.services import bench as S
from gpu_worker.schemas import JobRequest

router = APIRouter(prefix="/api/bench", tags=["bench"])


@router.post("/jobs", status_code=202)
def post_job(body: JobRequest):
    """Queue a job: 202 ``{"id", "status"}``; 422 for bad kind/params (the field and cap named); 409 when no live
    worker can run it."""
    try:
        return S.submit(body.kind, body.params)
    except S.ParamsError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=422)
    except S.NoWorker as exc:
        return JSONResponse({"detail": str(exc)}, status_code=409)


@router.get("/jobs")
def list_jobs(limit: int = 30) -> list[dict]:
    """The latest jobs, newest first (at most 200)."""
    return S.history(max(1, min(limit, 200)))


@router.get("/jobs/{job_id}")
def get_job(job_id: str) -> dict:
    """``{"id", "status", "progress", "result", "error", ...}``; 404 when unknown."""
    return _found(S.get_job(job_id), job_id)


@router.post("/jobs/{job_id}/cancel")
def cancel_job(job_id: str) -> dict:
    """Cancel a queued or running job; 404 when unknown."""
    return _found(S.cancel(job_id), job_id)


def _found(job: dict | None, job_id: str) -> dict:
    """The job, or 404 naming the id."""
    if not job:
        raise HTTPException(404, f"no job {job_id}")
    return job


@router.get("/device")
def device() -> dict:
    """``{"available", "name", "driver", "reason", "workers", "toolkit"}`` (NVML; available false with its reason)."""
    return S.device_status()


@router.get("/kinds")
def kinds() -> list[dict]:
    """Registered job kinds."""
    return S.kinds()
