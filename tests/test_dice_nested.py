"""``dice``, ``local_tile`` and ``local_partition`` with nested projections against CuTe C++'s prints
(``tests/oracle/data/dice_nested_s111xx.json``): CuTe's ``dice`` lifts the kept entries of a nested projection into
its level (``lift_dice``), so ``dice(Step<_1,Step<X,_1>>, (a,(b,c))) == (a,c)``; with a projection
``local_partition``'s thread index is a thread of the whole thread layout."""

import json
import re
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


def test_tile_of_an_unmergeable_mode_is_cutes_where_it_is_the_function() -> None:
    """3 does not divide the identity tensor's (4,6) mode, which does not coalesce, so the divide under local_tile is
    not A o B; the tile at (1,0) (coordinates (2..3, (0..2, 0))) is CuTe's print, the one at (1,1) is refused."""
    x = origin((8, (4, 6)))
    assert str(A.local_tile(x, (2, 3), (1, 0))) == "ArithTuple(2,(0,0)) o (2,3):(1@0,1@0@1)"
    assert A.local_tile(A.parse("(8,(4,6)):(1,(8,100))"), (2, 3), (1, 0)) == (A.Layout((2, 3), (1, 8)), 2)
    with pytest.raises(LayoutError, match=r"at i = 4 .* = ArithTuple\(2,\(3,0\)\) o \(2,3\):\(1@0,1@0@1\)"):
        A.local_tile(x, (2, 3), (1, 1))  # CuTe's (3,0),(4,0),(5,0) for (3,0),(0,1),(1,1)
    with pytest.raises(LayoutError, match="stride divisibility"):
        A.logical_divide(x.layout, (A.Layout(2), A.Layout(3)))


IDT = json.loads((Path(__file__).parent / "oracle" / "data" / "identity_nested_s112xx.json").read_text())


@pytest.mark.parametrize("case", IDT["cases"], ids=lambda c: f"{c['op']}-{c['shape']}-{c['tiler']}")
def test_identity_tensor_ops_against_cute(case: dict) -> None:
    """local_tile / local_partition / composition / logical_divide on nested identity tensors, tiles that need not
    divide: CuTe's print, or a refusal that names it (``cpp`` None: CuTe does not compile it either)."""
    zero = lambda s: 0 if isinstance(s, int) else tuple(zero(e) for e in s)  # noqa: E731
    shape, t = tup(case["shape"]), tuple(case["tiler"])
    x = A.make_coord_tensor(zero(shape), shape)
    ops = {"local_tile": lambda: A.local_tile(x, t, tuple(case.get("coord", ()))),
           "local_partition": lambda: A.local_partition(x, A.Layout(t), case.get("t")),
           "composition": lambda: A.composition(x.layout, tuple(A.Layout(k) for k in t)),
           "logical_divide": lambda: A.logical_divide(x.layout, tuple(A.Layout(k) for k in t))}
    if case["ours"] is not None:
        assert str(ops[case["op"]]()) == case["ours"] == case["cpp"]
    else:
        with pytest.raises(LayoutError, match=re.escape(case["cpp"] or "") + ("" if case["cpp"] else ".")):
            ops[case["op"]]()
