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


def _cells_of(grid: Any, lane: int) -> set[tuple[int, int]]:
    """The cells of a picture (a GridView of a TV grid) that name ``lane``."""
    return {(i, j) for i, row in enumerate(grid.meta["threads"]) for j, t in enumerate(row) if t == lane}


def _kernel_path(lane: str, layout: str = "(1,2,1)") -> Any:
    from app.services import kernel_path as KP

    return KP.kernel_path(SM70, layout, "", "UniversalCopy_32b", "UniversalCopy_32b", "UniversalCopy_32b", "", lane)


def test_the_walkthroughs_outline_an_sm70_lane_where_the_atoms_picture_names_it() -> None:
    """The MMA walkthrough and the kernel path follow a lane, the id CuTe's get_slice reads: in SM70 (1,2,1) lane 17
    is thread 5 of the first atom, lane 21 thread 5 of the second; both are T17 in the atom's picture."""
    from app.services import walkthrough as W

    c = panels(atoms.get(SM70))[2]
    lane17 = {(i, j) for i, row in enumerate(c.threads) for j, t in enumerate(row) if t == 17}
    assert lane17 == {(5, 0), (5, 1), (5, 4), (5, 5), (7, 0), (7, 1), (7, 4), (7, 5)}
    for lane in ("17", "21"):
        _, text, grids, _ = W.mma_walk(SM70, "(1,2,1)", "", lane).levels[0]
        assert set(grids[2].marks) == lane17 and f"thread {lane} is thread 5 of the atom (lane 17" in text
        assert all(g.marks for g in grids)
        kp = _kernel_path(lane)
        assert set(kp.steps[0].grids[0].marks) == lane17 and "the atom's thread 5, T17 in its picture" in \
            kp.steps[0].text


