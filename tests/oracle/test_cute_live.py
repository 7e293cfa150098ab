"""``algebra`` against CuTe C++ on fresh random cases (compiled and run now; marker ``oracle``).

Skips without a C++ compiler, the ``nvidia-cutlass`` headers or the CUDA headers. ``LAYOUTLAB_ORACLE_SEED`` fixes the
seed (default: a new one each run, printed on failure) and ``LAYOUTLAB_ORACLE_N`` the number of cases (default 300
plain layouts, and a third as many swizzled ones). To keep a run's cases, use
``python tests/oracle/cute_cpp.py --seed S --n N --out tests/oracle/data/corpus_sS.json``.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cute_cases as cc  # noqa: E402
import cute_cpp  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.timeout(1800)]

needs_cxx = pytest.mark.skipif(cute_cpp.toolchain() is None, reason="no C++ compiler with CuTe and CUDA headers")


def _run(seed: int, n: int, ops: list[str] | None = None, swizzle: bool = False) -> None:
    if swizzle:
        import cute_swizzle

        cases = cute_swizzle.gen_cases(seed, n)
    else:
        cases = cc.gen_cases(seed, n, ops, deep=0.2)
    recs = cute_cpp.run_cases(cases)
    bad = []
    for rec in recs:
        ours = cc.run_ours(rec)
        if cc.judge(rec["cute"], ours) in ("mismatch", "function"):
            bad.append(f"{rec['op']}{tuple(rec['args'])}: cute {rec['cute']}  ours {ours}")
    assert not bad, f"seed {seed}: {len(bad)} of {n} differ from CuTe:\n" + "\n".join(bad[:30])


@needs_cxx
def test_random_cases_match_cute() -> None:
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    _run(seed, int(os.environ.get("LAYOUTLAB_ORACLE_N", "300")))


@needs_cxx
def test_random_swizzled_cases_match_cute() -> None:
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    _run(seed, int(os.environ.get("LAYOUTLAB_ORACLE_N", "300")) // 3, swizzle=True)


@needs_cxx
def test_known_printouts() -> None:
    """The emitter and the output reader themselves, on answers checked by hand against CuTe's documentation."""
    cases = [
        {"op": "composition", "args": ["(6,2):(8,2)", "(4,3):(3,1)"]},
        {"op": "complement", "args": ["(2,2):(1,6)", 24]},
        {"op": "logical_divide", "args": ["(4,2,3):(2,1,8)", "4:2"]},
        {"op": "max_common_vector", "args": ["(4,8):(1,4)", "32:1"]},
        {"op": "left_inverse", "args": ["(4,2):(2,1)"]},
        {"op": "composition", "args": ["(4,3):(1,8)", "6:1"]},
    ]
    got = [r["cute"] for r in cute_cpp.run_cases(cases)]
    assert got == ["((2,2),3):((24,2),8)", "(3,2):(2,12)", "((2,2),(2,3)):((4,1),(2,8))", "32", "(2,4):(4,1)",
                   "refused"]
