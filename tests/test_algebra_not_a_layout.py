"""Negative strides: CuTe's answers with a shape <= 0 are refused, and divisions by zero name their mode; cosize is
CuTe's.

CuTe's integer arithmetic goes on through negative strides and prints layouts such as ``(-1,0):(1,-3)``: no
coordinate indexes a shape <= 0, and ``parse(str(x))`` rejects them. The algebra refuses such a result of the op
that was asked for (``algebra.core.checks.not_a_layout``: the condition, the mode, what CuTe prints), while an op
that computes through one (a product over a negative-stride block) still gives CuTe's answer.
"""

from __future__ import annotations

import random
import re

import pytest

import algebra as A

P = A.parse

# (op, args, CuTe's print, the mode and shape the refusal names); CuTe's prints are those of tests/oracle/data
# (CuTe C++ 4.2) and of the audit against CuTe C++.
NOT_A_LAYOUT = [
    ("complement", ("(3):(-1)", 2), "(-1,0):(1,-3)", "mode 0 of the result the shape -1"),
    ("left_inverse", ("6:-1",), "(-1,6):(0,1)", "mode 0 of the result the shape -1"),
    ("logical_divide", ("16:-1", "2:-1"), "(2,(-1,-6)):(1,(-1,2))", "mode 1.0 of the result the shape -1"),
    ("tiled_product", ("6:-1", "4:1"), "(6,-1,-4):(-1,1,-6)", "mode 1 of the result the shape -1"),
    ("complement", ("((6)):((-8))", 64), "(-8,0):(1,-48)", "mode 0 of the result the shape -8"),
]


def _args(args: tuple) -> list:
    return [P(a) if isinstance(a, str) else a for a in args]


@pytest.mark.parametrize(("op", "args", "cute", "where"), NOT_A_LAYOUT)
def test_a_result_with_a_shape_below_one_is_refused_with_what_cute_prints(op, args, cute, where):
    call = f"{op}({', '.join(str(a) for a in args)})"
    for _ in range(2):  # the second call answers from the cache: the same refusal
        with pytest.raises(A.LayoutError) as e:
            getattr(A, op)(*_args(args))
        msg = str(e.value)
        assert msg.startswith(f"{call} is not a layout: positive shape condition"), msg
        assert where in msg and msg.endswith(f"CuTe would print {call} = {cute}"), msg
    with pytest.raises(A.LayoutError) as e:  # what CuTe prints is indeed not a layout one can write
        P(cute)
    assert "positive" in str(e.value)


@pytest.mark.parametrize(("op", "args", "cute", "where"), NOT_A_LAYOUT[:3])
def test_explain_refuses_the_same_way(op, args, cute, where):
    with pytest.raises(A.LayoutError) as e:
        A.explain(op, *(str(a) for a in args))
    assert f"CuTe would print {op}(" in str(e.value) and str(e.value).endswith(cute)
    last = e.value.steps[-1]
    assert last["kind"] == "error" and "positive shape condition" in last["text"]


def test_an_op_computing_through_such_a_layout_still_gives_cutes_answer():
    # the complement inside the product has a negative shape; the product itself is CuTe's (a positive shape)
    block = P("(4,(2)):(0,(-6))")
    with pytest.raises(A.LayoutError, match="positive shape condition"):
        A.complement(block, 16)
    assert str(A.blocked_product(block, P("2:0"))) == "((4,2),((2),1)):((0,0),((-6),0))"


def test_every_answer_parses_back():
    """What the ops answer for negative strides is a layout again, ``parse(str(x)) == x``; the rest is refused."""
    rng = random.Random(20)
    answered = refused = 0
    for _ in range(300):
        r = rng.choice([1, 2, 3])
        a = A.Layout(tuple(rng.choice([1, 2, 3, 4, 6, 8]) for _ in range(r)),
                     tuple(rng.choice([-16, -6, -4, -2, -1, 1, 2, 3, 8, 24]) for _ in range(r)))
        t = A.Layout(rng.choice([1, 2, 4]), rng.choice([-2, -1, 1, 2]))
        for op, extra in [("complement", (rng.choice([16, 64, 96]),)), ("left_inverse", ()), ("right_inverse", ()),
                          ("logical_divide", (t,)), ("logical_product", (t,)), ("zipped_divide", (t,))]:
            try:
                x = getattr(A, op)(a, *extra)
            except A.LayoutError:
                refused += 1
                continue
            answered += 1
            assert P(str(x)) == x, (op, str(a), str(x))
    assert answered > 500 and refused > 50, (answered, refused)


@pytest.mark.parametrize(("op", "args", "mode"), [
    ("logical_divide", ("(12,(3,1)):(8,(100,1000))", "2:-2"), "mode 1 (3)"),
    ("complement", ("(8):(-4)", (32, 2)), "mode 1 (2)"),
])
def test_a_division_by_zero_names_the_mode_and_the_condition(op, args, mode):
    with pytest.raises(A.LayoutError) as e:
        getattr(A, op)(*_args(args))
    msg = str(e.value)
    assert msg != "division by zero" and "division by zero" in msg
    assert mode in msg and "ceil_div" in msg and "SIGFPE" in msg, msg
    assert re.search(r"extent -\d+ \(its stride is negative\)", msg), msg


