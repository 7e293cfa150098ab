"""Who is using the GPU lab: a signed client cookie, the lab admin token, and per-client submission limits.

A client is an opaque random id. The server signs it with the site's secret (app.drills.identity: LAYOUTLAB_SECRET,
the same on every app server, else a secret file in the data folder; the value carries a ``lab:`` purpose so a
learner cookie is never a lab client, nor the reverse) and sets it as the ``layoutlab_client`` cookie on the first
lab response to a client without a valid one. Scripts may send the same signed value in the ``X-LayoutLab-Client``
header instead. The lab admin presents LAYOUTLAB_ADMIN_TOKEN as ``Authorization: Bearer <token>`` or
``X-Admin-Token``.

Rate limits are GCRA buckets kept in the app's database (gpu_worker.store.SqlStore.admit), so every app server on one
database shares them: per client and per remote address (a client that drops its cookie is still one address).
"""

from __future__ import annotations

import hmac
import math
import os
import secrets

from app.drills import identity

COOKIE = "layoutlab_client"
HEADER = "x-layoutlab-client"
PURPOSE = "lab:"
#: Path prefixes whose responses carry the client cookie.
PATHS = ("/lab", "/api/bench", "/api/class")
MAX_AGE_S = 365 * 86_400


def _limit(name: str, default: str) -> tuple[int, int]:
    """``"count/seconds"`` from the environment, e.g. LAYOUTLAB_LAB_RATE=10/60."""
    count, _, seconds = (os.environ.get(name) or default).partition("/")
    return int(count), int(seconds or 60)


def client_rate() -> tuple[int, int]:
    """(submissions, window seconds) allowed per client: LAYOUTLAB_LAB_RATE, default 24 per 60 s (a class's demo of
    20 jobs in one burst fits)."""
    return _limit("LAYOUTLAB_LAB_RATE", "24/60")


def address_rate() -> tuple[int, int]:
    """(submissions, window seconds) allowed per remote address: LAYOUTLAB_LAB_ADDRESS_RATE, default 30 per 60 s."""
    return _limit("LAYOUTLAB_LAB_ADDRESS_RATE", "30/60")


def sign(client: str) -> str:
    """The cookie value for ``client``."""
    return identity.sign(PURPOSE + client)


def verify(value: str | None) -> str | None:
    """The client id inside a signed value, or None when it is missing, malformed, forged or of another purpose."""
    inner = identity.unsign(value)
    if not inner or not inner.startswith(PURPOSE) or len(inner) == len(PURPOSE):
        return None
    return inner[len(PURPOSE):]


def is_admin(headers) -> bool:
    """Whether the request presents LAYOUTLAB_ADMIN_TOKEN (never true when it is unset)."""
    token = os.environ.get("LAYOUTLAB_ADMIN_TOKEN")
    if not token:
        return False
    given = headers.get("x-admin-token") or ""
    auth = headers.get("authorization") or ""
    if auth.lower().startswith("bearer "):
        given = given or auth[7:].strip()
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


class RateLimited(RuntimeError):
    """Too many submissions; ``retry_after`` seconds until the window turns (the API answers 429)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def check_rate(client: str | None, address: str | None, group: str | None = None,
               group_rate: tuple[int, int] | None = None) -> None:
    """Count one submission for the client and its address together; raise RateLimited (counting nothing) when
    either is over its limit. A limit of N per W seconds admits a burst of N, then one every W / N seconds. A client
    in a class (``group``, its code) counts against the class's bucket (``group_rate``) instead of its address's:
    a class behind one NAT shares its own quota; the per-client limit still applies."""
    from gpu_worker.store import history_store

    rates = {f"client:{client}": client_rate()}
    if group:
        rates[f"class:{group}"] = group_rate or address_rate()
    else:
        rates[f"addr:{address}"] = address_rate()
    rules = [(key, *rate) for key, rate in rates.items() if not key.endswith(":None")]
    refused = history_store().admit(rules) if rules else None
    if refused is not None:
        key, wait = refused
        limit, window = rates[key]
        who = ("this client" if key.startswith("client:") else "this class" if key.startswith("class:")
               else "this address")
        raise RateLimited(f"too many submissions from {who}: {limit} per {window} s (a burst of {limit}, then one "
                          f"every {window / limit:g} s); try again later", max(1, math.ceil(wait)))


def cookie_value(header: str, name: str) -> str | None:
    """The value of the cookie ``name`` in a Cookie header (the last one of that name, as Starlette's
    ``request.cookies`` reads it; surrounding double quotes dropped), or None. One linear pass: this runs on the
    event loop, where http.cookies' unquoting (quadratic in backslashes on Python before 3.11.10, CVE-2024-7592)
    cost 0.35 s for an 8 kB cookie within the header limits. A signed value has no quotes or backslashes to
    unquote: anything else fails ``verify``."""
    found = None
    for part in header.split(";"):
        key, eq, value = part.partition("=")
        if eq and key.strip() == name:
            found = value.strip()
    if found is not None and len(found) >= 2 and found[0] == found[-1] == '"':
        found = found[1:-1]
    return found


class LabClientMiddleware:
    """ASGI middleware: on lab paths, put the verified client id in ``request.state.lab_client`` (a fresh one when
    the request has none) and set the signed cookie on the response when the request did not carry it."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith(PATHS):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
        client = verify(headers.get(HEADER))
        if client is None and "cookie" in headers:
            client = verify(cookie_value(headers["cookie"], COOKIE))
        fresh = client is None
        client = client or secrets.token_urlsafe(12)
        scope.setdefault("state", {})["lab_client"] = client

        async def send_with_cookie(message):
            if fresh and message["type"] == "http.response.start":
                cookie = (f"{COOKIE}={sign(client)}; Path=/; Max-Age={MAX_AGE_S}; HttpOnly; SameSite=Lax")
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"set-cookie", cookie.encode("latin-1"))]
            await send(message)

        return await self.app(scope, receive, send_with_cookie)
