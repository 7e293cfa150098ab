"""HTTP errors as the asker reads them: an unknown path (404), a method a path does not take (405) and every other
``HTTPException`` answer JSON ``{"detail"}`` to API clients, and a page of the site to a browser.

A request is a browser's when it asks for HTML (``Accept: text/html``, as a browser's address bar does) and is neither
under ``/api/`` nor from htmx; htmx gets the message as a fragment. Everything else keeps FastAPI's JSON answer, with
the exception's headers (``Allow``, ``Retry-After``).
"""

from __future__ import annotations

import sys
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from markupsafe import escape
from starlette import staticfiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import MalformedRangeHeader, RangeNotSatisfiable

TITLES = {404: "Page not found", 405: "Method not allowed", 403: "Forbidden", 409: "Conflict",
          413: "Request too large", 429: "Too many requests", 503: "Service unavailable"}


#: What FastAPI answers (400) for a body it could not read, and what the app says instead, by the cause: bytes that
#: are not UTF-8 (400), a body that stopped arriving (408, as app.outage answers a form's), anything else (400).
FASTAPI_BODY_ERROR = "There was an error parsing the body"
STARLETTE_MULTIPART_ERROR = "Invalid multipart data."  # Starlette's words for a multipart body it could not parse
BODY_NOT_UTF8 = "body: not UTF-8 text (send the JSON or form encoded as UTF-8)"
BODY_STOPPED = ("the request body stopped arriving before its declared end (nothing more within the server's read "
                "timeout, or the connection closed)")
BODY_UNREADABLE = "body: could not be read"
BODY_TOO_DEEP = ("body: JSON nested too deeply to read (arrays and objects more than about a thousand levels deep; a "
                 "layout nests at most 32)")
BODY_LONG_NUMBER = "body: a JSON number with more than {:,} digits (the reader's limit)"


def wants_html(request: Request) -> bool:
    """True for a browser asking for a page: ``text/html`` accepted, not an API path, not an htmx request."""
    accept = request.headers.get("accept", "")
    return ("text/html" in accept and not request.url.path.startswith("/api/")
            and request.headers.get("HX-Request") != "true")


async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    """The answer to an HTTPException. Post-condition: the status and headers are the exception's; the body is the
    site's error page for a browser, a one-line fragment for htmx, else JSON ``{"detail"}``."""
    from app.templating import templates

    detail = exc.detail if isinstance(exc.detail, str) else TITLES.get(exc.status_code, "Error")
    if exc.status_code == 400 and detail == FASTAPI_BODY_ERROR:  # FastAPI's words for a body it could not read
        exc = body_error(exc.__cause__)
        detail = exc.detail
    elif exc.status_code == 400 and detail == STARLETTE_MULTIPART_ERROR:  # the parser's reason is two causes down
        inner = getattr(exc.__context__, "__cause__", None)
        why = str(inner).strip()[:120] if inner is not None else ""
        detail = "body: not valid multipart/form-data" + (f" ({why})" if why else "")
        exc = StarletteHTTPException(400, detail, headers=exc.headers)
    elif exc.status_code == 405:  # Allow lists every method the path takes (RFC 9110 15.5.6), as OPTIONS does
        exc = _with_allow(request, exc)
    if (named := _plain_phrase(request, exc)) is not None:
        exc = StarletteHTTPException(exc.status_code, named, headers=exc.headers)
        detail = named
    if request.headers.get("HX-Request") == "true" and not request.url.path.startswith("/api/"):
        return HTMLResponse(f'<p class="msg error" role="alert">{escape(detail)}</p>', status_code=exc.status_code,
                            headers=exc.headers)
    if not wants_html(request):
        return await http_exception_handler(request, exc)
    html = templates.env.get_template("http_error.html").render(
        request=request, status=exc.status_code, title=TITLES.get(exc.status_code, f"Error {exc.status_code}"),
        detail=detail, path=request.url.path)
    return HTMLResponse(html, status_code=exc.status_code, headers=exc.headers)


