"""CuTe C++ as an oracle: each case becomes a few lines of host C++ on static layouts (``Layout<Shape<Int<4>,...>,
Stride<...>>{}``) that ``cute::print`` the result; a batch of cases is one translation unit.

A case CuTe refuses does not compile (a ``static_assert`` fires). The batch is compiled with ``-fmax-errors=0``; every
error is traced back (by line number) to the case that instantiated it, those cases are recorded as ``"refused"`` with
the compiler's message, and the rest is compiled again until it builds; then it runs and its output is read back (a
case that kills the program at run time is refused, and the run goes on from the next: ``run_resuming``).

    python tests/oracle/cute_cpp.py --seed 1 --n 400 --out tests/oracle/data/corpus_s1.json

needs g++ (or nvcc) and the ``nvidia-cutlass`` wheel (for the CuTe headers) and the CUDA headers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cute_cases as cc  # noqa: E402

# ------------------------------------------------------------------------------------------- toolchain


def cute_include() -> Path | None:
    try:
        import cutlass_library
    except ImportError:
        return None
    inc = Path(cutlass_library.__file__).parent / "source" / "include"
    return inc if (inc / "cute" / "layout.hpp").is_file() else None


def cuda_include() -> list[str]:
    """The CUDA include folders (cute/config.hpp includes cuda_runtime_api.h and cuda/std headers)."""
    cands = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"] + sorted(str(p) for p in Path("/usr/local").glob(
        "cuda-*"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.insert(0, str(Path(os.path.realpath(nvcc)).parent.parent))
        # nvcc may be a wrapper script naming the real one (read it), or the binary itself (already covered above)
        try:
            head = Path(nvcc).read_bytes()[:4096]
        except OSError:
            head = b""
        if not head.startswith(b"\x7fELF"):
            m = re.search(r"(/\S+)/bin/nvcc", head.decode("utf-8", "replace"))
            if m:
                cands.insert(0, m.group(1))
    for c in cands:
        if c and (Path(c) / "include" / "cuda_runtime_api.h").is_file():
            inc = Path(c) / "include"
            return [str(inc)] + ([str(inc / "cccl")] if (inc / "cccl").is_dir() else [])
    return []


def toolchain() -> list[str] | None:
    """The compile command prefix, or None when there is no compiler, no CuTe headers or no CUDA headers."""
    inc, cuda = cute_include(), cuda_include()
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if inc is None or not cuda or cxx is None:
        return None
    return [cxx, "-std=c++17", "-O0", "-w", "-fmax-errors=0", f"-I{inc}"] + [f"-I{c}" for c in cuda]


def compile_refusing(emit_todo: Any, work: Path, tag: str = "p", timeout: float | None = 1800, rounds: int = 20):
    """Compile ``emit_todo(refused)`` (the translation unit of the cases not refused yet, and a map line number -> case)
    until it builds: a case CuTe refuses does not compile, so each compiler error is traced by its line to its case,
    which is refused with the message. Returns the executable and {case: message}."""
    cmd, refused = toolchain(), {}
    if cmd is None:
        raise RuntimeError("no C++ toolchain with the CuTe and CUDA headers")
    src, exe = work / f"{tag}.cpp", work / f"{tag}.bin"
    for _round in range(rounds):
        text, owner = emit_todo(refused)
        src.write_text(text)
        p = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=timeout)
        if p.returncode == 0:
            return exe, refused
        bad = _failures(p.stderr, str(src), owner)
        if not bad:
            raise RuntimeError(f"compile failed without a case to blame:\n{p.stderr[-6000:]}")
        broken = [msg for msg in bad.values() if "was not declared" in msg or msg.startswith("expected")]
        if broken:  # the emitted C++ itself is wrong: not a refusal
            raise RuntimeError(f"emitter bug: {broken[0]}")
        refused.update(bad)
    raise RuntimeError("too many compile rounds")


def compile_and_run(program: str, timeout: int = 1800) -> str:
    """Compile one translation unit against CuTe and run it: its stdout (bytes that are not UTF-8 replaced)."""
    with tempfile.TemporaryDirectory(prefix="cute-run-") as tmp:
        exe, _ = compile_refusing(lambda _: (program, {}), Path(tmp), timeout=timeout)
        return subprocess.run([str(exe)], capture_output=True, timeout=120, check=True).stdout.decode(errors="replace")


def printed(out: str) -> dict[str, str]:
    """A program's ``key<TAB>value`` lines as {key: value}."""
    return dict(ln.split("\t", 1) for ln in out.splitlines() if "\t" in ln)


