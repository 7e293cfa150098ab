"""Memoization of the pure layout operations (``memo``: the most recent results on small, hashable arguments; a
call made while a derivation is recorded runs the op itself), and caches bounded by (approximate) bytes for other pure
functions (:class:`BoundedCache`, :func:`bounded`: a count of entries does not bound memory when one entry can be a
2^16-cell table and the next a short string).
"""

from __future__ import annotations

import inspect
import itertools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cache, lru_cache, wraps
from typing import Any

from algebra.core import modes
from algebra.core.checks import _UNCHECKED, POST, POST_OUTERMOST, has_non_positive_shape, not_a_layout, verify
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout
from algebra.core.notation import show
from algebra.core.recorder import _ACTIVE

_recording = _ACTIVE.get  # the active derivation recorder, or None
_unchecked = _UNCHECKED.get  # True inside ``checks.cute_would_print``

_SAMPLE = 16
_CACHES: list[BoundedCache] = []


@cache
def _slots(tp: type) -> tuple[str, ...]:
    return tuple(s for cls in tp.__mro__ for s in getattr(cls, "__slots__", ()))


def _sampled(items: Any, n: int, size: Callable[[Any], int]) -> int:
    """The sizes of the ``n`` items summed, estimated from the first _SAMPLE of them beyond that."""
    if n <= _SAMPLE:
        return sum(map(size, items))
    return sum(map(size, itertools.islice(items, _SAMPLE))) * n // _SAMPLE


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
        return total + _sampled(obj, n, lambda x: approx_bytes(x, _depth + 1))
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
        return 56 + 32 * len(obj) + _sampled(obj, len(obj), lambda x: approx_bytes(x, _depth + 1))
    if isinstance(obj, dict):
        n, d = len(obj), _depth + 1
        return 64 + 40 * n + _sampled(obj.items(), n, lambda kv: approx_bytes(kv[0], d) + approx_bytes(kv[1], d))
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
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        _CACHES.append(self)

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return default
            self._data.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any, size: int | None = None) -> None:
        cost = (approx_bytes(key) + approx_bytes(value)) if size is None else size
        if cost > self.max_bytes // 8:
            return
        with self._lock:
            self.bytes += cost - self._data.pop(key, (None, 0))[1]
            self._data[key] = (value, cost)
            while self.bytes > self.max_bytes and self._data:
                _, (_, c) = self._data.popitem(last=False)
                self.bytes -= c

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0


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


#: Op results kept per op (least recently used out first) in functools' C cache, for calls on small arguments only
#: (``_small``, tested on a miss), so an entry holds a few KB at most. Measured: the oracle corpus (28k cases) leaves
#: 7.6k entries at 512 per op holding 3.1 MB (tracemalloc), so 2048 per op stays in tens of MB.
MEMO_ENTRIES = 2048
_WIDE = 8
_LEAVES = _WIDE * _WIDE
_BIG = 1 << 62


def positional(fn: Any, args: tuple, kw: dict) -> tuple:
    """``fn``'s arguments as one positional tuple, keyword arguments by their parameter names (the cache's key)."""
    bound = inspect.signature(fn).bind(*args, **kw)
    if bound.kwargs:  # a keyword past an omitted default: every parameter in place
        bound.apply_defaults()
    return bound.args


def _small(x: Any) -> bool:
    """A Layout of at most _LEAVES leaves, an int below _BIG, None, a swizzle, a swizzled small layout, or a tuple of
    at most _WIDE such arguments (a call's arguments, a tiler, a profile: its Layouts, ints and Nones inline)."""
    tp = type(x)
    if tp is tuple:
        if len(x) > _WIDE:
            return False
        for e in x:
            te = type(e)
            if te is Layout:
                if e._leaves > _LEAVES and e.leaves() > _LEAVES:
                    return False
            elif te is int:
                if abs(e) >= _BIG:
                    return False
            elif e is not None and not _small(e):
                return False
        return True
    if tp is Layout:
        return x._leaves <= _LEAVES or x.leaves() <= _LEAVES
    if tp is int:
        return abs(x) < _BIG
    if x is None:
        return True
    inner = getattr(x, "layout_b", None)
    if inner is not None:
        return _small(inner)
    return tp.__name__ == "Swizzle"


_OPS: list[Any] = []  # every op's C cache


class _Uncached(Exception):  # noqa: N818 - not an error: carries the result of a call too big to keep
    def __init__(self, value: Any) -> None:
        self.value = value