def test_cosize_is_cutes():
    """CuTe C++ 4.2 (``cosize = size(coshape)``, ``coshape = inner_product(shape - 1, abs(stride)) + 1``) and the
    CuTe DSL give 32 for (4,8):(-1,4); pycute's ``L(size - 1) + 1`` would be 26 (tests/oracle/data/corpus_hand)."""
    L = P("(4,8):(-1,4)")
    assert A.cosize(L) == 32 == sum((s - 1) * abs(d) for s, d in [(4, -1), (8, 4)]) + 1
    assert L(A.size(L) - 1) + 1 == 26  # not CuTe's cosize
    assert A.cosize(P("(3,(2,4)):(-2,(5,-7))")) == 31


def test_the_layout_api_shows_cutes_cosize(client):
    r = client.post("/api/layout", json={"layout": "(4,8):(-1,4)"})
    assert r.status_code == 200 and r.json()["cosize"] == 32
    assert r.json()["offset_range"] == [-3, 28] and r.json()["last_plus_one"] == 26  # both named, side by side
    page = client.get("/", params={"layout": "(4,8):(-1,4)"}).text
    assert 'id="cosize-note"' in page and "from -3 to\n28" in page and "gives 26" in page
    plain = client.post("/api/layout", json={"layout": "(4,8):(1,4)"}).json()
    assert plain["offset_range"] == [0, 31] and plain["last_plus_one"] == 32
    assert 'id="cosize-note"' not in client.get("/", params={"layout": "(4,8):(1,4)"}).text


def test_the_cells_by_offset_strip_spans_the_offset_range(client):
    """With a negative stride the strip runs from the lowest offset to the highest: every cell is in it once, and no
    box past the highest offset is shown as a hole."""
    from app.services.layouts import cells_by_offset, describe_layout

    for text, lo, hi in (("(4,8):(-1,4)", -3, 28), ("(3,4):(-1,-4)", -14, 0), ("(4,8):(1,4)", 0, 31)):
        strip = cells_by_offset(describe_layout(text, for_grid=True))
        assert [v for v, _, _ in strip] == list(range(lo, hi + 1)), text
        lay = P(text)
        hit = {lay(i) for i in range(A.size(lay))}
        assert all((n > 0) == (v in hit) for v, _, n in strip) and sum(n for _, _, n in strip) == A.size(lay)
    page = client.get("/", params={"layout": "(4,8):(-1,4)"}).text
    assert 'title="offset -3: 1 cell">-3<br>3,0' in page and 'title="offset 29"' not in page


def test_complement_of_a_negative_stride_says_why_cute_refuses():
    """CuTe's complement rejects (2,3):(-3,1) with its non-injective static_assert (1 / -6 is 0 in its fold), though
    the layout is injective: the refusal keeps CuTe's words and names the negative stride and the division."""
    with pytest.raises(A.LayoutError) as err:
        A.complement(P("(2,3):(-3,1)"), 12)
    msg = str(err.value)
    assert msg.startswith("Non-injective Layout detected in complement") and "negative stride" in msg
    assert "1 / -6 is 0" in msg
    with pytest.raises(A.LayoutError, match="has overlapping modes$"):
        A.complement(P("(2,3):(3,3)"), 12)


def test_the_complement_refusal_names_the_least_offset_no_sum_reaches():
    """The hole named by a complement size refusal is the least offset below the cotarget that no ``L(j) + R(i)``
    reaches, also with negative offsets and a hole past the first windows of the search."""
    from algebra.core.checks import _first_hole

    rng = random.Random(11)
    for _ in range(3000):
        modes = [(rng.randint(1, 5), rng.randint(-60, 300)) for _ in range(rng.randint(0, 6))]
        cot = rng.randint(1, 1200)
        sums = {0}
        for size, stride in modes:  # every L(j) + R(i): the sums over all modes of L and R
            sums = {x + k * stride for x in sums for k in range(size)}
        assert _first_hole(modes, cot) == next((x for x in range(cot) if x not in sums), None), (modes, cot)
    with pytest.raises(A.LayoutError, match=r"768:1 here, of size 768; offset 12288 < 1043713 is L\(j\) \+ R\(i\)"):
        A.complement(A.parse("(16,64):(768,16384)"))


def test_a_divide_of_two_to_the_24_points_is_refused_at_its_first_wrong_point():
    """The composition check counts the points of B inside A before it builds them: a divide of 2^24 points is
    settled on its first wrong point (it built millions of points before)."""
    want = r"stride divisibility condition.*at i = 384 that gives 756, but A\(B\(384\)\) = A\(384\) = 768"
    with pytest.raises(A.LayoutError, match=want):
        A.zipped_divide(A.parse("((256,64,1),1024):((6,0,1),32)"), 3)
