"""Application factory: ``create_app()`` builds the FastAPI app, mounts static files and includes routers."""

from __future__ import annotations

import importlib
import importlib.util
import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from algebra import LayoutError

ROOT = Path(__file__).resolve().parent.parent
log = logging.getLogger("layoutlab")

#: Router modules, in include order. Each exposes ``router`` (an APIRouter).
ROUTERS = [
    "app.routes.api_layout",
    "app.routes.api_algebra",
    "app.routes.api_banks",
    "app.routes.api_atoms",
    "app.routes.api_drills",
    "app.routes.api_bench",
    "app.routes.pages_explorer",
    "app.routes.pages_algebra",
    "app.routes.pages_banks",
    "app.routes.pages_tv",
    "app.routes.pages_drills",
    "app.routes.pages_lab",
]


def _validation_detail(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query"))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts) or "invalid request"


def create_app(embedded_worker: bool = False) -> FastAPI:
    """Build the app. Post-condition: every router of ROUTERS that exists is included, /healthz answers 200,
    and LayoutError / validation errors become 422 with a string ``detail``."""
    app = FastAPI(title="LayoutLab", version="0.1.0",
                  description="CuTe layout algebra: explorer, workbench, banks lab, TV atlas, drills and GPU lab.")
    app.state.embedded_worker = embedded_worker
    static = ROOT / "static"
    static.mkdir(exist_ok=True)
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.exception_handler(LayoutError)
    async def _layout_error(request: Request, exc: LayoutError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _validation_detail(exc)}, status_code=422)

    @app.get("/healthz", tags=["meta"])
    def healthz() -> dict:
        return {"ok": True}

    for name in ROUTERS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        app.include_router(module.router)

    startup = getattr(importlib.import_module("app.lifecycle"), "install", None) if _has("app.lifecycle") else None
    if startup:
        startup(app)
    return app


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
