"""Memoization of the pure layout operations, in caches bounded by (approximate) bytes.

Layouts are immutable values, so an operation's result depends only on its (hashable) arguments. ``memo`` keeps
the most recent results of every memoized operation in one cache of at most MEMO_BYTES (estimated by
:func:`approx_bytes` on the key and the result); arguments that cannot be hashed (lists) bypass the cache, and so
does every call made while a derivation is being recorded (``algebra.recorder``: the op must run to record its steps).

:class:`BoundedCache` and :func:`bounded` are the same cache for other pure functions (the web services use them):
a count of entries alone does not bound memory when one entry can be a 2^16-cell table and the next a short string.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any

from algebra.recorder import active

#: Bytes (estimated) of memoized op results kept in all, least recently used out first.
MEMO_BYTES = 48 << 20
_SAMPLE = 16
_CACHES: list[BoundedCache] = []


def approx_bytes(obj: Any, _depth: int = 0) -> int:
    """A cheap estimate of the memory held by ``obj`` (CPython object sizes; containers of more than 16 items are
    estimated from a sample of 16, so the cost is bounded by the nesting depth, not by the size)."""
    if obj is None or obj is True or obj is False:
        return 0
    if isinstance(obj, int):
        return 28 + 4 * (obj.bit_length() // 30)
    if isinstance(obj, float):
        return 24
    if isinstance(obj, str):
        return 49 + len(obj)
    if isinstance(obj, bytes | bytearray):
        return 33 + len(obj)
    if _depth > 16:
        return 64
    if isinstance(obj, list | tuple | set | frozenset):
        n = len(obj)
        head = 56 + (8 if isinstance(obj, list | tuple) else 32) * n
        if n <= _SAMPLE:
            return head + sum(approx_bytes(x, _depth + 1) for x in obj)
        sample = list(itertools.islice(obj, _SAMPLE))
        return head + sum(approx_bytes(x, _depth + 1) for x in sample) * n // _SAMPLE
    if isinstance(obj, dict):
        n = len(obj)
        items = obj.items() if n <= _SAMPLE else list(itertools.islice(obj.items(), _SAMPLE))
        body = sum(approx_bytes(k, _depth + 1) + approx_bytes(v, _depth + 1) for k, v in items)
        return 64 + 40 * n + (body if n <= _SAMPLE else body * n // _SAMPLE)
    fields = getattr(obj, "__dict__", None)
    if fields is not None:
        return 56 + approx_bytes(fields, _depth + 1)
    slots = [s for cls in type(obj).__mro__ for s in getattr(cls, "__slots__", ())]
    if slots:
        return 16 + 8 * len(slots) + sum(approx_bytes(getattr(obj, s, None), _depth + 1) for s in slots)
    return sys.getsizeof(obj, 64)


class BoundedCache:
    """A thread-safe LRU map whose entries' estimated sizes (key + value, :func:`approx_bytes`) sum to at most
    ``max_bytes``. Post-conditions: after ``put``, ``bytes <= max_bytes``; a value larger than ``max_bytes / 8``
    is not kept at all (it would evict everything else for one entry)."""

    def __init__(self, max_bytes: int, name: str = "") -> None:
        self.max_bytes = max_bytes
        self.name = name
        self.bytes = 0
        self.hits = self.misses = 0
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        _CACHES.append(self)

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                self.misses += 1
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return hit[0]

    def put(self, key: Hashable, value: Any, size: int | None = None) -> None:
        cost = (approx_bytes(key) + approx_bytes(value)) if size is None else size
        if cost > self.max_bytes // 8:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._data[key] = (value, cost)
            self.bytes += cost
            while self.bytes > self.max_bytes and self._data:
                _, (_, c) = self._data.popitem(last=False)
                self.bytes -= c

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0

    def stats(self) -> dict[str, Any]:
        return {"name": self.name, "entries": len(self._data), "bytes": self.bytes, "max_bytes": self.max_bytes,
                "hits": self.hits, "misses": self.misses}


_MISSING = object()


def bounded(max_bytes: int, name: str = "") -> Callable[[Callable], Callable]:
    """Like ``functools.lru_cache`` for a pure function of hashable arguments, bounded by ``max_bytes`` (see
    :class:`BoundedCache`). Exceptions are raised again, not cached. ``f.cache`` is the cache."""

    def wrap(fn: Callable) -> Callable:
        cache = BoundedCache(max_bytes, name or fn.__qualname__)

        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            hit = cache.get(key, _MISSING)
            if hit is not _MISSING:
                return hit
            value = fn(*args, **kwargs)
            cache.put(key, value)
            return value

        wrapper.cache = cache  # type: ignore[attr-defined]
        wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
        return wrapper

    return wrap


_MEMO = BoundedCache(MEMO_BYTES, "algebra ops")


def memo(fn: Callable) -> Callable:
    """Memoize ``fn`` in the shared op cache (MEMO_BYTES). Post: ``memo(f)(*a) == f(*a)``; refusals are raised
    again, not cached."""

    @wraps(fn)
    def wrapper(*args: Any) -> Any:
        if active() is not None:
            return fn(*args)
        key = (fn, args)
        try:
            hit = _MEMO.get(key, _MISSING)
        except TypeError as exc:
            if "unhashable" not in str(exc):
                raise
            return fn(*args)
        if hit is not _MISSING:
            return hit
        value = fn(*args)
        _MEMO.put(key, value, approx_bytes(args) + approx_bytes(value))
        return value

    wrapper.cache_info = _MEMO.stats  # type: ignore[attr-defined]
    return wrapper


def clear_caches() -> None:
    """Forget every cached result (used by benchmarks to time cold operations)."""
    for c in _CACHES:
        c.clear()


def cache_stats() -> list[dict[str, Any]]:
    """Entries and estimated bytes of every bounded cache (memoized ops and the services' caches)."""
    return [c.stats() for c in _CACHES]
