"""Every kernel template compiles for sm_90a with nvcc (skipped where nvcc is absent); the build cache and errors."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gpu_worker import benches, patterns
from gpu_worker.build import BuildError, build_kernel, find_toolkit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import smem as smem_bench  # noqa: E402
import transpose as transpose_bench  # noqa: E402

needs_nvcc = pytest.mark.skipif(find_toolkit().nvcc is None and shutil.which("nvcc") is None, reason="no nvcc")
pytestmark = pytest.mark.nvcc


@pytest.fixture(autouse=True)
def _build_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_BUILD_DIR", str(tmp_path_factory.getbasetemp() / "build"))


def _smem_defines() -> list[dict]:
    seen, out = set(), []
    for _, spec in smem_bench.CASES:
        d = benches.smem_defines(patterns.plan_smem(spec))
        if tuple(sorted(d.items())) not in seen:
            seen.add(tuple(sorted(d.items())))
            out.append(d)
    return out


@needs_nvcc
@pytest.mark.parametrize("defines", [d if k == 0 else pytest.param(d, marks=pytest.mark.kernels)
                                     for k, d in enumerate(_smem_defines())],
                         ids=lambda d: "-".join(f"{k}{v}" for k, v in d.items()))
def test_smem_variants_compile(defines):
    res = build_kernel("smem", defines)
    assert res.path.is_file() and res.path.stat().st_size > 0


@needs_nvcc
@pytest.mark.parametrize("name", [n if n == "fp16" else pytest.param(n, marks=pytest.mark.kernels)
                                  for n in sorted(transpose_bench.CONFIGS)])
def test_transpose_configs_compile(name):
    res = build_kernel("transpose", benches.transpose_defines(transpose_bench.CONFIGS[name]))
    assert res.path.is_file()


@needs_nvcc
def test_cache_hit_and_key_changes_with_constants():
    a = build_kernel("noop", {"VALUE": 3})
    b = build_kernel("noop", {"VALUE": 3})
    c = build_kernel("noop", {"VALUE": 4})
    assert not a.cached or a.key == b.key
    assert b.cached and b.path == a.path
    assert c.key != a.key


@needs_nvcc
def test_compile_error_is_returned_verbatim():
    with pytest.raises(BuildError, match="ELEM_BYTES must be 1, 2, 4, 8 or 16"):
        build_kernel("smem", {"ELEM_BYTES": 3})


def test_unknown_template_and_bad_constant_are_refused():
    with pytest.raises(BuildError, match="unknown kernel template"):
        build_kernel("../etc/passwd", {})
    with pytest.raises(BuildError, match="bad compile-time constant"):
        from gpu_worker.build import define_flags

        define_flags({"lower": 1})


def test_toolkit_reports_where_nvcc_came_from(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("LAYOUTLAB_NVCC", "/nonexistent/nvcc")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    tk = find_toolkit()
    if tk.nvcc is None:
        assert "nvcc not found" in tk.reason
    else:
        assert tk.source in ("/usr/local/cuda", "pip")
