"""The F2 zero ``F0`` is a zero stride: a broadcast mode, as an int 0 is. ``filter_zeros``, ``filter`` and
``nullspace`` treat it so (a Triton LinearLayout's zero basis becomes such a mode), as ``complement`` already does."""

from __future__ import annotations

import pytest

import algebra as A
from algebra.teach import registry

P = A.parse


@pytest.mark.parametrize(("text", "zeros", "filtered", "null"), [
    ("(4,2):(F0,F1)", "(1,2):(F0,F1)", "2:F1", "4:1"),
    ("(2,(2,4)):(F3,(F0,F4))", "(2,(1,4)):(F3,(F0,F4))", "(2,4):(F3,F4)", "2:2"),
    ("(2,4,2):(F0,0,F1)", "(1,1,2):(F0,0,F1)", "2:F1", "(2,4):(1,2)"),
])
def test_f0_is_a_broadcast_mode(text: str, zeros: str, filtered: str, null: str) -> None:
    x = P(text)
    assert str(A.filter_zeros(x)) == zeros
    assert str(A.filter(x)) == filtered
    r = A.nullspace(x)
    assert str(r) == null
    assert all(int(x(r(i))) == 0 for i in range(A.size(r)))
    # the same as the int 0 broadcast wherever the other strides allow an int form
    assert A.size(A.nullspace(x)) == A.size(A.nullspace(P(text.replace("F0", "0"))))


def test_nullspace_of_f0_through_the_op_table_and_the_api(client) -> None:
    assert str(registry.get("nullspace").fn(P("(4,2):(F0,F1)"))) == "4:1"
    r = client.post("/api/algebra", json={"op": "nullspace", "args": ["(4,2):(F0,F1)"]})
    assert r.status_code == 200 and r.json()["result"] == "4:1"
    r = client.post("/api/algebra", json={"op": "filter", "args": ["(4,2):(F0,F1)"]})
    assert r.status_code == 200 and r.json()["result"] == "2:F1"
