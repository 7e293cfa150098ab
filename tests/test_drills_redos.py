"""Regression: the answer readers are linear. The one-integer reader once had four adjacent ``\\s*`` and took 116 s of
CPU on ``"1" + 3998 spaces + "!"``; every reader and every drill kind must now answer such inputs at once. The
timeouts (pytest-timeout) fail the test if a reader backtracks; there is no timing assert."""

from __future__ import annotations

from typing import Any

import pytest

from app.drills.core import from_id, kinds
from app.drills.formula import Formula
from app.drills.parsing import (
    AnswerError,
    layout_text,
    parse_choice,
    parse_int,
    parse_int_list,
    parse_nested,
    parse_padding,
    parse_pairs,
    parse_swizzle,
    parse_table,
)

SPACES = " " * 3998
EVIL = [
    "1" + SPACES + "!",
    "=" + SPACES + "1" + SPACES + "x" + SPACES + "!",
    "Sw<" + SPACES + "3" + SPACES + "," + SPACES + "!",
    "pad" + SPACES + "1" + SPACES + "words" + SPACES + "!",
    "ld" + SPACES + "=" + SPACES + "!",
    "Int" + SPACES + "<" + SPACES + "4" + SPACES + ">" + SPACES + "!",
    "(" * 1999 + "!",
    "1-" * 1999 + "!",
    "\n \n" * 999 + "!",
    "index" + SPACES + "(" + SPACES + "=",
    "(1," + "(1.." * 999,
]
READERS = [parse_int, parse_swizzle, parse_padding, parse_nested, parse_int_list, parse_pairs, layout_text,
           lambda t: parse_table(t, 4, 4), lambda t: parse_choice(t, {"row": ["r"], "column": ["c"]}),
           lambda t: Formula(t, ["i", "j"])]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", EVIL, ids=range(len(EVIL)))
def test_readers_are_linear(text: str) -> None:
    for read in READERS:
        try:
            read(text)
        except AnswerError:
            pass


@pytest.mark.timeout(20)
def test_issue_repro_answers_at_once(client: Any) -> None:
    r = client.post("/api/drills/banks-3/answer", json={"answer": "1" + SPACES + "!"})
    assert r.status_code == 200
    body = r.json()
    assert body["correct"] is False and body["readable"] is False


@pytest.mark.timeout(60)
def test_every_kind_answers_adversarial_text_at_once() -> None:
    for k in kinds():
        for seed in (0, 1, 2):
            d = from_id(f"{k.kind}-{seed}")
            for text in EVIL:
                g = d.grade(text)
                assert g.correct is False
