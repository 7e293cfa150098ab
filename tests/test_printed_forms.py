"""CuTe's printed and C++ spellings are input wherever a layout is typed (CONTRACT §5), coordinate layouts render,
and ops take operands of any size (only enumeration is capped)."""

from __future__ import annotations

import pytest

import algebra as A

SPELLINGS = [
    ("_4", "4:1"),
    ("Int<4>{}", "4:1"),
    ("C<4>{}", "4:1"),
    ("(_4,_8):(_8,_1)", "(4,8):(8,1)"),
    ("Sw<3,3,3> o _0 o (8,64):(64,1)", "Sw<3,3,3> o 0 o (8,64):(64,1)"),
    ("Sw<3,3,3>_o__0_o_(_8,_64):(_64,_1)", "Sw<3,3,3> o 0 o (8,64):(64,1)"),
    ("(3,4):(1@1,1@0)", "(3,4):(1@1,1@0)"),
    ("(3,4):(_1@1,_1@0)", "(3,4):(1@1,1@0)"),
    ("(3,4):(E<1>{},E<0>{})", "(3,4):(1@1,1@0)"),
    ("Layout<Shape<_4,_8>,Stride<_8,_1>>", "(4,8):(8,1)"),
    ("cute::Layout<cute::Shape<cute::Int<4>, cute::Shape<cute::C<2>,cute::C<4>>>, "
     "cute::Stride<cute::_2, cute::tuple<_1,_8>>>{}", "(4,(2,4)):(2,(1,8))"),
    ("Layout<Shape<_4,_8>>", "(4,8):(1,4)"),
    ("Shape<>", "():()"),  # the rank-0 layout, as CuTe prints make_layout(Shape<>{})
]


@pytest.mark.parametrize(("text", "want"), SPELLINGS)
def test_spellings_parse(text: str, want: str) -> None:
    assert str(A.parse(text)) == want


#: An empty mode inside a layout is not read: CuTe refuses most ops on one (its composition reads get<R-1> of it), so
#: only the whole rank-0 layout ():() is.
@pytest.mark.parametrize("bad", ["Int<4", "Layout<Shape<_4,_8>,Stride<_8,_1>", "E<>{}", "Int<x>{}", "(4,()):(1,())",
                                 "Shape<_4,Shape<>>", "((),4)"])
def test_malformed_spellings_are_layout_errors(bad: str) -> None:
    with pytest.raises(A.LayoutError):
        A.parse(bad)


def test_int_spellings_as_op_arguments() -> None:
    assert A.parse_arg("Int<24>{}") == 24 and A.parse_arg("_24") == 24
    assert A.parse_arg("<Int<4>{}, _>") == (4, None)


@pytest.mark.parametrize(("text", "want"), SPELLINGS)
def test_spellings_through_the_api(client, text: str, want: str) -> None:
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code == 200, r.text
    assert r.json()["layout"] == want


def test_coordinate_layout_table_and_explorer(client) -> None:
    r = client.post("/api/layout", json={"layout": "(3,4):(1@1,1@0)"})
    assert r.status_code == 200
    t = r.json()["table"]
    assert (t["rows"], t["cols"]) == (3, 4)
    assert t["offsets"][2][1] == "(1,2)"  # L(2,1) = 2@1 + 1@0
    page = client.get("/", params={"layout": "(3,4):(E<1>{},E<0>{})"})
    assert page.status_code == 200 and "(1,2)" in page.text


def test_big_divide_is_an_ordinary_request(client) -> None:
    r = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8192,8192):(8192,1)", "<128:1, 64:1>"]})
    assert r.status_code == 200, r.text
    assert r.json()["result"] == "((128,64),(64,128)):((8192,1048576),(1,64))"
    page = client.get("/algebra", params={"op": "logical_divide", "a": "(8192,8192):(8192,1)", "b": "<128:1, 64:1>"})
    assert page.status_code == 200
    assert "((128,64),(64,128)):((8192,1048576),(1,64))" in page.text and "cap" in page.text


def test_refusal_text_through_the_api(client) -> None:
    r = client.post("/api/algebra", json={"op": "composition", "args": ["(6,2):(8,2)", "4:4"]})
    assert r.status_code == 422
    d = r.json()["detail"]
    assert "stride divisibility" in d and "CuTe would print (2,2):(32,2)" in d and "A(B(2)) = A(8) = 18" in d