def resumable_main(calls: list[str]) -> list[str]:
    """A ``main`` that calls ``calls`` (one a case, each ``void()``) from the one at index ``argv[1]`` (0 if none)."""
    return ["#include <cstdlib>", "int main(int argc, char** argv) {",
            f"  void (*cs[])() = {{{', '.join(calls + ['nullptr'])}}};",
            f"  for (int i = argc > 1 ? atoi(argv[1]) : 0; i < {len(calls)}; ++i) cs[i]();", "  return 0;", "}"]


def run_resuming(exe: Path, n: int, read: Any, finished: Any) -> dict[int, tuple[int, str]]:
    """Run ``exe`` (``resumable_main``, ``n`` cases), ``read`` each run's stdout; where it dies (a CuTe assert or fault
    at run time), again from the case after the first not ``finished``. Returns {the case it died in: (its exit
    status, the last line of its stderr or ``status <exit status>``)}."""
    died: dict[int, tuple[int, str]] = {}
    start = 0
    while start < n:
        r = subprocess.run([str(exe), str(start)], capture_output=True, timeout=120)
        read(r.stdout.decode(errors="replace"))
        if r.returncode == 0:
            break
        err = r.stderr.decode(errors="replace")
        stop = next((i for i in range(start, n) if not finished(i)), None)
        if stop is None:
            raise RuntimeError(f"oracle binary failed ({r.returncode}) past its last case: {err[-2000:]}")
        died[stop] = (r.returncode, (err.strip().splitlines() or [f"status {r.returncode}"])[-1])
        start = stop + 1
    return died


def compile_and_resume(program: list[str], n: int, read: Any, finished: Any, timeout: int = 1800) -> dict:
    """``program`` (``void c0()`` .. ``c<n-1>()``, one a case) with ``resumable_main``, compiled, ``run_resuming``."""
    with tempfile.TemporaryDirectory(prefix="cute-run-") as tmp:
        text = "\n".join(program + resumable_main([f"c{i}" for i in range(n)])) + "\n"
        exe, _ = compile_refusing(lambda _: (text, {}), Path(tmp), timeout=timeout)
        return run_resuming(exe, n, read, finished)


# ------------------------------------------------------------------------------------------- emission


def ctype(t: Any, kind: str = "Shape") -> str:
    if t is None:  # ``_`` in a slicing coordinate
        return "Underscore"
    if isinstance(t, tuple):
        return f"{kind}<" + ",".join(ctype(x, kind) for x in t) + ">"
    if isinstance(t, str):  # a scaled-basis stride k@i
        k, i = t.split("@")
        return f"ScaledBasis<Int<{k}>,{i}>"
    return f"Int<{t}>"


def cvalue(a: Any) -> str:
    """C++ expression for a case argument (see ``cute_cases``)."""
    if a is None:
        return "_"
    if isinstance(a, int):
        return f"Int<{a}>{{}}"
    if isinstance(a, list):
        return "make_tile(" + ", ".join(cvalue(x) for x in a) + ")"
    if " o " in a:  # A o O o B (O also as CuTe prints it, _0): A a swizzle or a layout, B a layout or a chain
        first, off, rest = (x.strip() for x in a.split(" o ", 2))
        return f"make_composed_layout({cvalue(first)}, Int<{int(off.lstrip('_'))}>{{}}, {cvalue(rest)})"
    if a.startswith("Sw<"):
        return "Swizzle" + a[2:] + "{}"
    if ":" in a:
        shape, stride = cc.split_layout(a)
        return f"Layout<{ctype(shape)},{ctype(stride, 'Stride')}>{{}}"
    return f"{ctype(cc.parse_tuple(a))}{{}}"


