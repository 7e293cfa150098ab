"""A full data volume is a state, not a crash: which errors mean "no space left", and what the app has seen of it.

One place maps the ways a full volume shows up to one condition, ``disk_full(exc)``:

- SQLite: ``SQLITE_FULL`` ("database or disk is full"), raised by any statement or commit that needs a new page;
- the operating system: ``OSError`` with errno ``ENOSPC`` (no space left on device) or ``EDQUOT`` (quota exceeded),
  from any file the app writes in the data folder (the site's secret, the build cache);
- PostgreSQL (``LAYOUTLAB_DATABASE_URL``): SQLSTATE class 53100 ``disk_full`` ("could not extend file").

The web app answers such a write 503 with ``Retry-After`` and MESSAGE (``app.main``); SQLite and PostgreSQL roll the
transaction back, so nothing half-written is left, and reads go on. ``state()`` is what ``/healthz`` reports.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time

from storage.config import data_dir

#: What a refused write says (the cause, for the person reading it).
MESSAGE = "the data volume is full"
#: Seconds a client is asked to wait before writing again.
RETRY_AFTER_S = 60
#: Free bytes under which /healthz reports the volume as full even before a write failed.
LOW_FREE_BYTES = 256 << 10
#: Seconds after a failed write during which /healthz reports the volume as full.
REMEMBER_S = 30.0

_ERRNOS = frozenset(e for e in (getattr(errno, "ENOSPC", None), getattr(errno, "EDQUOT", None)) if e is not None)
_SQLITE_FULL = getattr(sqlite3, "SQLITE_FULL", 13)
_lock = threading.Lock()
_last_full: float | None = None


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the volume has no space left. Post-condition: true
    only for SQLite's SQLITE_FULL, OSError ENOSPC / EDQUOT, or PostgreSQL's disk_full (53100)."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in _ERRNOS:
            return True
        if isinstance(exc, sqlite3.Error):
            code = getattr(exc, "sqlite_errorcode", None)
            if code is not None and code & 0xFF == _SQLITE_FULL:
                return True
            if "database or disk is full" in str(exc):
                return True
        if getattr(exc, "sqlstate", None) == "53100":  # psycopg: DiskFull
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def note_full() -> None:
    """Record that a write just failed for lack of space (``state`` reports it for REMEMBER_S seconds)."""
    global _last_full
    with _lock:
        _last_full = time.monotonic()


def free_bytes() -> int | None:
    """Bytes an unprivileged writer may still use on the data folder's volume, or None when it cannot be read."""
    try:
        st = os.statvfs(data_dir())
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def state() -> dict:
    """``{"full": bool, "free_bytes": int or None, "detail": str or None}``: full when a write failed for lack of
    space in the last REMEMBER_S seconds, or when fewer than LOW_FREE_BYTES are free. O(1): one statvfs call."""
    free = free_bytes()
    with _lock:
        recent = _last_full is not None and time.monotonic() - _last_full < REMEMBER_S
    full = recent or (free is not None and free < LOW_FREE_BYTES)
    detail = None
    if full:
        detail = f"{MESSAGE}: writes are refused (503) until space is freed; reads go on"
    return {"full": full, "free_bytes": free, "detail": detail}


def refusal_detail(write: bool = True) -> str:
    """The message of a request refused for lack of space: a write (nothing of it was stored), or a read that needed
    room first (a database that does not exist yet cannot be created on a full volume)."""
    if write:
        return f"{MESSAGE}: this write was not stored (nothing was half-written); free space on the server and retry"
    return f"{MESSAGE}: the database could not be created; free space on the server and retry"