@pytest.mark.parametrize("face", ["kernel path", "walkthrough"])
def test_sm70_lane_16_follows_the_atoms_thread_4(face: str) -> None:
    """Lane 16 of SM70 (1,2,1) is thread 4 of the first atom (T16 in its picture): both pages follow it through the
    atom, the tiled MMA and the partitions (the thread field took indices 0..15, so 16 was refused)."""
    import algebra as A
    from app.services import walkthrough as W

    tm = atoms.make_tiled_mma(SM70, A.Layout((1, 2, 1)))
    c = panels(atoms.get(SM70))[2]
    t16 = {(i, j) for i, row in enumerate(c.threads) for j, t in enumerate(row) if t == 16}
    assert t16 == {(4, 0), (4, 1), (4, 4), (4, 5), (6, 0), (6, 1), (6, 4), (6, 5)}
    frag, off = tm.partition_C(A.Layout((8, 16)), 16)
    mine = {((off + o) % 8, (off + o) // 8) for o in A.offsets(frag)}
    lanes = {*range(8), *range(16, 24)}
    if face == "kernel path":
        kp = _kernel_path("16")
        atom_grid, part_c = kp.steps[0].grids[0], kp.steps[4].grids[2]
        assert kp.thread == 16 and kp.lanes == sorted(lanes) and "the atom's thread 4" in kp.steps[0].text
        assert set(kp.steps[1].grids[0].marks) == mine  # get_layoutC_TV over the tiled MMA's 8x16
    else:
        w = W.mma_walk(SM70, "(1,2,1)", "", "16")
        atom_grid, part_c = w.levels[0][2][2], w.parts[2].grid
        assert w.thread == 16 and w.lanes == sorted(lanes) and "thread 16 is thread 4 of the atom" in w.levels[0][1]
        assert set(w.levels[1][2][0].marks) == mine  # the warps
    assert set(atom_grid.marks) == t16 and _cells_of(atom_grid, 16) == t16
    assert set(part_c.marks) == mine and mine == _cells_of(part_c, 16)
    assert {t for row in part_c.meta["threads"] for t in row} == lanes  # every cell names its lane (none empty)


def test_sm80_lanes_are_its_thread_indices() -> None:
    """Identity thr_id: the lanes are 0 .. 127 and lane 37 is the atom's thread 5, as the index was."""
    from app.services import walkthrough as W

    w = W.mma_walk(SM80, "(2,2,1)", "", "37")
    assert w.lanes == list(range(128)) and "thread 37 is thread 5 of the atom," in w.levels[0][1]
    assert {x.split("V")[0] for g in w.levels[0][2] for (i, j) in g.marks for x in [g.text[i][j]]} == {"T5"}
    kp = _kernel_path("31", "(2,2,1)").lanes
    assert kp == list(range(32))  # SM70 (2,2,1): 32 threads on every lane 0 .. 31


SM70_KP = {"kp_atom": SM70, "kp_layout": "(1,2,1)", "kp_perm": "", "kp_a": "UniversalCopy_32b",
           "kp_b": "UniversalCopy_32b", "kp_c": "UniversalCopy_32b", "kp_cta": ""}
SM70_MW = {"mw_atom": SM70, "mw_layout": "(1,2,1)", "mw_tile": ""}
PAGES = {"kernel": (SM70_KP, "kp_t"), "mmawalk": (SM70_MW, "mw_t")}


def _alert(html: str) -> str:
    m = re.search(r'<p class="msg error" role="alert">(.*?)</p>', html, re.S)
    return m.group(1) if m else ""


@pytest.mark.parametrize("name", list(PAGES))
def test_the_pickers_buttons_name_the_lanes(tv_client: Any, name: str) -> None:
    q, field = PAGES[name]
    r = tv_client.get("/tv", params={**q, field: "T17", "panel": name})
    assert r.status_code == 200 and not _alert(r.text)
    buttons = re.findall(r'data-lane="(\d+)" aria-pressed="(true|false)"', r.text)
    assert [int(t) for t, _ in buttons] == [*range(8), *range(16, 24)]
    assert [t for t, on in buttons if on == "true"] == ["17"]
    assert "0-7, 16-23" in r.text  # the summary names the lanes
    sm80 = {"kernel": {"kp_t": "37"}, "mmawalk": {"mw_t": "37"}}[name]  # the defaults: SM80, (2,2,1)
    buttons = re.findall(r'data-lane="(\d+)" aria-pressed', tv_client.get("/tv", params={**sm80, "panel": name}).text)
    assert buttons == [str(t) for t in range(128)]


@pytest.mark.parametrize("name", list(PAGES))
@pytest.mark.parametrize("value,needle", [
    ("8", "thread: 8 is not the lane of any thread"), ("15", "thread: 15 is not the lane of any thread"),
    ("-1", "thread: -1 is out of range"), ("24", "thread: 24 is out of range"),
    ("9" * 30, "thread: " + "9" * 30 + " is out of range"), ("1.5", "thread: &#39;1.5&#39; is not a lane"),
    ("abc", "thread: &#39;abc&#39; is not a lane"), ("T-3", "thread: -3 is out of range"), ("1e3", "is not a lane"),
    ("²", "is not a lane"), ("x" * 3000, "is not a lane"),
])
def test_a_thread_that_is_no_lane_is_refused_with_the_lanes_named(tv_client: Any, name: str, value: str,
                                                                    needle: str) -> None:
    q, field = PAGES[name]
    for extra in ({"panel": name}, {}):  # the fragment and the whole page
        r = tv_client.get("/tv", params={**q, field: value, **extra})
        assert r.status_code == 200
        alert = _alert(r.text)
        assert needle in alert and "the 16 threads are lanes 0-7, 16-23" in alert and len(alert) < 300


def test_an_old_permalinks_thread_is_a_lane(tv_client: Any) -> None:
    """kp_t / mw_t name a lane, as get_slice reads it; the partitions always took it so (SM70 (1,2,1) kp_t=5 is
    thread 1 of the atom at N = 1, its fragments those of get_slice(5)); the blank field is lane 0."""
    import algebra as A
    from tests.conftest import parse_grid

    tm = atoms.make_tiled_mma(SM70, A.Layout((1, 2, 1)))
    frag, off = tm.partition_A(A.Layout((8, 4)), 5)
    mine = {((off + o) % 8, (off + o) // 8) for o in A.offsets(frag)}
    html = tv_client.get("/tv", params={**SM70_KP, "kp_t": "5"}).text
    g = parse_grid(html, "kp-part-a")
    assert {ij for ij, (_, cls) in g.cells.items() if "acc" in cls} == mine
    assert "following thread 5." in html and "mma.get_slice(5)" in html
    blank = tv_client.get("/tv", params={**SM70_MW, "mw_t": "", "panel": "mmawalk"}).text
    assert 'Following thread <b class="mono">0</b>' in blank


def test_the_partition_api_takes_lanes(tv_client: Any) -> None:
    ok = tv_client.post("/api/partition", json={"atom": SM70, "atom_layout": "(1,2,1)", "thread": 16})
    assert ok.status_code == 200 and ok.json()["thread"] == 16
    bad = tv_client.post("/api/partition", json={"atom": SM70, "atom_layout": "(1,2,1)", "thread": 8})
    assert bad.status_code == 422 and "lanes 0-7, 16-23" in bad.json()["detail"]


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
