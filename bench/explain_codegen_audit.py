"""The C++ and DSL code the op table emits for an op (``algebra.teach.codegen``), on fresh random inputs: the C++ is
compiled host-only with nvcc against the CuTe headers (``nvidia-cutlass``) and must print the layout the op answers
here; the DSL text must parse as Python.

    python bench/explain_codegen_audit.py --seeds 17760-17761 --n 1
"""

from __future__ import annotations

import argparse
import ast
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from algebra import LayoutError  # noqa: E402
from algebra.core.notation import show  # noqa: E402
from algebra.teach import registry  # noqa: E402
from algebra.teach.codegen import op_to_cpp, op_to_dsl  # noqa: E402
from bench.explain_audit import fresh_args  # noqa: E402


def expected(op: str, args: tuple) -> str:
    r = registry.get(op).fn(*args)
    if registry.get(op).result == "tile":
        return f"{r[0]}  first offset: {r[1]}"
    return show(r)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="17760-17760")
    ap.add_argument("--n", type=int, default=1)
    ap.add_argument("--ops")
    ns = ap.parse_args()
    lo, hi = map(int, ns.seeds.split("-"))
    cases = []
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        for op in (ns.ops.split(",") if ns.ops else registry.names()):
            got = 0
            for _ in range(40):
                if got == ns.n:
                    break
                try:
                    args = fresh_args(op, rng)
                    want = expected(op, args)
                except LayoutError:
                    continue
                cases.append((op, args, want))
                got += 1
    dsl_bad = 0
    for op, args, _ in cases:
        try:
            ast.parse(op_to_dsl(op, *args, program=True))
        except SyntaxError as e:
            dsl_bad += 1
            print(f"DSL does not parse: {op} {[show(a) for a in args]}: {e}")
    import cutlass_library

    inc = Path(cutlass_library.__file__).parent / "source" / "include"
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "using namespace cute;", "int main() {"]
    for op, args, _ in cases:
        lines += ["  {"] + ["    " + ln for ln in op_to_cpp(op, *args).splitlines()] + ['    printf("\\n");', "  }"]
    tmp = Path(tempfile.mkdtemp())
    (tmp / "emit.cu").write_text("\n".join(lines + ["  return 0;", "}"]) + "\n")
    build = subprocess.run([shutil.which("nvcc"), "-std=c++17", "-x", "cu", f"-I{inc}", str(tmp / "emit.cu"), "-o",
                            str(tmp / "emit")], capture_output=True, text=True, timeout=1200)
    if build.returncode:
        print(build.stderr[-6000:])
        print(f"{len(cases)} cases: the C++ does not compile ({tmp / 'emit.cu'})")
        return
    out = subprocess.run([str(tmp / "emit")], capture_output=True, text=True, timeout=60).stdout
    got = out.replace("_", "").splitlines()
    bad = 0
    for (op, args, want), g in zip(cases, got, strict=False):
        if g != want:
            bad += 1
            print(f"C++ prints {g!r}, the op answers {want!r}: {op} {[show(a) for a in args]}")
    print(f"{len(cases)} cases compiled with nvcc: {bad} print another layout; {dsl_bad} DSL texts do not parse")


if __name__ == "__main__":
    main()
