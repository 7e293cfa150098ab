"""``algebra`` against the CuTe DSL (``nvidia-cutlass-dsl``; marker ``oracle``; skips without it).

The authority is CuTe C++ (the corpus and ``test_cute_live.py``). The DSL (4.8 here, the C++ headers are 4.2) differs
from it in edge cases, so this third oracle only checks what they share:

- where both the DSL and we answer, the same size and the same offsets (the DSL prints other strides for
  size-1 modes, e.g. ``composition(1:64, <1>)`` is ``(1):(0)`` in the DSL and ``(1):(64)`` in C++; it unwraps
  rank-1 modes in flat_divide / tiled_divide / raked_product; see MISMATCHES.md);
- not refusals: the DSL answers some cases C++ refuses (overlapping complements give a shape-0 mode) and
  crashes on others (SIGFPE), so a refusal on either side is skipped;
- left_inverse only of injective layouts (of ``(1,2):(1,0)`` C++ gives ``2:0``, the DSL ``1:0``);
- swizzled layouts (``Sw<B,M,S> o O o L``, printed ``S<B,M,S> ...`` by the DSL) for the ops the DSL re-composes as
  C++ does: composition with a layout or tiler, divides, products, tile_to_shape, coalesce.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cute_cases as cc  # noqa: E402
import cute_dsl  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.timeout(1800),
              pytest.mark.skipif(not cute_dsl.available(), reason="nvidia-cutlass-dsl is not installed")]


def _injective(text: str) -> bool:
    shape, stride = cc.split_layout(text)
    offs = [cc.offset_at(shape, stride, i) for i in range(cc.prod(shape))]
    return len(set(offs)) == len(offs)


def _skip_swizzled(case: dict) -> bool:
    """Swizzled cases the DSL does not model like C++: ``Swizzle o Layout`` (the DSL refuses it), complement and
    filter of a composed layout (the DSL answers differently)."""
    return case["op"] in ("complement", "filter") or (case["op"] == "composition" and " o " not in case["args"][0])


@pytest.mark.parametrize("swizzled", [False, True], ids=["plain", "swizzled"])
def test_random_cases_match_dsl(swizzled: bool) -> None:
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    n = int(os.environ.get("LAYOUTLAB_ORACLE_N", "400"))
    if swizzled:
        import cute_swizzle

        cases = [c for c in cute_swizzle.gen_cases(seed, n // 2) if not _skip_swizzled(c)]
    else:
        cases = [c for c in cc.gen_cases(seed, n) if cute_dsl.supported(c)]
    dsl = cute_dsl.run_cases(cases)
    compared, bad = 0, []
    for case, d in zip(cases, dsl, strict=True):
        ours = cc.run_ours(case)
        if d in ("refused", "crash", "n/a") or ours == "refused":
            continue
        if case["op"] == "left_inverse" and not _injective(case["args"][0]):
            continue
        compared += 1
        if cc.judge(d, ours) == "mismatch":
            bad.append(f"{case['op']}{tuple(case['args'])}: dsl {d}  ours {ours}")
    assert compared >= len(cases) // 2, f"seed {seed}: only {compared} of {len(cases)} cases compared"
    assert not bad, f"seed {seed}: {len(bad)} of {compared} differ from the DSL:\n" + "\n".join(bad[:30])