class _Refused:
    """What the cache keeps for a refusal (``value`` None), a result with a shape entry <= 0 or one that fails the
    op's ``checks.POST_OUTERMOST``: ``value`` is what CuTe computes on with inside another op; ``err`` the refusal's
    type and arguments, raised anew at every call (None: ``checks.not_a_layout``)."""

    __slots__ = ("value", "err")

    def __init__(self, value: Any, err: LayoutError | None = None) -> None:
        self.value = value
        self.err = None if err is None else (type(err), err.args)


_CODES: list = []  # the code of ``memo``'s wrapper and of its miss (one code object each, shared by every op)


def _nested() -> bool:
    """True inside an op: the frame of another op's wrapper or miss (``_CODES``) is on this thread's stack above the
    wrapper that asks. The ops an op calls are its steps and get what CuTe computes, also a shape <= 0."""
    f, wrapper, run = sys._getframe(2), *_CODES
    while f is not None:
        if f.f_code is run or f.f_code is wrapper:
            return True
        f = f.f_back
    return False


def memo(fn: Callable) -> Callable:
    """The op ``fn`` behind the never-wrong layer and a plain cache of MEMO_ENTRIES small calls.

    Post: ``memo(f)(*a)`` is ``f(*a)`` once it passes the op's post-condition (``checks.verify``), and raises what
    that raises (a refusal, ``LayoutError``, is kept like an answer and raised anew, with the same type and message,
    on each call). A result with a shape <= 0 is refused (``checks.not_a_layout``: the condition, the mode, what
    CuTe prints) unless the call is a step of another op, which computes on with it as CuTe does. Only the arguments
    of a miss are sized (``_small``). ``f.__wrapped__`` is the checked op without the cache (what an op calls for its
    steps: the outer op's result is what is kept)."""
    name = fn.__name__
    post = POST.get(name)  # the op's post-condition (``verify``), read once here
    outer = POST_OUTERMOST.get(name)  # its post-condition as the op asked for, not checked inside another op

    if post is None:
        checked = fn  # no post-condition: the op itself
    else:
        @wraps(fn)
        def checked(*args: Any) -> Any:  # ``verify(name, args, fn(*args))``, without its frame
            value = fn(*args)
            if not _unchecked():
                post(args, value)
            return value

    def run(*args: Any) -> Any:  # a miss (never inside ``cute_would_print``: the wrapper runs that uncached)
        try:
            value = checked(*args)  # (the ops it calls are nested: this frame is on the stack, ``_nested``)
        except LayoutError as err:
            if not _small(args):
                raise  # not kept
            return _Refused(None, err)
        if (value.shape <= 0 if type(value) is Layout and type(value.shape) is int else
                has_non_positive_shape(value)):
            value = _Refused(value)
        elif outer is not None:
            try:
                outer(args, value)
            except LayoutError as err:
                value = _Refused(value, err)
        if not _small(args):
            raise _Uncached(value)
        return value

    cached = lru_cache(maxsize=MEMO_ENTRIES)(run)
    _OPS.append(cached)

    @wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        args = positional(fn, args, kw) if kw else args
        if _recording() is not None or _unchecked():  # a derivation, or CuTe's print: the op itself, uncached
            value = checked(*args)
            if _nested():
                return value
            if not _unchecked() and has_non_positive_shape(value):  # refused as outside a derivation
                raise not_a_layout(f"{name}({', '.join(show(a) for a in args)})", value)
            return verify(name, args, value, outermost=True)
        try:
            try:
                value = cached(*args)
            except TypeError as exc:
                if "unhashable" not in str(exc):
                    raise
                value = run(*args)
        except _Uncached as big:
            value = big.value
        if type(value) is not _Refused:
            return value
        if value.value is not None and _nested():
            return value.value
        if value.err is not None:
            raise value.err[0](*value.err[1])
        raise not_a_layout(f"{name}({', '.join(show(a) for a in args)})", value.value)  # type: ignore[misc]

    _CODES[:] = [wrapper.__code__, run.__code__]
    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    wrapper.__wrapped__ = checked  # type: ignore[attr-defined]
    return wrapper


def clear_caches() -> None:
    """Forget every cached result (used by benchmarks to time cold operations)."""
    for op in _OPS:
        op.cache_clear()
    modes._last_x[0] = modes._last_flat[0] = (None, None, None)
    for c in _CACHES:
        c.clear()
