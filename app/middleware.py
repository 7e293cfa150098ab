"""ASGI middleware applied to every request: a streaming body-size limit (413), the security headers, and a cache of
rendered pure pages.

All are plain ASGI (not ``BaseHTTPMiddleware``): the body limit counts bytes as the app reads them, so an 8 MB body
is refused after the first megabyte arrives, never buffered whole; the headers are added to ``http.response.start``
without touching the response body; the page cache answers a repeated GET without running the route.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The largest request body accepted, in bytes (CONTRACT §5: over 1 MB answers 413).
MAX_BODY_BYTES = 1 << 20
#: The largest form body (FORM_TYPES) accepted, in bytes. A form is decoded on the event loop before any handler
#: (and so outside the work budget), and percent-decoding costs about 0.3 s of CPU a MB; the largest form here, a
#: drill answer of 4,000 characters (MAX_ANSWER_CHARS), is at most 48 kB percent-encoded.
MAX_FORM_BYTES = 64 << 10
#: The most bytes one header field may carry (gunicorn's ``limit_request_field_size``, app.serve), and the most that
#: all of a request's Cookie headers may carry together (CookieLimitMiddleware): a browser sends one Cookie header.
MAX_FIELD_BYTES = 8_190
MAX_COOKIE_BYTES = MAX_FIELD_BYTES
#: The content types whose bodies are read as forms (Starlette's ``Request.form``).
FORM_TYPES = (b"application/x-www-form-urlencoded", b"multipart/form-data")

#: No inline script anywhere (``script-src 'self'``; a ``<script type="application/json">`` data block is not
#: executed, so it is allowed). Styles may be inline: the grids size their tiles with ``style="--w:..."``.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
       "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def is_form(headers: Any) -> bool:
    """Whether a request with these ASGI headers (``(name, value)`` bytes, names lower-case) sends a form body."""
    return any(name == b"content-type" and value.split(b";", 1)[0].strip().lower() in FORM_TYPES
               for name, value in headers)


def too_large_detail(limit: int = MAX_BODY_BYTES, form: bool = False) -> str:
    if form:
        return (f"form body exceeds the cap of {limit:,} bytes ({limit >> 10} kB) for a form (application/"
                "x-www-form-urlencoded or multipart/form-data): a form here carries at most a 4,000-character answer")
    return f"request body exceeds the cap of {limit:,} bytes (1 MB)"


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once more than the cap has arrived; FastAPI re-raises HTTPExceptions from body
    parsing, so the app's exception middleware answers it as a 413, with ``Connection: close``: the rest of the body
    is never read, so the connection cannot carry another request (a client that reused it would find it closed)."""

    def __init__(self, limit: int, form: bool = False) -> None:
        super().__init__(status_code=413, detail=too_large_detail(limit, form), headers={"Connection": "close"})


class BodyTooSlow(HTTPException):
    """Raised from ``receive`` (by ``app.serve``'s body receiver) once a request body has taken longer in all than
    the server's body deadline, however steadily it trickles in: answered 408, with ``Connection: close``, as
    :class:`BodyTooLarge` is answered 413."""

    def __init__(self, deadline: float) -> None:
        super().__init__(status_code=408, headers={"Connection": "close"},
                         detail=f"the request body took longer than {deadline:g} s in all to arrive (the server's body "
                                "deadline, LAYOUTLAB_BODY_DEADLINE_S): a body here is at most 1 MB; send it at once")


