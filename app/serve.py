"""The front door: ``layoutlab serve`` runs the app under gunicorn, with its native ASGI worker.

Why gunicorn's ``asgi`` worker (gunicorn >= 27, docs/operations.md says more): its own HTTP/1 parser applies the
limits configured here, where uvicorn (httptools or h11) has no header count or request-line limit and no deadline on
a request head, and gunicorn's ``limit_request_*`` settings do not reach uvicorn's workers. Every limit is one of
gunicorn's settings (:data:`SETTINGS`):

- ``limit_request_line`` (16,384 bytes; a longer request line answers 414): the longest permalink, a layout at the
  4,000-character cap percent-encoded, fits;
- ``limit_request_fields`` (100 header fields) and ``limit_request_field_size`` (8,190 bytes a field): more, or a
  longer one, answers 431 as soon as the parser has read past the limit, so a header of tens of MB costs no more than
  the first few kB of it;
- ``keepalive`` (5 s): how long a connection may sit between requests, and (:class:`HeadDeadlineProtocol`) how long
  a request's head (request line and headers) may take to arrive, from the connection's start or the last response;
- ``timeout`` (30 s): a worker whose event loop stays silent that long (its heartbeat, also while it boots) is
  killed and restarted by the master; gunicorn's bound on the wait for the next piece of a request body; and
  (:meth:`HeadDeadlineProtocol.pause_writing`) how long a client may accept nothing of its answer before the
  connection is dropped (gunicorn waits for a full write buffer to drain with no bound);
- :data:`BODY_TIMEOUT_S` (10 s, ``LAYOUTLAB_BODY_TIMEOUT_S``; at most ``timeout``): a request body that sends nothing
  for that long ends the request (the app sees a disconnect and answers 408). gunicorn has no setting of its own
  for it (it waits ``timeout``, which also bounds the heartbeat and a worker's boot, so lowering it would kill
  slow-booting workers on a loaded host); :class:`DeclaredBodyReceiver` applies this bound to the same wait and ends
  it as gunicorn's own expiry does;
- :data:`BODY_DEADLINE_S` (60 s, ``LAYOUTLAB_BODY_DEADLINE_S``): the whole body, from the end of the request's head,
  however steadily it trickles in (a byte every second is never silent for 10 s); past it, 408 naming the
  deadline, and the connection closes. A body here is at most 1 MB, so 60 s allows about 17 kB/s;
- ``graceful_timeout`` (10 s): after SIGTERM, requests in flight get that long; then the master kills what is left,
  so the server ends within that bound whatever a client does (a half-sent body, an idle connection);
- the master restarts a worker process that dies (``kill -9``, an out-of-memory kill, a silent loop).

The additions to gunicorn are in :class:`HeadDeadlineProtocol`: gunicorn's ASGI worker arms its keep-alive timer
while it waits for the second and later requests of a connection, never for the first, so a connection that sends
half a request head (or nothing) would be held open for ever; the subclass arms the same timer for the first request
too. And it tells each request's body receiver (:class:`DeclaredBodyReceiver`) the body bytes its chunk sizes declare,
so a chunked body that declares more than the app's 1 MB cap is answered 413 as soon as the size line arrives, not
after the read timeout while the server waits for bytes that would be refused anyway. It also ignores
``Upgrade: websocket`` (the app serves no WebSocket; gunicorn answered such a GET with a bare 403 on any path).
``tests/test_serve_limits.py`` checks each limit against a real server.

``X-Forwarded-For`` / ``X-Forwarded-Proto``: only from LAYOUTLAB_TRUSTED_PROXIES (app.proxies), through uvicorn's
ProxyHeadersMiddleware as before; gunicorn's own ``forwarded_allow_ips`` is set to the same list.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from http import HTTPStatus
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.asgi import parser as h1
from gunicorn.asgi import protocol as gprotocol
from gunicorn.asgi.protocol import ASGIProtocol, BodyReceiver
from gunicorn.workers import gasgi

from app.middleware import MAX_BODY_BYTES, MAX_FIELD_BYTES, MAX_FORM_BYTES, BodyTooLarge, BodyTooSlow, is_form

#: gunicorn's settings for ``layoutlab serve`` (besides bind, workers and the proxies): the limits of the front door.
SETTINGS: dict[str, Any] = {
    "worker_class": "app.serve.Worker",
    "limit_request_line": 16_384,
    "limit_request_fields": 100,
    "limit_request_field_size": MAX_FIELD_BYTES,
    "keepalive": 5,
    "timeout": 30,
    "graceful_timeout": 10,
    "control_socket_disable": True,  # no admin socket under ~/.gunicorn
    "asgi_disconnect_grace_period": 3,
    "accesslog": None,
    "loglevel": "info",
}
#: Environment variables that override a setting (seconds): for tests and for hosts that need other bounds.
ENV = {"keepalive": "LAYOUTLAB_KEEPALIVE_S", "timeout": "LAYOUTLAB_READ_TIMEOUT_S",
       "graceful_timeout": "LAYOUTLAB_GRACEFUL_S"}
#: Seconds a request body may send nothing before the request ends (408): LAYOUTLAB_BODY_TIMEOUT_S, at most
#: gunicorn's ``timeout``.
BODY_TIMEOUT_S = 10.0
BODY_TIMEOUT_ENV = "LAYOUTLAB_BODY_TIMEOUT_S"
#: Seconds a whole request body may take to arrive, from the end of its head (408): LAYOUTLAB_BODY_DEADLINE_S.
BODY_DEADLINE_S = 60.0
BODY_DEADLINE_ENV = "LAYOUTLAB_BODY_DEADLINE_S"


def body_timeout(env: str = BODY_TIMEOUT_ENV, default: float = BODY_TIMEOUT_S) -> float:
    """:data:`BODY_TIMEOUT_S`, or LAYOUTLAB_BODY_TIMEOUT_S's whole seconds (at least 1); with ``env`` and ``default``
    the same for another of the body's bounds (:data:`BODY_DEADLINE_S`). Raises ValueError naming the variable when
    it is not a number."""
    raw = os.environ.get(env)
    try:
        return max(1, round(float(raw))) if raw else default
    except ValueError:
        raise ValueError(f"{env} must be a number of seconds, got {raw[:40]!r}") from None


class DeclaredBodyReceiver(BodyReceiver):
    """gunicorn's ASGI body receiver (the app's ``receive``), told by the protocol how many body bytes the request's
    chunk sizes have declared so far. Once that passes the body's cap (``MAX_BODY_BYTES``, ``MAX_FORM_BYTES`` for a
    form) the body can only be over it (a chunk carries exactly the bytes its size line declares), so ``receive``
    raises ``BodyTooLarge``, as the app's ``BodyLimitMiddleware`` does once the bytes received pass the cap, and the
    app answers 413 at once: a waiting ``receive`` is woken, instead of waiting for the chunk's bytes until the read
    timeout (408). It also holds the body to :data:`BODY_DEADLINE_S` in all: a wait that reaches the deadline
    raises ``BodyTooSlow`` (408 naming it)."""

    def __init__(self, request: Any, protocol: Any) -> None:
        super().__init__(request, protocol)
        self.fed = 0  # body bytes handed over by the parser
        self.declared = 0  # the most body bytes the chunk sizes read so far add up to
        self.silence = body_timeout()
        self.allowed = body_timeout(BODY_DEADLINE_ENV, BODY_DEADLINE_S)
        self.deadline = time.monotonic() + self.allowed
        self.too_slow = False
        self.form = is_form(getattr(request, "headers_bytes", None) or ())
        self.cap = MAX_FORM_BYTES if self.form else MAX_BODY_BYTES

    async def _wait_for_data(self) -> None:
        """gunicorn's wait for the next piece of the body (bounded by its ``timeout``), bounded by
        :data:`BODY_TIMEOUT_S` too; past it, gunicorn's own state for a body that stopped arriving (the app receives
        ``http.disconnect``; the connection stays gunicorn's to close). A wait cut by the body's deadline instead
        marks it too slow."""
        left = self.deadline - time.monotonic()
        try:
            await asyncio.wait_for(super()._wait_for_data(), max(0.0, min(self.silence, left)))
        except TimeoutError:
            if left <= self.silence:
                self.too_slow = True
            else:
                self._body_wait_expired = True

    def feed(self, chunk: bytes) -> None:
        self.fed += len(chunk)
        super().feed(chunk)

    def declare(self, total: int) -> None:
        if total > self.declared:
            self.declared = total
            if total > self.cap:
                self._wake_waiter()

    def _refuse(self) -> None:
        if self.declared > self.cap:
            raise BodyTooLarge(self.cap, self.form)
        if self.too_slow:
            raise BodyTooSlow(self.allowed)

    async def receive(self) -> dict:
        self._refuse()
        return await super().receive()

    def _build_receive_result(self) -> dict:  # after a wait: woken by data, the end, a disconnect or ``declare``
        self._refuse()
        return super()._build_receive_result()


#: A chunk-size line as far as it has arrived: hex digits, then optional whitespace and a ``;`` extension, then CR.
_PARTIAL_CHUNK_LINE = re.compile(rb"(?:[0-9A-Fa-f]+(?:[ \t]*(?:;[^\r]*)?)?\r?)?")
_TOKEN_CHARS = "letters, digits and !#$%&'*+-.^_`|~"


class ExplainingParser(h1.PythonProtocol):
    """gunicorn's HTTP/1 parser, whose refusals name the problem. gunicorn answers a parse error with its message as
    the whole body, and some messages are only the offending text (a header name ``X Y``, a method, an empty
    string for a header line ``: x``); here each says what was wrong and what is allowed. An unknown
    Transfer-Encoding is refused as a bad header (400, not gunicorn's 501: bad input is never a 5xx here). And a
    chunked body is refused as soon as a chunk-size line or a chunk's end cannot become valid, instead of waiting
    for a line end that would only confirm it (until the read timeout, for a client that sent a plain body with
    ``Transfer-Encoding: chunked``)."""

    __slots__ = ()

    def feed(self, data: bytes) -> Any:
        try:
            done = super().feed(data)
        except h1.ParseError as exc:
            raise _explained(exc, self) from None
        if self._state == "chunked" and self._buffer:
            if self._chunk_state == "size" and not _PARTIAL_CHUNK_LINE.fullmatch(bytes(self._buffer[:64])):
                raise h1.InvalidChunkSize(f"malformed chunked body: a chunk must start with its size in hex and "
                                          f"CRLF, got {bytes(self._buffer[:40])!r}")
            if self._chunk_state == "crlf" and self._buffer[:1] != b"\r":
                raise h1.ChunkMissingTerminator("malformed chunked body: chunk data runs past its declared size "
                                                "(no CRLF after it)")
        return done


def _explained(exc: Exception, parser: Any) -> Exception:
    """``exc`` (a gunicorn parse error) with a message that names the problem; the class, and so the status, kept
    (an unsupported transfer coding becomes InvalidHeader: 400)."""
    text = str(exc)
    if isinstance(exc, h1.UnsupportedTransferCoding):
        return h1.InvalidHeader(f"Transfer-Encoding {text!r} is not supported: send the body with a Content-Length, "
                                "or Transfer-Encoding: chunked")
    if isinstance(exc, h1.InvalidHeaderName):
        return h1.InvalidHeaderName(f"invalid header name {text!r}: a header name is one or more of {_TOKEN_CHARS}")
    if isinstance(exc, h1.InvalidRequestMethod):
        return h1.InvalidRequestMethod(f"invalid request method {text[:40]!r}: a method here is 3 to 20 upper-case "
                                       "letters, digits or token characters, without # (GET, POST, HEAD, OPTIONS)")
    if isinstance(exc, h1.InvalidHTTPVersion):
        return h1.InvalidHTTPVersion(f"unsupported HTTP version {text[:40]!r}: HTTP/1.0 or HTTP/1.1")
    if isinstance(exc, h1.LimitRequestHeaders):
        return h1.LimitRequestHeaders(f"{text}: at most {SETTINGS['limit_request_fields']} header fields of at most "
                                      f"{SETTINGS['limit_request_field_size']:,} bytes each")
    if isinstance(exc, h1.LimitRequestLine):
        return h1.LimitRequestLine(f"{text}: the request line (method, path and query) may be at most "
                                   f"{SETTINGS['limit_request_line']:,} bytes")
    return exc if text.strip() else type(exc)(f"malformed request ({type(exc).__name__})")


class HeadDeadlineProtocol(ASGIProtocol):
    """gunicorn's ASGI protocol, with the keep-alive timer armed from the connection's start: the first request's
    head must arrive within ``keepalive`` seconds too, or the connection is closed (gunicorn arms it only between
    requests). The timer is cancelled once a request's head is complete, as for every later request."""

    def _start_http1(self, buffered: bytes = b"") -> None:
        super()._start_http1(buffered)
        if self.req_count == 0 and not self._request_ready.is_set():
            self._arm_keepalive_timer()

    _send_timer: Any = None
    _send_left = 0

    def pause_writing(self) -> None:
        """The transport's buffer passed its high-water mark: the client is reading more slowly than the app writes.
        From here on it must take some of the answer every ``timeout`` seconds (gunicorn's read timeout, also the
        bound of a request body's waits), or :meth:`_send_stalled` drops the connection; gunicorn waits for the
        buffer to drain with no bound, so a client that never read held the answer's bytes for ever."""
        super().pause_writing()
        if self._send_timer is None and self.transport is not None:
            self._send_left = self.transport.get_write_buffer_size()
            self._send_timer = self.worker.loop.call_later(self.cfg.timeout, self._send_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._cancel_send_timer()

    def _cancel_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_stalled(self) -> None:
        """``timeout`` seconds since the buffer was last seen over its mark: the client took some of it (wait
        again), or none (abort the connection: the buffer is dropped, and the app's send ends as for a client that
        went away)."""
        self._send_timer = None
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        left = transport.get_write_buffer_size()
        if 0 < left < self._send_left:
            self._send_left = left
            self._send_timer = self.worker.loop.call_later(self.cfg.timeout, self._send_stalled)
        elif left:
            self.log.info("dropped a connection whose client read nothing of its answer for %s s", self.cfg.timeout)
            transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_send_timer()
        super().connection_lost(exc)

    def _is_websocket_upgrade(self, request: Any) -> bool:
        """Never: the app serves no WebSocket. gunicorn handed a GET with ``Upgrade: websocket`` to the app as a
        WebSocket session, and the router's refusal went out as a bare ``403 Forbidden`` with no body, whatever the
        path; the request is answered as the plain HTTP request it also is (RFC 9110 7.8: a server may ignore
        Upgrade)."""
        return False

    def _setup_callback_parser(self) -> None:
        super()._setup_callback_parser()
        if type(self._callback_parser) is h1.PythonProtocol:  # the same slots: only the methods change
            self._callback_parser.__class__ = ExplainingParser

    def _on_headers_complete(self) -> Any:
        result = super()._on_headers_complete()
        if type(self._body_receiver) is BodyReceiver:  # before the connection's task reads it for the request
            self._body_receiver = DeclaredBodyReceiver(self._body_receiver.request, self)
        return result

    def _feed_callback_parser(self, data: bytes) -> bool:
        going = super()._feed_callback_parser(data)
        parser, receiver = self._callback_parser, self._body_receiver
        if (going and isinstance(receiver, DeclaredBodyReceiver) and getattr(parser, "_state", None) == "chunked"
                and getattr(parser, "_chunk_state", None) == "data"):  # gunicorn's Python parser, inside a chunk
            receiver.declare(receiver.fed + parser._chunk_remaining)
        return going


class Worker(gasgi.ASGIWorker):
    """gunicorn's ASGI worker with :class:`HeadDeadlineProtocol` (the worker builds its connections' protocol by the
    module's name ``ASGIProtocol``; this process's worker is the only user)."""

    def init_process(self) -> None:
        gasgi.ASGIProtocol = HeadDeadlineProtocol
        # gunicorn's table of reason phrases lacks 416, 421, 431, 507 and more, and writes "Unknown" for them
        for status in HTTPStatus:
            gprotocol._REASON_PHRASES.setdefault(status.value, status.phrase)
        super().init_process()


class FrontDoor(BaseApplication):
    """gunicorn's master process serving the ASGI app that ``factory()`` builds in each worker process."""

    def __init__(self, factory, options: dict[str, Any]) -> None:
        self.factory, self.options = factory, options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.factory()


def options(host: str, port: int, workers: int, trusted: list[str]) -> dict[str, Any]:
    """gunicorn's settings for ``layoutlab serve``: :data:`SETTINGS`, the overrides of :data:`ENV`, the address, the
    worker processes and the trusted proxies (none: gunicorn trusts no peer for ``X-Forwarded-Proto`` either). Raises
    ValueError naming a variable of :data:`ENV` that is not a number."""
    out = dict(SETTINGS)
    for key, var in ENV.items():
        raw = os.environ.get(var)
        if raw:
            try:
                out[key] = max(1, round(float(raw)))  # whole seconds, at least 1 (0 would turn the bound off)
            except ValueError:
                raise ValueError(f"{var} must be a number of seconds, got {raw[:40]!r}") from None
    body_timeout()  # a bad LAYOUTLAB_BODY_TIMEOUT_S or LAYOUTLAB_BODY_DEADLINE_S fails here, before anything starts
    body_timeout(BODY_DEADLINE_ENV, BODY_DEADLINE_S)
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    out.update(bind=[bind], workers=max(1, workers), forwarded_allow_ips=",".join(trusted) or "",
               proc_name="layoutlab")
    return out


def app_factory(*, embedded_worker: bool, gpus: str | None, trusted: list[str]):
    """What each worker process runs to build its app: ``create_app`` (the embedded GPU workers when asked), behind
    uvicorn's ProxyHeadersMiddleware for the trusted proxies."""

    def build():
        from app.main import create_app

        app = create_app(embedded_worker=embedded_worker)
        app.state.gpus = gpus
        if not trusted:
            return app
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        return ProxyHeadersMiddleware(app, trusted_hosts=",".join(trusted))

    return build


def _raise_open_files(most: int = 65_536) -> None:
    """Raise this process's soft limit on open files to its hard limit (at most ``most``; the app processes inherit
    it), so that a thousand idle connections, each closed after the keep-alive, do not exhaust the default 1,024."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = most if hard == resource.RLIM_INFINITY else min(hard, most)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def serve(host: str, port: int, *, workers: int = 1, embedded_worker: bool = True, gpus: str | None = None,
          trusted: list[str] | None = None) -> int:
    """Run the front door until SIGTERM / SIGINT; returns 0 (gunicorn exits the process with its own status on a
    failed start). Raises ValueError (a bad setting of :data:`ENV`) before anything starts."""
    trusted = trusted or []
    settings = options(host, port, workers, trusted)
    _raise_open_files()
    factory = app_factory(embedded_worker=embedded_worker and workers <= 1, gpus=gpus, trusted=trusted)
    FrontDoor(factory, settings).run()
    return 0