def body_error(cause: BaseException | None) -> StarletteHTTPException:
    """The answer to a body that could not be read, named by why: 408 (and the connection closed) for one that stopped
    arriving, 400 for bytes that are not UTF-8, JSON nested past the reader's depth, a number past its digits, or
    anything else (with the reader's own words)."""
    if isinstance(cause, ClientDisconnect):
        return StarletteHTTPException(408, BODY_STOPPED, headers={"Connection": "close"})
    if isinstance(cause, UnicodeDecodeError):
        return StarletteHTTPException(400, BODY_NOT_UTF8)
    if isinstance(cause, RecursionError):
        return StarletteHTTPException(400, BODY_TOO_DEEP)
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return StarletteHTTPException(400, BODY_LONG_NUMBER.format(sys.get_int_max_str_digits()))
    if cause is not None and str(cause).strip():
        return StarletteHTTPException(400, f"{BODY_UNREADABLE} ({type(cause).__name__}: {str(cause)[:120]})")
    return StarletteHTTPException(400, BODY_UNREADABLE)


def _with_allow(request: Request, exc: StarletteHTTPException) -> StarletteHTTPException:
    """A 405 whose ``Allow`` is what ``OPTIONS`` on the path answers (``app.middleware.allowed_methods``: HEAD beside
    GET, and OPTIONS); the router's own named only the route's declared methods (``GET``), while HEAD and OPTIONS
    were answered too."""
    from app.middleware import allowed_methods

    router = getattr(request.scope.get("app"), "router", None)
    scope = request.scope  # inside a mount (/static) as the app's router sees it: the root path the app was given
    scope = {**scope, "root_path": scope.get("app_root_path", scope.get("root_path", ""))}
    allowed = allowed_methods(router, scope) if router is not None else []
    if not allowed:
        return exc
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() != "allow"}
    return StarletteHTTPException(405, exc.detail, headers={**headers, "Allow": ", ".join(allowed)})


def _plain_phrase(request: Request, exc: StarletteHTTPException) -> str | None:
    """What a 404 or 405 that carries only its status phrase ("Not Found", "Method Not Allowed") says instead: the
    path, and for a 405 the methods the path takes (its Allow header). None for any other answer."""
    if exc.status_code not in (404, 405) or exc.detail != HTTPStatus(exc.status_code).phrase:
        return None
    path = request.url.path
    path = path if len(path) <= 120 else path[:120] + "..."
    if exc.status_code == 404:
        return f"no page or API route at {path!r}"
    allow = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
    return f"method {request.method[:20]} is not allowed on {path!r}" + (f"; it takes {allow}" if allow else "")


class StaticFiles(staticfiles.StaticFiles):
    """Starlette's static files, whose 416 (a Range that starts at or past the file's end) names the condition and
    the file's size (Starlette sends it with an empty body), as does a 400 for a Range with no ``=`` (Starlette says
    only "Malformed range header."). Every other answer is Starlette's."""

    def file_response(self, full_path: Any, stat_result: Any, scope: Any, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        headers = Headers(scope=scope)
        asked, size = headers.get("range"), stat_result.st_size
        if (type(response) is not FileResponse or response.status_code != 200 or not asked or "if-range" in headers
                or scope.get("method") not in ("GET", "HEAD")):
            return response
        try:
            FileResponse._parse_range_header(asked, size)
        except RangeNotSatisfiable:
            return PlainTextResponse(f"Range {asked[:80]!r} starts at or past the end of the file ({size:,} bytes; "
                                     f"its bytes are 0-{max(size - 1, 0)})", 416,
                                     headers={"Content-Range": f"bytes */{size}"})
        except MalformedRangeHeader as exc:
            if exc.content == MalformedRangeHeader().content:  # Starlette's words name no problem
                return PlainTextResponse(f"Range {asked[:80]!r} is not of the form bytes=START-END", 400)
        return response


def install(app: FastAPI) -> None:
    """Answer every HTTPException through :func:`http_error`."""
    app.add_exception_handler(StarletteHTTPException, http_error)


__all__ = ["StaticFiles", "http_error", "install", "wants_html"]
