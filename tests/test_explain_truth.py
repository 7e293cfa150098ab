"""Derivations and formulas checked against independent arithmetic on fresh inputs: every stated quotient, ceiling,
remainder and inner product in a step recomputes, and every closed formula equals L by brute force."""

from __future__ import annotations

import math
import random
import re

import pytest

import algebra as A
from algebra import LayoutError, registry
from algebra.teach.explain import derive
from algebra.teach.formula import evaluate_formula, formula
from tests.test_explain import args_for, rand_layout

P = A.parse
SEEDS = range(14700, 14712)
_N = r"(-?\d+)"


def _cdiv(a: int, b: int) -> int:
    """C++'s integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


#: (pattern, check) for each kind of arithmetic a step states
CLAIMS = [
    (re.compile(rf"(?<![\w.@(/*-]){_N}/{_N} = {_N}(?![\w/])"), lambda a, b, c: b != 0 and a == b * c),
    (re.compile(rf"(?<![\w-])ceil\({_N} / {_N}\) = {_N}"), lambda a, b, c: b > 0 and c == -(-a // b)),
    (re.compile(rf"-ceil\({_N}/{_N}\) = {_N}"), lambda a, b, c: b > 0 and c == a // -b),
    (re.compile(rf"(?<![\w-])ceil\({_N}/{_N}\) = {_N}"), lambda a, b, c: b > 0 and c == -(-a // b)),
    (re.compile(rf"(?<![\w.@(*-]){_N} // {_N} = {_N}"), lambda a, b, c: b > 0 and c == a // b),
    (re.compile(rf"\({_N} \+ {_N} - 1\) / {_N} = {_N}"), lambda a, b, b2, c: b == b2 and c == _cdiv(a + b - 1, b)),
    (re.compile(rf"{_N} / {_N} = {_N} in C\+\+"), lambda a, b, c: b != 0 and c == _cdiv(a, b)),
    (re.compile(rf"(?<![\w.@(+*-] )(?<![\w.@(+*-]){_N}\*{_N} = {_N}(?![\w@])"), lambda a, b, c: a * b == c),
    (re.compile(rf"(?<![\w.@(*-]){_N} % {_N} = {_N}"), lambda a, b, c: b > 0 and c == a - b * _cdiv(a, b)),
    (re.compile(rf"gcd\({_N}, {_N}\) = {_N}"), lambda a, b, c: math.gcd(a, b) == c),
    (re.compile(rf"(\d+):{_N}\+{_N} = (\d+):{_N}"), lambda s, a, b, s2, c: s == s2 and a + b == c),
]
SUM = re.compile(r"((?:-?\d+\*-?\d+ \+ )+-?\d+\*-?\d+) = (-?\d+)")


def stated_arithmetic_errors(steps: list[dict]) -> list[str]:
    bad = []
    for s in steps:
        t = s["text"]
        for rx, ok in CLAIMS:
            for m in rx.finditer(t):
                if not ok(*map(int, m.groups())):
                    bad.append(f"{m.group(0)!r} in {t!r}")
        for m in SUM.finditer(t):
            if sum(int(x) * int(y) for x, y in re.findall(r"(-?\d+)\*(-?\d+)", m.group(1))) != int(m.group(2)):
                bad.append(f"{m.group(0)!r} in {t!r}")
    return bad


@pytest.mark.parametrize(("op", "args"), [
    ("complement", ("2:-1", "128")),  # CuTe's ceil_div(128, -2) is -62, not ceil(128 / -2) = -64
    ("complement", ("(4,2):(-4,0)", "64")),
    ("complement", ("(2,2):(1,5)", "24")),  # 2 does not divide 5: 5 // 2 = 2, not "5/2 = 2"
    ("complement", ("(2,2):(1,4)", "(3,5)")),  # a tuple cotarget: ceil_div folds mode by mode
    ("composition", ("(4,8):(1,5)", "(2,2):(1,-6)")),  # -6 over 4 carries -ceil(6/4) = -2, not "-6/4 = -2"
    ("idx2crd", ("-7", "(3,(2,3))")),  # C++'s divmod, stated as such: not "-7 // 1 = -1"
    ("idx2crd", ("40", "(3,(2,3))")),  # past the end: the last mode goes on
    ("evaluate", ("(4,(2,4)):(2,(1,8))", "-3")),
    ("crd2idx", ("-5", "(4,(2,4))")),
])
def test_stated_arithmetic_recomputes(op, args):
    try:
        _, steps = derive(op, *args)
    except LayoutError as err:
        steps = err.steps
    assert stated_arithmetic_errors(steps) == []
    assert any(re.search(r"\d", s["text"]) for s in steps)


def test_negative_complement_names_cpp_arithmetic():
    with pytest.raises(LayoutError) as exc:
        derive("complement", "2:-1", "128")
    texts = " ".join(s["text"] for s in exc.value.steps)
    assert "ceil_div(128, -2) = (128 + -2 - 1) / -2 = -62" in texts
    assert "[0, -" not in texts  # no interval that ends below its start


def test_fresh_derivations_state_true_arithmetic():
    """Every op of the table on fresh random arguments: what the steps compute recomputes, the last step states the
    answer (or the refusal, with the op's own message)."""
    for seed in SEEDS:
        rng = random.Random(seed)
        for op in registry.names():
            try:
                args = args_for(op, rng)
            except LayoutError:
                continue
            try:
                result, steps = derive(op, *args)
            except LayoutError as err:
                steps = err.steps
                assert steps[-1]["kind"] == "error" and steps[-1]["text"] == f"refused: {err}"
            else:
                if registry.get(op).result == "layout":
                    assert steps[-1]["layout"] == str(result)
            assert stated_arithmetic_errors(steps) == [], (op, [str(a) for a in args])


@pytest.mark.parametrize("text", [
    "(4,4):(F1,F9)", "(8,8):(F1,F9)", "(2,(2,2)):(F3,(2,F1))", "(2,3):(F3,2)", "(4,(2,2)):(F0,(F5,1))",
    "Sw<3,4,3> o 0 o (8,64):(64,1)", "Sw<2,0,-3> o 5 o (4,8):(1,-4)", "Sw<1,1,2> o 3 o (4,(2,2)):(-1,(8,0))",
    "Sw<0,2,3> o 7 o (4,3):(3,1)",
])
def test_f2_and_swizzled_formulas_equal_the_layout(text):
    layout = P(text)
    f = formula(layout)
    assert "F" not in f and "Sw<" not in f  # a formula over the coordinates, nothing else
    assert evaluate_formula(f, layout).correct, f


def test_fresh_formulas_equal_the_layout():
    for seed in SEEDS:
        rng = random.Random(seed)
        for _ in range(10):
            layout = rand_layout(rng)
            for x in (layout, P(f"Sw<{rng.randint(1, 3)},{rng.randint(0, 3)},{rng.choice((-5, 3, 4))}> o "
                                f"{rng.randint(0, 9)} o {layout}")):
                if A.size(x) <= 4096:
                    chk = evaluate_formula(formula(x), x)
                    assert chk.correct, (str(x), formula(x), chk.mismatches)


@pytest.mark.parametrize(("a", "b"), [("(5,3,4):(1,5,15)", "(10,6):(1,10)"), ("(2,21)", "(3,14)"), ("(5,3)", "(3,5)"),
                                      ("(4,3):(1,4)", "(2,6):(6,1)"), ("((2,2),6):((1,2),4)", "(4,6):(6,1)")])
def test_common_domain_and_layout_add_derivations_show_each_mode(a, b):
    """Each mode of the greatest common domain is a step with its gcd; layout_add states each mode's stride sum, and
    the modes the steps add are the answer's."""
    result, steps = derive("greatest_common_domain", a, b)
    added = [tuple(map(int, m)) for s in steps for m in re.findall(r"add (\d+):(\d+)", s["text"])]
    assert added == [x for x in zip(A.flatten(result.shape), A.flatten(result.stride), strict=True) if x != (1, 0)]
    assert stated_arithmetic_errors(steps) == []
    if A.size(A.Layout(P(a).shape)) == A.size(A.Layout(P(b).shape)) and A.size(result) == A.size(P(a)):
        total, steps = derive("layout_add", a, b)
        assert any(re.search(r"\d+:-?\d+\+-?\d+ = \d+:-?\d+", s["text"]) for s in steps)
        assert stated_arithmetic_errors(steps) == [] and steps[-1]["layout"] == str(total)
        x, y = P(a), P(b)
        assert all(total(i) == x(i) + y(i) for i in range(A.size(x)))


def test_api_refusal_is_the_derivations_last_step(client):
    """A refusal through POST /api/algebra: the same words as the derivation's last step, cold and cached (the API
    clips a detail past 400 characters); the workbench shows the steps recorded up to it and the whole refusal."""
    import html

    for op, args in [("composition", ["(6,2):(8,2)", "4:4"]), ("complement", ["2:-1", "128"]),
                     ("logical_divide", ["(6,2):(8,2)", "4:4"]), ("layout_add", ["(4,3):(1,5)", "(3,4):(1,5)"]),
                     ("left_inverse", ["(6,3):(2,1)"])]:
        with pytest.raises(LayoutError) as exc:
            derive(op, *args)
        cold = client.post("/api/algebra", json={"op": op, "args": args})
        warm = client.post("/api/algebra", json={"op": op, "args": args})
        assert cold.status_code == warm.status_code == 422 and cold.json() == warm.json()
        assert exc.value.steps[-1]["text"] == f"refused: {exc.value}"
        if len(str(exc.value)) <= 400:
            assert cold.json()["detail"] == str(exc.value)
        page = client.get("/algebra", params={"op": op, **dict(zip("abc", args, strict=False))}).text
        page = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page)))
        assert str(exc.value) in page
        assert all(s["text"] in page for s in exc.value.steps[:-1] if s["depth"] == 0)
