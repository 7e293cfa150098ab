"""The never-wrong layer is one post-condition check per op (``algebra.core.checks.POST``), applied to each op's result
in one place (``algebra.core.memo``): CuTe's prints that break CuTe's own documented post-conditions are refused, with
the condition, a counterexample and what CuTe prints; the examples in the core's docstrings run as tests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import random

import pytest

import algebra as A
import algebra.core
import algebra.teach
from algebra.core import checks, memo

CORE_MODULES = sorted(f"core.{m.name}" for m in pkgutil.iter_modules(algebra.core.__path__)) + sorted(
    f"teach.{m.name}" for m in pkgutil.iter_modules(algebra.teach.__path__))


@pytest.mark.parametrize("name", CORE_MODULES)
def test_the_examples_in_the_cores_docstrings_hold(name):
    mod = importlib.import_module(f"algebra.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


def _refusal(op, *args):
    parsed = [A.parse(x) if isinstance(x, str) else x for x in args]
    with pytest.raises(A.LayoutError) as e:
        getattr(A, op)(*parsed)
    return str(e.value)


def test_a_left_inverse_without_the_quasi_inverse_property_is_refused():
    msg = _refusal("left_inverse", "(6,3):(2,1)")
    assert "quasi-inverse condition" in msg and "CuTe would print (2,6):(6,1)" in msg
    assert "L(17) = 12, R(12) = 6, but L(6) = 1" in msg
    assert str(A.left_inverse(A.parse("(4,2):(2,1)"))) == "(2,4):(4,1)"  # injective: the inverse itself


def test_a_complement_smaller_than_its_post_condition_is_refused():
    msg = _refusal("complement", "(8,24):(9,97)", 2298)
    assert "complement size condition" in msg and "CuTe would print 9:1" in msg and "offset 72 < 2298" in msg
    assert str(A.complement(A.parse("(4,2):(1,8)"), 64)) == "(2,4):(4,16)"


def test_a_swizzled_right_inverse_outside_the_domain_is_refused():
    msg = _refusal("right_inverse", "Sw<2,0,-7> o 4:1")
    assert "right inverse condition" in msg and "R(1) = 129, outside the domain of L" in msg
    assert "CuTe would print Sw<2,0,-7> o 0 o 4:1" in msg


def test_a_complement_inside_a_product_is_cutes():
    """A product computes on with CuTe's complement (its last mode goes on past its size), which is refused only
    when asked for by itself; the cache keeps both answers apart."""
    a, b = A.parse("(2,3):(4,1)"), A.parse("67:1")
    memo.clear_caches()
    for _ in range(2):
        prod = A.logical_product(a, b)
        assert str(prod[1]) == str(A.composition(checks.cute_would_print(A.complement, a, 402), b))
        with pytest.raises(A.LayoutError, match="complement size condition"):
            A.complement(a, 402)


def _holds(op, layout, r):
    n = A.size(layout)
    if op == "right_inverse":
        return all(0 <= r(i) < n and layout(r(i)) == i for i in range(A.size(r)))
    return all(0 <= r(layout(i)) < n and layout(r(layout(i))) == layout(i) for i in range(n))


@pytest.mark.parametrize("op", ["left_inverse", "right_inverse"])
def test_swizzled_inverses_are_the_function_or_refused(op):
    rng = random.Random(30)
    answered = 0
    for _ in range(150):
        b = rng.randint(1, 3)
        sw = A.Swizzle(b, rng.randint(0, 3), rng.choice([1, -1]) * rng.randint(b, 5))
        r, c = 2 ** rng.randint(1, 5), 2 ** rng.randint(1, 5)
        lay = A.composition(sw, A.Layout((r, c), rng.choice([(c, 1), (1, r)])))
        try:
            res = getattr(A, op)(lay)
        except A.LayoutError as e:
            assert "CuTe would print" in str(e) or "does not represent" in str(e) or "CuTe:" in str(e), str(e)
            continue
        answered += 1
        assert _holds(op, lay, res), (op, str(lay), str(res))
    assert answered > 50


def _swizzled_tile(rng):
    b = rng.randint(1, 3)
    sw = A.Swizzle(b, rng.randint(0, 3), rng.randint(b, 4))
    r, c = 2 ** rng.randint(2, 5), 2 ** rng.randint(2, 5)
    inner = A.Layout((r, c), rng.choice([(c, 1), (1, r)]))
    return A.composition(sw, inner)


def _bits(x):
    return x if isinstance(x, int) else x.value


def test_f2_layouts_of_swizzled_tiles_satisfy_the_post_conditions():
    """A swizzled tile written with F2 strides is the same function; composition, complement and both inverses on it
    satisfy their post-conditions exactly (no refusal)."""
    rng = random.Random(303)
    for _ in range(60):
        tile = _swizzled_tile(rng)
        f = A.as_f2_layout(tile)
        n = A.size(f)
        assert all(_bits(f(i)) == tile(i) for i in range(n)), str(tile)
        r = A.right_inverse(f)
        assert all(_bits(f(_bits(r(i)))) == i for i in range(A.size(r))), (str(f), str(r))
        left = A.left_inverse(f)
        assert all(_bits(left(_bits(f(i)))) == i for i in range(n)), (str(f), str(left))
        half = A.Layout((n // 4, 2), (1, n // 2))  # a tile of the tile: the first quarter and the second half
        comp = A.composition(f, half)
        assert all(comp(i) == f(half(i)) for i in range(A.size(half)))
        cot = 4 * n
        comp_f = A.complement(f, cot)
        seen = {_bits(f(j)) ^ _bits(comp_f(i)) for i in range(A.size(comp_f)) for j in range(n)}
        assert seen == set(range(cot)) and A.size(comp_f) * n == cot
        div = A.logical_divide(f, A.Layout(n // 2))
        assert all(div(i) == f(i) for i in range(n))
        twice = A.composition(f, f)  # an F2 tile read through an F2 tile: bit by bit
        assert all(twice(i) == f(_bits(f(i))) for i in range(n) if _bits(f(i)) < n)


def test_layout_add_and_the_greatest_common_domain():
    assert str(A.greatest_common_domain(A.parse("(6,35):(35,1)"), (15, 14))) == "(3,7):(1,30)"
    assert str(A.layout_add(A.parse("(2,(3,4)):(12,(4,1))"), A.parse("(6,4):(4,1)"))) == "(2,3,4):(16,12,2)"
    assert str(A.layout_add(A.parse("16:F1"), A.parse("(4,4):(F2,F8)"))) == "16:F3"
    with pytest.raises(A.LayoutError, match="common domain condition"):
        A.layout_add(A.parse("(5,3):(1,10)"), A.parse("(3,5):(1,6)"))
    with pytest.raises(A.LayoutError, match="size condition"):
        A.layout_add(A.parse("6:1"), A.parse("8:1"))
    rng = random.Random(7)
    for _ in range(100):
        shape = tuple(rng.choice((2, 3, 4)) for _ in range(rng.randint(1, 3)))
        a, b = A.Layout(shape), A.make_layout_row_major(shape)
        r = A.layout_add(a, b)
        assert all(r(i) == a(i) + b(i) for i in range(A.size(a)))
    assert str(A.parse(str(A.parse("(8,8):(F1,F9)")))) == "(8,8):(F1,F9)"


def test_layout_add_of_xor_and_integer_offsets_is_their_integer_sum_or_refused():
    """An F2 (XOR) layout's offsets are its bits, an int layout's are integers: their sum is the integer sum. Where XOR
    and integer addition differ (a carry), no answer stands: refused with the point, never the XOR of the two."""
    with pytest.raises(A.LayoutError, match=r"sum condition.* at i = 1 that is 0, but A\(1\) \+ B\(1\) = 2"):
        A.layout_add(A.parse("8:F1"), A.parse("8:1"))  # was 8:F0: offsets 0,0,...,0 for 0+0, 1+1, ..., 7+7
    with pytest.raises(A.LayoutError, match="sum condition"):
        A.layout_add(A.parse("(8,8):(8,1)"), A.parse("(8,8):(F1,F9)"))  # was (8,8):(F9,F8)
    assert str(A.layout_add(A.parse("(8,8):(F1,F9)"), A.parse("64:0"))) == "(8,8):(F1,F9)"
    assert str(A.layout_add(A.parse("(4,4):(F1,F2)"), A.parse("(4,4):(0,16)"))) == "(4,4):(F1,F18)"  # no carry
    rng = random.Random(14530)
    answered = 0
    for _ in range(60):
        f = A.as_f2_layout(_swizzled_tile(rng))
        n = A.size(f)
        other = rng.choice([A.Layout(n, rng.choice([0, 1, n])), A.make_layout_row_major(A.shape(f))])
        for a, b in ((f, other), (other, f)):
            try:
                r = A.layout_add(a, b)
            except A.LayoutError as e:
                assert "sum condition" in str(e), str(e)
                continue
            answered += 1
            assert all(_bits(r(i)) == _bits(a(i)) + _bits(b(i)) for i in range(n)), (str(a), str(b), str(r))
    assert answered > 10


def test_layout_add_of_a_swizzled_layout_reads_its_f2_strides_or_names_the_argument():
    sw = A.parse("Sw<3,0,3> o (8,8):(1,8)")
    f2 = A.parse("(8,8):(F0,F1)")
    assert str(A.layout_add(sw, f2)) == str(A.layout_add(A.as_f2_layout(sw), f2)) == "64:F1"
    for bad, why in (("Sw<3,0,3> o 8 o (8,8):(1,8)", "offset 8"), ("(8,64):(64,1) o 0 o Sw<3,3,3>", "layout_add: A = "),
                     ("Sw<3,3,3>", "layout_add: A = Sw<3,3,3> is a swizzle")):
        with pytest.raises(A.LayoutError, match=why) as e:
            A.layout_add(A.parse(bad), A.Layout(64 if bad.startswith("Sw<3,0") else 512))
        assert "ComposedLayout(" not in str(e.value) and "Swizzle(" not in str(e.value)


def test_layout_add_over_the_point_cap_is_proven_on_the_chain_of_leaf_starts():
    """Int or basis strides are linear on each step between consecutive leaf starts of A, B and R when those starts
    divide one another, so R(i) == A(i) + B(i) holds everywhere once it holds at them: no refusal over the cap
    (an 8192 x 8192 sum was refused, "2^26 points to check one by one")."""
    a, b = A.parse("(8192,8192):(1,8192)"), A.parse("(8192,8192):(8192,1)")
    assert str(A.layout_add(a, b)) == "(8192,8192):(8193,8193)"
    assert str(A.layout_add(A.parse("(1073741824,4):(1,1073741824)"), 4294967296)) == "4294967296:2"
    a, b = A.parse("(4096,4096):(1@0,1@1)"), A.parse("(4096,4096):(0,2@0)")
    r = A.layout_add(a, b)
    assert all(r(i) == a(i) + b(i) for i in (0, 1, 4095, 4096, 4097, 12345678, 4096 * 4096 - 1))
    with pytest.raises(A.LayoutError, match="over the 1,048,576-point cap"):  # F2 strides: not linear over the ints
        A.layout_add(A.Layout((3, 1 << 20), (A.F2(1), A.F2(4))), A.Layout((3, 1 << 20), (A.F2(2), A.F2(8))))


def _big(n: int) -> int:
    """n with its primes 2, 3, 5, 7 replaced by primes past 2^16 (divisibility, gcd and lcm kept)."""
    out = 1
    for small, large in ((2, 65537), (3, 65539), (5, 65543), (7, 65551)):
        while n % small == 0:
            n, out = n // small, out * large
    assert n == 1
    return out


def test_the_greatest_common_domain_of_shapes_with_large_prime_factors():
    """The walk's next common start did not see a start made of two primes past 2^16 (factored by trial division up to
    2^16): (65537,2,65539) and (2,65537,65539) gave (1):(0). The domain depends on divisibility only, so the same
    shapes with small primes give it."""
    assert str(A.greatest_common_domain((65537, 2, 65539), (2, 65537, 65539))) == "(65539):(131074)"
    rng = random.Random(14560)
    for _ in range(200):
        sa, sb = (tuple(rng.choice((1, 2, 3, 4, 5, 6, 7, 10, 14, 15)) for _ in range(rng.randint(1, 3)))
                  for _ in range(2))
        small = A.greatest_common_domain(sa, sb)
        big = A.greatest_common_domain(tuple(map(_big, sa)), tuple(map(_big, sb)))
        want = (tuple(map(_big, A.shape(small))), tuple(_big(d) if d else 0 for d in A.stride(small)))
        assert (A.shape(big), A.stride(big)) == want, (sa, sb, str(small), str(big))


def _modules_run(fn, *args):
    mods = set()

    def prof(frame, event, arg):
        if event == "call" and "/algebra/" in frame.f_code.co_filename:
            mods.add(frame.f_code.co_filename.split("/algebra/")[1])

    import sys
    sys.setprofile(prof)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return mods


@pytest.mark.parametrize(("a", "b"), [("(4,8):(1,16)", "(2,4):(1,8)"), ("(4,(2,8)):(2,(1,16))", "((2,2),4):((1,4),8)"),
                                      ("(6,2):(8,2)", "2:4"), ("(3,(4,2)):(1,(3,12))", "(3,2):(4,1)")])
def test_composition_of_two_plain_layouts_runs_in_at_most_five_modules(a, b):
    """The op, its cache, the layout, the mode arithmetic and the never-wrong layer: no fast path beside them."""
    la, lb = A.parse(a), A.parse(b)
    memo.clear_caches()
    mods = _modules_run(A.composition, la, lb)
    assert len(mods) <= 5, sorted(mods)
    assert _modules_run(A.composition, la, lb) <= mods  # from the cache: no more
