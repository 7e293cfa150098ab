"""Never a wrong layout (CONTRACT §5): every composition and divide the engine returns is the function it names,
``R(i) == A(B(i))`` wherever ``0 <= B(i) < size(A)``, on random layouts that include non-divisible strides; where
it is not, the engine refuses with the condition, the modes, what CuTe would print, and a counterexample.

Offsets come from this file's own evaluator, not from ``Layout.__call__``.
"""

from __future__ import annotations

import os
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_algebra_properties import at  # the suite's own evaluator (not Layout.__call__)

import algebra as A
from algebra.core import checks

EXAMPLES = int(os.environ.get("LAYOUTLAB_PROPERTY_EXAMPLES", "60"))
RANDOM_CASES = int(os.environ.get("LAYOUTLAB_NEVER_WRONG_CASES", "3000"))


def is_a_o_b(a, b, r) -> bool:
    n = A.size(a)
    return all(at(r, i) == at(a, at(b, i)) for i in range(A.size(b)) if 0 <= at(b, i) < n)


def rand_layout(rng: random.Random, max_modes: int = 3, nest: bool = True):
    k = rng.randint(1, max_modes)
    shape = [rng.choice([1, 2, 3, 4, 5, 6, 8, 12]) for _ in range(k)]
    stride = [rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 24]) for _ in range(k)]
    if nest and k >= 2 and rng.random() < 0.3:
        return A.Layout((shape[0], tuple(shape[1:])), (stride[0], tuple(stride[1:])))
    return A.Layout(tuple(shape), tuple(stride)) if k > 1 else A.Layout(shape[0], stride[0])


def test_seed_003_cases_are_refused_with_a_lesson() -> None:
    with pytest.raises(A.LayoutError) as e:
        A.composition(A.parse("(6,2):(8,2)"), A.parse("4:4"))
    msg = str(e.value)
    assert "stride divisibility" in msg and "mode 0" in msg
    assert "CuTe would print (2,2):(32,2)" in msg and "at i = 2 that gives 2" in msg and "A(8) = 18" in msg
    lesson = r"CuTe would print \(2,2\):\(6,1\) here; at i = 2 that gives 1.*A\(6\) = 5"
    with pytest.raises(A.LayoutError, match=lesson):
        A.composition(A.parse("(4,2):(2,1)"), A.parse("4:3"))


def test_overlapping_modes_of_b_are_refused() -> None:
    with pytest.raises(A.LayoutError, match="disjointness condition"):
        A.composition(A.parse("(2,2):(1,10)"), A.parse("(2,2):(1,1)"))


def test_defined_cases_are_still_answered() -> None:
    assert str(A.composition(A.parse("(6,2):(8,2)"), A.parse("(4,3):(3,1)"))) == "((2,2),3):((24,2),8)"
    # the steps cross the end of A's first mode only past size(A): every point inside is right
    assert str(A.composition(A.parse("(6,1):(1,100)"), A.parse("2:4"))) == "2:4"
    big = A.parse("(8192,8192):(8192,1)")
    d = A.logical_divide(big, (A.parse("128:1"), A.parse("64:1")))
    assert str(d) == "((128,64),(64,128)):((8192,1048576),(1,64))"
    for i, j in [(0, 0), (5, 7), (127, 63), (128 * 64 - 1, 64 * 128 - 1), (1000, 4000)]:
        row, col = A.idx2crd(i, (128, 64)), A.idx2crd(j, (64, 128))
        assert d((row, col)) == big((row[0] + 128 * row[1], col[0] + 64 * col[1]))


def test_divides_and_products_inherit_the_refusal() -> None:
    for op, a, b in [("logical_divide", "(6,2):(8,2)", "4:4"), ("zipped_divide", "(6,2):(8,2)", "4:4"),
                     ("tiled_divide", "(6,2):(8,2)", "4:4"), ("flat_divide", "(6,2):(8,2)", "4:4")]:
        with pytest.raises(A.LayoutError, match="CuTe would print"):
            getattr(A, op)(A.parse(a), A.parse(b))


