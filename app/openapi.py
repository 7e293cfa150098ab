"""The published OpenAPI document and its viewers, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served offline.

Every refusal of this app is ``{"detail": "<reason>"}`` (app.main's exception handlers, the body limit, the routes'
HTTPExceptions), so the document declares one error schema, ``HTTPError``, for every 4xx/5xx answer, in place of
FastAPI's array-shaped validation error. Status codes that machinery outside a route produces are added to every
operation it applies to: 422 (a refused parameter or body, a LayoutError, the work budget) to every operation that
takes input or runs under the work budget, 413 to every operation with a request body (app.middleware's limit) and
408 (a body that stopped arriving before its declared end), and
503 to every budgeted operation when the app answers a request cut off by its shutdown with 503.
Route-specific codes (403, 404, 409, 429, 503, ...) are declared on the route decorators with ``errors``.

The viewers' scripts and styles come from npm packages copied into ``static/vendor`` by scripts/setup.sh
(swagger-ui-dist, redoc): the pages reference same-origin assets only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
#: Where scripts/setup.sh copies the viewers (static/vendor, served by the app's /static mount).
VENDOR = "/static/vendor"
SWAGGER_JS = f"{VENDOR}/swagger-ui/swagger-ui-bundle.js"
SWAGGER_CSS = f"{VENDOR}/swagger-ui/swagger-ui.css"
REDOC_JS = f"{VENDOR}/redoc/redoc.standalone.js"
#: ReDoc's bundle shows a logo from its CDN (blocked by the CSP's img-src 'self'); /redoc loads the bundle from
#: REDOC_JS_SERVED, the vendored file with that address turned into REDOC_LOGO, a mark served from static/.
REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
REDOC_LOGO = "/static/redoc-logo.svg"
REDOC_JS_SERVED = "/redoc/redoc.standalone.js"
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
#: Swagger UI's options: no online validator (its badge is an image from another site).
SWAGGER_PARAMETERS = {"validatorUrl": None}


class HTTPError(BaseModel):
    """Every refused request's answer (4xx, and 503 when the lab's queue is full)."""

    detail: str = Field(..., description="why the request was refused, in one or a few sentences")


#: Default descriptions of the statuses this app answers.
DESCRIPTIONS = {
    400: "a request body that is not UTF-8 text (the JSON or form cannot be decoded), or a Host this server does "
         "not answer for (LAYOUTLAB_ALLOWED_HOSTS)",
    403: "not allowed for this client",
    404: "no such resource",
    409: "in conflict with the resource's state",
    408: "the request body stopped arriving before its declared end (the server's read timeout, or the client went "
         "away); the connection is closed",
    413: "request body over the cap of 1 MB",
    422: "a refused parameter or body, an input CuTe refuses, or a request over the work budget; detail says why",
    429: "too many requests from this client or address; see Retry-After",
    503: "temporarily unavailable (the server is shutting down, the lab's queue is full, or the data volume is full "
         "and a write cannot be stored); see Retry-After",
}


def errors(*items: int | dict[int, str]) -> dict[int, dict[str, Any]]:
    """``responses=`` for a route decorator: each item a status code (its default description) or a
    ``{code: description}`` dict. Post-condition: every code maps to ``{"model": HTTPError, "description"}``."""
    out: dict[int, dict[str, Any]] = {}
    for item in items:
        for code, text in (item.items() if isinstance(item, dict) else [(item, DESCRIPTIONS[item])]):
            out[int(code)] = {"model": HTTPError, "description": text}
    return out


_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPError"}}}
_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")


def build_schema(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``. Post-conditions: every 4xx/5xx response's JSON schema is ``HTTPError``;
    FastAPI's ``HTTPValidationError`` / ``ValidationError`` are gone; operations with input or under the work budget
    list 422, and operations with a body list 413, 408 (a body that stopped arriving) and 400 (a body that is not
    UTF-8)."""
    schema = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                         description=app.description, routes=app.routes)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in _FASTAPI_VALIDATION:
        components.pop(name, None)
    components["HTTPError"] = HTTPError.model_json_schema()
    budgeted = _budgeted_operations(app)
    closing = _answers_closing(app)
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            responses = op.setdefault("responses", {})
            takes_input = bool(op.get("parameters")) or "requestBody" in op
            if takes_input or (method.upper(), path) in budgeted:
                responses.setdefault("422", {"description": DESCRIPTIONS[422]})
            if "requestBody" in op:
                for code in (413, 408, 400):
                    responses.setdefault(str(code), {"description": DESCRIPTIONS[code]})
            if method.upper() not in ("GET", "HEAD", "OPTIONS"):  # app.origin: a browser's write from another site
                responses.setdefault("403", {"description": "a browser's write from another site (Sec-Fetch-Site "
                                                            "or Origin), or not allowed for this client"})
            if closing and (method.upper(), path) in budgeted:
                responses.setdefault("503", {"description": DESCRIPTIONS[503]})
            for code, answer in responses.items():
                if code[:1] in "45":
                    answer["content"] = _ERROR_CONTENT
    return schema


