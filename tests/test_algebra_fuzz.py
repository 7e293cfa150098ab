"""Random and malformed input: every public op either answers or raises LayoutError (never another exception)."""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra import LayoutError

OPS2 = ["composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
        "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product", "complement",
        "max_common_vector", "coalesce", "tile_to_shape"]
OPS1 = ["coalesce", "filter", "right_inverse", "left_inverse", "complement", "nullspace", "cosize", "size"]


def _leaf(rng: random.Random, stride: bool) -> int:
    pool = [1, 2, 3, 4, 8, 16] + ([0, -1, -2, 5, 7, 64, 1 << 40] if stride else [6, 32, 5])
    return rng.choice(pool)


def _tree(rng: random.Random, depth: int, stride: bool, profile=None):
    if profile is not None:
        if isinstance(profile, tuple):
            return tuple(_tree(rng, depth + 1, stride, p) for p in profile)
        return _leaf(rng, stride)
    if depth < 3 and rng.random() < 0.35:
        return tuple(_tree(rng, depth + 1, stride) for _ in range(rng.randint(1, 3)))
    return _leaf(rng, stride)


def _layout(rng: random.Random):
    shape = _tree(rng, 0, False)
    lay = A.Layout(shape, _tree(rng, 0, True, shape))
    if rng.random() < 0.15:
        b = rng.randint(0, 3)
        return A.ComposedLayout(A.Swizzle(b, rng.randint(0, 4), b + rng.randint(0, 3)), rng.choice([0, 0, 8]), lay)
    return lay


def _arg(rng: random.Random, a):
    r = rng.random()
    if r < 0.5:
        return _layout(rng)
    if r < 0.7:
        return rng.choice([1, 2, 3, 4, 8, 24, 64])
    if r < 0.9:
        return tuple(rng.choice([None, 2, 4, A.Layout(rng.choice([2, 4]), rng.choice([1, 2]))])
                     for _ in range(rng.randint(1, 3)))
    return rng.choice([(4, 8), ((2, 2), 4), (8,)])


@pytest.mark.parametrize("seed", range(6))
def test_random_ops_answer_or_refuse(seed: int) -> None:
    rng = random.Random(seed)
    answered = refused = 0
    for _ in range(400):
        a = _layout(rng)
        if rng.random() < 0.5:
            op, args = rng.choice(OPS1), (a,)
        else:
            op, args = rng.choice(OPS2), (a, _arg(rng, a))
        try:
            getattr(A, op)(*args)
            answered += 1
        except LayoutError:
            refused += 1
    assert answered > 50 and answered + refused == 400


@pytest.mark.parametrize("text", [
    "(" * 5000, ")" * 10, "(4,8):(1,4):(2)", "((4,8)):((1,4)", "Sw<3,4,3> o o (8,8)", "Sw<99,4,3> o (8,8)",
    "<<<<2>>>", "<2:1,,4>", "(4,8):(1@x,4)", "1e9:1", "(2^70):(1)", "4:" + "9" * 40, "\x00", "(4;8)",
    "(" * 30 + "4" + ")" * 30,
])
def test_malformed_notation_is_a_layout_error(text: str) -> None:
    with pytest.raises(LayoutError):
        A.parse(text)


def test_explain_refuses_like_the_op() -> None:
    with pytest.raises(LayoutError, match="divisibility"):
        A.explain("composition", A.parse("(6,2):(8,2)"), A.parse("4:2"))
