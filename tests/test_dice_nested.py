"""``dice``, ``local_tile`` and ``local_partition`` with nested projections against CuTe C++'s prints
(``tests/oracle/data/dice_nested_s111xx.json``): CuTe's ``dice`` lifts the kept entries of a nested projection into
its level (``lift_dice``), so ``dice(Step<_1,Step<X,_1>>, (a,(b,c))) == (a,c)``; with a projection
``local_partition``'s thread index is a thread of the whole thread layout."""

import json
from pathlib import Path
from typing import Any

import pytest

import algebra as A
from algebra.core.errors import LayoutError
from algebra.core.products import dice

DATA = json.loads((Path(__file__).parent / "oracle" / "data" / "dice_nested_s111xx.json").read_text())


def tup(v: Any) -> Any:
    return tuple(tup(x) for x in v) if isinstance(v, list) else v


def origin(shape: Any) -> Any:
    return A.make_coord_tensor(tuple(0 for _ in shape), shape)


def test_dice_lifts_nested_modes() -> None:
    assert dice((1, (None, 1)), (8, (4, 6))) == (8, 6)
    assert dice((1, 1), (8, (4, 6))) == (8, (4, 6))  # a kept nested mode stays one mode
    assert dice(((1, None), None, (1, (1,))), ((2, 3), 5, (4, (6,)))) == (2, 4, 6)
    assert dice(1, (4, 6)) == (4, 6) and dice(None, (4, 6)) == ()
    with pytest.raises(LayoutError, match="mismatched ranks"):
        dice((1, (1, None)), (8, 4))


@pytest.mark.parametrize("case", DATA["local_tile"], ids=lambda c: f"{c['proj']}-{c['tiler']}-{c['shape']}")
def test_local_tile_nested_projection(case: dict) -> None:
    shape, proj, tiler, coord = (tup(case[k]) for k in ("shape", "proj", "tiler", "coord"))
    assert A.inttuple.to_str(dice(proj, tiler)) == case["dt"]
    sub, off = A.local_tile(A.Layout(shape), tiler, coord, proj)
    assert f"{sub} @ {off}" == case["tile"]
    if "id" in case:
        assert str(A.local_tile(origin(shape), tiler, coord, proj)) == case["id"]


@pytest.mark.parametrize("case", DATA["local_partition"], ids=lambda c: f"{c['thr']}-{c['proj']}-{c['t']}")
def test_local_partition_projection(case: dict) -> None:
    shape, proj, thr = tup(case["shape"]), tup(case["proj"]), A.parse(case["thr"])
    sub, off = A.local_partition(A.Layout(shape), thr, case["t"], proj)
    assert f"{sub} @ {off}" == case["cpp"]
    if "id" in case:
        assert str(A.local_partition(origin(shape), thr, case["t"], proj)) == case["id"]


def test_local_partition_projection_checks_the_whole_thread_layout() -> None:
    thr = A.parse("(2,16,1):(16,1,0)")  # CuTe's example: thread 21 is at m = 1 of Step<_1,X,_1>
    assert A.local_partition(A.Layout((8, 32)), thr, 21, (1, None, 1)) == (A.Layout((4, 32), (2, 8)), 1)
    with pytest.raises(LayoutError, match="out of range 0..31"):
        A.local_partition(A.Layout((8, 32)), thr, 37, (1, None, 1))
