"""Memoization of the pure layout operations, in caches bounded by (approximate) bytes.

Layouts are immutable values, so an operation's result depends only on its (hashable) arguments. ``memo`` keeps
the most recent results of every memoized operation on small arguments in one cache of at most MEMO_ENTRIES entries
of a few KB each; bigger arguments, arguments that cannot be hashed (lists) and every call made while a derivation is
being recorded (``algebra.recorder``: the op must run to record its steps) bypass it.

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

_SAMPLE = 16
_CACHES: list[BoundedCache] = []


_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(tp: type) -> tuple[str, ...]:
    names = _SLOTS.get(tp)
    if names is None:
        names = _SLOTS[tp] = tuple(s for cls in tp.__mro__ for s in getattr(cls, "__slots__", ()))
    return names


def approx_bytes(obj: Any, _depth: int = 0) -> int:
    """A cheap estimate of the memory held by ``obj`` (CPython object sizes; containers of more than 16 items are
    estimated from a sample of 16, so the cost is bounded by the nesting depth, not by the size). Ints and flat
    tuples of ints, the bulk of every layout, take the shortest path: this runs once per cached op result."""
    tp = type(obj)
    if tp is int:
        return 28 if -(1 << 30) < obj < (1 << 30) else 28 + 4 * (obj.bit_length() // 30)
    if tp is tuple or tp is list:
        n = len(obj)
        total = 56 + 8 * n
        if n <= _SAMPLE:
            for x in obj:
                total += 28 if type(x) is int else approx_bytes(x, _depth + 1)
            return total
        sample = list(itertools.islice(obj, _SAMPLE))
        return total + sum(approx_bytes(x, _depth + 1) for x in sample) * n // _SAMPLE
    if obj is None or tp is bool:
        return 0
    if tp is str:
        return 49 + len(obj)
    if tp is float:
        return 24
    if isinstance(obj, bytes | bytearray):
        return 33 + len(obj)
    if _depth > 16:
        return 64
    if isinstance(obj, set | frozenset):
        n = len(obj)
        sample = list(itertools.islice(obj, _SAMPLE))
        return 56 + 32 * n + sum(approx_bytes(x, _depth + 1) for x in sample) * n // max(1, len(sample))
    if isinstance(obj, dict):
        n = len(obj)
        items = obj.items() if n <= _SAMPLE else list(itertools.islice(obj.items(), _SAMPLE))
        body = sum(approx_bytes(k, _depth + 1) + approx_bytes(v, _depth + 1) for k, v in items)
        return 64 + 40 * n + (body if n <= _SAMPLE else body * n // _SAMPLE)
    slots = _slots(tp)
    if slots:
        total = 16 + 8 * len(slots)
        for name in slots:
            v = getattr(obj, name, None)
            total += 28 if type(v) is int else approx_bytes(v, _depth + 1)
        return total
    fields = getattr(obj, "__dict__", None)
    if fields is not None:
        return 56 + approx_bytes(fields, _depth + 1)
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


#: Op results kept (least recently used out first). Only calls whose arguments are small enough are cached (see
#: ``_small``: at most SMALL_LEAVES leaves per layout, ints below 2^62), so an entry is a few KB at most and the
#: cache's bytes are bounded by MEMO_ENTRIES x that; bigger calls just run. A per-entry size estimate would cost
#: more than most ops.
MEMO_ENTRIES = 8192
SMALL_LEAVES = 16
_BIG = 1 << 62


def _small_tuple(t: Any, budget: int) -> int:
    """The leaves left from ``budget`` after the int tuple ``t`` (negative: too big, or not plain ints)."""
    if type(t) is int:
        return budget - 1 if -_BIG < t < _BIG else -1
    if type(t) is not tuple:
        return budget - 1 if type(t).__name__ == "ScaledBasis" else -1
    for x in t:
        budget = _small_tuple(x, budget)
        if budget < 0:
            return -1
    return budget


def _small(x: Any) -> bool:
    if x is None:
        return True
    tp = type(x)
    if tp is int:
        return -_BIG < x < _BIG
    shape = getattr(x, "shape", None)
    if shape is not None:
        inner = getattr(x, "layout_b", None)
        if inner is not None:
            return _small(inner)
        return _small_tuple(shape, SMALL_LEAVES) >= 0 and _small_tuple(x.stride, SMALL_LEAVES) >= 0
    if tp is tuple:
        return len(x) <= 8 and all(_small(e) for e in x)
    return tp.__name__ == "Swizzle"


_OPS: OrderedDict[tuple, Any] = OrderedDict()  # (fn, args) -> result, least recently used first
_OPS_STATS = {"hits": 0, "misses": 0}


def memo(fn: Callable) -> Callable:
    """Memoize ``fn`` in the shared op cache (MEMO_ENTRIES small calls). Post: ``memo(f)(*a) == f(*a)``; refusals
    are raised again, not cached; calls made while recording a derivation always run. A hit is one dict lookup;
    the size test runs only on a miss."""

    @wraps(fn)
    def wrapper(*args: Any) -> Any:
        if active() is not None:
            return fn(*args)
        key = (fn, args)
        try:
            value = _OPS[key]
        except KeyError:
            value = fn(*args)
            if all(_small(x) for x in args):
                _OPS[key] = value
                _OPS_STATS["misses"] += 1
                while len(_OPS) > MEMO_ENTRIES:
                    try:
                        _OPS.popitem(last=False)
                    except KeyError:  # emptied by another thread
                        break
            return value
        except TypeError as exc:
            if "unhashable" not in str(exc):
                raise
            return fn(*args)
        try:
            _OPS.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
        _OPS_STATS["hits"] += 1
        return value

    return wrapper


def clear_caches() -> None:
    """Forget every cached result (used by benchmarks to time cold operations)."""
    _OPS.clear()
    for c in _CACHES:
        c.clear()


def cache_stats() -> list[dict[str, Any]]:
    """Entries and estimated bytes of every bounded cache (memoized ops and the services' caches)."""
    return [{"name": "algebra ops", "entries": len(_OPS), "max_entries": MEMO_ENTRIES, **_OPS_STATS}] + \
        [c.stats() for c in _CACHES]
