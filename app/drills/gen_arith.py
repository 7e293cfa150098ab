"""Drill kind ``arith``: ArithTuple / E() strides. A stride may be a scaled basis element ``k@i`` (k times the unit
vector E<i>), so a layout maps a coordinate to a tuple instead of an int; ``make_identity_layout(shape)`` uses
``1@0, 1@1, ...`` and maps every coordinate to itself (the coordinate tensors CuTe uses for predication).

Keys are the engine's (``algebra.core.arith``); an answer is a tuple, read nested or flat.
"""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills.common import lstr, pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import parse_coord

RULE = ("With basis strides the inner product adds tuples: k@i is k in position i and 0 elsewhere (E<i>{} * k). "
        "Split the coordinate by the shape as usual (mode 0 fastest), multiply each entry by its basis stride, add.")


def _value(x: Any) -> Any:
    """An engine ArithTuple / int as plain nested ints."""
    if isinstance(x, int):
        return x
    vals = getattr(x, "value", None)
    if vals is None:
        vals = tuple(x)
    return tuple(_value(v) for v in vals) if isinstance(vals, tuple | list) else int(vals)


def _grade(want: Any) -> Any:
    def grade(ans: str) -> Grade:
        got = parse_coord(ans)
        if got == want:
            return Grade.right()
        if isinstance(got, tuple) and A.flatten(got) == A.flatten(want) and all(isinstance(v, int) for v in got):
            return Grade.right("right (flattened)")
        if isinstance(got, tuple) and isinstance(want, tuple) and len(got) == len(want):
            bad = [str(k) for k in range(len(want)) if got[k] != want[k]]
            return Grade.wrong(f"entr{'ies' if len(bad) > 1 else 'y'} {', '.join(bad)} of the tuple "
                               f"{'are' if len(bad) > 1 else 'is'} wrong")
        return Grade.wrong("that is not the tuple the layout gives (it has one entry per basis direction)")

    return grade


@register("arith", "ArithTuple and E() strides", "Evaluate layouts whose strides are scaled basis elements (1@0, "
          "2@1): the identity layout that maps a coordinate to itself, and transposed or strided coordinate "
          "layouts.", 13)
def make_arith(rng: random.Random, seed: int) -> Drill:
    variant = pick(rng, ["identity", "basis", "basis"])
    if variant == "identity":
        shape = pick(rng, [(4, 8), (8, 4), ((2, 2), 4), (4, (2, 4)), (3, 5), (16, 8)])
        lay = A.make_identity_layout(shape)
        x = rng.randrange(1, A.size(lay))
        want = _value(lay(x))
        steps = [step(RULE, lay),
                 step(f"make_identity_layout({lstr(shape)}) = {lay}: each mode's stride is the unit vector of its "
                      f"position."),
                 step(f"{x} splits to the natural coordinate {lstr(A.idx2crd(x, shape))}; the identity returns it: "
                      f"{lstr(want)}.")]
        prompt = (f"I = make_identity_layout({lstr(shape)}) = {lay}. What does I map the 1-D coordinate {x} to?")
    else:
        m, n = pick(rng, [(4, 8), (8, 4), (4, 4), (2, 8), (6, 4)])
        style = pick(rng, ["transposed", "scaled", "split"])
        if style == "transposed":
            shape, basis = (m, n), [(1, 1), (1, 0)]
        elif style == "scaled":
            shape, basis = (m, n), [(pick(rng, [2, 4]), 0), (pick(rng, [1, 3]), 1)]
        elif n % 2 == 0:
            shape, basis = (m, (2, n // 2)), [(1, 1), (1, 0), (2, 0)]
        else:
            shape, basis = (m, n), [(1, 1), (1, 0)]
        from app.drills.algebra_cases import like

        lay = A.Layout(shape, like(shape, [A.E(i) * k if k != 1 else A.E(i) for k, i in basis]))
        coord: Any = (rng.randrange(m), rng.randrange(n))
        while _value(lay(coord)) == coord:  # e.g. (0,0), or (i,i) transposed: the prompt would show the answer
            coord = (rng.randrange(m), rng.randrange(n))
        x = coord
        want = _value(lay(coord))
        nat = A.idx2crd(coord[1], lay.shape[1]) if isinstance(lay.shape[1], tuple) else coord[1]
        steps = [step(RULE, lay), step(f"Mode 1's coordinate {coord[1]} is {lstr(nat)} in its own shape; each entry "
                                       f"times its basis stride."),
                 step(f"Adding the scaled basis vectors gives {lstr(want)}.")]
        prompt = f"L = {lay}. What does L map the coordinate {lstr(coord)} to (a tuple)?"
    drill = Drill("arith", seed, prompt, "a tuple such as {ex}", lstr(want), _grade(want), steps,
                  [RULE, steps[1]["text"]], variant).with_data(
        layout=str(lay), coord=x, shape=lay.shape,
        basis=None if variant == "identity" else [list(b) for b in basis])
    if variant == "identity":
        from app.drills.common import idx2crd_row_major

        rm = idx2crd_row_major(x, lay.shape)
        if rm != want:
            drill.mistake("a row-major split of a 1-D index (CuTe splits with mode 0 fastest)",
                          lambda ans: _grade(rm)(ans).correct, lstr(rm))
    elif isinstance(want, tuple) and len(want) == 2 and not isinstance(want[0], tuple) and want[0] != want[1]:
        swapped = (want[1], want[0])
        drill.mistake("swapped modes: the entries are in basis order (E<0> first), not the order you read the "
                      "strides", lambda ans: parse_coord(ans) == swapped, lstr(swapped))
    return drill.with_example("(1,3)", "(2,5)", "(3,1)", "(0,6)", "(5,2)")