BIT_TYPES = {1: "uint1b_t", 2: "uint2b_t", 4: "uint4b_t", 8: "uint8_t", 16: "uint16_t", 32: "uint32_t",
             64: "uint64_t", 128: "uint128_t"}


def ccall(case: dict) -> str:
    """The C++ call: the recasts take their factor / element types as template arguments."""
    op, args = case["op"], case["args"]
    if op in ("upcast", "downcast"):
        return f"{op}<{args[1]}>({cvalue(args[0])})"
    if op == "evaluate":  # a layout called on a coordinate
        return f"{cvalue(args[0])}({cvalue(args[1])})"
    if op == "recast_layout":
        return f"recast_layout<{BIT_TYPES[args[1]]},{BIT_TYPES[args[2]]}>({cvalue(args[0])})"
    if op == "make_layout_row_major":
        return f"make_layout({cvalue(args[0])}, LayoutRight{{}})"
    return f"{op}(" + ", ".join(cvalue(a) for a in args) + ")"


TENSOR_OPS = ("local_tile", "local_partition")


def cstep(p: Any) -> str:
    """A projection (``local_tile``'s fourth argument): 1 keeps a mode (``_1``), None drops it (``X``)."""
    if isinstance(p, list):
        return "Step<" + ",".join(cstep(x) for x in p) + ">"
    return "X" if p is None else "_1"


def emit_case(i: int, case: dict) -> list[str]:
    if case["op"] in TENSOR_OPS:  # on a tensor over address 0: its layout, then its first element's offset
        rest = ", ".join([cvalue(a) for a in case["args"][1:3]] + [cstep(a) + "{}" for a in case["args"][3:]])
        return [f"void c{i}() {{",
                f"  auto t = make_tensor(make_gmem_ptr((int*)nullptr), {cvalue(case['args'][0])});",
                f"  auto r = {case['op']}(t, {rest});",
                f'  printf("@{i} "); print(r.layout()); printf(" @ %d\\n", int(r.data().get() - (int*)nullptr));'
                "  fflush(stdout);",
                "}"]
    return [f"void c{i}() {{",
            f"  auto r = {ccall(case)};",
            f'  printf("@{i} "); print(r); printf("\\n"); fflush(stdout);',
            "}"]


def emit(cases: list[tuple[int, dict]]) -> tuple[str, dict[int, int]]:
    """The translation unit, and a map line number -> case index."""
    lines = ["#include <cute/layout.hpp>", "#include <cute/swizzle_layout.hpp>", "#include <cute/layout_composed.hpp>",
             "#include <cute/numeric/numeric_types.hpp>",
             "#include <cute/tensor.hpp>",
             "#include <cstdio>", "using namespace cute;"]
    owner: dict[int, int] = {}
    for i, case in cases:
        body = emit_case(i, case)
        for k in range(len(body)):
            owner[len(lines) + k + 1] = i
        lines += body
    return "\n".join(lines + resumable_main([f"c{i}" for i, _ in cases])) + "\n", owner


# ------------------------------------------------------------------------------------------- compile and run


def _failures(stderr: str, src: str, owner: dict[int, int]) -> dict[int, str]:
    """Map compiler diagnostics to the cases that caused them: {case index: first error message}."""
    out: dict[int, str] = {}
    last = None
    pat = re.compile(re.escape(src) + r":(\d+):(?:\d+:)?\s*(.*)")
    for line in stderr.splitlines():
        m = pat.match(line)
        if m and int(m.group(1)) in owner:
            last = owner[int(m.group(1))]
            if "error" in m.group(2):
                out.setdefault(last, m.group(2).strip())
        elif "error:" in line and last is not None:
            msg = line.split("error:", 1)[1].strip()
            if last not in out or out[last].startswith("required"):
                out[last] = msg
    return out


