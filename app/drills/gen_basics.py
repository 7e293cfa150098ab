"""Drill kinds on a layout's vital numbers and on what coalescing can merge.

``layout_stats``: size, cosize, rank and depth of a (hierarchical) layout. ``vector``: what coalesce prints with
compile-time (``_N``) versus run-time (int) shapes, and the largest vector two layouts share (max_common_vector) with
the copy width it allows. Keys are the engine's; CuTe's run-time coalesce, which can only flatten (it cannot prove
that a mode is 1 or that two modes join), is ``flatten`` of the layout.
"""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills.algebra_cases import compact, like, rand_layout
from app.drills.common import grade_list, lstr, pick, read_layout, static_spelling, step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import parse_int, parse_int_list, parse_labelled_ints

STATS_RULE = ("size = the number of coordinates (product of the shape); cosize = the largest offset + 1 (the storage "
              "it touches); rank = the number of top-level modes; depth = how deeply the shape nests (an int: 0).")


def _stats_layout(rng: random.Random) -> Any:
    a = pick(rng, [2, 3, 4, 8])
    shape = pick(rng, [(a, (2, pick(rng, [2, 3, 4]))), ((2, 2), a), (a, pick(rng, [2, 4, 6])),
                       (a, (2, (2, 2))), (2, a, pick(rng, [2, 3])), (a, pick(rng, [3, 4]), (2, 2))])
    if rng.random() < 0.5:
        order = list(range(len(A.flatten(shape))))
        rng.shuffle(order)
        return A.make_ordered_layout(shape, like(shape, order))
    return A.Layout(shape, like(shape, [pick(rng, [0, 1, 2, 3, 4, 8, 16, 32]) for _ in A.flatten(shape)]))


@register("layout_stats", "Size, cosize, rank, depth", "The four numbers of a layout: how many coordinates, how much "
          "storage it touches, how many top-level modes, how deep the nesting.", 1)
def make_stats(rng: random.Random, seed: int) -> Drill:
    lay = _stats_layout(rng)
    want = [A.size(lay), A.cosize(lay), A.rank(lay), A.depth(lay)]
    last = A.size(lay) - 1
    steps = [step(STATS_RULE, lay),
             step(f"size = product of {lstr(lay.shape)} = {want[0]}."),
             step(f"The largest offset: each mode at its last coordinate where the stride is positive; "
                  f"{A.cosize(lay) - 1}, so cosize = {want[1]}. With strides >= 0 the last coordinate reaches it: "
                  f"L({last}) = {lay(last)}, and CuTe computes cosize as L(size - 1) + 1."),
             step(f"rank = {want[2]} top-level modes; depth = {want[3]}.")]
    labels = ["size", "cosize", "rank", "depth"]
    drill = Drill("layout_stats", seed, f"L = {lay}. Give size(L), cosize(L), rank(L) and depth(L), in that order.",
                  "four integers: size, cosize, rank, depth", ", ".join(map(str, want)),
                  lambda ans: grade_list(parse_labelled_ints(ans, labels), want, labels), steps,
                  [STATS_RULE, steps[1]["text"]],
                  "stats").with_data(layout=str(lay))
    wrong_cosize = [want[0], A.cosize(lay) - 1, want[2], want[3]]
    drill.mistake("the largest offset given as the cosize: cosize is the largest offset + 1",
                  lambda ans: parse_int_list(ans, 4) == wrong_cosize, ", ".join(map(str, wrong_cosize)))
    flat_rank = [want[0], want[1], len(A.flatten(lay.shape)), want[3]]
    drill.mistake("the flattened modes counted as the rank: rank counts top-level modes only",
                  lambda ans: parse_int_list(ans, 4) == flat_rank, ", ".join(map(str, flat_rank)))
    return drill


COALESCE_RULE = ("coalesce keeps L(i) for every 1-D i and merges mode k into mode k+1 when shape_k * stride_k == "
                 "stride_{k+1}, dropping size-1 modes. CuTe does this at compile time: with _N shapes it can prove a "
                 "mode is 1 or that two modes join; with run-time ints it cannot, so it only flattens.")


def _mergeable(rng: random.Random) -> Any:
    """A nested layout where static coalesce merges something (and usually drops a size-1 mode)."""
    while True:
        lay = rand_layout(rng, pick(rng, [2, 3]), 48, nested=True)
        if rng.random() < 0.5:
            shape, stride = list(lay.shape), list(lay.stride)
            k = rng.randrange(len(shape))
            shape[k], stride[k] = (shape[k], 1), (stride[k], pick(rng, [0, 5, 7]))
            lay = A.Layout(tuple(shape), tuple(stride))
        flat = A.Layout(A.flatten(lay.shape), A.flatten(lay.stride))
        if str(A.coalesce(lay)) != str(flat) and A.depth(lay) >= 1:
            return lay


def _exact(ans: str, want: Any, what: str) -> Grade:
    """CuTe's printed form: the same shape and stride tuples (underscores, Int<N>{} and rank-1 parentheses aside)."""
    got = read_layout(ans)
    if str(got) == str(want):
        return Grade.right(f"that is what CuTe prints for {what}")
    same = A.size(got) == A.size(want) and all(got(i) == want(i) for i in range(A.size(want)))
    if same:
        return Grade.wrong(f"the same function, but not what CuTe prints for {what}: count the modes it can "
                           "merge or drop")
    return Grade.wrong("that is not even the same function as L (the offsets differ) -- coalesce never changes "
                       "the function")


