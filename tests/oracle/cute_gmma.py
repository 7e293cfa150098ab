"""Hopper's wgmma shared-memory descriptors and canonical smem layouts against CuTe C++ (host only): fresh tiles of
every ``GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` (8-, 16- and 32-bit T), tiled by ``tile_to_shape`` to
(MN, K) tiles of 1-8 atoms along MN (N = 8 / 24 / 40 operands too) and 1-4 along K, cut to one wgmma K-block
(``composition(tile, (MN, 32 bytes of K))``) and at times to a later one (``local_tile``: the descriptor of a tensor
that starts past address 0), printed, and their ``SM90::GMMA::make_gmma_desc<Major>``.

Ours: ``hopper.make_gmma_desc`` (the first K-block of the tiled atom), ``solver_desc.encode`` of our element-unit
tile and of CuTe's printed one (``Sw<3,4,3> o smem_ptr[16b](unset) o ...``), ``solver_desc.decode`` of CuTe's value
(valid, and its fields), and the printed layout read back as a function equal to ours.

    python tests/oracle/cute_gmma.py --seed 10810 --n 80
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cute_cpp import compile_refusing, oracle_cli, printed  # noqa: E402

import algebra as A  # noqa: E402
from algebra.core.products import tile_to_shape  # noqa: E402
from algebra.doctor import solver_desc as D  # noqa: E402
from algebra.hw import hopper  # noqa: E402

TYPES = {8: "uint8_t", 16: "half_t", 32: "float"}
SPANS = {16: "INTER", 32: "SW32", 64: "SW64", 128: "SW128"}


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        major, span, bits = rng.choice(["K", "MN"]), rng.choice(list(SPANS)), rng.choice(list(TYPES))
        atom = hopper.smem_atom(major, span, bits)
        fm, fk = rng.choice([1, 1, 2, 3, 4, 5, 8]), rng.choice([1, 2, 3, 4])
        mn, k = atom.shape[0] * fm, atom.shape[1] * fk
        kb = 256 // bits  # one wgmma K-block: 32 bytes of K
        if mn > 256 or k > 512 or k % kb or mn % 8:
            continue
        block = rng.randrange(k // kb) if rng.random() < 0.3 else 0
        out.append({"major": major, "span": span, "bits": bits, "mn": mn, "k": k, "kb": kb, "block": block})
    return out


def _atom_cpp(c: dict) -> str:
    return f"GMMA::Layout_{c['major']}_{SPANS[c['span']]}_Atom<{TYPES[c['bits']]}>{{}}"


def _case_cpp(i: int, c: dict) -> list[str]:
    t, mn, k, kb = TYPES[c["bits"]], c["mn"], c["k"], c["kb"]
    tile = f"tile_to_shape({_atom_cpp(c)}, Shape<Int<{mn}>,Int<{k}>>{{}})"
    return [f"void c{i}() {{",
            f"  alignas(1024) static {t} buf[{mn * k}];",
            f"  auto L = {tile};",
            f'  printf("{i}.tile\\t"); print(L); printf("\\n");',
            f"  auto T = local_tile(make_tensor(make_smem_ptr(buf), L), Shape<Int<{mn}>,Int<{kb}>>{{}}, "
            f"make_coord(0, {c['block']}));",
            f'  printf("{i}.block\\t"); print(T.layout()); printf("\\n");',
            f'  printf("{i}.off\\t%d\\n", int(raw_pointer_cast(T.data()) - buf));',
            f"  auto F = composition(L, make_tile(Layout<Int<{mn}>>{{}}, Layout<Int<{kb}>>{{}}));",
            f'  printf("{i}.first\\t"); print(F); printf("\\n");',
            f"  auto d = SM90::GMMA::make_gmma_desc<SM90::GMMA::Major::{c['major']}>(make_tensor("
            f"make_smem_ptr<{t}>(nullptr), F));",
            f'  printf("{i}.desc\\t%llu\\n", (unsigned long long)d.desc_);',
            "}"]


def run_cpp(cases: list[dict], timeout: int = 1800) -> dict[str, str]:
    """CuTe's printed values; a case whose static_assert fires is ``{"<i>.refused": message}``."""

    def emit_todo(refused: dict[int, str]) -> tuple[str, dict[int, int]]:
        lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm90_gmma.hpp>",
                 "using namespace cute;"]
        owner: dict[int, int] = {}
        for i, c in enumerate(cases):
            if i not in refused:
                body = _case_cpp(i, c)
                owner.update({len(lines) + j + 1: i for j in range(len(body))})
                lines += body
        lines += ["int main() {"] + [f"  c{i}();" for i in range(len(cases)) if i not in refused] + ["}"]
        return "\n".join(lines) + "\n", owner

    with tempfile.TemporaryDirectory(prefix="cute-gmma-") as tmp:
        exe, refused = compile_refusing(emit_todo, Path(tmp), timeout=timeout, rounds=4)
        out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120).stdout
    got = printed(out)
    got.update({f"{i}.refused": m for i, m in refused.items()})
    return got


