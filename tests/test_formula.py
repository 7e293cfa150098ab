"""Index formulas of layouts (seed 002's whiteboard drill) and grading typed formulas."""

from __future__ import annotations

import builtins
import random

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.layout import make_identity_layout
from algebra.teach.formula import (
    SymLayout,
    evaluate,
    evaluate_formula,
    formula,
    natural_names,
    parse_formula,
    parse_symbolic,
)

P = A.parse


@pytest.mark.parametrize(("layout", "want"), [
    ("(4,2):(1,4)", "i + j*4"),                       # part 1, column-major
    ("(4,2):(2,1)", "i*2 + j"),                       # part 2, row-major
    ("(2,(2,2)):(4,(2,1))", "i*4 + j*2 + k"),         # part 3
    ("(3,(2,3)):(3,(12,1))", "i*3 + j*12 + k"),       # part 4
    ("(8,4):(1,8)", "i + j*8"),                       # part 5, the transposed view
    ("((4,4),(2,2)):((8,1),(32,4))", "i*8 + j + k*32 + l*4"),   # part 6, the tiled view
    ("(4,8):(0,1)", "j"),
    ("8:-2", "-i*2"),
    ("(4,8):(1,-4)", "i - j*4"),
    ("1:0", "0"),
])
def test_seed_002_formulas(layout, want):
    assert formula(P(layout)) == want


def test_names():
    assert natural_names((3, (2, 3))) == ("i", ("j", "k"))
    assert natural_names(8) == "i"
    assert natural_names(tuple([2] * 11))[-1] == "i10"
    assert formula(P("(3,(2,3)):(3,(12,1))"), names="rck") == "r*3 + c*12 + k"
    assert formula(P("(3,(2,3)):(3,(12,1))"), names=("row", ("a", "b"))) == "row*3 + a*12 + b"
    assert formula(P("(4,8):(8,1)"), names="m n") == "m*8 + n"
    with pytest.raises(LayoutError):
        formula(P("(4,8):(8,1)"), names="m")


def test_basis_and_swizzle_formulas():
    assert formula(make_identity_layout((4, (2, 3)))) == "(i, (j, k))"
    assert formula(A.Layout((4, 8), (A.arith.E(1), A.arith.E(0)))) == "(j, i)"
    assert formula(P("Sw<3,4,3> o 0 o (8,64):(64,1)")) == "(i*64 + j) ^ (((i*64 + j) & 896) >> 3)"


def test_symbolic_layouts():
    sym = parse_symbolic("(4,(2,M)):(2*M,(1,N+1))")
    assert isinstance(sym, SymLayout) and str(sym) == "(4,(2,M)):(2*M,(1,N+1))"
    assert sym.symbols() == ["M", "N"]
    assert sym.bind({"M": 3, "N": 5}) == A.Layout((4, (2, 3)), (6, (1, 6)))
    assert formula("(4,8):(N,1)") == "i*N + j"
    assert formula(sym) == "i*2*M + j + k*(N+1)"
    for bad in ("(4,8)", "(4,8):(N)", "(4,8):(N,1", "(4,8):(N$,1)"):
        with pytest.raises(LayoutError):
            parse_symbolic(bad)


def test_parser_is_safe_and_complete():
    env = {"i": 3, "j": 5}
    assert evaluate(parse_formula("3i + 2(j+1)"), env) == 21
    assert evaluate(parse_formula("(i)(j)"), env) == 15
    assert evaluate(parse_formula("-i*2 + -(j)"), env) == -11
    assert evaluate(parse_formula("i ^ j"), env) == 6
    assert evaluate(parse_formula("(j << 2) | (i & 1)"), env) == 21
    assert evaluate(parse_formula("j // 2 + j % 2"), env) == 3
    assert evaluate(parse_formula("offset = i × 4 − j"), env) == 7
    for bad in ("", "i +", "__import__('os')", "i ** 2", "i; j", "a.b", "(i", "i)", "1 / 2", "lambda: 0"):
        with pytest.raises(LayoutError):
            evaluate(parse_formula(bad), env)
    with pytest.raises(LayoutError, match="unknown name"):
        evaluate(parse_formula("q"), env)
    with pytest.raises(LayoutError, match="division by zero"):
        evaluate(parse_formula("i // (j - 5)"), env)
    with pytest.raises(LayoutError):
        parse_formula("+".join(["i"] * 3000))


