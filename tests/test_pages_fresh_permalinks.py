"""Fresh permalinks (seeds 17610-17649): what each page draws is what the algebra and the JSON API answer for the
same inputs, cell by cell, and the page's permalink reproduces its own state."""

from __future__ import annotations

import html
import random
import re

import pytest

import algebra as A


def rand_layout(rng: random.Random) -> A.Layout:
    shape = (rng.choice([2, 3, 4]), (rng.choice([1, 2]), rng.choice([2, 4])))
    stride = (rng.choice([1, 2, 8]), (rng.choice([4, 16]), rng.choice([0, 1, 32])))
    return A.Layout(shape, stride)


def api_table(client, layout: str) -> list[list[str]]:
    r = client.post("/api/layout", json={"layout": layout})
    assert r.status_code == 200, r.text
    return [[str(x) for x in row] for row in r.json()["table"]["offsets"]]


@pytest.mark.parametrize("seed", range(17610, 17630))
def test_the_explorer_draws_the_api_table(client, read_grid, seed):
    lay = str(rand_layout(random.Random(seed)))
    r = client.get("/", params={"layout": lay})
    assert r.status_code == 200 and 'role="alert"' not in r.text
    assert read_grid(r.text, "grid-explorer").text == api_table(client, lay), lay


@pytest.mark.parametrize("seed", range(17630, 17650))
@pytest.mark.parametrize("op", ["composition", "logical_divide", "blocked_product"])
def test_the_workbench_draws_the_op_the_api_answers(client, read_grid, seed, op):
    rng = random.Random(seed)
    a = rand_layout(rng)
    b = A.Layout(rng.choice([2, 4]), rng.choice([1, 2])) if op != "blocked_product" else A.Layout((2, 2))
    api = client.post("/api/algebra", json={"op": op, "args": [str(a), str(b)]})
    r = client.get("/algebra", params={"op": op, "a": str(a), "b": str(b)})
    assert r.status_code == 200
    if api.status_code == 422:  # refused: the page says so and draws no result
        assert 'role="alert"' in r.text and 'id="grid-r"' not in r.text
        assert html.escape(api.json()["detail"][:40], quote=True) in r.text or "refus" in r.text.lower()
        return
    result = api.json()["result"]
    assert read_grid(r.text, "grid-r").text == api_table(client, result), (op, str(a), str(b), result)
    assert read_grid(r.text, "grid-a").text == api_table(client, str(a))
    link = re.search(r'id="permalink"[^>]*href="([^"]+)"', r.text) or re.search(r'href="(/algebra\?[^"]+)"', r.text)
    assert link, "no permalink on the workbench"
    again = client.get(html.unescape(link.group(1)))
    assert read_grid(again.text, "grid-r").text == read_grid(r.text, "grid-r").text
