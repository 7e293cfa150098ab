"""Drill kind ``algebra_op``: predict coalesce, composition, complement, logical/zipped divide and the products.

The inputs are drawn at random until the engine accepts them; the answer key is the engine's result, and an answer is
graded by function and by the mode sizes the operation fixes (so ``((2,2),(3,1)):((24,2),(8,0))`` counts for
``((2,2),3):((24,2),8)``); the canonical CuTe form is shown afterwards.
"""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills.common import explain, grade_layout, grade_list, lstr, offsets_grid, pick, step, table
from app.drills.core import Drill, Grade, register
from app.drills.parsing import layout_text, parse_int_list

OPS = ["coalesce", "composition", "composition", "complement", "logical_divide", "zipped_divide",
       "logical_product", "blocked_product", "raked_product"]

RULES = {
    "coalesce": "coalesce keeps the function i -> L(i) and merges neighbouring modes s0:d0, s1:d1 whenever "
                "d1 = s0*d0 (size-1 modes vanish).",
    "composition": "R = A o B means R(i) = A(B(i)); R has B's shape. Mode by mode of B = n:d: skip d elements of A, "
                   "then take n of them.",
    "complement": "complement(A, M) lists the offsets A does not reach, so that (A, A*) covers 0..M-1 exactly once; "
                  "sort A's modes by stride and fill each gap.",
    "logical_divide": "logical_divide(A, B) = A o (B, complement(B, size(A))): mode 0 is one tile (what B selects), "
                      "mode 1 enumerates the tiles.",
    "zipped_divide": "zipped_divide(A, tiler) divides each mode by its tiler entry and gathers "
                     "((the tile modes), (the rest modes)).",
    "logical_product": "logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B): mode 0 is A, mode 1 "
                       "repeats A as B lays out the copies.",
    "blocked_product": "blocked_product(A, B): B's copies of the block A, mode by mode ((A0, B0), (A1, B1)); A is the "
                       "inner (fast) part.",
    "raked_product": "raked_product(A, B): like blocked_product but B is the inner part, ((B0, A0), (B1, A1)): "
                     "A's elements are interleaved (raked) across B's copies.",
}
CALLS = {"coalesce": "coalesce(L)", "composition": "composition(A, B)", "complement": "complement(A, M)",
         "logical_divide": "logical_divide(A, B)", "zipped_divide": "zipped_divide(A, tiler)",
         "logical_product": "logical_product(A, B)", "blocked_product": "blocked_product(A, B)",
         "raked_product": "raked_product(A, B)"}
DEPTH = {"coalesce": 1, "composition": 1, "complement": 0, "logical_divide": 1, "zipped_divide": 2,
         "logical_product": 1, "blocked_product": 1, "raked_product": 1}


