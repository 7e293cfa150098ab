"""Which Host names the app answers for: ``LAYOUTLAB_ALLOWED_HOSTS``, checked before any route runs.

DNS rebinding turns a visitor's browser against a server on their network: a page of ``evil.example`` re-points its
own name at the server's address, and its scripts' requests then carry ``Host: evil.example`` and ``Origin:
http://evil.example`` -- the same origin, so the same-origin check (app.origin) lets them through. The fix is to
answer only for the names the server is meant to have.

``LAYOUTLAB_ALLOWED_HOSTS`` is a comma-separated list of host names or addresses (ports are ignored; ``*.example.org``
matches any name under example.org; ``*`` matches every name, for a port only a proxy that checks Host can reach).
Default: ``localhost``, ``127.0.0.1`` and ``::1``. In every case the address the server was started on, as the
connection reached it (the ASGI ``server`` address: an IP address, ``--host`` or the interface of a ``0.0.0.0``
listener), is accepted as well: a rebinding page names its own domain, never the server's IP address. Behind a
reverse proxy, name the site's public host names.

A request whose Host is not allowed (or that has none, or one that is not ``host[:port]``: a name with ``@``, two
final dots, a port that is not digits, a bracketed name that is no IPv6 address) is answered 400 with ``{"detail"}``
naming the setting. A request whose target is in absolute form (``GET http://name/path``, as sent to a proxy) is
judged by the target's authority, which RFC 9112 section 3.2.2 says replaces the Host header: a foreign one is
refused the same way; an allowed one is served as its origin form (``/path``), with that authority as its Host. A
request target's fragment (``/healthz#x``) is dropped before any route sees it (``without_fragment``).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from urllib.parse import unquote_to_bytes

from app.middleware import SECURITY_HEADERS, ASGIApp, Receive, Scope, Send

ENV = "LAYOUTLAB_ALLOWED_HOSTS"
DEFAULT = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str:
    """The name part of a Host header or a setting's entry: lower case, without port, brackets or a final dot
    (``"[::1]:8000"`` -> ``"::1"``, ``"Example.org.:80"`` -> ``"example.org"``)."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6]:port
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:  # name:port (a bare IPv6 address has several colons)
        value = value.partition(":")[0]
    return value.rstrip(".")


#: A host name as a Host header may carry it (RFC 3986's reg-name as DNS and /etc/hosts use it), and its port.
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")
_PORT = re.compile(r"[0-9]{0,5}")
#: An absolute-form request target: scheme "://" authority, then the path and query (RFC 9112 section 3.2.2).
_ABSOLUTE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)", re.S)


