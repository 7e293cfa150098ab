"""One seed of ``bench/truth_hunt.py``: wide swizzles (negative shifts) over carry-free tiles with gaps, broadcast
and size-1 modes, their F2 forms, plain layouts with zero and negative strides; every answer checked against its
post-condition by enumeration, every refusal that names CuTe's print checked to be one."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import truth_hunt  # noqa: E402


def test_one_seed_of_the_truth_hunt_has_no_failure() -> None:
    stats: Counter = Counter()
    fails: list[str] = []
    truth_hunt.hunt(17060, 25, stats, fails)
    assert not fails, fails[:5]
    assert stats["composition answered"] > 20 and stats["right_inverse answered"] > 20


def test_the_hunt_catches_a_wrong_answer_and_an_over_refusal() -> None:
    import algebra as A

    stats: Counter = Counter()
    fails: list[str] = []
    a, b = A.parse("(2,4):(4,1)"), A.parse("Sw<3,0,-5> o 0 o 256:1")
    wrong = A.parse("Sw<3,0,-4> o 0 o (2,128):(4,1)")  # CuTe's print: R(33) = 84, A(B(33)) = 4
    assert truth_hunt.fb.check_composition(a, b, wrong) is not None
    msg = "composition(...) refused. CuTe would print composition(8:1, 4:1) = 4:1"
    assert truth_hunt._over_refused("composition(8:1, 4:1)", msg, lambda r: None) is not None
    truth_hunt.run(stats, fails, "composition", (a, b), lambda r: truth_hunt.fb.check_composition(a, b, r))
    assert stats["composition refused"] == 1 and not fails
