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



def _layouts(rng: random.Random) -> list:
    """A layout of every kind the algebra has: plain, ``Sw o O o L``, ``L o O o Sw`` (CuTe's inverse of a swizzled
    layout with an offset) and F2-strided."""
    plain = A.Layout(*rng.choice([((4, 8), (1, 4)), ((8, 8), (8, 1)), (16, 1), ((2, 4), (4, 1))]))
    sw = A.Swizzle(*rng.choice([(1, 2, 4), (2, 0, 3), (3, 3, 3), (2, 1, 3)]))
    swizzled = A.ComposedLayout(sw, rng.choice([0, 8]), A.Layout((4, 16), (16, 1)))
    return [plain, swizzled, A.right_inverse(A.ComposedLayout(A.Swizzle(1, 2, 4), 8, A.Layout((4, 16), (16, 1)))),
            A.as_f2_layout(A.ComposedLayout(sw, 0, A.Layout((8, 8), (8, 1))))]


def _argument(rng: random.Random, kind: str):
    """An argument of the op table's ``kind`` (``algebra.teach.registry.KINDS``), valid or not."""
    ints = [1, 2, 4, 8, 0, -2]
    tuples = [(4, 8), (2, None), ((2, 2), 4), (8,)]
    pool = {"layout": _layouts(rng) + [rng.choice(ints)], "tiler": _layouts(rng) + ints + tuples,
            "int": ints, "shape": ints + tuples, "profile": tuples, "coord": ints + tuples,
            "cotarget": ints + tuples + _layouts(rng)}[kind]
    return rng.choice(pool)


@pytest.mark.parametrize("seed", range(4))
def test_every_op_in_the_op_table_answers_or_refuses_every_kind_of_layout(seed: int) -> None:
    """The op table's ops (``algebra.teach.registry.OPS``: a new op is fuzzed the day it is registered), called as
    a notebook calls them, each argument of its declared kind drawn over every kind of layout: an answer or a
    LayoutError, never another exception."""
    from algebra.teach.registry import OPS

    rng = random.Random(seed)
    for name, op in OPS.items():
        for _ in range(16):
            args = [_argument(rng, a.kind) for a in op.args if not a.optional or rng.random() < 0.5]
            try:
                op.fn(*args)
            except LayoutError:
                pass
            except Exception as e:  # noqa: BLE001
                raise AssertionError(f"{name}({', '.join(map(repr, args))}) raised {type(e).__name__}: {e}") from e