def _same_function(a: Any, b: Any) -> bool:
    return A.size(a) == A.size(b) and A.offsets(a) == A.offsets(b)


def ours(c: dict) -> dict[str, Any]:
    atom = hopper.smem_atom(c["major"], c["span"], c["bits"])
    tile = tile_to_shape(atom.layout if c["span"] != 16 else A.Layout(atom.shape, atom.stride), (c["mn"], c["k"]))
    first = A.composition(tile, (A.Layout(c["mn"]), A.Layout(c["kb"])))
    return {"tile": tile, "first": first, "desc": hopper.make_gmma_desc(atom, c["mn"], c["k"]).value}


def compare(cases: list[dict], cute: dict[str, str]) -> list[str]:
    bad: list[str] = []
    for i, c in enumerate(cases):
        if f"{i}.refused" in cute:
            bad.append(f"{i} {c}: CuTe refused: {cute[f'{i}.refused'][:200]}")
            continue
        eb, want = c["bits"] // 8, int(cute[f"{i}.desc"])
        try:
            mine = ours(c)
            if mine["desc"] != want:
                bad.append(f"{i} {c}: make_gmma_desc cute={want:#x} ours={mine['desc']:#x}")
            for key in ("tile", "first"):
                theirs = A.parse(cute[f"{i}.{key}"])
                if not _same_function(theirs, mine[key]):
                    bad.append(f"{i}.{key} {c}: cute={cute[f'{i}.{key}']} ours={mine[key]}")
            for text in (str(mine["first"]), cute[f"{i}.first"]):
                got = int(D.encode(text, eb, c["major"])["value"], 16)
                if got != want:
                    bad.append(f"{i} {c}: encode({text}) = {got:#x}, cute={want:#x}")
            dec = D.decode(hex(want), eb, c["major"], c["mn"], c["kb"], tile=cute[f"{i}.first"])
            if not dec["valid"]:
                bad.append(f"{i} {c}: decode of CuTe's {want:#x} is not valid: "
                           f"{[x['text'] for x in dec['checks'] if not x['ok']]}")
            # a later K-block: the layout CuTe's local_tile keeps, and where its tensor starts
            # (a swizzled smem tensor keeps the swizzle in its pointer: element i is at sw(off + layout(i)))
            off, sw = int(cute[f"{i}.off"]), hopper.smem_atom(c["major"], c["span"], c["bits"]).layout.layout_a
            sub, o = A.local_tile(mine["tile"], (c["mn"], c["kb"]), (0, c["block"]))
            theirs = [sw(off + x) if c["span"] != 16 else off + x for x in A.offsets(A.parse(cute[f"{i}.block"]))]
            if [o + x for x in A.offsets(sub)] != theirs:
                bad.append(f"{i}.block {c}: cute={cute[f'{i}.block']} @ {off} ours={sub} @ {o}")
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            bad.append(f"{i} {c}: ours raised {exc!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    return oracle_cli(__doc__, 60, lambda a: gen_cases(a.seed, a.n), run_cpp, compare, argv)


if __name__ == "__main__":
    sys.exit(main())

