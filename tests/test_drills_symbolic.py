"""The symbolic drill kind: keys agree with concrete layouts built from the question's words, answers are graded by
meaning with and without sympy, and equivalent or shape-changing answers are judged as the question fixes them."""

from __future__ import annotations

import builtins
import importlib.util
import re
from typing import Any

import pytest

import algebra as A
from algebra.teach.formula import evaluate, parse_formula
from app.drills.core import Drill, generate

SEEDS = range(200)
HAS_SYMPY = importlib.util.find_spec("sympy") is not None


def drills(prefix: str) -> list[Drill]:
    out = [generate("symbolic", s) for s in SEEDS]
    return [d for d in out if d.variant.startswith(prefix)]


def values(d: Drill) -> list[dict[str, int]]:
    """Admissible values chosen here, independently of the generator's: ld at or past its lead, sizes 3..9."""
    sym = A.parse_symbolic(d.data["layout"])
    out = []
    for m, n, b, pad in [(3, 5, 2, 0), (4, 4, 1, 7), (9, 2, 3, 50)]:
        vals = {"M": m, "N": n, "B": b}
        if d.data["ld"]:
            lead = d.data["lead"]
            vals[d.data["ld"]] = (vals[lead] if isinstance(lead, str) else lead) + pad
        out.append({k: vals[k] for k in sym.symbols()})
    return out


def concrete(d: Drill, vals: dict[str, int]) -> Any:
    """The matrix the words describe, built directly from the prompt's major order and the bound sizes."""
    sym = A.parse_symbolic(d.data["layout"]).bind(vals)
    m, n = A.size(sym[0]), A.size(sym[1])
    ld = vals.get(d.data["ld"])
    if "no padding" in d.prompt:
        ld = n if "row-major" in d.prompt else m
    return A.Layout((m, n), (ld, 1)) if "row-major" in d.prompt else A.Layout((m, n), (1, ld))


def same(a: Any, b: Any) -> bool:
    return A.size(a) == A.size(b) and all(a(i) == b(i) for i in range(A.size(a)))


def test_every_variant_is_generated() -> None:
    kinds = {generate("symbolic", s).variant for s in SEEDS}
    assert {"formula/matrix", "formula/hier", "formula/batched", "element/rc", "element/tile", "transpose/row",
            "transpose/column", "tiled/row", "tiled/column"} <= kinds


def test_formula_keys_evaluate_to_the_layout_and_match_the_words() -> None:
    for d in drills("formula"):
        sym = A.parse_symbolic(d.data["layout"])
        tree, names = parse_formula(d.expected), d.data["names"]
        for vals in values(d):
            lay = sym.bind(vals)
            for x in range(A.size(lay)):
                crd = A.idx2crd(x, lay.shape)
                assert evaluate(tree, {**vals, **dict(zip(names, A.flatten(crd), strict=True))}) == lay(x), d.prompt
            if d.variant == "formula/matrix":
                assert same(lay, concrete(d, vals)), d.prompt


def test_element_keys_are_the_matrix_offset() -> None:
    for d in drills("element"):
        r, c = d.data["coord"]
        if d.variant == "element/tile":
            i, j, ti, tj, tm, tn = map(int, re.search(r"element \((\d+),(\d+)\) of tile \((\d+),(\d+)\) when it is "
                                                      r"cut into (\d+)x(\d+)", d.prompt).groups())
            assert (r, c) == (ti * tm + i, tj * tn + j)
        for vals in values(d):
            assert evaluate(parse_formula(d.expected), vals) == concrete(d, vals)((r, c)), d.prompt


def test_view_keys_are_the_engine_composition_and_zipped_divide() -> None:
    for d in drills("transpose") + drills("tiled"):
        key = A.parse_symbolic(d.expected)
        for vals in values(d):
            mat = concrete(d, vals)
            m, n = A.size(mat[0]), A.size(mat[1])
            if d.variant.startswith("transpose"):
                want = A.composition(mat, A.Layout((n, m), (m, 1)))
            else:
                want = A.zipped_divide(mat, tuple(A.Layout(t) for t in d.data["tile"]))
            got = key.bind(vals)
            assert same(got, want) and A.shape(got) == A.shape(want), (d.prompt, str(got), str(want))


