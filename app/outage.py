"""A backend that is down answers 503 with Retry-After, never 500.

While the job queue's Redis or the PostgreSQL database cannot be reached (storage.outage), every route that reads or
writes them (``POST /api/bench/jobs``, ``GET /api/bench/jobs/{id}``, the lab pages, a drill answer on PostgreSQL)
answers 503 with ``Retry-After`` and a message naming the backend, through the site's HTTP error answer
(app.http_errors: JSON for the API, a page for a browser, a fragment for htmx). The request is not retried here: the
client is told when to try again, and the worker (gpu_worker.service) waits for the backend by itself.

The same goes for the other side of a request: a body that stops arriving (the front door's read timeout, app.serve,
or a client that went away) ends the request with 408 naming it, never a 500 from the handler that was reading it.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from app.http_errors import body_error, http_error
from storage.outage import describe, outage_errors

log = logging.getLogger("layoutlab")
#: Seconds a client is asked to wait before it tries again.
RETRY_AFTER_S = 5


async def backend_down(request: Request, exc: Exception):
    """503, ``Retry-After: RETRY_AFTER_S``, ``detail`` naming the backend that cannot be reached."""
    log.warning("%s %s: %s", request.method, request.url.path, describe(exc))
    detail = f"{describe(exc)}; try again in a few seconds"
    return await http_error(request, HTTPException(503, detail, headers={"Retry-After": str(RETRY_AFTER_S)}))


async def body_stopped(request: Request, exc: ClientDisconnect):
    """408 for a request whose body stopped arriving before its end (the connection is closed after it); a JSON body
    that stops arriving gets the same answer through app.http_errors.body_error."""
    return await http_error(request, body_error(exc))


def install(app: FastAPI) -> None:
    """Answer each outage exception class (storage.outage.outage_errors) with :func:`backend_down`, and a body that
    stopped arriving with :func:`body_stopped`."""
    for cls in outage_errors():
        app.add_exception_handler(cls, backend_down)
    app.add_exception_handler(ClientDisconnect, body_stopped)