def test_grading_by_enumeration():
    lay4 = P("(3,(2,3)):(3,(12,1))")
    assert evaluate_formula("i*3 + j*12 + k", lay4).correct
    assert evaluate_formula("k + 12j + 3i", lay4).correct
    ok = evaluate_formula("3*i + 12*j + k", "(3,(2,3)):(3,(12,1))")
    assert ok.correct and ok.checked == 18
    bad = evaluate_formula("3*i + 12*j", lay4)
    assert not bad.correct and bad.mismatches[0] == {"coord": "(0,(0,1))", "expected": "1", "got": "0"}
    assert evaluate_formula("r*8 + c", P("(4,8):(8,1)"), names="rc").correct
    # equal on the domain counts as equal: a size-1 mode's coordinate is always 0
    assert evaluate_formula("i", P("(4,1):(1,7)")).correct
    sw = P("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert evaluate_formula("(i*64 + j) ^ (((i*64 + j) >> 3) & 112)", sw).correct
    with pytest.raises(LayoutError):
        evaluate_formula("i", A.Layout((1 << 10, 1 << 8)))
    with pytest.raises(LayoutError):
        evaluate_formula("i", make_identity_layout((4, 8)))


def test_grading_symbolic_strides():
    check = evaluate_formula("i*N + j", "(4,8):(N,1)")
    assert check.correct and check.checked == 32
    assert evaluate_formula("j + N i", "(4,8):(N,1)").correct
    wrong = evaluate_formula("i*N + 2j", "(4,8):(N,1)")
    assert not wrong.correct
    assert evaluate_formula("i*N + j", "(4,8):(N,1)", values={"N": 16}).correct
    assert evaluate_formula("i*(N+1) + j", "(M,8):(N+1,1)", values={"N": 16, "M": 3}).correct
    with pytest.raises(LayoutError, match="give values"):
        evaluate_formula("i*N + j", "(M,8):(N,1)")


def test_grading_symbolic_without_sympy(monkeypatch):
    real_import = builtins.__import__

    def no_sympy(name, *args, **kwargs):
        if name == "sympy":
            raise ImportError("no sympy")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sympy)
    ok = evaluate_formula("i*N + j", "(4,8):(N,1)")
    assert ok.correct and ok.method == "sampled"
    bad = evaluate_formula("i*N + j + 1", "(4,8):(N,1)")
    assert not bad.correct and "values" in bad.mismatches[0]


def test_random_formulas_evaluate_to_the_layout():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 4)
        shape = tuple(rng.choice((1, 2, 3, 4)) for _ in range(n))
        stride = tuple(rng.choice((0, 1, 2, 5, -3, 16)) for _ in range(n))
        lay = A.Layout(shape, stride)
        assert evaluate_formula(formula(lay), lay).correct, str(lay)


def test_sampled_grading_catches_parity_tricks(monkeypatch):
    """Without sympy, a formula that is only right for odd symbol values must still be rejected."""
    import builtins

    real = builtins.__import__

    def no_sympy(name, *args, **kwargs):
        if name == "sympy":
            raise ImportError("sympy hidden for this test")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sympy)
    from algebra.teach.formula import evaluate_formula

    assert evaluate_formula("i*N + j", "(4,8):(N,1)").correct
    assert not evaluate_formula("i*N + j + N%2 - 1", "(4,8):(N,1)").correct


@pytest.mark.parametrize("text, want", [
    ("(4,8):(1@0,0)", "(i)"),
    ("(2,(2,2)):(0,(1@0,1@1))", "(j, k)"),
    ("((1,2,1),1,1):((0,1@0,2@0),2@0,1@0)", None),
])
def test_a_zero_stride_beside_basis_strides_adds_no_term(text, want):
    """A broadcast (stride 0) mode beside basis strides is a layout CuTe builds (make_stride(E<0>{}, _0{})): its
    formula drops the zero term, and the explorer and /api/layout draw it instead of refusing it."""
    L = P(text)
    got = formula(L)
    if want is not None:
        assert got == want
    from app.services.layouts import describe_layout

    assert describe_layout(text).layout == str(L)
