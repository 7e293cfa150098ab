"""Drill kind ``algebra_op``: predict coalesce, composition, complement, the four divides, the five products and the
two inverses.

Inputs come from ``algebra_cases.draw`` (no composition with an A that coalesces to n:1, multi-mode complements,
products over many compact layouts); the key is the engine's result and is used only when an independent check of
the op's post-condition passes (``algebra_cases.truth``), so an ill-posed case never becomes a key (it belongs to the
``defined`` kind). An answer is graded by meaning: the same function and the mode sizes the op fixes (so
``((2,2),(3,1)):((24,2),(8,0))`` counts for ``((2,2),3):((24,2),8)``); coalesce must also be fully coalesced, and an
inverse is graded by its defining property. The derivation is the engine's ``explain``.
"""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from app.drills import algebra_cases as K
from app.drills.common import (
    LAYOUT_EXAMPLES,
    explain,
    grade_layout,
    grade_list,
    layout_matches,
    lstr,
    offsets_grid,
    pick,
    read_layout,
    step,
)
from app.drills.core import Drill, Grade, register
from app.drills.parsing import parse_int_list

OPS = ["coalesce", "composition", "composition", "complement", "logical_divide", "zipped_divide", "tiled_divide",
       "flat_divide", "logical_product", "blocked_product", "raked_product", "zipped_product", "tiled_product",
       "right_inverse", "left_inverse"]

RULES = {
    "coalesce": "coalesce keeps the function i -> L(i) and merges neighbouring modes s0:d0, s1:d1 whenever "
                "d1 = s0*d0 (size-1 modes vanish).",
    "composition": "R = A o B means R(i) = A(B(i)); R has B's shape. Mode by mode of B = n:d: skip d elements of A, "
                   "then take n of them.",
    "complement": "complement(A, M) lays out the offsets A does not reach: (A, A*) hits each offset of "
                  "0..size(A)*size(A*)-1 exactly once, a range reaching at least M-1; sort A's modes by stride and "
                  "fill each gap.",
    "logical_divide": "logical_divide(A, B) = A o (B, complement(B, size(A))): mode 0 is one tile (what B selects), "
                      "mode 1 enumerates the tiles; with a tiler, each mode of A is divided by its entry.",
    "zipped_divide": "zipped_divide(A, tiler) divides each mode by its tiler entry and gathers "
                     "((the tile modes), (the rest modes)).",
    "tiled_divide": "tiled_divide(A, tiler) is zipped_divide with the rest modes unpacked: ((the tile), rest0, rest1).",
    "flat_divide": "flat_divide(A, tiler) unpacks both groups: (tile0, tile1, rest0, rest1).",
    "logical_product": "logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B): mode 0 is A, mode 1 "
                       "repeats A as B lays out the copies.",
    "blocked_product": "blocked_product(A, B): B's copies of the block A, mode by mode ((A0, B0), (A1, B1)); A is the "
                       "inner (fast) part.",
    "raked_product": "raked_product(A, B): like blocked_product but B is the inner part, ((B0, A0), (B1, A1)): "
                     "A's elements are interleaved (raked) across B's copies.",
    "zipped_product": "zipped_product(A, B) = ((A's modes), (B's copies)) with the copies laid out after A.",
    "tiled_product": "tiled_product(A, B) = ((A's modes), B0, B1): zipped_product with the copy modes unpacked.",
    "right_inverse": "right_inverse(L) = R with L(R(i)) = i for i < size(R): read L's modes in stride order and "
                     "invert each stride into a shape.",
    "left_inverse": "left_inverse(L) = R with R(L(i)) = i for every i < size(L) (L must be injective).",
}
#: The grouping each op fixes: sizes compared down to this depth (0: only the function and the size).
DEPTH = {"coalesce": 1, "composition": 1, "complement": 0, "logical_divide": 1, "zipped_divide": 2,
         "tiled_divide": 2, "flat_divide": 1, "logical_product": 1, "blocked_product": 2, "raked_product": 2,
         "zipped_product": 2, "tiled_product": 2, "right_inverse": 0, "left_inverse": 0}
