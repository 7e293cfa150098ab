"""layout_add of basis-strided layouts: each stride of the sum is a stride leaf CuTe's notation prints and parses
(``v@m``), so ``parse(str(R)) == R``. Before, ``layout_add(8:1@0, 8:1@0)`` answered ``8:(2)`` and
``layout_add(4:1@1, 4:2@1)`` ``4:(0,3)``: strides the parser (and CuTe) read as tuples of another profile."""

from __future__ import annotations

import pytest

import algebra as A

P = A.parse


@pytest.mark.parametrize("a, b, want", [
    ("8:1@0", "8:1@0", "8:2@0"),
    ("(4):(1@1)", "(4):(2@1)", "4:3@1"),
    ("(4,2):(1@0,1@1)", "(4,2):(1@0,1@1)", "(4,2):(2@0,2@1)"),
    ("(1,5):(2@1,2@0)", "5:2@0", "5:4@0"),
    ("(4,2):(1@1,0)", "(4,2):(-1@1,0)", "8:0@1"),
])
def test_the_sum_of_basis_strides_is_a_basis_stride(a, b, want):
    R = A.layout_add(P(a), P(b))
    assert str(R) == want
    assert P(str(R)) == R
    La, Lb = P(a), P(b)
    assert all(R(i) == La(i) + Lb(i) for i in range(A.size(R)))


def test_the_workbench_answers_a_parseable_sum(client):
    j = client.post("/api/algebra", json={"op": "layout_add", "args": ["8:1@0", "8:1@0"]})
    assert j.status_code == 200 and j.json()["result"] == "8:2@0"
