"""CuTe's kernel vocabulary against CuTe C++ host programs: fresh random cases (tests/oracle/cute_vocab.py: tiled
MMAs on SM70 / SM80 / SM90 atoms with atom layouts and permutations, their get_layout*_TV, partition_shape_*,
partition_*, partition_fragment_*, make_tiled_copy_A/B/C with ldmatrix / cp.async / universal copies, make_tiled_copy
in both forms, local_tile with a projection; cute_gmma / cute_pictures / cute_tma below), and the TV atlas's
kernel-path code: every step's C++ compiles with nvcc (host only) exactly as the page shows it and prints what the
page says.

    LAYOUTLAB_ORACLE_SEED=5 LAYOUTLAB_ORACLE_N=60 python -m pytest -m oracle tests/oracle/test_vocab_oracle.py
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cute_vocab  # noqa: E402
from cute_cpp import cuda_include, cute_include, toolchain  # noqa: E402

pytestmark = [pytest.mark.oracle]


@pytest.mark.parametrize("gen", ["gen_cases", "gen_odd_cases"])
def test_fresh_cases_equal_cute_cpp(gen):
    """Fresh tiled MMAs / copies / tiles (gen_cases), and tiled MMAs with odd atom layouts and permutations
    (gen_odd_cases)."""
    if toolchain() is None:
        pytest.skip("no C++ compiler, CuTe headers or CUDA headers")
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    n = int(os.environ.get("LAYOUTLAB_ORACLE_N", "30"))
    cases = getattr(cute_vocab, gen)(seed, n)
    cute = cute_vocab.run_cpp(cases)
    bad = cute_vocab.compare(cases, cute)
    assert not bad, f"seed {seed}:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("module", ["cute_gmma", "cute_pictures", "cute_tma"])
def test_fresh_descriptors_pictures_and_tma_equal_cute_cpp(module):
    """cute_gmma: wgmma descriptors and canonical smem tiles (every atom, swizzle and element width, later K-blocks);
    cute_pictures: print_latex of tiled MMAs / MMA atoms / tiled copies against every renderer's cells (CuTe's
    copy nodes off its own grid are warned of as CuTe's fault once ours equal the TV layout's function); cute_tma:
    make_tma_atom's coordinate tensor, instruction size and box."""
    if toolchain() is None:
        pytest.skip("no C++ compiler, CuTe headers or CUDA headers")
    mod = __import__(module)
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    cases = mod.gen_cases(seed, int(os.environ.get("LAYOUTLAB_ORACLE_N", "30")))
    faults: list[str] = []  # CuTe's own faults (cute_pictures.OFF_GRID), each checked against the TV layout
    cute = mod.run_cpp(cases)
    bad = mod.compare(cases, cute, faults) if module == "cute_pictures" else mod.compare(cases, cute)
    for f in faults:
        warnings.warn(f"seed {seed}: {f}", stacklevel=1)
    assert not bad, f"seed {seed}:\n" + "\n".join(bad[:20])


def test_fresh_tma_partitions_equal_cute_cpp():
    """``tma_partition`` for every CTA of the cluster (cute_tma.py --partition, --wide draws): the source and
    destination views as CuTe returns them."""
    if toolchain() is None:
        pytest.skip("no C++ compiler, CuTe headers or CUDA headers")
    import cute_tma

    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    cases = cute_tma.gen_cases(seed, int(os.environ.get("LAYOUTLAB_ORACLE_N", "30")), wide=seed % 2 == 1,
                               partition=True)
    bad = cute_tma.compare(cases, cute_tma.run_cpp(cases))
    assert not bad, f"seed {seed}:\n" + "\n".join(bad[:20])


def test_fresh_tmem_copies_and_accumulators_equal_cute_cpp():
    """Tiled tcgen05.ld / st copies (``make_tmem_copy``: each value's TMEM lane, column and bit for one thread) and
    the f16 / f32 accumulators' TMEM layouts (cute_vocab.py --tmem)."""
    if toolchain() is None:
        pytest.skip("no C++ compiler, CuTe headers or CUDA headers")
    seed = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", random.randrange(1 << 30)))
    cases = cute_vocab.gen_tmem_cases(seed, int(os.environ.get("LAYOUTLAB_ORACLE_N", "30")))
    bad = cute_vocab.compare_tmem(cases, cute_vocab.run_tmem(cases))
    assert not bad, f"seed {seed}:\n" + "\n".join(bad[:20])


def _nvcc() -> list[str] | None:
    nvcc, inc, cuda = shutil.which("nvcc"), cute_include(), cuda_include()
    if nvcc is None or inc is None or not cuda:
        return None
    return [nvcc, "-std=c++17", "-O0", "-w", f"-I{inc}"] + [f"-I{c}" for c in cuda]