def test_random_compositions_and_divides_are_never_wrong() -> None:
    rng = random.Random(20261201)
    refused = answered = 0
    for _ in range(RANDOM_CASES):
        a, b = rand_layout(rng), rand_layout(rng)
        try:
            r = A.composition(a, b)
        except A.LayoutError as e:
            refused += 1
            if "CuTe would print" in str(e):
                i, got = (int(x) for x in re.search(r"at i = (\d+) that gives (-?\d+)", str(e)).groups())
                assert at(b, i) < A.size(a) and got != at(a, at(b, i))
            continue
        answered += 1
        assert is_a_o_b(a, b, r), f"composition({a}, {b}) = {r}"
        if A.size(a) % max(1, A.size(b)) == 0 and A.cosize(b) <= A.size(a):
            try:
                d = A.logical_divide(a, b)
            except A.LayoutError:
                continue
            full = A.make_layout(b, A.complement(b, A.coalesce(a).shape))
            assert is_a_o_b(a, full, d), f"logical_divide({a}, {b}) = {d}"
    assert answered > RANDOM_CASES // 3 and refused > 0


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.integers(0, 2**32))
def test_property_composition_is_a_o_b(seed: int) -> None:
    rng = random.Random(seed)
    a, b = rand_layout(rng), rand_layout(rng)
    try:
        r = A.composition(a, b)
    except A.LayoutError:
        return
    assert is_a_o_b(a, b, r)


@SETTINGS
@given(st.integers(0, 2**32))
def test_property_products_keep_their_definition(seed: int) -> None:
    rng = random.Random(seed)
    a, b = rand_layout(rng, 2, False), rand_layout(rng, 2, False)
    try:
        r = A.logical_product(a, b)
    except A.LayoutError:
        return
    # the product computes with CuTe's complement, also where that is smaller than complement's own post-condition
    # allows (asked for by itself, such a complement is refused)
    comp = checks.cute_would_print(A.complement, a, A.size(a) * A.cosize(b))
    assert is_a_o_b(comp, b, r[1])


@pytest.mark.parametrize(("op", "args", "cute"), [
    # CuTe C++'s printed answers (tests/oracle/data/corpus_s*.json): each is not the op's function
    ("tiled_divide", ("(2,6,6):(1,12,2)", "8:1"), "((2,4),2,6):((1,12),48,2)"),
    ("raked_product", ("16:6", "(4,2):(1,4)"), "((4,16),(2,1)):((1,6),(4,0))"),
    ("tile_to_shape", ("(2,4):(4,0)", (4, 12), (2, 1)), "((2,2),(4,3)):((4,3),(0,1))"),
    ("composition", ("((8,3),3,(2)):((8,24),24,(0))", (A.parse("((6,4)):((1,6))"), None, None)),
     "(((6,(2,2))),3,(2)):(((8,(48,24))),24,(0))"),
    ("flat_divide", ("Sw<1,1,5> o 64 o (8,64):(64,1)", "2:3"), "Sw<1,1,5> o 64 o (2,3,(2,64)):(192,64,(384,1))"),
])
def test_refusals_show_what_cute_prints_for_the_whole_op(op: str, args: tuple, cute: str) -> None:
    parsed = [A.parse(x) if isinstance(x, str) else x for x in args]
    with pytest.raises(A.LayoutError) as e:
        getattr(A, op)(*parsed)
    msg = str(e.value)
    assert msg.endswith(f" = {cute}") and f"CuTe would print {op}(" in msg
    with pytest.raises(A.LayoutError) as again:  # the derivation refuses with the same text
        A.explain(op, *parsed)
    assert str(again.value) == msg


def test_a_big_b_gets_a_counterexample_not_a_could_not_confirm() -> None:
    """size(B) over the 2^16-point sample: before refusing, every point of B (up to 2^20) is checked, so a refusal
    names a counterexample (this one was "could not confirm") and a composition that is A o B is answered."""
    a, b = A.parse("(384,3):(1,768)"), A.parse("(128,64,128):(12,1,1)")
    with pytest.raises(A.LayoutError) as e:
        A.composition(a, b)
    i, got = (int(x) for x in re.search(r"at i = (\d+) that gives (-?\d+)", str(e.value)).groups())
    assert at(b, i) < A.size(a) and got != at(a, at(b, i))
