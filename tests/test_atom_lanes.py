"""An MMA atom's picture labels its threads by lane, the atom's ``thr_id``, as CuTe's ``print_latex(MMA_Atom)`` does
(it is ``print_latex(make_tiled_mma(atom))``): SM70's quad-pair atoms put threads 0-7 on lanes 0-3 and 16-19, so C's
cell (4, 0) is ``T16 V0`` (tests/oracle/cute_pictures.py, seeds 12754 and 12755). Both faces draw it from
``layoutlab.model.atom_tile``: the library's panels and the TV page. Atoms whose ``thr_id`` is the identity (SM80,
SM90) keep their thread indices."""

from __future__ import annotations

import re
from typing import Any

import pytest

import layoutlab
from algebra import atoms
from layoutlab import model
from layoutlab.inputs import panels

SM70 = "SM70_8x8x4_F32F16F16F32_TN"
SM80 = "SM80_16x8x16_F32F16F16F32_TN"


@pytest.fixture(scope="module")
def tv_client(app: Any) -> Any:
    from fastapi.testclient import TestClient

    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def _tv_page(client: Any, atom: str) -> str:
    """The TV page's atom result, C operand (the block the page renders and its form swaps in: ``panel=result``)."""
    r = client.get(f"/tv?atom={atom}&operand=C&panel=result")
    assert r.status_code == 200
    return r.text


def _page_cells(html: str) -> list[list[str]]:
    """The TV page's atom grid (#grid-tv) as rows of cell labels."""
    from tests.conftest import parse_grid

    return parse_grid(html, "grid-tv").text


def test_the_sm70_atoms_panels_label_threads_by_lane() -> None:
    a, b, c = panels(atoms.get(SM70))
    assert (c.threads[4][0], c.values[4][0]) == (16, 0)  # CuTe's node at (4,0): T16 V0
    assert (a.threads[4][0], a.values[4][0]) == (16, 0)
    assert {t for p in (a, b, c) for row in p.threads for t in row} == {0, 1, 2, 3, 16, 17, 18, 19}
    raw = model.tv_tile(atoms.get(SM70).C, 8, 8)  # cells and values are the TV layout's, threads renamed
    assert c.values == raw[1] and [[{4: 16, 5: 17, 6: 18, 7: 19}.get(t, t) for t in r] for r in raw[0]] == c.threads
    assert "T16V0" in layoutlab.text(atoms.get(SM70))
    assert re.search(r'data-offset="4" data-thread="16" data-value="0"', layoutlab.svg(atoms.get(SM70)))


def test_the_tv_page_labels_the_sm70_atom_by_lane(tv_client: Any) -> None:
    html = _tv_page(tv_client, SM70)
    cells = _page_cells(html)
    assert cells[4][0] == "T16V0" and cells[0][0] == "T0V0"
    assert not any("T4V" in x for row in cells for x in row)
    buttons = re.findall(r'data-thread="(\d+)" aria-pressed', html)  # the isolate-a-thread buttons name lanes
    assert buttons == ["0", "1", "2", "3", "16", "17", "18", "19"]
    ops = {o["operand"]: o for o in tv_client.get(f"/api/atoms/{SM70}").json()["operands"]}
    assert (ops["C"]["threads"][4][0], ops["C"]["values"][4][0]) == (16, 0)


def test_an_sm80_atoms_labels_are_its_thread_indices(tv_client: Any) -> None:
    atom = atoms.get(SM80)
    for p, op in zip(panels(atom), "ABC", strict=True):
        assert (p.threads, p.values) == model.tv_tile(atom.operand(op), *atom.operand_shape(op))[:2]
    c = panels(atom)[2]
    assert (c.threads[1][0], c.values[1][0]) == (4, 0)
    cells = _page_cells(_tv_page(tv_client, SM80))
    assert cells[1][0] == "T4V0" and cells == [[f"T{t}V{v}" for t, v in zip(tr, vr, strict=True)]
                                               for tr, vr in zip(c.threads, c.values, strict=True)]


def test_the_walkthroughs_outline_an_sm70_thread_where_the_atoms_picture_names_its_lane() -> None:
    """The MMA walkthrough and the kernel path outline thread t's cells in the atom's picture: thread 5 of the atom
    is lane 17 there (it was compared with the index 5, which names no cell once the cells name lanes)."""
    from app.services import kernel_path as KP
    from app.services import walkthrough as W

    c = panels(atoms.get(SM70))[2]
    lane17 = {(i, j) for i, row in enumerate(c.threads) for j, t in enumerate(row) if t == 17}
    assert lane17 == {(5, 0), (5, 1), (5, 4), (5, 5), (7, 0), (7, 1), (7, 4), (7, 5)}
    _, text, grids, _ = W.mma_walk(SM70, "(1,2,1)", "", "5").levels[0]
    assert set(grids[2].marks) == lane17 and "thread 5 of the atom (lane 17" in text
    assert all(g.marks for g in grids)
    kp = KP.kernel_path(SM70, "(1,2,1)", "", "UniversalCopy_32b", "UniversalCopy_32b", "UniversalCopy_32b", "", "5")
    assert set(kp.steps[0].grids[0].marks) == lane17


def test_the_tiled_mma_sections_thread_buttons_name_its_lanes(tv_client: Any) -> None:
    """SM70 (1,2,1): 16 threads on lanes 0-7 and 16-23, the labels of its cells; each button isolates cells."""
    r = tv_client.get(f"/tv?panel=tiled&tatom={SM70}&tlayout=(1,2,1)&top=C")
    assert r.status_code == 200
    buttons = [int(t) for t in re.findall(r'data-thread="(\d+)" aria-pressed', r.text)]
    assert buttons == [*range(8), *range(16, 24)]
    from tests.conftest import parse_grid

    labels = {x.split("V")[0] for row in parse_grid(r.text, "grid-tiled").text for x in row}
    assert labels == {f"T{t}" for t in buttons}
    r = tv_client.get(f"/tv?panel=tiled&tatom={SM80}&tlayout=(2,2,1)&top=C")  # identity thr_id: 0 .. 127
    assert [int(t) for t in re.findall(r'data-thread="(\d+)" aria-pressed', r.text)] == list(range(128))
