"""Random, non-trivial inputs for the layout-algebra drills, and an independent check of every key.

``draw(rng, op)`` returns arguments for ``op``; ``truth(op, args)`` returns the engine's result only when it passes a
check that does not trust the op being checked (composition: R(i) = A(B(i)) wherever B(i) < size(A); complement:
(A, R) is a bijection onto [0, size(A) * size(R)); divides: each mode is A o (B, complement(B)) evaluated point by
point; products over a compact A: A(a) + size(A) * B(b); inverses: L(R(i)) = i / R(L(i)) = i), else None. So a key is
never a result the engine should not have produced, whatever the engine does with ill-posed cases.
"""

from __future__ import annotations

import random
from itertools import product as cartesian
from math import prod
from typing import Any

import algebra as A
from app.drills.common import pick

DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")
PRODUCTS = ("logical_product", "blocked_product", "raked_product", "zipped_product", "tiled_product")
MAX_RESULT = 512


def like(shape: Any, values: list[int]) -> Any:
    """``values`` nested like ``shape``."""
    it = iter(values)

    def walk(s: Any) -> Any:
        return tuple(walk(x) for x in s) if isinstance(s, tuple) else next(it)

    return walk(shape)


def rand_layout(rng: random.Random, modes: int, max_size: int = 32, nested: bool = False) -> Any:
    """A random small layout with ``modes`` top modes: compact in a random order, or arbitrary small strides."""
    while True:
        sizes = [pick(rng, [1, 2, 2, 2, 3, 4, 4, 6, 8]) for _ in range(modes)]
        if 1 < prod(sizes) <= max_size:
            break
    shape: Any = tuple(sizes) if modes > 1 else sizes[0]
    if nested and modes > 1 and rng.random() < 0.5:
        k = rng.randrange(modes)
        if sizes[k] in (4, 6, 8):
            lst: list[Any] = list(sizes)
            lst[k] = (2, sizes[k] // 2)
            shape = tuple(lst)
    style = rng.random()
    if style < 0.3:
        return A.Layout(shape)
    if style < 0.65:
        order = list(range(len(A.flatten(shape))))
        rng.shuffle(order)
        return A.make_ordered_layout(shape, like(shape, order))
    return A.Layout(shape, like(shape, [pick(rng, [0, 1, 2, 3, 4, 6, 8, 12, 16]) for _ in A.flatten(shape)]))


def compact(rng: random.Random, sizes: tuple[int, ...]) -> Any:
    """A compact layout of ``sizes`` with its modes laid out in a random order (cosize == size)."""
    order = list(range(len(sizes)))
    rng.shuffle(order)
    return A.make_ordered_layout(sizes, tuple(order)) if len(sizes) > 1 else A.Layout(sizes[0])


def injective(rng: random.Random, max_size: int = 32) -> Any:
    """An injective layout: compact in a random order, possibly with gaps (padded strides)."""
    sizes = tuple(pick(rng, [2, 2, 3, 4, 4, 8]) for _ in range(pick(rng, [1, 2, 2, 3])))
    while A.size(A.Layout(sizes)) > max_size:
        sizes = sizes[:-1] if len(sizes) > 1 else (sizes[0] // 2,)
    base = compact(rng, sizes)
    if rng.random() < 0.4 and isinstance(base.shape, tuple):
        strides = list(A.flatten(base.stride))
        top = max(range(len(strides)), key=lambda k: strides[k])
        strides[top] += pick(rng, [1, 2, 4])
        base = A.Layout(base.shape, tuple(strides))
    return base


def draw(rng: random.Random, op: str) -> list[Any]:
    """Arguments for ``op``, drawn so that the instance is not trivial (see the module docstring)."""
    if op == "coalesce":
        return [rand_layout(rng, pick(rng, [2, 3]), nested=True)]
    if op == "composition":
        while True:
            a = rand_layout(rng, pick(rng, [2, 2, 3]), 48, nested=rng.random() < 0.3)
            ca = A.coalesce(a)
            if A.rank(ca) > 1 or (isinstance(ca.stride, int) and ca.stride not in (0, 1)):
                break  # not n:1 -- composing with it is more than re-indexing
        b = rand_layout(rng, pick(rng, [1, 2, 2]), max(2, A.size(a)))
        return [a, b]
    if op == "complement":
        a = injective(rng, 16)
        return [a, A.cosize(a) * pick(rng, [1, 2, 3, 4])]
    if op in DIVIDES:
        if op == "logical_divide" and rng.random() < 0.5:
            a = A.Layout(pick(rng, [8, 12, 16, 24, 32])) if rng.random() < 0.5 else rand_layout(rng, 2)
            return [a, rand_layout(rng, 1, 8)]
        m, n = pick(rng, [(4, 8), (8, 8), (8, 4), (6, 4), (16, 8), (4, 12), (12, 8)])
        a = compact(rng, (m, n)) if rng.random() < 0.7 else A.Layout((m, n), (n + pick(rng, [1, 2]), 1))
        tiler = tuple(A.Layout(pick(rng, [t for t in (2, 3, 4) if s % t == 0 and t < s]),
                               pick(rng, [1, 1, 2]) if s % 4 == 0 else 1) for s in (m, n))
        return [a, tiler]
    sizes_a = tuple(pick(rng, [2, 2, 3, 4]) for _ in range(pick(rng, [1, 2, 2]) if op == "logical_product" else 2))
    sizes_b = tuple(pick(rng, [2, 3, 4]) for _ in range(len(sizes_a)))
    return [compact(rng, sizes_a), compact(rng, sizes_b) if rng.random() < 0.7 else
            A.Layout(sizes_b) if len(sizes_b) > 1 else A.Layout(sizes_b[0])]


def draw_inverse(rng: random.Random) -> Any:
    """An injective layout for right_inverse / left_inverse (compact in a random order, sometimes padded)."""
    return injective(rng, 32)


def _points(layout: Any) -> range:
    return range(A.size(layout))


def _mode(layout: Any, k: int) -> Any:
    return layout[k] if A.rank(layout) > 1 else layout


def check_composition(a: Any, b: Any, r: Any) -> bool:
    """R(c) = A(B(c)) at every coordinate where B(c) < size(A) (beyond it A's last mode extends, as in CuTe)."""
    if isinstance(b, tuple):
        return all(check_composition(_mode(a, k), b[k], _mode(r, k)) for k in range(len(b)))
    if A.size(r) != A.size(b):
        return False
    return all(r(i) == a(b(i)) for i in _points(b) if b(i) < A.size(a))


def _divide_one(a: Any, b: Any, r: Any) -> bool:
    """r is logical_divide(a, b) for one mode: r((i, j)) = a(L((i, j))), L = (b, complement(b, size(a)))."""
    comp = A.complement(b, A.size(a))
    lay = A.make_layout(b, comp)
    n0, n1 = A.size(b), A.size(comp)
    if A.size(r[0]) != n0 or A.size(r[1]) != n1:
        return False
    return all(r((i, j)) == a(lay((i, j))) for i in range(n0) for j in range(n1) if lay((i, j)) < A.size(a))


def check_divide(op: str, a: Any, tiler: Any, r: Any) -> bool:
    """Each mode divided as logical_divide does, then the zipped / tiled / flat regrouping evaluated point by point."""
    if not isinstance(tiler, tuple):
        return op == "logical_divide" and _divide_one(a, tiler, r)
    logical = A.logical_divide(a, tiler)
    k = len(tiler)
    if not all(_divide_one(_mode(a, m), tiler[m], logical[m]) for m in range(k)):
        return False
    if op == "logical_divide":
        return True
    tiles = [A.size(logical[m][0]) for m in range(k)]
    rests = [A.size(logical[m][1]) for m in range(k)]
    for ins in cartesian(*[range(t) for t in tiles]):
        for outs in cartesian(*[range(t) for t in rests]):
            want = logical(tuple((i, j) for i, j in zip(ins, outs, strict=True)))
            coord: Any = {"zipped_divide": (ins, outs), "tiled_divide": (ins, *outs),
                          "flat_divide": (*ins, *outs)}[op]
            if r(coord) != want:
                return False
    return True


def check_product(op: str, a: Any, b: Any, r: Any) -> bool:
    """For a compact A: logical_product(A, B)((a, b)) = A(a) + size(A) * B(b); blocked pairs the modes (A_k, B_k),
    raked (B_k, A_k), zipped groups ((A), (B)), tiled ((A), B_0, B_1...)."""
    if A.cosize(a) != A.size(a) or A.size(r) != A.size(a) * A.size(b):
        return False
    na = A.size(a)
    if op == "logical_product":
        return all(r((i, j)) == a(i) + na * b(j) for i in range(na) for j in range(A.size(b)))
    k = A.rank(a)
    if A.rank(b) != k:
        return False
    sa = [A.size(_mode(a, m)) for m in range(k)]
    sb = [A.size(_mode(b, m)) for m in range(k)]
    for ia in cartesian(*[range(s) for s in sa]):
        for ib in cartesian(*[range(s) for s in sb]):
            want = a(ia if k > 1 else ia[0]) + na * b(ib if k > 1 else ib[0])
            coord: Any = {"blocked_product": tuple(zip(ia, ib, strict=True)),
                          "raked_product": tuple(zip(ib, ia, strict=True)),
                          "zipped_product": (ia, ib), "tiled_product": (ia, *ib)}[op]
            if r(coord) != want:
                return False
    return True


def check(op: str, args: list[Any], r: Any) -> bool:
    """The independent post-condition of ``op(*args) == r`` (see the module docstring)."""
    if op == "coalesce":
        (a,) = args
        return A.size(r) == A.size(a) and all(r(i) == a(i) for i in _points(a))
    if op == "composition":
        return check_composition(args[0], args[1], r)
    if op == "complement":
        a, m = args
        whole = A.make_layout(a, r)
        image = sorted(whole(i) for i in _points(whole))
        return image == list(range(A.size(whole))) and A.size(whole) >= m
    if op in DIVIDES:
        return check_divide(op, args[0], args[1], r)
    if op in PRODUCTS:
        return check_product(op, args[0], args[1], r)
    if op == "right_inverse":
        (lay,) = args
        return all(lay(r(i)) == i for i in _points(r))
    if op == "left_inverse":
        (lay,) = args
        return all(r(lay(i)) == i for i in _points(lay))
    raise KeyError(op)


def as_written(op: str, args: list[Any], r: Any) -> bool:
    """Whether ``r`` also holds where B reaches past size(A) with A read as written (its last mode extended, as
    ``A(i)`` does for i >= size(A)). CuTe composes with the coalesced A, whose last mode can differ: A = (4,1):(8,1)
    extends with stride 1 as written and 8 once coalesced (4:8), so logical_divide(A, 3:1) = (3,2):(8,24) is not
    A(L(i)) at i = 4. A drill keeps only cases where both readings agree: the key then does not hang on which one a
    learner takes. Ops that never reach past size(A) always agree."""
    if op == "composition" and not isinstance(args[1], tuple):
        a, b = args
        return all(r(i) == a(b(i)) for i in _points(b))
    if op not in DIVIDES:
        return True
    a, tiler = args
    pairs = [(a, tiler, r)] if not isinstance(tiler, tuple) else \
        [(_mode(a, m), tiler[m], A.logical_divide(a, tiler)[m]) for m in range(len(tiler))]
    for am, bm, rm in pairs:
        lay = A.make_layout(bm, A.complement(bm, A.size(am)))
        if any(rm((i, j)) != am(lay((i, j))) for i in range(A.size(rm[0])) for j in range(A.size(rm[1]))):
            return False
    return True


def truth(op: str, args: list[Any]) -> Any:
    """The engine's ``op(*args)`` when it passes :func:`check` and is small enough to drill, else None (refused,
    ill-posed or too big)."""
    try:
        r = getattr(A, op)(*args)
    except (A.LayoutError, ValueError, ZeroDivisionError):
        return None
    if not isinstance(r, A.Layout) or A.size(r) > MAX_RESULT:
        return None
    try:
        return r if check(op, args, r) else None
    except (A.LayoutError, ValueError, IndexError, TypeError):
        return None


def arg_text(a: Any) -> Any:
    """An op argument as JSON-ready CuTe notation: int, "shape:stride" or a list of those (a tiler)."""
    if isinstance(a, int):
        return a
    if isinstance(a, tuple):
        return [str(x) for x in a]
    return str(a)


def arg_show(a: Any) -> str:
    """An argument as the prompt shows it: a tiler as ``<2:1, 4:1>``."""
    if isinstance(a, tuple):
        return "<" + ", ".join(str(x) for x in a) + ">"
    return str(a)