def _build(cases: list[tuple[int, dict]], work: Path, tag: str) -> tuple[dict, dict]:
    """Compile until it builds, run; returns ({idx: printed}, {idx: refusal message}). A case whose run dies (CuTe's
    own arithmetic at run time, e.g. SIGFPE) has no answer: refused, and the run goes on from the next case."""
    todo: list[tuple[int, dict]] = []

    def emit_todo(refused: dict[int, str]) -> tuple[str, dict[int, int]]:
        todo[:] = [(i, c) for i, c in cases if i not in refused]
        return emit(todo)

    exe, refused = compile_refusing(emit_todo, work, tag, timeout=None)
    got: dict[int, str] = {}

    def read(out: str) -> None:
        for line in out.splitlines():
            m = re.match(r"@(\d+) (.*)", line)
            if m:
                got[int(m.group(1))] = m.group(2).replace("_", "")

    died = run_resuming(exe, len(todo), read, lambda k: todo[k][0] in got)
    refused.update({todo[k][0]: f"runtime: the program died with signal {-rc} in this case" for k, (rc, _) in
                    died.items()})
    return got, refused


def run_cases(cases: list[dict], jobs: int = 2, chunk: int = 150) -> list[dict]:
    """CuTe's answer for each case: returns copies with ``"cute"`` (and ``"reason"`` when refused)."""
    indexed = list(enumerate(cases))
    parts = [indexed[k:k + chunk] for k in range(0, len(indexed), chunk)]
    results: dict[int, str] = {}
    reasons: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="cute-oracle-") as tmp, ThreadPoolExecutor(jobs) as pool:
        futs = [pool.submit(_build, part, Path(tmp), f"b{n}") for n, part in enumerate(parts)]
        for f in futs:
            got, bad = f.result()
            results.update(got)
            for i, msg in bad.items():
                results[i] = "refused"
                reasons[i] = msg[:200]
    out = []
    for i, case in enumerate(cases):
        if i not in results:
            raise RuntimeError(f"no answer for case {i}: {case}")
        rec = {"op": case["op"], "args": case["args"], "cute": results[i]}
        if i in reasons:
            rec["reason"] = reasons[i]
        out.append(rec)
    return out