def _coalesce_drill(rng: random.Random, seed: int) -> Drill:
    lay = _mergeable(rng)
    static = rng.random() < 0.5
    while not static and A.depth(lay) < 2:  # run-time ints only flatten: a flat L would be its own answer
        lay = _mergeable(rng)
    flat = A.Layout(A.flatten(lay.shape), A.flatten(lay.stride))
    want = A.coalesce(lay) if static else flat
    spelled = static_spelling(lay) if static else str(lay)
    what = "compile-time (_N) shapes" if static else "run-time int shapes"
    steps = [step(COALESCE_RULE),
             step(f"Flattened: {flat}.", flat),
             step(f"With {what}: {want}." + ("" if static else " CuTe keeps every mode, size-1 ones too, because "
                                             "nothing about the values is known at compile time."), want)]
    drill = Drill("vector", seed,
                  f"L = {spelled}, built from {what}. What does CuTe's coalesce(L) print?",
                  "a layout as CuTe prints it (underscores optional), e.g. {ex}", str(want),
                  lambda ans: _exact(ans, want, what), steps,
                  [COALESCE_RULE, steps[1]["text"] if static else "First flatten L: list its leaf modes in order, "
                   "shape with stride. Then ask what CuTe can know about their values at compile time."],
                  "coalesce_static" if static else "coalesce_dynamic").with_data(
        op="coalesce", args=[str(lay)], static=static).with_example(*COALESCE_EXAMPLES)
    other = flat if static else A.coalesce(lay)
    if str(other) != str(want):
        label = ("run-time semantics: with _N shapes CuTe does merge" if static else
                 "pycute's semantics where CuTe differs: pycute (like CuTe with _N shapes) merges, but CuTe with "
                 "run-time ints cannot merge or drop modes, it only flattens")
        drill.mistake(label, lambda ans: str(read_layout(ans)) == str(other), str(other))
    return drill



#: Example answers of the coalesce format (each drill takes one that is wrong for it).
COALESCE_EXAMPLES = ("(2,1,6):(1,6,2)", "(3,1,4):(4,0,1)", "(2,12):(1,4)", "(4,1,2):(2,8,1)")

VECTOR_RULE = ("max_common_vector(src, dst) = how many elements that are consecutive in dst's memory are also "
               "consecutive in src's (coalesce(src o right_inverse(dst)) starts with that many at stride 1): the "
               "elements one vector instruction may move. The copy width is that many elements, at most 128 bits.")


def _vector_drill(rng: random.Random, seed: int) -> Drill:
    while True:
        m, n = pick(rng, [(4, 8), (8, 8), (8, 4), (16, 8), (4, 4), (8, 16)])
        src = compact(rng, (m, n)) if rng.random() < 0.4 else A.Layout((m, n))
        dst = pick(rng, [A.Layout((m, n)), A.make_layout_row_major((m, n)),
                         A.Layout(((2, m // 2), n), ((1, 2 * n), 2)), A.Layout((m, n), (1, m + 4)),
                         A.Layout(((4, m // 4), n), ((1, 4 * n), 4)) if m % 4 == 0 else A.Layout((m, n))])
        try:
            want = A.max_common_vector(src, dst)
        except A.LayoutError:
            continue
        if want >= 1:
            break
    bits = pick(rng, [16, 32])
    width = min(want * bits, 128)
    steps = [step(VECTOR_RULE),
             step(f"coalesce(src) = {A.coalesce(src)}, coalesce(dst) = {A.coalesce(dst)}."),
             step(f"src o right_inverse(dst) = {_common(src, dst)}: its first mode runs {want} elements at stride 1, "
                  f"so max_common_vector = {want}."),
             step(f"{want} x {bits} bits = {want * bits} bits; one instruction moves at most 128: {width} bits.")]
    labels = ["max_common_vector", "the copy width in bits"]
    drill = Drill("vector", seed,
                  f"src = {src} and dst = {dst} ({bits}-bit elements). What is max_common_vector(src, dst), and how "
                  f"many bits can one copy instruction move per thread (one instruction moves at most 128 bits, "
                  f"16 bytes, per thread)?", "two integers: elements, bits",
                  f"{want}, {width}",
                  lambda ans: grade_list(parse_labelled_ints(ans, ["max_common_vector", "width"],
                                                             ["elements", "element", "bits", "bit"]), [want, width],
                                         labels), steps,
                  [VECTOR_RULE, steps[1]["text"]], "max_common_vector").with_data(
        src=str(src), dst=str(dst), element_bits=bits)
    uncapped = [want, want * bits]
    if want * bits > 128:
        drill.mistake("the 128-bit cap forgotten: one copy instruction moves at most 16 bytes per thread",
                      lambda ans: parse_int_list(ans, 2) == uncapped, ", ".join(map(str, uncapped)))
    return drill


def _common(src: Any, dst: Any) -> Any:
    try:
        return A.coalesce(A.composition(src, A.right_inverse(dst)))
    except A.LayoutError:
        return "(not a layout)"


@register("vector", "Coalesce and vector width", "What coalesce prints with compile-time versus run-time shapes, "
          "and the largest common vector of two layouts (max_common_vector) with the copy width it allows.", 8)
def make_vector(rng: random.Random, seed: int) -> Drill:
    if rng.random() < 0.5:
        return _coalesce_drill(rng, seed)
    return _vector_drill(rng, seed)


__all__ = ["make_stats", "make_vector", "parse_int"]
