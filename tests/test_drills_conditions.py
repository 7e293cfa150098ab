"""``defined``: both divisibility conditions of A o B are judged, each on its own; answers are read by whole words.

The condition walk is checked against the engine on fresh random cases (a failed shape condition is what the engine
refuses first; a stride-only failure is the engine's answer failing R(i) = A(B(i))), and the drills are graded part
by part."""

from __future__ import annotations

import random

import pytest

import algebra as A
from app.drills import algebra_cases as K
from app.drills.core import generate
from app.drills.defined_conditions import read_claims, walk
from app.drills.gen_defined import classify
from app.drills.parsing import AnswerError


def test_the_walk_agrees_with_the_engine_on_fresh_cases() -> None:
    rng = random.Random(2323)
    seen = {"defined": 0, "shape": 0, "stride": 0, "both": 0}
    for _ in range(3000):
        a = K.rand_layout(rng, 2, 48)
        if 0 in A.flatten(a.stride):
            continue
        b = A.Layout(rng.choice([2, 3, 4, 6, 8]), rng.choice([1, 2, 3, 4, 6]))
        w = walk(a, b)
        if w.ambiguous or w.cute_check:
            continue
        engine, _, _ = classify(a, b)
        if w.verdict == "defined":
            assert engine == "defined", (a, b, engine)
        elif w.verdict == "stride":
            assert engine == "stride", (a, b, engine)
        else:  # a failed shape condition: refused at compile time, whatever the stride does
            assert engine == "shape", (a, b, engine)
        seen[w.verdict] += 1
    assert min(seen.values()) >= 20, seen


@pytest.mark.parametrize("text, claims", [
    ("stride", (False, True)), ("shape", (True, False)), ("both", (True, True)), ("shape and stride", (True, True)),
    ("stride and shape both fail", (True, True)), ("defined", (False, False)), ("yes, it is defined", (False, False)),
    ("Shape fails, stride holds", (True, False)), ("shape: ok; stride: fails, CuTe prints (2,2):(32,2)", (False, True)),
    ("the shape condition is fine but the stride one fails", (False, True)), ("both hold", (False, False)),
    ("neither holds", (True, True)), ("no, stride divisibility", (False, True)), ("shape-divisibility", (True, False)),
    # the format offers "defined (none)": "none" and the phrases that say no condition fails read as defined
    ("none", (False, False)), ("None.", (False, False)), ("no condition fails", (False, False)),
    ("neither fails", (False, False)), ("none fails", (False, False)), ("nothing fails", (False, False)),
    ("neither condition fails", (False, False)),
])
def test_claims_are_read_by_whole_words(text: str, claims: tuple[bool, bool]) -> None:
    assert read_claims(text) == claims


@pytest.mark.parametrize("text", ["shapex", "strides?", "reshape", "not the shape", "shape holds", "maybe",
                                  "shape fails and holds", "defined, but the stride fails", "not defined", "no",
                                  "none, but the stride fails"])
def test_claims_that_cannot_be_read(text: str) -> None:
    with pytest.raises(AnswerError):
        read_claims(text)


def _drill(key: str):
    return next(d for d in (generate("defined", s) for s in range(4000)) if d.expected.split(",")[0] == key)


def test_both_failing_is_asked_and_each_condition_graded() -> None:
    d = _drill("shape and stride")
    assert "Judge both conditions" in d.prompt and "which fail" in d.prompt
    for text in ("both", "shape and stride", "stride and shape", "Shape fails, stride fails"):
        g = d.grade(text)
        assert g.correct and g.items == [True, True], (text, g.reason)
    g = d.grade("stride")
    assert g.readable and not g.correct and g.items == [False, True], g.reason
    assert "right about the stride condition" in g.reason and "holds here" not in g.reason, g.reason
    g = d.grade("shape")
    assert g.readable and not g.correct and g.items == [True, False], g.reason
    g = d.grade("shapex")
    assert not g.readable and not g.correct


def test_a_defined_composition_takes_the_formats_own_none() -> None:
    d = _drill("defined")
    assert "defined (none)" in d.answer_format
    for text in ("none", "defined (none)", "no condition fails", "defined"):
        assert d.grade(text).correct, text
    for text in ("shape", "stride, (2,2):(32,2)", "shape and stride"):
        g = d.grade(text)
        assert g.readable and not g.correct, text


def test_one_condition_failing_and_the_printed_layout() -> None:
    d = _drill("stride")
    printed = d.expected.split(", ", 1)[1]
    assert d.grade(f"stride, {printed}").correct and d.grade(f"shape holds, stride fails: {printed}").correct
    g = d.grade("both")
    assert g.readable and not g.correct and g.items == [False, True], g.reason
    g = d.grade("stride")
    assert not g.readable and "also give the layout" in g.reason
    s = _drill("shape")
    assert s.grade("shape").correct and s.grade("shape fails, stride holds").correct
    g = s.grade("both")
    assert g.readable and not g.correct and g.items == [True, False], g.reason


def test_every_verdict_is_drilled_and_the_steps_name_each_failure() -> None:
    seen = set()
    for seed in random.Random(7).sample(range(10**6, 10**9), 300):
        d = generate("defined", seed)
        if d.variant != "composition":
            continue
        key = d.expected.split(",")[0]
        seen.add(key)
        text = " ".join(s["text"] for s in d.steps)
        assert ("The shape condition fails" in text) == (key in ("shape", "shape and stride")), d.id
        assert ("The stride condition fails" in text) == (key in ("stride", "shape and stride")), d.id
    assert seen == {"defined", "shape", "stride", "shape and stride"}