#: Ops that are easy to confuse: the other op's result, on the same arguments, is a named mistake.
CONFUSED = {
    "blocked_product": [("raked_product", "blocked vs raked: that is raked_product (B inner); blocked keeps A inner")],
    "raked_product": [("blocked_product", "blocked vs raked: that is blocked_product (A inner); raked puts B inner")],
    "zipped_divide": [("logical_divide", "logical vs zipped divide: that is logical_divide's ((tile0, rest0), (tile1, "
                                         "rest1)); zipped gathers ((tile0, tile1), (rest0, rest1))"),
                      ("tiled_divide", "that is tiled_divide (rest modes unpacked)")],
    "logical_divide": [("zipped_divide", "logical vs zipped divide: that is zipped_divide's ((tiles), (rests)); "
                                         "logical_divide keeps one (tile, rest) pair per mode")],
    "tiled_divide": [("zipped_divide", "that is zipped_divide (rest modes grouped)"),
                     ("flat_divide", "that is flat_divide (tile modes unpacked too)")],
    "flat_divide": [("tiled_divide", "that is tiled_divide (tile modes grouped)")],
    "zipped_product": [("tiled_product", "that is tiled_product (copy modes unpacked)")],
    "tiled_product": [("zipped_product", "that is zipped_product (copy modes grouped)")],
}


def registry_ops() -> dict[str, str]:
    """op name -> one-line description, from the engine's op table (``algebra.registry``); {} without one."""
    try:
        from algebra import registry
    except ImportError:  # pragma: no cover - the op table ships with the engine
        return {}
    return {name: registry.get(name).gloss for name in registry.names()}


def _call(op: str, args: list[Any]) -> str:
    names = {"coalesce": ["L"], "complement": ["A", "M"], "right_inverse": ["L"], "left_inverse": ["L"]}
    params = names.get(op, ["A", "tiler" if isinstance(args[-1], tuple) else "B"])
    return f"{op}({', '.join(params)})"


def _gloss(op: str, text: str) -> str:
    """The op table's one-line description, in this drill's names: the single argument is L, and a coalesce
    question has no profile."""
    if _call(op, [None])[len(op) + 1:-1] == "L":
        text = re.sub(r"\bA\b", "L", text)
    return text.split(" (by mode")[0] if op == "coalesce" else text


def _args_text(op: str, args: list[Any]) -> str:
    names = _call(op, args)[len(op) + 1:-1].split(", ")
    return ", ".join(f"{n} = {K.arg_show(a)}" for n, a in zip(names, args, strict=True))


def _grade_inverse(op: str, lay: Any, want: Any) -> Any:
    def grade(ans: str) -> Grade:
        got = read_layout(ans)
        if A.size(got) != A.size(want):
            return Grade.wrong(f"your inverse has {A.size(got)} elements; {op} of this layout has a different size")
        pts = range(A.size(got)) if op == "right_inverse" else range(A.size(lay))
        if op == "right_inverse":
            bad = [i for i in pts if lay(got(i)) != i]
        else:
            bad = [i for i in pts if got(lay(i)) != i]
        if bad:
            what = "L(R(i))" if op == "right_inverse" else "R(L(i))"
            return Grade.wrong(f"{what} is not i at {len(bad)} points, e.g. i = {', '.join(map(str, bad[:4]))}")
        return Grade.right(f"{'L(R(i))' if op == 'right_inverse' else 'R(L(i))'} = i everywhere")

    return grade


def _grade_coalesce(want: Any) -> Any:
    def grade(ans: str) -> Grade:
        g = grade_layout(ans, want, 0, what="result")
        if not g.correct:
            return g
        got = read_layout(ans)
        shape, stride = A.flatten(got.shape), A.flatten(got.stride)
        wshape = A.flatten(want.shape)
        if len(shape) != len(wshape) or A.depth(got) > 1:
            why = [k for k in range(len(shape) - 1) if shape[k] * stride[k] == stride[k + 1]]
            ones = [k for k, s in enumerate(shape) if s == 1]
            detail = (f"modes {why[0]} and {why[0] + 1} still join end to end" if why else
                      f"mode {ones[0]} has size 1" if ones else "it can be written with fewer modes")
            return Grade.wrong(f"the right function, but not fully coalesced: {detail}")
        return Grade.right("the same function with the fewest modes")

    return grade


