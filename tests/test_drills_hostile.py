"""Hostile and hedged answers on fresh drills (seeds 16100-16199): two formulas or two answers in one text, text
around the key, and the routes' answers to them (a verdict or a 4xx, never a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.drills.core import generate


@pytest.fixture()
def client(app: Any) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)


def _symbolic(variant: str) -> Any:
    for seed in range(16100, 16200):
        d = generate("symbolic", seed)
        if d.variant.startswith(variant):
            return d
    raise AssertionError(f"no symbolic {variant} drill in 16100-16199")


@pytest.mark.parametrize("variant", ["element", "formula"])
def test_two_formulas_in_one_answer_are_unreadable_not_a_crash(client: TestClient, variant: str) -> None:
    d = _symbolic(variant)
    key = d.expected
    texts = [f"{key}\n{key} + 1", f"{key}\n{key}"] + ([f"{key} 7", f"{key} {key}"] if key[-1].isdigit() else [])
    for text in texts:
        g = d.grade(text)
        assert not g.correct and not g.readable, (d.id, text, g)
        r = client.post(f"/api/drills/{d.id}/answer", json={"answer": text})
        assert r.status_code == 200 and r.json()["readable"] is False, (d.id, text, r.status_code, r.text[:200])


@pytest.mark.parametrize("kind", ["symbolic", "index_formula"])
def test_a_formula_broken_over_lines_reads_as_one(client: TestClient, kind: str) -> None:
    d = generate(kind, next(s for s in range(16100, 16200) if "+" in generate(kind, s).expected))
    head, _, tail = d.expected.rpartition("+")
    g = d.grade(f"{head.strip()}\n+ {tail.strip()}")
    assert g.correct, (d.id, d.expected, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": f"{head.strip()}\n+ {tail.strip()} + 1"})
    assert r.status_code == 200 and r.json()["correct"] is False and r.json()["readable"] is True
