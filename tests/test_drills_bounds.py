"""Answers that only the sampled or modelled check accepted: a padding of a billion elements (the bank model calls it
conflict-free) and symbolic formulas that cut at a bound past every sampled value (``ld % 100000000`` equals ``ld``
at every sample). A padding is less than one row, as the answer format says; a bound past what the check samples is
refused by name, and a smaller one is checked at bindings past it."""

from __future__ import annotations

import pytest

from app.drills.core import generate

#: seeds whose banks drill asks for a swizzle or a padding (variants fix / ldmatrix_fix)
PAD_SEEDS = [15502, 15511, 15518, 15520, 15590]


def _drill(kind: str, seed: int, variant: str = ""):
    d = generate(kind, seed)
    assert d.variant.startswith(variant), (seed, d.variant)
    return d


@pytest.mark.parametrize("seed", PAD_SEEDS)
@pytest.mark.parametrize("answer", ["pad 999999999", "ld=1000000001", "pad 100000 words", "pad 4294967297"])
def test_a_padding_of_a_row_or_more_is_refused_by_its_bound(seed, answer):
    d = _drill("banks", seed)
    assert "padding" in d.prompt and "less than one row" in d.answer_format
    g = d.grade(answer)
    assert not g.correct and not g.readable
    assert "less than one row" in g.reason


@pytest.mark.parametrize("seed", PAD_SEEDS)
def test_a_padding_within_the_bound_is_still_graded_by_the_bank_model(seed):
    d = _drill("banks", seed)
    cols = int(d.data["layout"].split(",")[1].split(")")[0])
    rights = [p for p in range(1, cols) if d.grade(f"pad {p}").correct]
    assert rights, seed  # some padding below a row works for every drill tile
    assert d.grade(f"pad {cols}").readable is False  # a whole row: past the bound
    assert d.grade("pad 0").correct is False and d.grade("pad 0").readable


def test_a_padded_layout_past_the_bound_is_refused_too():
    d = _drill("banks", 15520)
    g = d.grade("(32,32):(999999,1)")
    assert not g.correct and "less than one row" in g.reason


@pytest.mark.parametrize(("seed", "answer"), [
    (15503, "b*ld*(N % 100000000) + i + j*ld"),  # over sizes: no size past 10^8 can be checked
    (15511, "i + j*M + b*M*(N % 5000)"),
    (15501, "38 + 40*ld + (ld // (1 << 41))"),  # past 2^40: a binding past it takes offsets past 2^64
    (15502, "(i*ld + j) % (1 << 50)"),
])
def test_a_formula_cut_at_a_bound_no_binding_can_pass_is_refused_by_name(seed, answer):
    d = _drill("symbolic", seed)
    g = d.grade(answer)
    assert not g.correct and not g.readable
    assert "the formula cuts at the bound" in g.reason


@pytest.mark.parametrize(("seed", "answer"), [
    (15501, "38 + 40*(ld % 100000000)"),  # every binding's ld is below 10^8: it was graded right
    (15501, "38 + 40*ld + (ld // 100000000)"),
    (15502, "i*(ld % 100000000) + j"),
    (15502, "(i*ld + j) % (1 << 40)"),
    (15514, "i + j*(lda % 67108870)"),
    (15511, "i + j*M + b*M*(N % 1000)"),  # every sampled N is below 1000
    (15511, "(i % 1000) + j*M + b*M*N"),
    (15511, "i + j*M + b*M*N + (N // 4096)"),
    (15501, "38 + 40*(ld % 60000000)"),
    (15501, "38 + 40*ld + ld // 67108864"),
])
def test_a_formula_cut_at_a_bound_is_checked_past_it(seed, answer):
    d = _drill("symbolic", seed)
    g = d.grade(answer)
    assert g.readable and not g.correct, g.reason


@pytest.mark.parametrize("seed", [15501, 15502, 15503, 15511, 15514])
def test_the_keys_and_exact_rewrites_stay_right(seed):
    d = _drill("symbolic", seed)
    assert d.grade(d.expected).correct
    if "ld" in d.expected and "lda" not in d.expected:
        assert d.grade(d.expected.replace("ld", "(ld % 1000 + ld // 1000 * 1000)")).correct


def test_the_route_refuses_the_padding_without_recording_an_attempt(client):
    j = client.get("/api/drills/next", params={"kind": "banks", "seed": 15520}).json()
    r = client.post(f"/api/drills/{j['id']}/answer", json={"answer": "pad 999999999"}).json()
    assert r["correct"] is False and r["readable"] is False, r
    assert "less than one row" in r["feedback"]
