"""Page query values as every page reads them, and what every page answers when one is refused.

A page's menus (``/?colour=``, ``/banks?element_bytes=``, ``/tv?bits=``, ``/doctor?preset=``, ``/algebra?op=``,
``/lab?gemm=``, ``/drills?numbers=``, ...) are read by :func:`pick`. A value the menu does not offer, blank
included, raises :class:`QueryProblem` (a ``LayoutError`` naming the field and its choices); a page query that fails
its declared type (``/drills?seed=-1``) is the same problem. Every page answers it the same way
(:func:`answer`): status :data:`STATUS` (200, as a page answers a layout that does not parse: the page is the answer,
its form shows the problem; a 4xx document is also an error in the browser's console, and htmx swaps no 4xx
fragment), the page itself (drawn as it is without the refused fields), the problem named in the page
(``role="alert"``) and the value kept in the form's field of that name, so the person sees what they gave and what
it takes. The JSON API keeps its 422 ``{"detail"}``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode

from markupsafe import escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from algebra import LayoutError
from app.config import clip

#: the status of every page (and page fragment) that names a refused query value
STATUS = 200
#: a menu of more choices than this is named by its size and first few, not listed whole
LISTED = 24
#: at most this many refused fields are named on one page (each one costs a render of the page without it)
MAX_PROBLEMS = 8


_RERUN = "layoutlab.page_query.rerun"


class _More(Exception):  # noqa: N818 - not an error: more refused fields, met while drawing the page without others
    def __init__(self, problems: list[tuple[str, str, str]]) -> None:
        super().__init__("more refused query fields")
        self.problems = problems


class QueryProblem(LayoutError):
    """A page query value that is not one of those its field takes: ``field`` (the query key), ``value`` (as
    given) and the message naming both and the choices."""

    def __init__(self, message: str, field: str, value: str) -> None:
        super().__init__(message)
        self.field, self.value = field, value


def pick(text: str, allowed: tuple | list, default: Any, what: str, why: str = "", field: str | None = None) -> Any:
    """A menu's query value. Absent, the route passes ``default``'s own text; ASCII digits naming one of ``allowed``
    -> that number; one of the words in ``allowed`` in any case -> that word; anything else (blank, another number,
    a unicode digit, another word) -> :class:`QueryProblem` naming ``what`` and what it takes, so a page never
    answers a question that was not asked. ``field``: the query key (default ``what``)."""
    t = str(text).strip()
    if t.isascii() and t.isdigit() and len(t) < 6 and int(t) in allowed:
        return int(t)
    word = next((a for a in allowed if isinstance(a, str) and a.upper() == t.upper()), None)
    if word is not None:
        return word
    shown = "blank" if not t else repr(clip(t, 20))
    names = [str(a) if a != "" else "(blank)" for a in allowed]
    offered = (", ".join(names) if len(names) <= LISTED else
               f"the {len(names)} its menu offers ({', '.join(names[:4])}, ...)")
    raise QueryProblem(f"{what}: {shown} is not one of {offered}{why}", field or what, str(text))


def problem(field: str, value: str, exc: Exception) -> QueryProblem:
    """``exc`` (a field's own refusal, e.g. a number out of range) as the page query problem of ``field``."""
    return QueryProblem(str(exc), field, value)


def is_page(request: Request) -> bool:
    """True for a page or one of its fragments (every GET outside ``/api/``, ``/docs``, ``/redoc``, ``/static``)."""
    path = request.url.path
    return request.method in ("GET", "HEAD") and not path.startswith(("/api/", "/docs", "/redoc", "/static/",
                                                                      "/openapi"))


async def answer(request: Request, first: list[tuple[str, str, str]]) -> Response:
    """The page's answer to refused query values ``first`` ([(field, value, message)]): the page drawn without
    them (and without any further refused field it meets), each problem named in the page and each value kept in
    its form field. Post-condition: status :data:`STATUS` and the same inline form on every page."""
    if request.scope.get(_RERUN):  # the page drawn without earlier problems met another: the first answer adds it
        raise _More(first)
    problems = list(first)
    for _ in range(MAX_PROBLEMS):
        try:
            status, headers, body = await _render_without(request, {f for f, _, _ in problems})
            break
        except _More as more:
            problems.extend(more.problems)
    else:
        status, headers, body = 204, {}, b""
    html = body.decode("utf-8", "replace") if status < 300 else ""
    if not html.strip() and not _htmx(request):  # the page without them is a redirect or a refusal: the site's page
        from app.templating import templates

        back = "/" + request.url.path.strip("/").split("/")[0]
        html = templates.env.get_template("error.html").render(request=request, detail="", back=back)
        html = re.sub(r'<p class="msg error" role="alert"></p>', "", html)
    for field, value, _ in problems:
        html = keep_value(html, field, value)
    alert = _alert(problems)
    html = re.sub(r"<main>", lambda m: m.group(0) + alert, html, count=1) if "<main>" in html else alert + html
    keep = {k: v for k, v in headers.items() if k.lower() in ("set-cookie", "hx-retarget", "hx-reswap", "vary")}
    response = HTMLResponse(html, status_code=STATUS)
    for k, v in keep.items():
        response.headers.append(k, v)
    response.headers["HX-Query-Problem"] = ",".join(f for f, _, _ in problems)[:200]
    return response


def _htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def validation_problems(request: Request, exc: Exception) -> list[tuple[str, str, str]]:
    """A page's refused query fields from FastAPI's RequestValidationError (its declared types and bounds), as
    (field, value, message); [] for anything else."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return []
    out = []
    for err in errors():
        loc = tuple(err.get("loc", ()))
        if len(loc) != 2 or loc[0] != "query":
            return []
        field = str(loc[1])
        value = request.query_params.get(field, "")
        msg = clip(str(err.get("msg", "")).removeprefix("Value error, "), 200)
        out.append((field, value, f"{field}: {clip(value, 20)!r} is refused ({msg})"))
    return out


async def _render_without(request: Request, drop: set[str]) -> tuple[int, dict[str, str], bytes]:
    """The page's own response (status, headers, body) to the same request without the query fields ``drop``."""
    pairs = [(k, v) for k, v in parse_qsl(request.url.query, keep_blank_values=True) if k not in drop]
    scope = {k: v for k, v in request.scope.items() if k not in ("route", "endpoint", "path_params")}
    scope["query_string"] = urlencode(pairs).encode()
    sent: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")

    scope[_RERUN] = True
    await request.app.router(scope, receive, send)  # the route answers its own errors through the app's handlers
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in sent["headers"]}
    return sent["status"], headers, sent["body"]


