"""UMMA shared-memory descriptors against ``UMMA::make_umma_desc`` (nvcc -arch=sm_100a, host code): the canonical
atoms tiled in either order (``tile_to_shape(atom, shape, Step<_1,_2>)`` or ``Step<_2,_1>``), then a sub-block of
the tile (``composition(L, make_tile(Layout<bm, sm>, Layout<bk, sk>))``: whole K-blocks, halves, strided rows), for
8-, 16- and 32-bit elements. CuTe's printed layout is given to ``sm100.umma_desc``: it must give CuTe's descriptor,
and refuse (naming the canonical-form rule) exactly where CuTe's static_asserts fire.

    python tests/oracle/cute_umma_smem.py --seed 16450 --n 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cute_cpp import cute_include, printed  # noqa: E402

import algebra as A  # noqa: E402
from algebra.hw import sm100  # noqa: E402

ATOMS = [f"Layout_{mj}_{sw}_Atom" for mj in ("K", "MN") for sw in ("INTER", "SW32", "SW64", "SW128")] + [
    "Layout_MN_SW128_32B_Atom"]
TYPES = {"half_t": 16, "uint8_t": 8, "float": 32}


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        name, t = rng.choice(ATOMS), rng.choice(list(TYPES))
        atom = sm100.umma_smem_atom(name, TYPES[t])
        amn, ak = atom.shape
        mn, k = amn * rng.choice([1, 2, 3, 4, 8]), ak * rng.choice([1, 2, 3, 4])
        if mn * k * TYPES[t] > 8 * 65536:
            continue
        case = {"atom": name, "type": t, "major": atom.major, "mn": mn, "k": k, "order": rng.choice(["12", "21"])}
        r = rng.random()
        if r < 0.6:  # a sub-block: (bm, bk) elements at strides (sm, sk)
            bm = rng.choice([d for d in (8, 16, 32, 64, 128, 256) if mn % d == 0] or [mn])
            bk = rng.choice([d for d in (4, 8, 16, 32, 64, 128) if k % d == 0] or [k])
            sm = 2 if rng.random() < 0.15 and 2 * bm <= mn else 1
            sk = 2 if rng.random() < 0.15 and 2 * bk <= k else 1
            case["block"] = [bm, sm, bk, sk]
        out.append(case)
    return out


def _expr(c: dict) -> str:
    step = "Step<_1,_2>" if c["order"] == "12" else "Step<_2,_1>"
    tile = f"tile_to_shape(UMMA::{c['atom']}<{c['type']}>{{}}, Shape<Int<{c['mn']}>,Int<{c['k']}>>{{}}, {step}{{}})"
    if "block" not in c:
        return tile
    bm, sm, bk, sk = c["block"]
    return (f"composition({tile}, make_tile(Layout<Int<{bm}>,Int<{sm}>>{{}}, Layout<Int<{bk}>,Int<{sk}>>{{}}))")


def program(cases: list[dict], skip: frozenset) -> tuple[str, dict[int, int]]:
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm100.hpp>",
             "using namespace cute;"]
    owner: dict[int, int] = {}
    for i, c in enumerate(cases):
        if i in skip:
            continue
        body = [f"void c{i}() {{ auto L = {_expr(c)};", f'  printf("{i}.layout\\t"); print(L); printf("\\n");',
                f"  auto t = make_tensor(make_smem_ptr<{c['type']}>(nullptr), L);",
                f'  printf("{i}.desc\\t%llu\\n", (unsigned long long)uint64_t('
                f"UMMA::make_umma_desc<UMMA::Major::{c['major']}>(t))); }}"]
        owner.update({len(lines) + j + 1: i for j in range(len(body))})
        lines += body
    lines += ["int main() {"] + [f"  c{i}();" for i in range(len(cases)) if i not in skip] + ["  return 0;", "}"]
    return "\n".join(lines) + "\n", owner


def run_cpp(cases: list[dict], timeout: int = 3600) -> dict[str, str]:
    nvcc = shutil.which(os.environ.get("NVCC", "nvcc"))
    if nvcc is None or cute_include() is None:
        raise RuntimeError("needs nvcc and the CuTe headers")
    cmd = [nvcc, "-std=c++17", "-arch=sm_100a", "-O0", "-w", f"-I{cute_include()}"]
    refused: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="cute-usmem-") as tmp:
        src, exe = Path(tmp) / "s.cu", Path(tmp) / "s"
        for _round in range(12):
            text, owner = program(cases, frozenset(refused))
            src.write_text(text)
            p = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=timeout)
            if p.returncode == 0:
                break
            new: dict[int, str] = {}
            for block in re.split(r"(?=^\S.*error)", p.stderr, flags=re.M):
                if "error" not in block:
                    continue
                msg = re.search(r'static assertion failed with "([^"]*)"', block)
                for a, b in re.findall(r"s\.cu\((\d+)\): error|at line (\d+) of \S*s\.cu", block):
                    if int(a or b) in owner:
                        new.setdefault(owner[int(a or b)], msg.group(1) if msg else block.strip()[:200])
            if not new:
                raise RuntimeError(f"nvcc failed without a case to blame:\n{p.stderr[-4000:]}")
            refused.update(new)
        else:
            raise RuntimeError("too many compile rounds")
        out = subprocess.run([str(exe)], capture_output=True, timeout=120, check=True).stdout.decode(errors="replace")
    return printed(out) | {f"{i}.refused": m for i, m in refused.items()}


def _ours(c: dict) -> object:
    """The case's layout built by our algebra (element units): tile_to_shape in the case's order, then the block."""
    atom = sm100.umma_smem_atom(c["atom"], TYPES[c["type"]])
    lay = A.tile_to_shape(atom.layout, (c["mn"], c["k"]), (1, 2) if c["order"] == "12" else (2, 1))
    if "block" in c:
        bm, sm, bk, sk = c["block"]
        lay = A.composition(lay, (A.Layout(bm, sm), A.Layout(bk, sk)))
    return lay


def _confirmed(lay: str, bits: int, why: str) -> bool:
    """Our refusal says the element next to the first along the contiguous dimension (16-byte rows: MN for MN-major,
    K for K-major) is not at offset 1; confirm it on CuTe's own printed layout. CuTe's make_umma_desc checks only
    the strides of its uint128 recast, which rounds such a layout onto contiguous rows the layout does not have."""
    from algebra.hw.sm100_smem import _split

    m = re.search(r"element \((\d+), (\d+)\) of \S+ sits at offset (-?\d+)", why)
    if not m or "16-byte rows" not in why:
        return False
    inner, _ = _split(lay, bits)
    return inner((int(m.group(1)), int(m.group(2)))) == int(m.group(3)) != 1


def compare(cases: list[dict], cute: dict[str, str], tally: dict) -> list[str]:
    bad = []
    for i, c in enumerate(cases):
        bits = TYPES[c["type"]]
        if f"{i}.refused" in cute:  # CuTe refuses: ours must, on our own element-unit build of the tile
            try:
                sm100.umma_desc(_ours(c), bits, c["major"])
                bad.append(f"{i} {json.dumps(c)}: CuTe refuses ({cute[f'{i}.refused']}) where we answer")
                tally["wrong"] = tally.get("wrong", 0) + 1
            except A.LayoutError:
                tally["both refuse"] = tally.get("both refuse", 0) + 1
            continue
        lay = cute[f"{i}.layout"]
        try:
            got = sm100.umma_desc(lay, bits, c["major"])
        except A.LayoutError as exc:
            if _confirmed(lay, bits, str(exc)):  # CuTe's checks pass a layout its descriptor does not describe
                tally["refused, confirmed"] = tally.get("refused, confirmed", 0) + 1
                continue
            bad.append(f"{i} {json.dumps(c)}: CuTe builds {cute[f'{i}.desc']} for {lay}; we refuse: {exc}")
            tally["over-refusal"] = tally.get("over-refusal", 0) + 1
            continue
        want = int(cute[f"{i}.desc"])
        try:  # our own build of the tile gives the same descriptor
            own = sm100.umma_desc(_ours(c), bits, c["major"])
        except A.LayoutError as exc:
            own = str(exc)
        if own != want:
            bad.append(f"{i} {json.dumps(c)}: our build of the tile: {own} (CuTe's print gives {got})")
        d = sm100.decode_umma_desc(got)
        inv = sm100.encode_fields(d["start_address"], d["leading_byte_offset"], d["stride_byte_offset"],
                                  d["layout_type"], d["base_offset"], d["lbo_mode"], d["version"]) == got
        if got != want or not inv:
            bad.append(f"{i} {json.dumps(c)}: {lay}: cute={want:#x} ours={got:#x} decode-inverts={inv}")
            tally["wrong"] = tally.get("wrong", 0) + 1
        else:
            tally["equal"] = tally.get("equal", 0) + 1
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--out", type=Path, help="write the cases and CuTe's answers here (JSON)")
    ap.add_argument("--rescore", type=Path, help="a file written by --out: score the current tree, no compiler")
    a = ap.parse_args(argv)
    if a.rescore:
        rec = json.loads(a.rescore.read_text())
        cases, cute = rec["cases"], rec["cute"]
    else:
        cases = gen_cases(a.seed, a.n)
        cute = run_cpp(cases)
        if a.out:
            a.out.write_text(json.dumps({"cases": cases, "cute": cute}) + "\n")
    tally: dict = {}
    bad = compare(cases, cute, tally)
    print("\n".join(bad) or f"all {len(cases)} cases agree")
    print(json.dumps(tally, sort_keys=True))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