def _written_in(want: Any, text: str) -> bool:
    """True when ``text`` writes the layout ``want`` as CuTe prints it, or its shape:stride with any grouping (the
    same numbers in the same order, e.g. ``(2,(3,4)):(1,(2,6))`` for ``(2,3,4):(1,2,6)``)."""
    bare = re.sub(r"[\s_]", "", text)
    if re.sub(r"\s", "", str(want)) in bare:
        return True
    flat = ",".join(map(str, A.flatten(want.shape))) + ":" + ",".join(map(str, A.flatten(want.stride)))
    return re.search(rf"(?<![\d,]){re.escape(flat)}(?![\d,])", re.sub(r"[()]", "", bare)) is not None


def _grid(want: Any) -> list[Any]:
    if A.rank(want) <= 2 and A.size(want) <= 256:
        return [offsets_grid(want, "The result's offsets")]
    return []


@register("algebra_op", "Predict an operation", "Predict coalesce, composition, complement, the divides, the "
          "products and the inverses; graded by function and the shape the op fixes, the canonical CuTe form shown "
          "after.", 8)
def make_algebra(rng: random.Random, seed: int) -> Drill:
    if rng.random() < 0.12:
        return _divide_tile(rng, seed)
    table = registry_ops()
    ops = [op for op in OPS if not table or op in table]
    for _ in range(400):
        op = pick(rng, ops)
        args = [K.draw_inverse(rng)] if op.endswith("_inverse") else K.draw(rng, op)
        want = K.truth(op, args)
        if want is None or not K.as_written(op, args, want):
            continue  # refused, ill-posed, or hanging on how A extends past its size (algebra_cases.as_written)
        if op in ("coalesce", "composition") and str(want) in (str(args[0]), str(args[-1])):
            continue  # nothing to do (coalesced already, or A or B acts as the identity): the prompt shows it
        if op.endswith("_inverse") and str(want) in (str(args[0]), str(A.coalesce(args[0]))):
            continue  # L is its own inverse (e.g. a compact column-major L: the identity of 0..size-1)
        derivation = explain(op, *args)
        shown = [_args_text(op, args), derivation[0]["text"] if derivation else f"Start from {K.arg_show(args[0])}."]
        if any(_written_in(want, text) for text in shown):
            continue  # the key would stand in the prompt or the first hint (e.g. a divide that leaves A as it is)
        break
    else:  # pragma: no cover - every op family yields a checked case well before 400 draws
        raise RuntimeError("no valid instance found")
    depth = DEPTH[op]
    call = _call(op, args)
    if op == "coalesce":
        grader = _grade_coalesce(want)
    elif op.endswith("_inverse"):
        grader = _grade_inverse(op, args[0], want)
    else:
        def grader(ans: str) -> Grade:
            g = grade_layout(ans, want, depth, what="result")
            if g.correct and str(read_layout(ans)) != str(want):
                g.reason += f"; CuTe prints it as {want}"
            return g
    fixed = {0: "its function and size", 1: "the sizes of its top-level modes",
             2: "the sizes of its modes two levels down"}[depth]
    if op == "coalesce":
        fixed = "its function, fully coalesced"
    elif op.endswith("_inverse"):
        fixed = "its defining property and size"
    steps = [step(RULES[op])] + derivation
    if not derivation:
        steps.append(step(f"{call} = {want}", want))
    steps.append(step(f"Check: the result has size {A.size(want)} and, e.g., R({A.size(want) - 1}) = "
                      f"{want(A.size(want) - 1)}.", want))
    gloss = f" ({op}: {_gloss(op, table[op])}.)" if op in table else ""
    drill = Drill("algebra_op", seed, f"{_args_text(op, args)} (compile-time _N values, as CuTe simplifies them). "
                  f"What is {call}?{gloss} (Graded by {fixed}.)",
                  "a layout in CuTe notation, e.g. {ex}", str(want), grader, steps,
                  [RULES[op], steps[1]["text"] if derivation else f"Start from {K.arg_show(args[0])}."],
                  variant=op, grids=_grid(want)).with_data(op=op, args=[K.arg_text(a) for a in args]).with_example(
        *LAYOUT_EXAMPLES)
    _mistakes(drill, op, args, want, depth)
    return drill


