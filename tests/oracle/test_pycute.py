"""``algebra`` against CUTLASS's pycute (marker ``oracle``), where the two are expected to agree.

pycute is an older, looser model of CuTe. Where they disagree CuTe wins (CONTRACT §1), so the random comparison is
restricted to inputs on which pycute follows CuTe, and compares functions (size and every offset), not strings:

- layouts without size-1 modes or stride-0 modes, and injective (pycute's complement, right_inverse and
  hier_unzip treat those differently);
- Layout arguments only (pycute's by-mode tilers keep the modes past the tiler, CuTe drops them in composition;
  pycute's logical_product with an int tiler calls logical_divide);
- for composition and divides, a right-hand side that stays inside size(A) (past it, CuTe extends along A's
  coalesced last mode, pycute along its plain coalesce);
- cases where both answer: pycute checks no divisibility condition (it answers where CuTe refuses) and asserts
  on some inputs CuTe accepts;
- left_inverse only on the image of L (pycute builds it from a complement, CuTe from the sorted strides; both
  give R(L(i)) == i for injective L), and only for layouts whose sorted modes nest (each stride a multiple of
  the previous stride * shape): otherwise pycute's complement is wrong and so is its left inverse, e.g.
  ``(2,4):(4,12)``: CuTe ``(4,3,4):(0,1,2)``, pycute ``(4,2):(8,1)``.

``DIVERGENCES`` pins one example of each known difference, with CuTe's answer (checked against CuTe C++ with
``cute_cpp.py``) and pycute's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cute_cases as cc  # noqa: E402

pycute = pytest.importorskip("pycute")
pytestmark = pytest.mark.oracle

N = int(os.environ.get("LAYOUTLAB_ORACLE_N", "300"))
SEED = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", "7"))

# (op, args, CuTe's answer, pycute's answer)
DIVERGENCES = [
    # size-1 modes: pycute complements against size(A), CuTe against shape(coalesce(A)): the stride of the size-1
    # tile differs
    ("logical_divide", ["6:1", 1], "(1,6):(0,1)", "(1,6):(1,1)"),
    ("logical_product", ["4:2", 1], "(4,1):(2,0)", "(1,4):(2,2)"),
    # past the end of A: CuTe coalesces A keeping its function outside the domain (coalesce_x)
    ("composition", ["(4,1):(1,0)", "8:1"], "(4,2):(1,0)", "8:1"),
    # overlapping complement: CuTe refuses (static_assert), pycute returns a shape-0 mode
    ("complement", ["(2,3):(2,3)"], "refused", "(2,0):(1,4)"),
    # left inverse of a non-injective layout
    ("left_inverse", ["(2,2):(0,1)"], "2:2", "1:0"),
    ("left_inverse", ["4:2"], "(2,4):(0,1)", "(2,4):(4,1)"),
    # right inverse: pycute stops at the first stride it cannot continue from (here the stride 0)
    ("right_inverse", ["(2,4):(0,1)"], "4:2", "1:0"),
    # by-mode tiler: CuTe drops the modes past the tiler in composition
    ("composition", ["(4,6,8):(1,4,24)", ["2:1"]], "(2):(1)", "(2,6,8):(1,4,24)"),
    # pycute checks no divisibility condition
    ("composition", ["(2,3):(18,2)", "3:1"], "refused", "2:18"),
    # an int tiler in logical_product: pycute divides instead
    ("logical_product", ["4:1", [2]], "((4,2)):((1,4))", "((2,2)):((1,2))"),
    # zip2_by on a `_` tiler mode: CuTe refuses, pycute makes a (1:0, mode) pair
    ("zipped_divide", ["(2,2):(2,1)", [None]], "refused", "((1),(2,2)):((0),(2,1))"),
    # tiled_divide unpacks only the rest mode; pycute also unwraps a rank-1 rest
    ("tiled_divide", ["4:32", ["(2,2):(2,1)"]], "(((2,2)),(1)):(((64,32)),(0))", "(((2,2)),1):(((64,32)),0)"),
]


def to_pycute(a):
    if a is None or isinstance(a, int):
        return a
    if isinstance(a, list):
        return tuple(to_pycute(x) for x in a)
    if ":" not in a:
        return cc.parse_tuple(a)
    shape, stride = cc.split_layout(a)
    return pycute.Layout(shape, stride)


def run_pycute(case: dict) -> str:
    try:
        res = getattr(pycute, case["op"])(*[to_pycute(a) for a in case["args"]])
    except Exception:  # noqa: BLE001 - pycute asserts on inputs it does not handle
        return "refused"
    return res if isinstance(res, str) else cc.lay(res.shape, res.stride)


@pytest.mark.parametrize(("op", "args", "cute", "py"), DIVERGENCES, ids=[d[0] for d in DIVERGENCES])
def test_known_divergence(op: str, args: list, cute: str, py: str) -> None:
    case = {"op": op, "args": args}
    assert cc.run_ours(case) == cute
    assert run_pycute(case) == py


def _offsets(text: str) -> list[int]:
    shape, stride = cc.split_layout(text)
    return [cc.offset_at(shape, stride, i) for i in range(cc.prod(shape))]


def _plain(text: str) -> bool:
    shape, stride = cc.split_layout(text)
    offs = _offsets(text)
    return min(cc.flat(shape)) > 1 and min(cc.flat(stride)) > 0 and len(set(offs)) == len(offs)


def _nested(text: str) -> bool:
    """Sorted by stride, each mode starts at a multiple of where the previous one ends (pycute's complement
    assumes it; CuTe refuses or, for left_inverse, still finds an inverse)."""
    shape, stride = cc.split_layout(text)
    cur = 1
    for d, s in sorted(zip(cc.flat(stride), cc.flat(shape), strict=True)):
        if d % cur:
            return False
        cur = d * s
    return True


def _comparable(case: dict) -> bool:
    args = case["args"]
    if not all(isinstance(a, str) and ":" in a and _plain(a) for a in args):
        return False
    if case["op"] == "left_inverse":
        return _nested(args[0])
    if case["op"] in ("composition", "logical_divide", "zipped_divide", "tiled_divide"):
        return max(_offsets(args[1])) < cc.prod(cc.split_layout(args[0])[0])
    return True


OPS = ["coalesce", "filter", "composition", "complement", "right_inverse", "left_inverse", "logical_divide",
       "zipped_divide", "tiled_divide", "logical_product", "zipped_product", "tiled_product"]


@pytest.mark.parametrize("op", OPS)
def test_random_agreement(op: str) -> None:
    saved = list(cc.LEAVES)
    cc.LEAVES[:] = [x for x in saved if x > 1]
    try:
        cases = [c for c in cc.gen_cases(SEED, 4 * N, [op], big=0, neg=0) if _comparable(c)][:N]
    finally:
        cc.LEAVES[:] = saved
    compared, bad = 0, []
    for case in cases:
        ours, py = cc.run_ours(case), run_pycute(case)
        if "refused" in (ours, py):
            continue
        compared += 1
        if op == "left_inverse":
            lay = case["args"][0]
            same = all(cc.offset_at(*cc.split_layout(ours), o) == i for i, o in enumerate(_offsets(lay)))
            same = same and all(cc.offset_at(*cc.split_layout(py), o) == i for i, o in enumerate(_offsets(lay)))
        else:
            same = cc.judge(py, ours) != "mismatch"
        if not same:
            bad.append(f"{op}{tuple(case['args'])}: pycute {py}  ours {ours}")
    assert compared >= min(50, len(cases) // 2), f"only {compared} comparable cases"
    assert not bad, f"{len(bad)} of {compared} differ from pycute:\n" + "\n".join(bad[:20])