def _rand_layout(rng: random.Random, modes: int, max_size: int = 32, nested: bool = False) -> Any:
    """A random small layout with ``modes`` top modes (sizes 1-6, strides from compact orders or small ints)."""
    while True:
        sizes = [pick(rng, [1, 2, 2, 2, 3, 4, 4, 6, 8]) for _ in range(modes)]
        prod = 1
        for s in sizes:
            prod *= s
        if prod <= max_size and prod > 1:
            break
    shape: Any = tuple(sizes) if modes > 1 else sizes[0]
    if nested and modes > 1 and rng.random() < 0.5:
        k = rng.randrange(modes)
        if sizes[k] in (4, 6, 8):
            lst: list[Any] = list(sizes)
            lst[k] = (2, sizes[k] // 2)
            shape = tuple(lst)
    style = rng.random()
    if style < 0.4:
        return A.Layout(shape)
    if style < 0.7:
        flat = A.flatten(shape)
        order = list(range(len(flat)))
        rng.shuffle(order)
        return A.make_ordered_layout(shape, _like(shape, order))
    strides = [pick(rng, [0, 1, 2, 3, 4, 6, 8, 12, 16]) for _ in A.flatten(shape)]
    return A.Layout(shape, _like(shape, strides))


def _like(shape: Any, values: list[int]) -> Any:
    it = iter(values)

    def walk(s: Any) -> Any:
        return tuple(walk(x) for x in s) if isinstance(s, tuple) else next(it)

    return walk(shape)


def _instance(rng: random.Random, op: str) -> tuple[list[Any], str]:
    """Arguments for ``op`` and their text, e.g. ([A, B], "A = ..., B = ...")."""
    if op == "coalesce":
        a = _rand_layout(rng, pick(rng, [2, 3]), nested=True)
        return [a], f"L = {a}"
    if op == "composition":
        a = _rand_layout(rng, 2, 48)
        b = _rand_layout(rng, pick(rng, [1, 2]), max(2, A.size(a)))
        return [a, b], f"A = {a}, B = {b}"
    if op == "complement":
        a = _rand_layout(rng, pick(rng, [1, 2]), 8)
        m = A.cosize(a) * pick(rng, [1, 2, 3, 4])
        return [a, m], f"A = {a}, M = {m}"
    if op == "logical_divide":
        a = A.Layout(pick(rng, [8, 12, 16, 24, 32])) if rng.random() < 0.6 else _rand_layout(rng, 2)
        b = _rand_layout(rng, 1, 8)
        return [a, b], f"A = {a}, B = {b}"
    if op == "zipped_divide":
        m, n = pick(rng, [(4, 8), (8, 8), (8, 4), (6, 4), (16, 8)])
        a = A.Layout((m, n)) if rng.random() < 0.5 else A.make_layout_row_major((m, n))
        tiler = (A.Layout(pick(rng, [t for t in (2, 4) if m % t == 0])),
                 A.Layout(pick(rng, [t for t in (2, 4) if n % t == 0])))
        return [a, tiler], f"A = {a}, tiler = <{tiler[0]}, {tiler[1]}>"
    if op == "logical_product":
        a = _rand_layout(rng, 1, 6)
        b = _rand_layout(rng, 1, 6)
        return [a, b], f"A = {a}, B = {b}"
    a = pick(rng, [A.Layout((2, 2)), A.Layout((2, 2), (2, 1)), A.Layout((2, 3)), A.Layout((1, 2)), A.Layout((2, 1))])
    b = pick(rng, [A.Layout((2, 2)), A.Layout((3, 2)), A.Layout((2, 3), (3, 1)), A.Layout((2, 4))])
    return [a, b], f"A = {a}, B = {b}"


@register("algebra_op", "Predict an operation", "Predict coalesce, composition, complement, logical / zipped divide "
          "and the products; graded by function and shape, the canonical CuTe form shown after.", 8)
def make_algebra(rng: random.Random, seed: int) -> Drill:
    if rng.random() < 0.15:
        return _divide_tile(rng, seed)
    for _ in range(200):
        op = pick(rng, OPS)
        args, text = _instance(rng, op)
        try:
            want = getattr(A, op)(*args)
        except A.LayoutError:
            continue
        if A.size(want) <= 256 and (op != "coalesce" or str(want) != str(args[0])):
            break
    else:  # pragma: no cover - the instance families above always yield a case well before 200 draws
        raise RuntimeError("no valid instance found")
    depth = DEPTH[op]
    call = CALLS[op]
    fixed = {0: "only its function and size", 1: "the sizes of its top-level modes",
             2: "the sizes of its modes two levels down"}[depth]

    def grade(ans: str) -> Grade:
        g = grade_layout(ans, want, depth, what="result")
        if g.correct and op == "coalesce":
            from app.drills.common import read_layout

            got = read_layout(ans)
            if A.depth(got) > 1 or len(A.flatten(got.shape)) != len(A.flatten(want.shape)):
                return Grade.wrong(f"{got} has the right function but is not fully coalesced: {want}")
        if g.correct and layout_text(ans) != str(want):
            g.reason += f"; CuTe prints it as {want}"
        return g

    steps = [step(RULES[op])] + explain(op, *args)
    if len(steps) == 1:
        steps.append(step(f"{call} = {want}", want))
    steps.append(step(f"Check: the result has size {A.size(want)} and, e.g., R({A.size(want) - 1}) = "
                      f"{want(A.size(want) - 1)}.", want))
    grids = []
    if A.rank(want) <= 2 and A.size(want) <= 256:
        grids.append(offsets_grid(want, "The result's offsets"))
    return Drill("algebra_op", seed,
                 f"{text}. What is {call}? (Graded by function and by {fixed}.)",
                 "a layout in CuTe notation, e.g. ((2,2),3):((24,2),8)", str(want), grade, steps,
                 [RULES[op], steps[1]["text"] if len(steps) > 2 else f"Start from {args[0]}."],
                 variant=op, grids=grids).with_data(op=op, args=[_arg_text(a) for a in args])


def _divide_tile(rng: random.Random, seed: int) -> Drill:
    """What the two modes of logical_divide mean: list the offsets of tile k (mode 1 fixed, mode 0 walked)."""
    while True:
        a = A.Layout(pick(rng, [8, 12, 16, 24, 32])) if rng.random() < 0.7 else _rand_layout(rng, 2)
        b = _rand_layout(rng, 1, 8)
        try:
            d = A.logical_divide(a, b)
        except A.LayoutError:
            continue
        if A.size(d[0]) >= 2 and A.size(d[1]) >= 2 and 0 not in A.flatten(b.stride):
            break
    k = rng.randrange(1, A.size(d[1]))
    want = [d((i, k)) for i in range(A.size(d[0]))]
    rule = ("logical_divide(A, B) = A o (B, complement(B, size(A))): mode 0 walks the elements of one tile (what B "
            "selects), mode 1 says which tile. Tile k is the column D(_, k).")
    steps = [step(rule), *explain("logical_divide", a, b), step(f"D = {d}: {A.size(d[1])} tiles of {A.size(d[0])}.", d),
             *[step(f"D({i},{k}) = {v}") for i, v in enumerate(want)]]
    labels = [f"element {i}" for i in range(len(want))]
    return Drill("algebra_op", seed,
                 f"A = {a}, B = {b}. D = logical_divide(A, B) cuts A into tiles. List the offsets of tile {k} "
                 f"(D(i, {k}) for i = 0, 1, ...), in order.", f"{len(want)} integers", ", ".join(map(str, want)),
                 lambda ans: grade_list(parse_int_list(ans, len(want)), want, labels), steps,
                 [rule, f"First find D = logical_divide(A, B); {steps[1]['text'] if len(steps) > 3 else ''}".strip()],
                 variant="divide_tile", grids=[offsets_grid(d, "D: rows = inside a tile, columns = tiles",
                                                            [(i, k) for i in range(len(want))])]).with_data(
                     op="logical_divide", args=[str(a), str(b)], tile=k)


def _arg_text(a: Any) -> Any:
    """An op argument as JSON-ready CuTe notation: int, "shape:stride" or a list of those (a tiler)."""
    if isinstance(a, int):
        return a
    if isinstance(a, tuple):
        return [str(x) for x in a]
    return str(a)


__all__ = ["make_algebra", "lstr", "table"]
