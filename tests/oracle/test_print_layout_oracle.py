"""``layoutlab show`` against ``cute::print_layout`` compiled from CuTe's headers (marker ``oracle``): the same table,
character for character but for the header line, where CuTe writes its static integers as ``_4``.

Skips without a C++ compiler, the ``nvidia-cutlass`` headers or the CUDA headers (tests/oracle/cute_cpp.py).

Fresh random layouts (tests/oracle/cute_print.py: nested shapes, size-1 modes, negative and zero strides, swizzles,
rank-1 layouts, TV layouts) against ``print_layout``, ``print_latex`` and ``print_latex_tv``:

    LAYOUTLAB_ORACLE_SEED=9700 LAYOUTLAB_ORACLE_N=80 python -m pytest -m oracle tests/oracle/test_print_layout_oracle.py
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import algebra as A
import layoutlab

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cute_cpp  # noqa: E402
import cute_print  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.timeout(900)]

LAYOUTS = ["(4,8):(8,1)", "(4,8):(1,4)", "(2,(2,2)):(4,(1,2))", "((2,2),(2,4)):((1,4),(2,8))", "(8,8):(1,100)",
           "(3,5):(5,1)", "((4,2),(2,3)):((2,24),(1,8))", "(16,4):(0,1)", "Sw<2,0,2> o _0 o (4,8):(8,1)",
           "Sw<3,3,3> o _0 o (8,64):(64,1)"]


def cpp(text: str) -> str:
    """The layout as CuTe C++ (static integers)."""
    return cute_cpp.cvalue(text)


def test_show_prints_what_print_layout_prints():
    if cute_cpp.toolchain() is None:
        pytest.skip("no C++ compiler with CuTe and CUDA headers")
    body = "\n".join(f'  printf("@@{k}\\n"); print_layout({cpp(t)});' for k, t in enumerate(LAYOUTS))
    out = cute_cpp.compile_and_run("#include <cstdio>\n#include <cute/tensor.hpp>\nusing namespace cute;\n"
                                   f"int main() {{\n{body}\n  return 0;\n}}\n")
    tables = out.split("@@")[1:]
    assert len(tables) == len(LAYOUTS)
    for text, table in zip(LAYOUTS, tables, strict=True):
        theirs = table.split("\n", 1)[1]
        ours = subprocess.run([sys.executable, "-m", "app.cli", "show", text], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[2])
        assert ours.returncode == 0, ours.stderr
        t_head, t_rest = theirs.split("\n", 1)
        o_head, o_rest = ours.stdout.split("\n", 1)
        assert o_rest == t_rest, f"{text}\nCuTe:\n{theirs}\nours:\n{ours.stdout}"
        assert A.parse(t_head) == A.parse(o_head) or "Sw<" in text, (t_head, o_head)
        assert layoutlab.text(text) == ours.stdout


def test_fresh_layouts_print_as_cute_prints_them():
    """The table byte for byte, the TikZ drawing line for line (cells, grid, labels), the SVG's and HTML's cells."""
    if cute_cpp.toolchain() is None:
        pytest.skip("no C++ compiler with CuTe and CUDA headers")
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    n = int(os.environ.get("LAYOUTLAB_ORACLE_N", "60"))
    cases = cute_print.gen_cases(seed, n) + cute_print.gen_smem_cases(seed, n // 4)  # + CuTe's printed GMMA tiles
    bad = cute_print.compare(cases, cute_print.run_cpp(cases))
    assert not bad, f"seed {seed}:\n" + "\n".join(bad[:10])
