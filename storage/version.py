"""The code version of this checkout: a hash of its Python sources, so a server and a worker started from different
code (two clones on one host sharing a data folder, or a worker left running across an update) can tell."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

#: The packages whose sources make the version (the code that writes and runs jobs).
PACKAGES = ("algebra", "app", "gpu_worker", "layoutlab", "storage")
ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """12 hex digits of SHA-256 over the relative path and bytes of every ``*.py`` file of PACKAGES, in path order.
    Post-condition: equal checkouts give equal versions, whatever folder they sit in; computed once per process."""
    h = hashlib.sha256()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            h.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


__all__ = ["code_version"]