def save(path: Path, records: list[dict]) -> None:
    """Write records as a JSON list, one case per line (diff-friendly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in records]
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n")


def compare(records: list[dict]) -> dict[str, dict[str, int]]:
    """Per op: counts of each judgement (exact / shape / function / mismatch)."""
    stats: dict[str, dict[str, int]] = {}
    for rec in records:
        verdict = cc.judge(rec["cute"], cc.run_ours(rec))
        row = stats.setdefault(rec["op"], {"exact": 0, "shape": 0, "function": 0, "not-a-function": 0, "mismatch": 0})
        row[verdict] += 1
    return stats


def oracle_cli(doc: str, n: int, cases: Any, run: Any, compare: Any, argv: list[str] | None = None,
               switches: dict[str, str] | None = None) -> int:
    """The command line of a small oracle module: ``--seed``, ``--n`` and its own switches; ``cases(args)`` run
    through CuTe by ``run`` and judged by ``compare`` (a list of differences); exit status 1 on any difference."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=n)
    for name, text in (switches or {}).items():
        ap.add_argument(name, action="store_true", help=text)
    a = ap.parse_args(argv)
    todo = cases(a)
    bad = compare(todo, run(todo))
    print("\n".join(bad) or f"all {len(todo)} cases agree")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    ap.add_argument("--out", type=Path, help="write the records here (JSON)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--leaves", default="", help="comma-separated shape leaves (default: cute_cases.LEAVES)")
    ap.add_argument("--swizzle", action="store_true", help="cases on swizzled (composed) layouts")
    ap.add_argument("--real", action="store_true", help="cases at real GEMM sizes (cute_real.py)")
    ap.add_argument("--edge", action="store_true", help="edge-heavy cases and the less common ops (cute_edge.py)")
    ap.add_argument("--deep", type=float, default=0.0, help="fraction of cases with modes nested up to depth 4")
    ap.add_argument("--inverses", action="store_true", help="inverses of swizzled tiles with offsets and back")
    ap.add_argument("--wide", action="store_true", help="with --swizzle: wide swizzles (B<=5, M<=6, negative S), "
                    "offsets, carries, either side, recasts (cute_swizzle.gen_wide_cases)")
    ap.add_argument("--nested", action="store_true", help="compositions into nested composed layouts, and ops on them")
    ap.add_argument("--cut", action="store_true", help="inverses of swizzled tiles with negative shifts and offsets, "
                    "and tilers whose strides cut across the swizzle's bits (cute_swizzle.gen_cut_cases)")
    ap.add_argument("--fresh", action="store_true", help="negative strides, nested tilers, shape-1 modes, big sizes")
    ap.add_argument("--bymode", action="store_true", help="tuples of layouts as tilers of the divides and products, "
                    "sizes that do not divide, stride-0 nested B, profiles, nested cotargets and coordinates, slices "
                    "at depth (cute_bymode.py)")
    ap.add_argument("--unseen", action="store_true", help="tilers deeper than the layout, odd recast ratios, "
                    "non-injective max_common_*, gapped products, make_*layout of nested shapes (cute_unseen.py)")
    ap.add_argument("--mixed", action="store_true", help="atoms' TV layouts, size-1 modes at every depth, "
                    "projections, recasts of every factor, chains through CuTe (cute_mixed.py)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if a.leaves:
        cc.LEAVES[:] = [int(x) for x in a.leaves.split(",")]
    recs = None
    if a.mixed:
        import cute_mixed

        recs = cute_mixed.gen_records(a.seed, a.n, lambda cs: run_cases(cs, jobs=a.jobs))
    elif a.edge:
        import cute_edge

        cases = cute_edge.gen_cases(a.seed, a.n)
    elif a.unseen:
        import cute_unseen

        cases = cute_unseen.gen_cases(a.seed, a.n, [o for o in a.ops.split(",") if o] or None)
    elif a.bymode:
        import cute_bymode

        cases = cute_bymode.gen_cases(a.seed, a.n, [o for o in a.ops.split(",") if o] or None)
    elif a.fresh:
        import cute_fresh

        cases = cute_fresh.gen_cases(a.seed, a.n, [o for o in a.ops.split(",") if o] or None)
    elif a.nested:
        import cute_swizzle

        cases = cute_swizzle.gen_nested_cases(a.seed, a.n)
    elif a.cut:
        import cute_swizzle

        cases = cute_swizzle.gen_cut_cases(a.seed, a.n)
    elif a.inverses:
        import cute_swizzle

        cases = cute_swizzle.gen_inverse_cases(a.seed, a.n)
    elif a.swizzle or a.real:
        import cute_real
        import cute_swizzle

        cases = (cute_swizzle.gen_wide_cases if a.wide else cute_swizzle.gen_cases if a.swizzle else
                 cute_real.gen_cases)(a.seed, a.n)
    else:
        cases = cc.gen_cases(a.seed, a.n, [o for o in a.ops.split(",") if o] or None, deep=a.deep)
    recs = recs if recs is not None else run_cases(cases, jobs=a.jobs)
    if a.out:
        save(a.out, recs)
    for op, row in sorted(compare(recs).items()):
        print(f"{op:20s} {row}")
    for rec in recs:
        ours = cc.run_ours(rec)
        verdict = cc.judge(rec["cute"], ours)
        if verdict in ("mismatch", "not-a-function"):
            print(f"{verdict.upper()} {rec['op']} {json.dumps(rec['args'])}\n  cute: {rec['cute']}\n  ours: {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