class BodyLimitMiddleware:
    """Answer 413 when a request body is over ``limit`` bytes, or a form body (FORM_TYPES) over ``form_limit``.

    Post-conditions: a request whose Content-Length is over the limit is answered before any of its body is read;
    a chunked or lying request is cut off as soon as the bytes received pass the limit (at most one extra chunk is
    held in memory)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES, form_limit: int = MAX_FORM_BYTES) -> None:
        self.app = app
        self.limit = limit
        self.form_limit = form_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", ())
        form = is_form(headers)
        limit = min(self.limit, self.form_limit) if form else self.limit
        for name, value in headers:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _answer(send, 413, too_large_detail(limit, form))
                    return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, form)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except (BodyTooLarge, BodyTooSlow) as exc:
            if not started:
                await _answer(send, exc.status_code, exc.detail)


async def _answer(send: Send, status: int, detail: str) -> None:
    """A JSON refusal of the request's body, before any of the app's answer: the connection closes after it."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SecurityHeadersMiddleware:
    """Add CSP (``frame-ancestors 'none'``, no inline script), ``X-Content-Type-Options: nosniff``,
    ``Referrer-Policy`` and ``X-Frame-Options`` to every HTTP response.

    ``docs`` lists paths whose page is an OpenAPI viewer (app.openapi): its scripts and styles are served from
    ``/static/vendor`` and one inline script starts Swagger UI, so those pages (small) are buffered and get
    ``script-src 'self' 'sha256-<that script>'`` and ``worker-src 'self' blob:`` (ReDoc's search worker): assets
    from 'self' only, and no inline script but the one the server itself wrote."""

    def __init__(self, app: ASGIApp, docs: tuple[str, ...] = ()) -> None:
        self.app = app
        self.docs = set(docs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path", "") in self.docs:
            await self._docs(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _merge(message.get("headers", ()), SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, with_headers)

    async def _docs(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        chunks: list[bytes] = []

        async def buffer(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    await _send_docs(send, start or {}, b"".join(chunks))

        await self.app(scope, receive, buffer)


def _merge(headers: Any, extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    present = {name.lower() for name, _ in headers}
    return [*headers, *((n, v) for n, v in extra if n not in present)]


_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


async def _send_docs(send: Send, start: Message, body: bytes) -> None:
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode() + "'"
                      for m in _INLINE_SCRIPT.finditer(body))
    # ReDoc runs its search index in a worker it builds from a blob: URL (its own bundled code, no other origin)
    csp = CSP.replace("script-src 'self'", f"script-src 'self' {hashes}".rstrip()) + "; worker-src 'self' blob:"
    headers = [(n, v) for n, v in start.get("headers", ()) if n.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    extra = [(n, csp.encode() if n == b"content-security-policy" else v) for n, v in SECURITY_HEADERS]
    await send({**start, "headers": _merge(headers, extra)})
    await send({"type": "http.response.body", "body": body})


class SlashRedirect:
    """Starlette's ``redirect_slashes``, answered with a relative ``Location``: a request for ``/lab/`` where only
    ``/lab`` is routed (or the reverse) gets 307 ``Location: /lab`` (query string kept). Starlette builds that URL
    from the request's Host header, so a hostile Host became the redirect's target; here no redirect is ever built
    from Host. Install it as the router's not-found handler of an app created with ``redirect_slashes=False``
    (``router.default = SlashRedirect(router, router.default)``): it runs only for a request no route matches.

    Post-conditions: a ``Location`` set here starts with exactly one ``/`` (never ``//host``, which a browser reads
    as another site); a request whose other spelling no route matches gets the router's own not-found answer."""

    def __init__(self, router: Any, not_found: ASGIApp) -> None:
        self.router = router
        self.not_found = not_found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette._utils import get_route_path
        from starlette.routing import Match

        route_path = get_route_path(scope)
        if scope["type"] == "http" and route_path not in ("", "/"):
            path = scope["path"]
            other = {**scope, "path": path.rstrip("/") if route_path.endswith("/") else path + "/"}
            if other["path"].strip("/") and any(r.matches(other)[0] is not Match.NONE for r in self.router.routes):
                await _answer_redirect(send, relative_location(other["path"], scope.get("query_string", b"")))
                return
        await self.not_found(scope, receive, send)


def relative_location(path: str, query: bytes = b"") -> str:
    """A same-origin ``Location`` for ``path`` (percent-encoded) and ``query``: one leading ``/``, no scheme, no
    host."""
    from urllib.parse import quote

    target = "/" + quote(path, safe="/:@!$&'()*+,;=-._~").lstrip("/")
    return target + ("?" + quote(query.decode("latin-1"), safe="/?:@!$&'()*+,;=-._~%") if query else "")


async def _answer_redirect(send: Send, location: str) -> None:
    headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": 307, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


class PageCacheMiddleware:
    """Serve repeated GETs of the pure pages (their HTML depends only on the path, the query string and the htmx
    headers naming the fragment) from a cache of rendered responses bounded in bytes.

    Post-conditions: a hit sends the same status, headers and body the page route sent for that key; only 200
    answers without ``Set-Cookie`` and at most ``max_entry`` bytes are stored; the cache holds at most ``max_bytes``
    of bodies, headers and query strings (least recently used out first)."""

    def __init__(self, app: ASGIApp, paths: tuple[str, ...], max_bytes: int = 16 << 20,
                 max_entry: int = 2 << 20) -> None:
        from algebra.core.memo import BoundedCache

        self.app = app
        self.paths = frozenset(paths)
        self.max_entry = max_entry
        self.cache = BoundedCache(max_bytes, "rendered pages")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        key = (scope["path"], scope.get("query_string", b""), headers.get(b"hx-request"), headers.get(b"hx-target"))
        hit = self.cache.get(key)
        if hit is not None:
            start, body = hit
            await send({**start, "headers": list(start["headers"])})
            await send({"type": "http.response.body", "body": body})
            return
        start: Message | None = None
        chunks: list[bytes] = []
        keep = True

        async def capture(message: Message) -> None:
            nonlocal start, keep
            if message["type"] == "http.response.start":
                start = message
                keep = message["status"] == 200 and not any(n.lower() == b"set-cookie"
                                                           for n, _ in message.get("headers", ()))
            elif message["type"] == "http.response.body" and keep:
                chunks.append(message.get("body", b""))
                keep = sum(map(len, chunks)) <= self.max_entry
            await send(message)

        await self.app(scope, receive, capture)
        if keep and start is not None:
            body = b"".join(chunks)
            entry = ({"type": "http.response.start", "status": start["status"],
                      "headers": list(start.get("headers", ()))}, body)
            size = len(body) + sum(len(n) + len(v) for n, v in entry[0]["headers"]) + len(key[1]) + 200  # key too
            self.cache.put(key, entry, size)


class CookieLimitMiddleware:
    """Refuse a request whose Cookie headers carry more than :data:`MAX_COOKIE_BYTES` together: 431 naming the cap,
    before anything parses them. FastAPI parses every Cookie header on the event loop for every route (its
    dependency solver reads ``request.cookies`` whether the route takes a cookie or not), at about 7 us a cookie:
    98 Cookie headers of 8 kB each, within the front door's field limits, cost 0.1 s of event-loop CPU a request.
    A browser sends one Cookie header (RFC 6265 5.4), which the front door already holds to one field's size, so
    this refuses nothing a browser sends; the parse then costs at most one field's worth (~15 ms)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            total = sum(len(value) + 2 for name, value in scope.get("headers", ()) if name == b"cookie") - 2
            if total > MAX_COOKIE_BYTES:
                body = json.dumps({"detail": f"the Cookie headers carry {total:,} bytes: at most {MAX_COOKIE_BYTES:,} "
                                             "bytes of cookies in all (one Cookie header, as a browser sends)"})
                await send({"type": "http.response.start", "status": 431,
                            "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                                        (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
                await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body.encode()})
                return
        await self.app(scope, receive, send)


class OptionsMiddleware:
    """Answer ``OPTIONS`` for a routed path with 204 and ``Allow`` (the methods its routes take, with HEAD beside GET
    and OPTIONS itself), and ``OPTIONS *`` (the server as a whole, RFC 9110 9.3.7) with the methods any route takes; a
    path no route matches passes through (404). ``CONNECT host:port``, the other target that names the server as a
    whole, answers 405 with that ``Allow``. The app takes no cross-origin requests, so there is no CORS preflight
    to answer: only what RFC 9110 asks of OPTIONS."""

    def __init__(self, app: ASGIApp, router: Any) -> None:
        self.app = app
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "CONNECT" and not scope["path"].startswith("/"):
            await self._no_tunnel(scope, send)
            return
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return
        allowed = allowed_methods(self.router, None if scope["path"] == "*" else scope)
        if not allowed:
            await self.app(scope, receive, send)
            return
        headers = [(b"allow", ", ".join(allowed).encode()), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    async def _no_tunnel(self, scope: Scope, send: Send) -> None:
        """``CONNECT host:port`` (RFC 9110 9.3.6: a tunnel, which only a proxy opens) names the server as a whole,
        as ``OPTIONS *`` does: 405, with the methods the server takes anywhere in ``Allow``."""
        target = str(scope["path"])[:100]
        body = json.dumps({"detail": f"method CONNECT is not allowed: this server is not a proxy and opens no tunnel "
                                     f"(to {target!r}); it serves paths such as / with "
                                     f"{', '.join(allowed_methods(self.router, None))}"}).encode()
        headers = [(b"allow", ", ".join(allowed_methods(self.router, None)).encode()),
                   (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def allowed_methods(router: Any, scope: Scope | None) -> list[str]:
    """The methods the routes matching ``scope``'s path take (a mount: GET and HEAD), plus HEAD where GET is and
    OPTIONS; empty when no route matches the path. ``scope`` None: the methods of every route."""
    from starlette.routing import Match, Mount

    methods: set[str] = set()
    todo = list(router.routes)
    while todo:
        route = todo.pop()
        inner = getattr(route, "original_router", None)
        if inner is not None:
            todo += inner.routes
            continue
        if scope is not None and route.matches({**scope, "method": "GET"})[0] is Match.NONE:
            continue
        if isinstance(route, Mount):
            methods |= {"GET", "HEAD"}
        else:
            methods |= set(getattr(route, "methods", None) or ())
    if not methods:
        return []
    if "GET" in methods:
        methods.add("HEAD")
    methods.add("OPTIONS")
    return sorted(methods)


class HeadMiddleware:
    """Answer ``HEAD`` wherever ``GET`` is answered (RFC 9110 §9.3.2): the request runs as a GET, the response keeps its
    status and headers (``Content-Length`` included) and sends no body. FastAPI's routes take only the methods they
    declare, so without this every page and GET route answered HEAD with 405 while OPTIONS's ``Allow`` listed HEAD;
    and the body a route sends for a HEAD is never written to the client.

    Post-conditions: a HEAD gets the status and headers the same GET gets, and an empty body; a path that takes no GET
    answers HEAD as it answers GET (405 with ``Allow``, or 404)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = False

        async def no_body(message: Message) -> None:
            nonlocal ended
            if message["type"] == "http.response.body":
                if ended or message.get("more_body"):
                    return
                ended = True
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, no_body)


class SecureCookieMiddleware:
    """Mark every cookie ``Secure`` when the request came over HTTPS: directly, or through a proxy the server trusts
    (LAYOUTLAB_TRUSTED_PROXIES: the server then sets the scope's scheme from X-Forwarded-Proto, app.proxies); a
    client's own X-Forwarded-Proto from an untrusted peer changes nothing. Over plain HTTP cookies stay as set (a
    Secure cookie would never come back)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("scheme") != "https":
            await self.app(scope, receive, send)
            return

        async def secure(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [(n, v + b"; Secure" if n.lower() == b"set-cookie" and b"secure" not in v.lower()
                                       else v) for n, v in message.get("headers", ())]
            await send(message)

        await self.app(scope, receive, secure)