def _mistakes(drill: Drill, op: str, args: list[Any], want: Any, depth: int) -> None:
    """Name the usual wrong answers of this op: a confusable op's result, swapped modes, shape/stride swapped, B o A."""
    for other, label in CONFUSED.get(op, []):
        alt = K.truth(other, args)
        if alt is not None:
            drill.mistake(label, layout_matches(alt, 0 if A.size(alt) != A.size(want) else 2), str(alt))
    if A.rank(want) == 2 and depth:
        swapped = A.make_layout(want[1], want[0])
        drill.mistake("swapped modes: mode 0 and mode 1 are exchanged", layout_matches(swapped, depth), str(swapped))
    if 0 not in A.flatten(want.stride) and A.size(A.Layout(want.stride)) <= 4096:
        alt = A.Layout(want.stride, want.shape)
        drill.mistake("shape and stride swapped", layout_matches(alt, 0), str(alt))
    if op == "composition" and not isinstance(args[1], tuple):
        back = K.truth("composition", [args[1], args[0]])
        if back is not None:
            drill.mistake("B o A instead of A o B: R(i) = A(B(i)) applies B first", layout_matches(back, 0),
                          str(back))


def _divide_tile(rng: random.Random, seed: int) -> Drill:
    """What the two modes of logical_divide mean: list the offsets of tile k (mode 1 fixed, mode 0 walked)."""
    while True:
        a = A.Layout(pick(rng, [8, 12, 16, 24, 32])) if rng.random() < 0.7 else K.rand_layout(rng, 2)
        b = K.rand_layout(rng, 1, 8)
        d = K.truth("logical_divide", [a, b])
        if d is not None and A.size(d[0]) >= 2 and A.size(d[1]) >= 2 and 0 not in A.flatten(b.stride) and \
                K.as_written("logical_divide", [a, b], d):
            break
    k = rng.randrange(1, A.size(d[1]))
    want = [d((i, k)) for i in range(A.size(d[0]))]
    rule = ("logical_divide(A, B) = A o (B, complement(B, size(A))): mode 0 walks the elements of one tile (what B "
            "selects), mode 1 says which tile. Tile k is the column D(_, k).")
    derivation = explain("logical_divide", a, b)
    steps = [step(rule), *derivation, step(f"D = {d}: {A.size(d[1])} tiles of {A.size(d[0])}.", d),
             *[step(f"D({i},{k}) = {v}") for i, v in enumerate(want)]]
    labels = [f"element {i}" for i in range(len(want))]
    other = [d((k, i)) for i in range(A.size(d[0]))] if k < A.size(d[0]) and A.size(d[1]) == A.size(d[0]) else None
    inside = {a(i) for i in range(A.size(a))}
    exact = A.size(d) == A.size(a) and all(d(i) in inside for i in range(A.size(d)))
    convention = ("" if exact else
                  f" B does not tile A exactly: complement(B, {A.size(a)}) rounds the number of tiles up, so D has "
                  f"{A.size(d)} elements for A's {A.size(a)} and some tiles reach past A; D is still defined there, "
                  f"with A's 1-D coordinates past {A.size(a) - 1} continuing along its last mode, and those offsets "
                  f"are the answer.")
    drill = Drill("algebra_op", seed,
                  f"A = {a}, B = {b}. D = logical_divide(A, B) cuts A into tiles. List the offsets of tile {k} "
                  f"(D(i, {k}) for i = 0, 1, ...), in order.{convention}", f"{len(want)} integers",
                  ", ".join(map(str, want)),
                  lambda ans: grade_list(parse_int_list(ans, len(want)), want, labels), steps,
                  [rule, f"First find D = logical_divide(A, B). {derivation[0]['text'] if derivation else ''}".strip()],
                  variant="divide_tile", grids=[offsets_grid(d, "D: rows = inside a tile, columns = tiles",
                                                             [(i, k) for i in range(len(want))])]).with_data(
        op="logical_divide", args=[str(a), str(b)], tile=k)
    if other is not None and other != want:
        drill.mistake("swapped modes: that is row k of D (mode 0 fixed); a tile is a column, mode 1 fixed",
                      lambda ans: parse_int_list(ans, len(want)) == other, ", ".join(map(str, other)))
    return drill


__all__ = ["make_algebra", "lstr"]
