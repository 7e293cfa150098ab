"""Memoization of the pure layout operations.

Layouts are immutable values, so an operation's result depends only on its (hashable) arguments. ``memo`` keeps
the most recent results per operation; arguments that cannot be hashed (lists) bypass the cache, and so does every
call made while a derivation is being recorded (``algebra.recorder``: the op must run to record its steps).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any

from algebra.recorder import active

CACHE_SIZE = 8192
_CACHED: list = []


def memo(fn: Callable) -> Callable:
    """Wrap ``fn`` with an LRU cache. Post: ``memo(f)(*a) == f(*a)``; refusals are raised again, not cached."""
    cached = lru_cache(maxsize=CACHE_SIZE)(fn)
    _CACHED.append(cached)

    @wraps(fn)
    def wrapper(*args: Any) -> Any:
        if active() is not None:
            return fn(*args)
        try:
            return cached(*args)
        except TypeError as exc:
            if "unhashable" not in str(exc):
                raise
            return fn(*args)

    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return wrapper


def clear_caches() -> None:
    """Forget every memoized result (used by benchmarks to time cold operations)."""
    for c in _CACHED:
        c.cache_clear()
