"""CuTe's C++ calls ``make_layout(make_shape(..), make_stride(..))`` are input wherever a layout is typed, as the
drills already read them: the notation parser rewrites them (one place), so the explorer, the workbench and the API
read them too."""

from __future__ import annotations

import pytest

import algebra as A


@pytest.mark.parametrize(("text", "want"), [
    ("make_layout(make_shape(4,8), make_stride(8,1))", "(4,8):(8,1)"),
    ("make_layout(make_shape(_4{}, Int<8>{}), make_stride(Int<8>{}, _1{}))", "(4,8):(8,1)"),
    ("cute::make_layout(cute::make_shape(4, make_shape(2, 2)), cute::make_stride(2, make_stride(1, 8)))",
     "(4,(2,2)):(2,(1,8))"),
    ("make_layout(make_shape(4,8))", "(4,8):(1,4)"),
    ("make_layout(8, 2)", "8:2"),
    ("Sw<3,3,3> o make_layout(make_shape(8,64), make_stride(64,1))", "Sw<3,3,3> o 0 o (8,64):(64,1)"),
])
def test_make_layout_calls_parse(text: str, want: str) -> None:
    assert str(A.parse(text)) == want


@pytest.mark.parametrize("text", ["make_layout(make_shape(4,8), make_stride(8,1)", "make_layout(make_shape(4,8)))",
                                  "make_layout(make_shape(4,8), LayoutRight{})", "make_layout()"])
def test_broken_make_layout_calls_are_refused(text: str) -> None:
    with pytest.raises(A.LayoutError):
        A.parse(text)


def test_through_the_api_and_the_workbench(client) -> None:
    a = "make_layout(make_shape(6,2), make_stride(8,2))"
    r = client.post("/api/algebra", json={"op": "composition", "args": [a, "(4,3):(3,1)"]})
    assert r.status_code == 200 and r.json()["result"] == "((2,2),3):((24,2),8)"
    r = client.post("/api/algebra", json={"op": "composition", "args": [a + ")", "(4,3):(3,1)"]})
    assert r.status_code == 422 and "A:" in r.json()["detail"]
    r = client.get("/algebra", params={"op": "composition", "a": a, "b": "(4,3):(3,1)"})
    assert r.status_code == 200 and "((2,2),3):((24,2),8)" in r.text
    r = client.post("/api/layout", json={"layout": a})
    assert r.status_code == 200 and r.json()["layout"] == "(6,2):(8,2)"
