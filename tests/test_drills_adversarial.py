"""Answers built to trip the graders: the same function in a different shape is rejected where the question fixes
the shape and accepted where it does not; right numbers in the wrong place are rejected."""

from __future__ import annotations

import re
from typing import Any

import algebra as A
from app.drills.core import generate
from app.drills.gen_algebra import DEPTH

SEEDS = range(600)


def L(text: str) -> Any:
    return A.parse(text)


def same_function(a: Any, b: Any) -> bool:
    return A.size(a) == A.size(b) and all(a(i) == b(i) for i in range(A.size(a)))


def top_sizes(x: Any) -> tuple:
    return tuple(A.size(x[i]) for i in range(A.rank(x))) if A.rank(x) > 1 else (A.size(x),)


def split_mode(x: Any, k: int) -> Any | None:
    """The same function with top-level mode k (an int mode s:d, s even >= 4) written as (2,s/2):(d,2d)."""
    shape, stride = x.shape, x.stride
    if isinstance(shape, int):
        return A.Layout((2, shape // 2), (stride, 2 * stride)) if shape % 2 == 0 and shape >= 4 else None
    if isinstance(shape[k], tuple) or shape[k] % 2 or shape[k] < 4:
        return None
    s, d = shape[k], stride[k]
    return A.Layout(shape[:k] + ((2, s // 2),) + shape[k + 1:], stride[:k] + ((d, 2 * d),) + stride[k + 1:])


def test_transposed_view_fixes_the_top_level_shape() -> None:
    rejected = accepted = 0
    for seed in SEEDS:
        d = generate("transpose_view", seed)
        if d.variant == "prove":
            continue
        want = L(d.expected)
        flat = A.coalesce(want)
        if top_sizes(flat) != top_sizes(want) and same_function(flat, want):
            assert not d.grade(str(flat)).correct, (d.prompt, str(flat))
            rejected += 1
        for k in (0, 1):
            alt = split_mode(want, k)
            if alt is not None:
                assert d.grade(str(alt)).correct, (d.prompt, str(alt))
                accepted += 1
    assert rejected >= 10 and accepted >= 50


def test_tiled_view_fixes_two_levels_and_frees_the_third() -> None:
    rejected = accepted = 0
    for seed in SEEDS:
        d = generate("tiled_view", seed)
        if d.variant != "layout":
            continue
        want = L(d.expected)
        flat = A.Layout(A.flatten(want.shape), A.flatten(want.stride))
        assert same_function(flat, want) and not d.grade(str(flat)).correct, d.prompt
        rejected += 1
        (tm, tn), (gm, gn) = want.shape
        (dm, dn), (em, en) = want.stride
        if gm % 2 == 0 and gm >= 4:
            deeper = A.Layout(((tm, tn), ((2, gm // 2), gn)), ((dm, dn), ((em, 2 * em), en)))
            assert same_function(deeper, want) and d.grade(str(deeper)).correct, (d.prompt, str(deeper))
            accepted += 1
    assert rejected >= 40 and accepted >= 5


def test_algebra_results_judged_by_the_shape_each_operation_fixes() -> None:
    seen = {"split ok": 0, "flat rejected": 0, "complement free": 0}
    for seed in SEEDS:
        d = generate("algebra_op", seed)
        if d.variant == "divide_tile" or d.variant.endswith("_inverse"):
            continue
        want = L(d.expected)
        flat = A.coalesce(want)
        if d.variant == "complement":  # only the function and the size are fixed: any split is the same answer
            alt = split_mode(want, 0)
            if alt is not None:
                assert d.grade(str(alt)).correct, (d.prompt, str(alt))
                seen["complement free"] += 1
            continue
        for k in range(A.rank(want) if isinstance(want.shape, tuple) else 0):
            alt = split_mode(want, k)
            if alt is not None and d.variant != "coalesce":
                # a split below the depth the op fixes is the same answer; at that depth it changes the shape
                assert d.grade(str(alt)).correct == (DEPTH[d.variant] == 1), (d.prompt, str(alt))
                seen["split ok"] += DEPTH[d.variant] == 1
        if d.variant != "coalesce" and top_sizes(flat) != top_sizes(want):
            assert not d.grade(str(flat)).correct, (d.prompt, str(flat))
            seen["flat rejected"] += 1
        if d.variant == "coalesce" and A.rank(want) > 1:
            alt = split_mode(want, 0)
            if alt is not None:
                assert not d.grade(str(alt)).correct, d.prompt  # not fully coalesced
    assert min(seen.values()) >= 3, seen


def test_design_view_rejects_a_view_of_the_wrong_shape() -> None:
    n = 0
    for seed in SEEDS:
        d = generate("design_view", seed)
        b = L(d.expected)
        one_d, mat = A.coalesce(b), L(d.data["matrix"])
        if A.rank(one_d) < A.rank(b):  # the same 1-D function; right only if A o B still comes out as the view
            view = A.composition(mat, b)
            got = A.composition(mat, one_d)
            assert d.grade(str(one_d)).correct == (top_sizes(got) == top_sizes(view)), (d.prompt, str(got))
            n += top_sizes(got) != top_sizes(view)
        swapped = A.Layout((b.shape[1], b.shape[0]), (b.stride[1], b.stride[0]))
        if b.shape[0] != b.shape[1]:
            assert not d.grade(str(swapped)).correct, d.prompt
    assert n >= 5


def test_tables_and_lists_in_the_wrong_order_are_rejected() -> None:
    n = 0
    for seed in SEEDS:
        d = generate("offsets", seed)
        if d.table_shape:
            rows = [r.split() for r in d.expected.split("\n")]
            cols = [list(c) for c in zip(*rows, strict=True)]
            if len(rows) == len(cols) and rows != cols:
                assert not d.grade("\n".join(" ".join(c) for c in cols)).correct, d.prompt
                n += 1
        else:
            nums = d.expected.split(", ")
            if nums != sorted(nums, key=int):
                assert not d.grade(", ".join(sorted(nums, key=int))).correct, d.prompt
    assert n >= 5


def test_index_formula_with_the_coordinates_swapped_is_rejected() -> None:
    n = 0
    for seed in SEEDS:
        d = generate("index_formula", seed)
        names = d.data["names"]
        swap = {names[0]: names[1], names[1]: names[0]}
        swapped = re.sub(rf"\b({names[0]}|{names[1]})\b", lambda m, swap=swap: swap[m.group(1)], d.expected)
        lay = L(d.data["layout"])
        sizes = A.flatten(lay.shape)
        if swapped != d.expected and sizes[0] == sizes[1]:
            stride = A.flatten(lay.stride)
            if stride[0] != stride[1]:
                assert not d.grade(swapped).correct, (d.prompt, swapped)
                n += 1
    assert n >= 10


def test_natural_coordinate_in_three_forms() -> None:
    n = 0
    for seed in SEEDS:
        d = generate("natural_coord", seed)
        if d.variant != "three":
            continue
        top, nat, off = re.fullmatch(r"(\(.*?\)) (\(.*\)) (\d+)", d.expected).groups()
        flat_nat = "(" + ",".join(re.findall(r"\d+", nat)) + ")"
        if flat_nat != nat:  # the flattened natural coordinate is read and graded wrong: the nesting is drilled
            g = d.grade(f"{top} {flat_nat} {off}")
            assert g.readable and not g.correct and "nesting" in g.reason, d.prompt
        assert not d.grade(f"{nat} {top} {off}").correct, d.prompt  # the forms swapped
        n += 1
    assert n >= 20