def _budgeted_operations(app: FastAPI) -> set[tuple[str, str]]:
    """(METHOD, path) of the routes whose handler runs under the work budget (app.budget marks them)."""
    return {(m, r.path) for r in _routes(app.routes)
            if getattr(getattr(r, "endpoint", None), "__layoutlab_budgeted__", False)
            for m in (getattr(r, "methods", None) or ())}


def _routes(routes: list[Any]) -> list[Any]:
    """Every route, including those of included routers (FastAPI keeps them in their router)."""
    out: list[Any] = []
    for r in routes:
        inner = getattr(r, "original_router", None)
        out += _routes(inner.routes) if inner is not None else [r]
    return out


def _answers_closing(app: FastAPI) -> bool:
    """Whether the app answers a request cut off by its shutdown with 503 (app.budget's ServerClosing handler)."""
    from app import budget

    closing = getattr(budget, "ServerClosing", None)
    return closing is not None and closing in app.exception_handlers


def install(app: FastAPI) -> None:
    """Serve ``build_schema`` at ``app.openapi_url`` (built once), Swagger UI at DOCS_URL and ReDoc at REDOC_URL from
    the vendored assets. The app must be created with ``docs_url=None, redoc_url=None``. Every one is a plain
    function, answered from a worker thread: the schema's first build costs about 0.5 s of CPU, which FastAPI's own
    ``async`` route for ``openapi_url`` spent on the event loop when the start-up warm-up had not built it
    (LAYOUTLAB_WARM=0, or a warm-up that failed)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_schema(app)
        return app.openapi_schema

    app.openapi = openapi

    def openapi_json(request: Request) -> JSONResponse:
        return JSONResponse(openapi())

    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != app.openapi_url]
    app.add_route(app.openapi_url, openapi_json, include_in_schema=False)

    def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=_root(request) + app.openapi_url, title=f"{app.title} - Swagger UI",
                                   swagger_js_url=SWAGGER_JS, swagger_css_url=SWAGGER_CSS,
                                   swagger_favicon_url="/favicon.ico", oauth2_redirect_url=None,
                                   swagger_ui_parameters=SWAGGER_PARAMETERS)

    bundle = STATIC_DIR / REDOC_JS.removeprefix("/static/")
    redoc_js = bundle.read_bytes().replace(REDOC_CDN_LOGO.encode(), REDOC_LOGO.encode()) if bundle.is_file() else None

    def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(openapi_url=_root(request) + app.openapi_url, title=f"{app.title} - ReDoc",
                              redoc_js_url=_root(request) + (REDOC_JS_SERVED if redoc_js else REDOC_JS),
                              redoc_favicon_url="/favicon.ico", with_google_fonts=False)

    def redoc_bundle(request: Request) -> Response:  # read once above: nothing but the answer here
        return Response(redoc_js, media_type="text/javascript",
                        headers={"Cache-Control": "public, max-age=3600"})

    app.add_route(DOCS_URL, swagger_ui, include_in_schema=False)
    app.add_route(REDOC_URL, redoc, include_in_schema=False)
    if redoc_js:
        app.add_route(REDOC_JS_SERVED, redoc_bundle, include_in_schema=False)


def _root(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")
