"""``Layout o (Sw o 0 o L)``: CuTe writes it ``(A o Sw) o L = Sw' o 0 o (A o L)``, where ``A o Sw`` is ``Sw' o A``
only on A's domain. A swizzle with a negative shift brings some offsets of L past ``size(A)`` back inside A, and
there CuTe's print is not ``A o B``: refused with the condition, the counterexample and what CuTe prints; every
other case is still answered, and exact."""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra.core.checks import cute_would_print

P = A.parse


def _brute(a: A.Layout, b, r) -> tuple | None:
    n = A.size(a)
    for i in range(A.size(b)):
        x = int(b(i))
        if 0 <= x < n and int(r(i)) != int(a(x)):
            return i, x
    return None


@pytest.mark.parametrize(("a", "b", "i"), [
    ("(2,4):(4,1)", "Sw<3,0,-5> o 0 o 256:1", 33),
    ("(2,4):(4,1)", "Sw<3,0,-5> o 0 o (2,(1,2,8),8):(0,(-5,1,2),16)", 66),
    ("8:1", "Sw<2,1,-3> o 0 o 64:1", None),
])
def test_a_swizzle_that_brings_offsets_back_into_a_is_refused(a: str, b: str, i: int | None) -> None:
    a_, b_ = P(a), P(b)
    cute = cute_would_print(A.composition.__wrapped__, a_, b_)
    wrong = _brute(a_, b_, cute)
    if i is None:  # an identity A: A o Sw is Sw itself everywhere, CuTe's print is right
        assert wrong is None
        assert str(A.composition(a_, b_)) == str(cute)
        return
    assert wrong is not None and wrong[0] <= i
    with pytest.raises(A.LayoutError) as err:
        A.composition(a_, b_)
    text = str(err.value)
    assert "swizzle domain condition" in text and f"CuTe would print {cute}" in text
    j = int(text.split("at i = ")[1].split(" ")[0])
    assert int(cute(j)) != int(a_(int(b_(j))))


def test_a_part_that_is_wrong_only_outside_a_does_not_refuse_the_whole() -> None:
    """``(2,2):(2,1) o Sw<3,1,-4>`` is not a layout (at 1), but ``Sw<3,1,-4> o 8:2`` sends every i > 0 past A: CuTe's
    print of the whole is A o B, and is the answer."""
    a, b = P("(2,2):(2,1)"), P("Sw<3,1,-4> o 0 o 8:2")
    with pytest.raises(A.LayoutError):
        A.composition(a, b.layout_a)
    r = A.composition(a, b)
    assert str(r) == "Sw<3,0,-4> o 0 o 8:1" and _brute(a, b, r) is None


def test_through_the_api_and_the_divides(client) -> None:
    r = client.post("/api/algebra", json={"op": "composition", "args": ["(2,4):(4,1)", "Sw<3,0,-5> o 0 o 256:1"]})
    assert r.status_code == 422 and "swizzle domain condition" in r.json()["detail"]
    r = client.post("/api/algebra", json={"op": "composition", "args": ["(2,4):(4,1)", "Sw<3,0,5> o 0 o 256:1"]})
    assert r.status_code == 200 and r.json()["result"] == "Sw<3,0,4> o 0 o (2,128):(4,1)"


def test_answers_that_stand_are_exact_on_fresh_inputs() -> None:
    rng = random.Random(17050)
    answered = refused = 0
    for _ in range(150):
        b_bits, m = rng.randint(1, 3), rng.randint(0, 3)
        sw = A.Swizzle(b_bits, m, rng.choice((1, -1)) * rng.randint(b_bits, b_bits + 3))
        inner = A.Layout(1 << rng.randint(1, 8), rng.choice((1, 2)))
        shape = [rng.choice((2, 4)) for _ in range(rng.randint(1, 3))]
        stride, step = [], 1
        for s in shape:
            stride.append(step)
            step *= s
        rng.shuffle(stride)
        a = A.Layout(tuple(shape), tuple(stride))
        b = A.ComposedLayout(sw, 0, inner)
        try:
            r = A.composition(a, b)
        except A.LayoutError as err:
            refused += 1
            if "CuTe would print" in str(err):  # CuTe's print is wrong somewhere: the brute force agrees
                assert _brute(a, b, cute_would_print(A.composition.__wrapped__, a, b)) is not None, (a, b, str(err))
            continue
        answered += 1
        assert _brute(a, b, r) is None, (a, b, r)
    assert answered > 20 and refused > 5
