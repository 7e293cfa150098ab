"""A backend that is down for now: which exceptions mean "Redis or PostgreSQL cannot be reached", and a back-off
to wait it out.

The job queue lives in Redis (LAYOUTLAB_REDIS_URL), PostgreSQL (LAYOUTLAB_DATABASE_URL) or SQLite. A restart of the
server, a network cut or a failover shows up as a connection error on the next call; the call may succeed a moment
later. :func:`is_outage` tells those errors from the rest (a bug, a bad statement): the worker retries them with
:class:`Backoff` and never exits for one (gpu_worker.service), and the app answers them 503 with Retry-After
(app.outage). A SQLite database locked past its busy timeout counts too (another process holds it), and so does a
full data volume (storage.volume.disk_full): the worker waits for space as it waits for a backend.
"""

from __future__ import annotations

import random
import sqlite3
import threading

from storage.volume import MESSAGE, disk_full


def outage_errors() -> tuple[type[BaseException], ...]:
    """The exception classes of an unreachable Redis or PostgreSQL (those of the installed clients)."""
    out: list[type[BaseException]] = []
    try:
        import redis

        out += [redis.ConnectionError, redis.TimeoutError]  # BusyLoadingError (a restarted Redis loading) is one
    except ImportError:
        pass
    try:
        import psycopg

        out += [psycopg.OperationalError, psycopg.InterfaceError]  # connection refused, lost, server shut down
    except ImportError:
        pass
    return tuple(out)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the backend is unreachable or busy for now, or its volume is full (storage.volume):
    retrying later may succeed."""
    if disk_full(exc):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc)
        return "locked" in text or "busy" in text
    return isinstance(exc, outage_errors())


def backend_name(exc: BaseException) -> str:
    """"Redis", "PostgreSQL" or "the database", from the exception's module."""
    module = type(exc).__module__
    if module.startswith("redis"):
        return "Redis"
    if module.startswith("psycopg"):
        return "PostgreSQL"
    return "the database"


def describe(exc: BaseException) -> str:
    """One line naming the backend and its error (never a traceback)."""
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    if disk_full(exc):
        return f"{MESSAGE} ({backend_name(exc)}: {text})"
    return f"{backend_name(exc)} is unreachable ({text})"


class Backoff:
    """Delays for retrying an unreachable backend: ``first`` seconds, doubling up to ``most``, with 20 % jitter so
    that many workers do not come back in step. :meth:`reset` after a success."""

    def __init__(self, first: float = 0.25, most: float = 5.0) -> None:
        self.first, self.most = first, most
        self.delay = first
        self.failures = 0

    def next(self) -> float:
        """The delay to wait now; the following one doubles."""
        delay = self.delay * random.uniform(0.8, 1.2)
        self.delay = min(self.delay * 2, self.most)
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.delay, self.failures = self.first, 0

    def wait(self, stop: threading.Event) -> bool:
        """Wait the next delay, or until ``stop`` is set; True when it was set."""
        return stop.wait(self.next())