@pytest.fixture
def no_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import sympy`` fails, as on a machine without it."""
    real = builtins.__import__

    def fake(name: str, *args: Any, **kw: Any) -> Any:
        if name == "sympy" or name.startswith("sympy."):
            raise ImportError("no sympy here")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", fake)


WRONG = ["i*N + j", "i*ld + j + ld % 2", "i*(ld % 64) + j", "i*ld + j + 1", "j*ld + i"]
RIGHT = ["i*ld + j", "j + ld*i", "ld i + j", "offset(i,j) = (i*ld + j) mod (ld*M*N + 1)", "i*ld + j % ld"]


def ld_drill() -> Drill:
    """A formula drill over an M x N row-major matrix with leading dimension ld (symbolic sizes and stride)."""
    return next(d for d in drills("formula/matrix") if d.data["layout"] == "(M,N):(ld,1)")


def concrete_ld_drill() -> Drill:
    return next(d for d in drills("formula/hier") if d.data["ld"] == "ld")


def check_ld_answers(d: Drill) -> None:
    for ans in RIGHT:
        g = d.grade(ans)
        assert g.correct, (ans, g.reason)
    for ans in WRONG:
        g = d.grade(ans)
        assert g.readable and not g.correct, ans
    g = d.grade("i*lda + j")
    assert not g.readable and "unknown name 'lda'" in g.reason


def test_ld_formula_graded_by_meaning_without_sympy(no_sympy: None) -> None:
    assert A.evaluate_formula("i*ld + j", "(4,8):(ld,1)").method == "sampled"
    check_ld_answers(ld_drill())
    d = concrete_ld_drill()
    assert d.grade(d.expected).correct and "sampled" in d.grade(d.expected).reason
    assert not d.grade(d.expected + " + ld - ld + 1").correct


@pytest.mark.skipif(not HAS_SYMPY, reason="sympy is not installed")
def test_ld_formula_graded_by_meaning_with_sympy() -> None:
    assert A.evaluate_formula("i*ld + j", "(4,8):(ld,1)").method == "symbolic"
    check_ld_answers(ld_drill())
    d = concrete_ld_drill()
    assert "symbolically for every value" in d.grade(d.expected).reason
    # right only where ld reaches past the row (the question says so): still right
    assert d.grade(d.expected + f" + 0*(k % {d.data['ld']})").correct


def test_transpose_fixes_the_shape_but_not_the_nesting() -> None:
    d = next(d for d in drills("transpose") if d.data["layout"] == "(M,N):(N,1)")
    assert d.expected == "(N,M):(1,N)"
    assert d.grade("(1, N)").correct and d.grade("T = ((N),(M)):((1),(N))").correct
    # same function on 1-D coordinates (the identity), but not an N x M view: rejected
    assert not d.grade("(M*N):(1)").correct and not d.grade("(M,N):(N,1)").correct
    numeric = [(d, re.fullmatch(r"\((\d+),(\d+)\):\(\w+,1\)", d.data["layout"])) for d in drills("transpose/row")]
    c, m, n = next((d, int(g[1]), int(g[2])) for d, g in numeric if g and int(g[2]) % 2 == 0 and int(g[2]) >= 4)
    ld = c.data["ld"]
    # mode 0 split: the question fixes only the top-level sizes
    assert c.grade(f"((2,{n // 2}),{m}):((1,2),{ld})").correct
    assert not c.grade(f"(2,{n // 2},{m}):(1,2,{ld})").correct


def test_tiled_view_fixes_two_levels() -> None:
    d = next(d for d in drills("tiled/row") if d.data["tile"][1] >= 4)
    shape, stride = d.expected.split(":")
    flat_shape, flat_stride = shape.replace("(", "").replace(")", ""), stride.replace("(", "").replace(")", "")
    assert not d.grade(f"({flat_shape}):({flat_stride})").correct  # the same offsets, ungrouped
    (tm, tn), ld = d.data["tile"], d.data["ld"]
    outer = re.findall(r"\d+", shape)[2:]
    gm, gn = int(outer[0]), int(outer[1])
    if gn % 2 == 0 and gn >= 4:
        split = f"(({tm},{tn}),({gm},(2,{gn // 2}))):(({ld},1),({tm}*{ld},({tn},{2 * tn})))"
        assert d.grade(split).correct  # a third level is free
    assert not d.grade(f"(({tm},{tn}),({gm},{gn})):((1,{ld}),({tm}*{ld},{tn}))").correct


def test_unreadable_and_odd_answers_never_raise() -> None:
    for d in [generate("symbolic", s) for s in range(40)]:
        for ans in ["", " ", "((", "i**2", "ld/0", "(N,M):(1,", "x" * 5000, "i*ld + j // (ld - ld)", "2^70",
                    "(N*1000000,M):(1,1)", "__import__('os')"]:
            g = d.grade(ans)
            assert not g.correct
