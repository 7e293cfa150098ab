"""CuTe C++ as the oracle for the layout doctor's answers (host only): for fresh asks (seeds 14290-14299) on tiles the
GMMA atoms tile (every INTER / SW32 / SW64 / SW128 atom, K-major for 8/16/32-bit, MN-major for 16-bit) and on plain
tiles of 1-16-byte elements, each candidate's C++ (``code.cpp``, the whole snippet as the page shows it) is compiled
and its ``smem_layout(i)`` must be the layout the doctor printed and drew; where the doctor names a GMMA atom,
``tile_to_shape(atom, (R, C))`` through a shared-memory pointer (the swizzle on the byte address) must place every
element where the printed layout does."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cute_cpp import compile_and_run, printed, toolchain  # noqa: E402

import algebra as A  # noqa: E402
from algebra.doctor.solver import solve  # noqa: E402

pytestmark = pytest.mark.oracle
TYPES = {1: "uint8_t", 2: "half_t", 4: "float", 8: "double", 16: "uint128_t"}


def _asks(seed: int) -> list[tuple[int, str, list[dict]]]:
    rng = random.Random(seed)
    out = []
    for eb in (1, 2, 4):
        for major in ("K", "MN") if eb == 2 else ("K",):
            for span in (16, 32, 64, 128):
                w, k = span // eb, 8 * rng.choice([1, 2, 4, 8])
                tile = f"({k},{w}):({w},1)" if major == "K" else f"({w},{k}):(1,{w})"
                acc = {"kind": "column" if major == "K" else "row", "index": 0}
                out.append((eb, tile, [acc, {"kind": "wgmma", "operand": rng.choice("AB"), "major": major}]))
    for _ in range(8):
        eb, r, c = rng.choice([1, 2, 4, 8, 16]), rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64])
        out.append((eb, f"({r},{c}):({c},1)", [{"kind": "column", "index": rng.randrange(c)},
                                                {"kind": "row", "index": rng.randrange(r)}]))
    return out


@pytest.mark.skipif(toolchain() is None, reason="needs g++, the CuTe headers (nvidia-cutlass) and the CUDA headers")
@pytest.mark.parametrize("seed", [14290, 14299])
def test_doctor_code_and_gmma_atoms_match_cute(seed):
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm90_gmma.hpp>",
             "using namespace cute;", "using namespace cute::SM90;"]
    want: dict[str, tuple[str, list[int]]] = {}
    for eb, tile, accs in _asks(seed):
        r = solve(eb, tile, accs)
        for c in [r["naive"], *r["candidates"][:5]]:
            if c["kind"] == "xor":
                continue
            lay = A.parse(c["layout"])
            size, n = A.size(lay), len(want)
            offs = [lay(i) for i in range(size)]
            lines += [f"void c{n}() {{", *("  " + ln for ln in c["code"]["cpp"].splitlines()),
                      f'  printf("{n}\\t"); for (int i = 0; i < {size}; ++i) printf("%d ", int(smem_layout(i)));',
                      '  printf("\\n");', "}"]
            want[str(n)] = (f"{eb} {tile}: {c['layout']}", offs)
            if c["wgmma"]:
                n = len(want)
                rows, cols = A.shape(lay)
                lines += [f"void c{n}() {{", f"  alignas(1024) static {TYPES[eb]} buf[{size}];",
                          f"  auto T = make_tensor(make_smem_ptr(buf), tile_to_shape({c['wgmma']}{{}}, "
                          f"Shape<Int<{rows}>,Int<{cols}>>{{}}));",
                          f'  printf("{n}\\t"); for (int i = 0; i < {size}; ++i) printf("%d ", int(&T(i) - buf));',
                          '  printf("\\n");', "}"]
                want[str(n)] = (f"{eb} {tile}: {c['layout']} as {c['wgmma']}", offs)
    lines += ["int main() {", *(f"  c{i}();" for i in range(len(want))), "}"]
    got = printed(compile_and_run("\n".join(lines)))
    bad = [what for key, (what, offs) in want.items() if [int(x) for x in got[key].split()] != offs]
    assert not bad, bad[:5]
    assert sum(" as GMMA::" in what for what, _ in want.values()) >= 8
