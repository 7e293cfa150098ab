"""Lenient answer reading and formula evaluation: the forms people write are read, nonsense is refused with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.drills.common import read_layout
from app.drills.formula import Formula
from app.drills.parsing import (
    AnswerError,
    parse_choice,
    parse_int,
    parse_int_list,
    parse_nested,
    parse_padding,
    parse_pairs,
    parse_swizzle,
    parse_table,
)


@pytest.mark.parametrize("text", ["(1,(1,2))", " ( 1 , ( 1 , 2 ) ) ", "1, (1, 2)", "[1,[1,2]]", "(_1,(_1,_2))"])
def test_nested_forms(text: str) -> None:
    assert parse_nested(text) == (1, (1, 2))


@pytest.mark.parametrize("text", ["((1,2)", "(1,2))", "()", "(1,a)", "1 + 2"])
def test_nested_refusals(text: str) -> None:
    with pytest.raises(AnswerError):
        parse_nested(text)


def test_lists_and_ints() -> None:
    for text in ["[0, 4, 8]", "0 4 8", "0;4;8", "0\n4\n8", "(0,4,8)", "_0, _4, _8"]:
        assert parse_int_list(text) == [0, 4, 8]
    with pytest.raises(AnswerError, match="expected 4 numbers"):
        parse_int_list("1 2 3", 4)
    assert parse_int("32-way") == 32 and parse_int(" = 7 ") == 7 and parse_int("8 wavefronts") == 8
    with pytest.raises(AnswerError):
        parse_int("seven")


def test_tables() -> None:
    want = [[0, 4], [1, 5], [2, 6], [3, 7]]
    for text in ["0 4\n1 5\n2 6\n3 7", "0,4;1,5;2,6;3,7", "[[0,4],[1,5],[2,6],[3,7]]", "0 4 1 5 2 6 3 7",
                 "| 0 | 4 |\n| 1 | 5 |\n| 2 | 6 |\n| 3 | 7 |"]:
        assert parse_table(text, 4, 2) == want, text
    assert parse_table("0 ?\n1 5\n2 6\n3 7", 4, 2)[0] == [0, None]
    with pytest.raises(AnswerError, match="row 1 has 3 numbers"):
        parse_table("0 4\n1 5 9\n2 6\n3 7", 4, 2)


def test_pairs_with_ranges() -> None:
    assert parse_pairs("(1, 8..15)") == [(1, c) for c in range(8, 16)]
    assert parse_pairs("(1,8-9) (2,0)") == [(1, 8), (1, 9), (2, 0)]
    with pytest.raises(AnswerError):
        parse_pairs("1 8")


def test_choices_swizzles_padding_layouts() -> None:
    choices = {"row": ["r"], "column": ["col"], "neither": ["none"]}
    assert parse_choice("Row-major", choices) == "row" and parse_choice("COL", choices) == "column"
    with pytest.raises(AnswerError, match="one of"):
        parse_choice("diagonal", choices)
    assert parse_swizzle("Sw<3,4,3>") == parse_swizzle("Swizzle<3, 4, 3>") == parse_swizzle("B=3 M=4 S=3") == (3, 4, 3)
    assert parse_padding("pad 1") == 1 and parse_padding("+4") == 4 and parse_padding("ld = 33") == -33
    assert parse_padding("Sw<5,0,5>") is None
    assert str(read_layout(" ( _4 , _8 ) : ( _1 , _4 ) ")) == "(4,8):(1,4)"
    with pytest.raises(AnswerError, match="not a layout"):
        read_layout("(4,8):(1)")


@pytest.mark.parametrize("text", ["i*3 + j*12 + k", "3i + 12j + k", "k + 12 * j + i * 3", "index(i,j,k) = 3i+12j+k",
                                  "3(i + 4j) + k", "i×3 + j·12 + k"])
def test_formula_forms(text: str) -> None:
    f = Formula(text, ["i", "j", "k"])
    assert f({"i": 1, "j": 1, "k": 2}) == 17


def test_formula_operators_and_refusals() -> None:
    assert [Formula("(33r + 5) mod 32", ["r"])({"r": r}) for r in range(3)] == [5, 6, 7]
    assert Formula("n/2 + n%2", ["n"])({"n": 5}) == 3 and Formula("x ^ (x >> 3)", ["x"])({"x": 9}) == 8
    for bad in ["__import__('os')", "i.real", "{i: 1}", "lambda: 1", "i if i else 0", "q + 1", "1.5 * i", "'a'"]:
        with pytest.raises(AnswerError):
            Formula(bad, ["i"])({"i": 1})
    for bad in ["2 ** 1000", "i << 999", "1 // 0", "(" * 60 + "i" + ")" * 60]:
        with pytest.raises(AnswerError):
            Formula(bad, ["i"])({"i": 1})


@given(st.text(max_size=200))
def test_readers_only_ever_raise_answer_errors(text: str) -> None:
    for reader in (parse_nested, parse_int_list, parse_int, parse_swizzle, parse_pairs):
        try:
            reader(text)
        except AnswerError:
            pass
    try:
        Formula(text, ["i", "j"])({"i": 2, "j": 3})
    except AnswerError:
        pass
    try:
        read_layout(text)
    except AnswerError:
        pass
