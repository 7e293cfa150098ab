"""CuTe C++ / CuTe DSL emitters; an oracle test compiles the emitted C++ against the CuTe headers and compares."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.arith import E
from algebra.core.emit import to_cpp, to_dsl
from algebra.core.layout import make_identity_layout
from algebra.teach.codegen import op_to_cpp, op_to_dsl

P = A.parse
H = P("(4,(2,4)):(2,(1,8))")
SW = P("Sw<3,4,3> o 0 o (8,64):(64,1)")


def test_layout_to_cpp():
    assert to_cpp(H) == \
        "make_layout(make_shape(_4{}, make_shape(_2{}, _4{})), make_stride(_2{}, make_stride(_1{}, _8{})))"
    assert to_cpp(H, style="type") == "Layout<Shape<_4,Shape<_2,_4>>, Stride<_2,Stride<_1,_8>>>{}"
    assert to_cpp(H, static=False) == "make_layout(make_shape(4, make_shape(2, 4)), make_stride(2, make_stride(1, 8)))"
    assert to_cpp(P("24:1")) == "make_layout(_24{}, _1{})"
    assert to_cpp(P("(3,5):(5,-1)")) == "make_layout(make_shape(_3{}, _5{}), make_stride(_5{}, Int<-1>{}))"
    assert to_cpp(P("(11,100):(100,1)"), style="type") == "Layout<Shape<Int<11>,Int<100>>, Stride<Int<100>,_1>>{}"
    with pytest.raises(LayoutError):
        to_cpp(H, style="mixed")


def test_swizzle_and_basis_to_cpp():
    assert to_cpp(A.Swizzle(3, 4, 3)) == "Swizzle<3,4,3>{}"
    assert to_cpp(SW) == "composition(Swizzle<3,4,3>{}, make_layout(make_shape(_8{}, _64{}), make_stride(_64{}, _1{})))"
    assert to_cpp(SW, style="type") == \
        "ComposedLayout<Swizzle<3,4,3>, _0, Layout<Shape<_8,_64>, Stride<_64,_1>>>{}"
    off = A.ComposedLayout(A.Swizzle(2, 0, 3), 4, P("8:1"))
    assert to_cpp(off) == "make_composed_layout(Swizzle<2,0,3>{}, _4{}, make_layout(_8{}, _1{}))"
    assert to_cpp(make_identity_layout((4, 8))) == "make_identity_layout(make_shape(_4{}, _8{}))"
    mixed = A.Layout((4, 8), (2 * E(1), E(1, 0)))
    assert to_cpp(mixed) == "make_layout(make_shape(_4{}, _8{}), make_stride(ScaledBasis<_2,1>{}, E<1,0>{}))"
    assert to_cpp(mixed, style="type") == "Layout<Shape<_4,_8>, Stride<ScaledBasis<_2,1>,E<1,0>>>{}"


def test_tilers_to_cpp():
    assert to_cpp((P("4:1"), None)) == "make_tile(make_layout(_4{}, _1{}), _)"
    assert to_cpp((2, 2)) == "make_shape(_2{}, _2{})"
    assert to_cpp(7) == "_7{}"


def test_to_dsl():
    assert to_dsl(H) == "cute.make_layout((4, (2, 4)), stride=(2, (1, 8)))"
    assert to_dsl(P("8:1")) == "cute.make_layout(8, stride=1)"
    assert to_dsl(P("(8):(1)")) == "cute.make_layout((8,), stride=(1,))"
    assert to_dsl(A.Swizzle(3, 4, 3)) == "cute.make_swizzle(3, 4, 3)"
    assert to_dsl(SW) == "cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, " \
        "cute.make_layout((8, 64), stride=(64, 1)))"
    assert to_dsl(make_identity_layout((4, (2, 3)))) == "cute.make_identity_layout((4, (2, 3)))"
    assert to_dsl(A.Layout((4, 8), (2 * E(1), E(1, 0)))) == \
        "cute.make_layout((4, 8), stride=(cute.ScaledBasis(2, 1), cute.E([1, 0])))"
    assert to_dsl((P("4:1"), P("2:1"))) == "(cute.make_layout(4, stride=1), cute.make_layout(2, stride=1))"
    assert to_dsl((4, None)) == "(4, None)"


def test_op_to_cpp_and_dsl():
    cpp = op_to_cpp("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)"))
    assert cpp.splitlines() == [
        "auto A = make_layout(make_shape(_6{}, _2{}), make_stride(_8{}, _2{}));",
        "auto B = make_layout(make_shape(_4{}, _3{}), make_stride(_3{}, _1{}));",
        "auto R = composition(A, B);",
        "print(R);",
    ]
    dsl = op_to_dsl("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)"))
    assert "r = cute.composition(a, b)" in dsl and dsl.startswith("a = cute.make_layout((6, 2), stride=(8, 2))")
    assert "auto R = complement(A, _24{});" in op_to_cpp("complement", P("4:2"), 24)
    assert "r = cute.complement(a, 24)" in op_to_dsl("complement", P("4:2"), 24)
    assert "cute.complement(a, cute.cosize(a))" in op_to_dsl("complement", P("4:2"))
    assert "auto tiler = make_shape(_2{}, _2{});" in op_to_cpp("zipped_divide", P("(16,8):(1,16)"), (2, 2))
    assert "coalesce(A, Step<_1,_1>{})" in op_to_cpp("coalesce", H, (1, 1))
    assert "tile_to_shape(A, make_shape(_8{}, _8{}), Step<_1,_0>{})" in \
        op_to_cpp("tile_to_shape", P("(2,2):(1,2)"), (8, 8), (1, 0))
    assert "cute.tile_to_shape(a, (8, 8), (0, 1))" in op_to_dsl("tile_to_shape", P("(2,2):(1,2)"), (8, 8))
    lt = op_to_cpp("local_tile", P("(16,8):(1,16)"), (4, 2), (1, 2))
    assert "make_tensor(counting_iterator<int>{}, A)" in lt and "local_tile(tensor, tiler, make_coord(1, 2))" in lt
    assert "cute.local_partition(cute.make_tensor(0, a), b, cutlass.Int32(3))" in \
        op_to_dsl("local_partition", P("(16,8):(1,16)"), P("(16,2):(1,16)"), 3)
    assert "auto R = A(make_coord(1, 5));" in op_to_cpp("evaluate", H, (1, 5))
    assert "auto R = idx2crd(7, make_shape(3, make_shape(2, 3)));" in op_to_cpp("idx2crd", 7, (3, (2, 3)))
    prog = op_to_cpp("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)"), program=True)
    assert prog.startswith("#include <cstdio>\n#include <cute/tensor.hpp>") and "int main()" in prog
    script = op_to_dsl("logical_divide", P("24:1"), P("4:2"), program=True)
    assert script.startswith("import cutlass\nimport cutlass.cute as cute") and "@cute.jit" in script
    with pytest.raises(LayoutError):
        op_to_cpp("no_such_op", H)


# --------------------------------------------------------------------------------------------- oracle: nvcc + CuTe

CASES = [
    ("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)")),
    ("composition", make_identity_layout((16, 8)), P("((4,8),(2,2)):((32,1),(16,8))")),
    ("composition", H, make_identity_layout((4, (2, 4)))),
    ("composition", SW, (P("8:1"), P("8:1"))),
    ("coalesce", P("(2,(1,6)):(1,(6,2))")),
    ("coalesce", P("(2,(1,6)):(1,(6,2))"), (1, 1)),
    ("filter", P("(4,(2,3)):(0,(1,2))")),
    ("complement", P("4:2"), 24),
    ("complement", P("(2,2):(1,6)")),
    ("right_inverse", P("(4,8):(8,1)")),
    ("left_inverse", P("(4,8):(8,1)")),
    ("logical_divide", P("24:1"), P("4:2")),
    ("zipped_divide", P("(16,8):(1,16)"), (2, 2)),
    ("tiled_divide", P("(16,8):(1,16)"), (P("4:1"), P("2:1"))),
    ("flat_divide", P("(16,8):(1,16)"), (P("4:1"), P("2:1"))),
    ("logical_product", P("(2,2):(1,2)"), P("3:1")),
    ("zipped_product", P("(2,2):(1,2)"), (P("3:1"), P("2:1"))),
    ("blocked_product", P("(2,2):(1,2)"), P("(2,3):(1,2)")),
    ("raked_product", P("(2,2):(1,2)"), P("(2,3):(1,2)")),
    ("tile_to_shape", P("(2,2):(1,2)"), (8, 8)),
    ("tile_to_shape", P("(2,2):(1,2)"), (8, 8), (1, 0)),
    ("max_common_vector", P("(4,8):(1,4)"), P("32:1")),
    ("max_common_layout", P("(4,8):(1,4)"), P("(8,4):(1,8)")),
    ("local_tile", P("(16,8):(1,16)"), (4, 2), (1, 2)),
    ("local_partition", P("(16,8):(1,16)"), P("(16,2):(1,16)"), 17),
    ("evaluate", H, (1, 5)),
    ("idx2crd", 7, (3, (2, 3))),
    ("crd2idx", (1, (0, 1)), (3, (2, 3))),
]


def _registry_cases():
    """Every example of the op table, parsed (the ops the DSL has no emitter for are left out of its oracle)."""
    from algebra import registry

    out = []
    for op in registry.OPS.values():
        for ex in op.examples:
            out.append((op.name, *registry.parse_args(op, list(ex.args))))
    return out


def _expected(op, *args):
    from algebra import registry
    from algebra.core.notation import show

    r = registry.get(op).fn(*args)
    if op in ("local_tile", "local_partition"):
        return f"{r[0]}  first offset: {r[1]}"
    return show(r)


def _cute_include() -> Path | None:
    try:
        import cutlass_library
    except ImportError:
        return None
    inc = Path(cutlass_library.__file__).parent / "source" / "include"
    return inc if (inc / "cute" / "tensor.hpp").exists() else None


@pytest.mark.oracle
@pytest.mark.nvcc
def test_emitted_cpp_compiles_and_matches_cute(tmp_path):
    nvcc, inc = shutil.which("nvcc"), _cute_include()
    if nvcc is None or inc is None:
        pytest.skip("needs nvcc and the nvidia-cutlass headers")
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "using namespace cute;", "int main() {"]
    cases = CASES + _registry_cases()
    for op, *args in cases:
        lines += ["  {"] + ["    " + ln for ln in op_to_cpp(op, *args).splitlines()] + ['    printf("\\n");', "  }"]
    (tmp_path / "emit.cu").write_text("\n".join(lines + ["  return 0;", "}"]) + "\n")
    exe = tmp_path / "emit"
    build = subprocess.run([nvcc, "-std=c++17", "-x", "cu", f"-I{inc}", str(tmp_path / "emit.cu"), "-o", str(exe)],
                           capture_output=True, text=True, timeout=280)
    assert build.returncode == 0, build.stderr[-4000:]
    got = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30).stdout.replace("_", "").splitlines()
    want = [_expected(op, *args) for op, *args in cases]
    assert got == want


# --------------------------------------------------------------------------------------------- oracle: CuTe DSL

DSL_EXTRA = [
    ("zipped_product", P("(2,2):(1,2)"), (P("3:1"),)),
    ("tiled_product", P("(2,2):(1,2)"), (P("3:1"), P("2:1"))),
    ("flat_product", P("(2,2):(1,2)"), (P("3:1"), P("2:1"))),
    ("tiled_product", P("(2,2,2):(1,2,4)"), (P("3:1"),)),
    ("zipped_product", P("(2,2,2):(1,2,4)"), (P("3:1"), P("2:2"))),
    ("logical_divide", SW, (P("8:1"), P("8:1"))),
    ("composition", P("(8,8):(8,1)"), 16),
]


def _normalise_dsl(line: str) -> str:
    import re

    line = line.replace("S<", "Sw<")
    m = re.fullmatch(r"tensor<(-?\d+) o (.*)>", line)
    if m:
        return f"{m.group(2)}  first offset: {m.group(1)}"
    return line.replace(", ", ",")


@pytest.mark.oracle
def test_emitted_dsl_runs_and_matches_cute(tmp_path):
    pytest.importorskip("cutlass.cute")
    from algebra import registry

    cases = [c for c in CASES + DSL_EXTRA + _registry_cases() if registry.get(c[0]).has_dsl]
    lines = ["import cutlass", "import cutlass.cute as cute", "", "", "@cute.jit", "def main():"]
    for op, *args in cases:
        lines += ["    " + ln for ln in op_to_dsl(op, *args).replace("print(r)", "print('@@', r)").splitlines()]
    (tmp_path / "emit.py").write_text("\n".join(lines + ["", "", "main()"]) + "\n")
    run = subprocess.run([sys.executable, str(tmp_path / "emit.py")], capture_output=True, text=True, timeout=280)
    assert run.returncode == 0, run.stderr[-4000:]
    got = [_normalise_dsl(ln[3:]) for ln in run.stdout.splitlines() if ln.startswith("@@ ")]
    assert got == [_expected(op, *args) for op, *args in cases]