def request_host(value: str) -> str | None:
    """The name a Host header (or a request target's authority) names, as :func:`host_name` gives it, IP addresses
    in their canonical form (``[0:0::1]`` -> ``"::1"``); None when ``value`` is not ``host[:port]`` (RFC 9110 section
    7.2): an empty name, userinfo, two final dots, a port that is not digits, a bracketed or bare name with colons
    that is no IPv6 address. Post-condition: a name returned holds only letters, digits, ``.``, ``_``, ``-`` or is
    an IP address."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6] or [v6]:port
        inner, close, rest = value[1:].partition("]")
        if not close or (rest and not (rest[0] == ":" and _PORT.fullmatch(rest[1:]))):
            return None
        return _canonical_ip(inner, 6)
    if value.count(":") > 1:  # a bare IPv6 address
        return _canonical_ip(value, 6)
    name, colon, port = value.partition(":")
    if (colon and not _PORT.fullmatch(port)) or not _NAME.fullmatch(name):
        return None
    name = name.removesuffix(".")
    return _canonical_ip(name, 4) or name if name.replace(".", "").isdigit() else name


def _canonical_ip(text: str, version: int) -> str | None:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    return str(ip) if ip.version == version else None


def allowed_hosts(value: str | None = None) -> tuple[str, ...]:
    """The allowed names of ``value`` (default: the environment; unset or blank: DEFAULT), normalized."""
    raw = os.environ.get(ENV, "") if value is None else value
    names = tuple(dict.fromkeys(n for n in (host_name(p) for p in raw.split(",")) if n))
    return names or DEFAULT


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(host: str, allowed: tuple[str, ...], server: str | None = None) -> bool:
    """Whether the Host ``host`` (as sent, port included) names this server: one of ``allowed`` (``*.domain``
    patterns, ``*``), or ``server`` when that is the IP address the connection reached."""
    name = request_host(host)
    if not name:
        return False
    if server is not None and _is_ip(server) and _is_ip(name):
        if ipaddress.ip_address(name) == ipaddress.ip_address(server):
            return True
    for pattern in allowed:
        if pattern == "*" or name == pattern or (_is_ip(name) and _is_ip(pattern)
                                                 and ipaddress.ip_address(name) == ipaddress.ip_address(pattern)):
            return True
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
    return False


class AllowedHostsMiddleware:
    """Post-condition: an HTTP or WebSocket request whose Host is not allowed (``host_allowed``) is answered 400
    before any other middleware or route sees it; every other request passes through unchanged."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] | None = None) -> None:
        self.app = app
        self.hosts = allowed_hosts() if hosts is None else hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), "")
        target = _ABSOLUTE.fullmatch(scope.get("path") or "") if scope["type"] == "http" else None
        if target is not None:  # absolute form: the target's authority is the request's host
            host = target.group(2)
        server = (scope.get("server") or (None,))[0]
        if host_allowed(host, self.hosts, server if isinstance(server, str) else None):
            await self.app(without_fragment(origin_form(scope, target) if target else scope), receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = json.dumps(host[:100]) if host else "none"
        body = json.dumps({"detail": f"Host {shown} is not a name this server answers for (the names it answers "
                                     f"for are set by {ENV})"}).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                *SECURITY_HEADERS]})
        await send({"type": "http.response.body", "body": body})


def without_fragment(scope: Scope) -> Scope:
    """``scope`` without the fragment of its request target (``#`` and what follows, RFC 3986 3.5): a fragment names
    a part of what the client holds, never a resource, and RFC 9112 3.2's request-target has none. gunicorn's ASGI
    parser left it in the path (``/healthz#x``) or the query (``?layout=L#x``); its WSGI parser and uvicorn drop it.
    Only a raw ``#`` starts one (``%23`` is the path's or query's own character), so the path is judged by
    ``raw_path``; a ``#`` in the path ends the query too (``/a#b?c`` has none)."""
    raw, query = bytes(scope.get("raw_path") or b""), bytes(scope.get("query_string") or b"")
    if b"#" in raw:
        raw = raw.split(b"#", 1)[0] or b"/"
        path = unquote_to_bytes(raw).decode("utf-8", "replace")
        return {**scope, "path": path, "raw_path": raw, "query_string": b""}
    if b"#" in query:
        return {**scope, "query_string": query.split(b"#", 1)[0]}
    return scope


def origin_form(scope: Scope, target: re.Match) -> Scope:
    """The request of an absolute-form ``target`` (``_ABSOLUTE`` on its path) as origin form: its path and query
    without scheme and authority (``/`` when empty), and the authority as its only Host header."""
    path = target.group(3) or "/"  # a fragment stays, for without_fragment to drop with the query it may end
    raw = bytes(scope.get("raw_path") or b"")
    raw_target = _ABSOLUTE.fullmatch(raw.decode("latin-1")) if raw else None
    raw_path = (raw_target.group(3) or "/").encode("latin-1") if raw_target else path.encode()
    if not path.startswith(("/", "#")):  # "http://name?x=1": the query is the ASGI query_string already
        path, raw_path = "/", b"/"
    headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"host"]
    return {**scope, "path": path, "raw_path": raw_path,
            "headers": [(b"host", target.group(2).encode("latin-1")), *headers]}