def _alert(problems: list[tuple[str, str, str]]) -> str:
    items = "".join(f'<li data-field="{escape(f)}">{escape(clip(m))}</li>' for f, _, m in problems)
    return ('<div class="msg error query-problems" role="alert" id="query-problems"><p>This address asks for a '
            'value the page does not offer; the form keeps what was given, and the page below is drawn without '
            f'it (with the field\'s default):</p><ul>{items}</ul></div>')


_CONTROL = r'<(select|input|textarea)\b[^>]*\bname="{name}"[^>]*>'


def keep_value(html: str, field: str, value: str) -> str:
    """``html`` with the first form control named ``field`` showing ``value`` and marked invalid: a select gets
    an extra chosen option of that text (disabled, so the form never sends it again), a text input its value (a
    checkbox only the mark: its value is what it sends when ticked)."""
    m = re.search(_CONTROL.format(name=re.escape(str(escape(field)))), html)
    if m is None:
        return html
    tag, start, end = m.group(1), m.group(0), m.end()
    marked = start[:-1].rstrip("/").rstrip() + ' aria-invalid="true">'
    v = escape(clip(value))
    if tag == "select":
        close = html.find("</select>", end)
        close = close if close >= 0 else end
        options = re.sub(r"\sselected(=\"[^\"]*\")?", "", html[end:close])
        options = re.sub(r"<template\b.*?</template>", "", options, flags=re.S)
        return (html[:m.start()] + marked + f'<option value="{v}" selected disabled>{v or "(blank)"} (not offered)'
                + "</option>" + options + html[close:])
    if tag == "textarea":
        close = html.find("</textarea>", end)
        close = close if close >= 0 else end
        return html[:m.start()] + marked + str(v) + html[close:]
    if re.search(r'\stype="(checkbox|radio|hidden|submit|button)"', start):  # its value is what it sends: kept
        return html[:m.start()] + marked + html[end:]
    marked = re.sub(r'\svalue="[^"]*"', "", marked)
    return html[:m.start()] + marked[:-1] + f' value="{v}">' + html[end:]


__all__ = ["QueryProblem", "answer", "is_page", "keep_value", "pick", "problem", "validation_problems"]
