"""Cross-site writes refused: a browser's POST (or other unsafe method) from another site answers 403.

A learner's record, a lab job and a drill answer are written by POST. A page on another site can make the visitor's
browser send such a POST (a form, or fetch without credentials); it then arrives without this site's cookie and, as
CONTRACT §5 says, would be stored under a fresh client id: a row nobody owns. Browsers say where a request comes from
(``Sec-Fetch-Site``, ``Origin``), so the app refuses an unsafe method whose request names another site. Scripts and
curl send neither header and are not affected.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def cross_site(headers: dict[bytes, bytes]) -> str | None:
    """Why the request comes from another site, or None. ``Sec-Fetch-Site: cross-site`` or ``same-site`` (another
    host of the same site) decides when present; otherwise an ``Origin`` whose host:port is not the request's Host."""
    fetch_site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
    if fetch_site in ("cross-site", "same-site"):
        return f"Sec-Fetch-Site: {fetch_site}"
    if fetch_site in ("same-origin", "none"):
        return None
    origin = headers.get(b"origin", b"").decode("latin-1")
    if not origin:
        return None
    host = headers.get(b"host", b"").decode("latin-1").lower()
    if origin == "null":
        return "Origin: null"
    parts = urlsplit(origin)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    netloc = parts.netloc.lower()
    if parts.port is None and default is not None and ":" in host and host.rsplit(":", 1)[1] == str(default):
        netloc = f"{netloc}:{default}"
    return None if netloc == host else f"Origin: {origin[:100]}"


class SameOriginMiddleware:
    """Post-condition: an unsafe method whose request a browser marked as coming from another site is answered 403
    with ``{"detail": ...}`` before any route runs; every other request passes through unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE:
            await self.app(scope, receive, send)
            return
        why = cross_site(dict(scope["headers"]))
        if why is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": f"cross-site request refused ({why}): this site accepts writes only from "
                                     "its own pages"}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