def _expected(step: object, k: int) -> list[str]:
    """What the page says each print of step ``k`` writes, in order."""
    facts = dict(step.facts)  # type: ignore[attr-defined]
    if k == 1:
        return []  # the atom's LayoutC_TV: checked against the page's text below
    if k == 2:
        return [facts[f"get_layout{op}_TV()"] for op in "ABC"]
    if k == 3:
        return [facts[f"{op}: get_layout{sd}_TV()"] for op in "ABC" if f"{op}: tiler" in facts for sd in "SD"]
    if k == 4:
        return [facts[f"partition_{w}_{op}"] for op in "ABC" for w in ("fragment", "shape")]
    return [facts[f"partition_{op}"].split(" at offset")[0] for op in "ABC"]


@pytest.mark.nvcc
def test_kernel_path_code_compiles_as_shown_and_prints_the_page():
    cmd = _nvcc()
    if cmd is None:
        pytest.skip("no nvcc, CuTe headers or CUDA headers")
    from app.services import kernel_path as KP

    paths = [KP.kernel_path(p[1], p[2], p[3], p[4], p[5], p[6], p[7], str(t))
             for p, t in zip(KP.PRESETS, (5, 17, 3, 0), strict=True)]
    lines = list(cute_vocab.HEADERS) + ["int main() {"]
    for i, path in enumerate(paths):
        for k, step in enumerate(path.steps, 1):
            if step.cpp:
                lines += [f'  printf("@{i}.{k}\\n");', "  {"] + ["    " + x for x in step.cpp.splitlines()] + ["  }"]
    lines += ["  return 0;", "}"]
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"kernel-path-{os.getpid()}"
    tmp.mkdir(exist_ok=True)
    src, exe = tmp / "path.cpp", tmp / "path"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stderr[-4000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout
    printed: dict[str, list[str]] = {}
    cur = None
    for line in out.splitlines():
        if line.startswith("@"):
            cur = line[1:]
            printed[cur] = []
        elif cur is not None and line.strip():
            printed[cur].append(line.replace("_", ""))
    for i, path in enumerate(paths):
        for k, step in enumerate(path.steps, 1):
            if not step.cpp:
                continue
            got = printed[f"{i}.{k}"]
            if k == 1:
                assert got[0] in step.text, (i, got)
                continue
            assert got == _expected(step, k), (i, k, step.title)


@pytest.mark.nvcc
def test_tma_box_equals_construct_tma_gbasis():
    """The box of one TMA instruction and its dimensions' global modes, against CuTe's construct_tma_gbasis (the part
    of make_tma_atom that runs without the CUDA driver)."""
    cmd = _nvcc()
    if cmd is None:
        pytest.skip("no nvcc, CuTe headers or CUDA headers")
    import algebra as A
    from algebra.hw import tma
    from app.services import tma_cluster as TC

    cases = [(g, s, tuple(int(x) for x in t.split(",")), c, d) for _, g, s, t, c, d in TC.PRESETS]
    cases += [("(1024,512):(512,1)", "(32,64):(64,1)", (32, 64), 1, "FLOAT16"),
              ("(512,1024):(1,512)", "((8,8),(16,2)):((1,8),(64,1024))", (64, 32), 2, "FLOAT16")]
    lines = list(cute_vocab.HEADERS[:2]) + ["#include <cute/atom/copy_traits_sm90_tma.hpp>", "using namespace cute;",
                                            "int main() {", "  static half_t buf[1];"]
    want = []
    for i, (g, s, t, c, d) in enumerate(cases):
        sm = A.parse(s)
        plain = sm.layout_b if hasattr(sm, "layout_b") else sm
        atom = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", A.parse(g), sm, t, c, d)
        want.append(str(atom.gbasis()))
        tile = "make_shape(" + ", ".join(f"Int<{x}>{{}}" for x in t) + ")"
        lines += [f"  {{ auto g = make_tensor(make_gmem_ptr(buf), {cute_vocab.cvalue(g)});",
                  f"    auto v = make_identity_layout(shape(g)).compose({tile});",
                  f"    auto s = {cute_vocab.cvalue(str(plain))};",
                  f'    printf("@{i} "); print(detail::construct_tma_gbasis<half_t>(g, s, v)); printf("\\n"); }}']
    lines += ["  return 0;", "}"]
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tma-gbasis-{os.getpid()}"
    tmp.mkdir(exist_ok=True)
    (tmp / "t.cpp").write_text("\n".join(lines) + "\n")
    r = subprocess.run(cmd + [str(tmp / "t.cpp"), "-o", str(tmp / "t")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    out = subprocess.run([str(tmp / "t")], capture_output=True, text=True, timeout=60, check=True).stdout
    got = {int(m.split(" ", 1)[0][1:]): m.split(" ", 1)[1].replace("_", "") for m in out.splitlines() if m[:1] == "@"}
    assert [got[i] for i in range(len(cases))] == want
