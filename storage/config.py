"""Where things are kept, from the environment: the data folder and the Redis URL (shared by app and worker)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The folder for SQLite files and the build cache; created if missing.

    ``LAYOUTLAB_DATA`` wins; otherwise ``$XDG_DATA_HOME/layoutlab`` or ``~/.local/share/layoutlab``.
    """
    env = os.environ.get("LAYOUTLAB_DATA")
    if env:
        path = Path(env)
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "layoutlab"
    path.mkdir(parents=True, exist_ok=True)
    return path


def redis_url() -> str | None:
    """The Redis URL for the bench queue, or None for the SQLite queue."""
    return os.environ.get("LAYOUTLAB_REDIS_URL") or None
