"""The learner cookie: ``<learner id>.<HMAC>``, signed with the site's secret so a browser can only present an id the
server issued. The secret comes from ``LAYOUTLAB_SECRET`` (set it to the same value on every app server), else from
a file created once in the data folder.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading

from storage import volume
from storage.config import data_dir

_lock = threading.Lock()
_cache: dict[str, bytes] = {}
_pending: dict[str, bytes] = {}  # a key generated while the volume was full, not yet on disk


def secret() -> bytes:
    """The signing key. Post-condition: stable for one data folder (or one ``LAYOUTLAB_SECRET``).

    The file is written whole or not at all (a temporary file, then a hard link to the name, which fails if another
    process made it first). While the data volume is full (storage.volume) the key is kept in memory and written as
    soon as there is room, so cookies signed meanwhile stay valid."""
    env = os.environ.get("LAYOUTLAB_SECRET")
    if env:
        return env.encode()
    path = data_dir() / "drills_secret"
    key = str(path)
    with _lock:
        if key in _cache:
            return _cache[key]
        try:
            value = path.read_bytes()
        except FileNotFoundError:
            value = _pending.setdefault(key, secrets.token_bytes(32))
            try:
                _create(path, value)
            except FileExistsError:  # another process made it first
                value = path.read_bytes()
            except OSError as exc:
                if not volume.disk_full(exc):
                    raise
                return value  # not cached: written by a later call, once there is room
        _pending.pop(key, None)
        _cache[key] = value
        return value


def _create(path, value: bytes) -> None:
    """Create ``path`` holding ``value``, whole or not at all. Raises FileExistsError when it exists."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(value)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _mac(learner: str) -> str:
    digest = hmac.new(secret(), learner.encode(), hashlib.sha256).digest()[:18]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def sign(learner: str) -> str:
    """The cookie value for ``learner``."""
    return f"{learner}.{_mac(learner)}"


def unsign(value: str | None) -> str | None:
    """The learner id of a cookie value, or None when it is missing, malformed or not signed by this site."""
    if not value or "." not in value or len(value) > 200:
        return None
    learner, _, mac = value.rpartition(".")
    return learner if learner and hmac.compare_digest(mac, _mac(learner)) else None
