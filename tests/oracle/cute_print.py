"""Fresh random inputs for the renderers against CuTe's printers: ``print_layout`` tables and ``print_latex`` /
``print_latex_tv`` TikZ, compiled from CuTe's headers (host only).

A case is ``{"kind": "layout", "layout": text}`` (a rank-2 layout: nested shapes, size-1 modes, negative and zero
strides, or a swizzle ``Sw<B,M,S> o _0 o L``), ``{"kind": "latex1", "layout": text}`` (a rank-1 layout: CuTe's
``print_latex`` draws it as one column; ``print_layout`` refuses rank 1) or ``{"kind": "tv", "tv": text, "tile":
[M, N]}`` (a TV layout into an M x N tile, column-major, drawn by ``print_latex_tv``).

    python tests/oracle/cute_print.py --seed 9700 --n 60
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cute_cpp import compile_and_run, cvalue  # noqa: E402

import algebra as A  # noqa: E402


def _mode(rng: random.Random, budget: int) -> tuple[Any, Any]:
    """A (shape, stride) mode: an int or a 2-3 leaf tuple, leaves of size 1..budget, strides from -9..17."""
    def leaf() -> tuple[int, int]:
        s = rng.choice([1, 1, 2, 2, 3, 4, 5, 8])
        s = max(1, min(s, budget))
        d = rng.choice([0, 1, 1, 2, 3, 4, 8, 16, -1, -2, -3, -8, 5, 7, 12, 17, -5])
        return s, d
    if rng.random() < 0.4:
        leaves = [leaf() for _ in range(rng.choice([2, 2, 3]))]
        return tuple(s for s, _ in leaves), tuple(d for _, d in leaves)
    return leaf()


def _layout(rng: random.Random, rank: int) -> A.Layout:
    while True:
        modes = [_mode(rng, 8) for _ in range(rank)]
        lay = A.Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))
        if 1 <= A.size(lay) <= 256:
            return lay


def _compact(rng: random.Random, rank: int) -> A.Layout:
    """A compact (bijective) layout: a column- or row-major nested shape, modes maybe shuffled."""
    while True:
        shape = tuple(rng.choice([1, 2, 4, (2, 2), (2, 4), (4, 2), 8, (2, 1)]) for _ in range(rank))
        lay = A.make_layout_row_major(shape) if rng.random() < 0.5 else A.Layout(shape)
        if 2 <= A.size(lay) <= 256:
            return lay


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        r = rng.random()
        if r < 0.5:
            out.append({"kind": "layout", "layout": str(_layout(rng, 2))})
        elif r < 0.65:  # a swizzle over a non-negative layout (CuTe XORs the bits of a signed int: no negatives)
            lay = _compact(rng, 2)
            cos = A.cosize(lay)
            bits = max(1, (cos - 1).bit_length())
            b = rng.randint(1, max(1, bits // 2))
            m = rng.randint(0, max(0, bits - 2 * b))
            s = rng.randint(b, max(b, bits - m - b))
            out.append({"kind": "layout", "layout": f"Sw<{b},{m},{s}> o 0 o {lay}"})
        elif r < 0.75:
            out.append({"kind": "latex1", "layout": str(_layout(rng, 1))})
        else:
            # (not a 6 x 4 tile: CuTe composes the tile's identity tensor with the TV layout, and a stride of 4
            # into the 6-row mode is outside what composition allows: print_latex_tv draws past the tile)
            M, N = rng.choice([(4, 4), (8, 4), (4, 8), (8, 8), (16, 4), (2, 8), (8, 2), (4, 2)])
            cells = M * N
            vals = rng.choice([d for d in (1, 2, 4) if cells % d == 0])
            t1 = rng.choice([d for d in (1, 2, 4) if (cells // vals) % d == 0])
            leaves = [t1, cells // vals // t1, vals]  # (t1, t2) threads, the values: strides of a shuffled order
            order = rng.sample(range(3), 3)
            stride, acc = [0, 0, 0], 1
            for k in order:
                stride[k], acc = acc, acc * leaves[k]
            tshape, tstride = (leaves[0], leaves[1]), (stride[0], stride[1])
            if rng.random() < 0.25:  # two threads share each value: duplicate claims, the first one labels it
                tshape, tstride = (2,) + tshape, (0,) + tstride
            tv = A.Layout((tshape, leaves[2]), (tstride, stride[2]))
            out.append({"kind": "tv", "tv": str(tv), "tile": [M, N]})
    return out


def gen_smem_cases(seed: int, n: int) -> list[dict]:
    """``{"kind": "smem", ...}``: a GMMA smem atom (either major, every swizzle width, 8- / 16- / 32-bit elements)
    tiled by ``tile_to_shape`` to 1-2 atoms a mode. The renderers draw CuTe's own print of it (``Sw<3,4,3> o
    smem_ptr[16b](unset) o ...``), which ``print_layout`` / ``print_latex`` draw in element units."""
    rng = random.Random(seed)
    out: list[dict] = []
    while len(out) < n:
        major, sw, t = rng.choice(["K", "MN"]), rng.choice(["INTER", "SW32", "SW64", "SW128"]), rng.choice(
            ["uint8_t", "half_t", "float"])
        w = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}[sw] * 8 // {"uint8_t": 8, "half_t": 16, "float": 32}[t]
        atom = (8, w) if major == "K" else (w, 8)
        tile = [atom[0] * rng.choice([1, 1, 2]), atom[1] * rng.choice([1, 1, 2])]
        if tile[0] * tile[1] <= 2048:
            out.append({"kind": "smem", "atom": f"GMMA::Layout_{major}_{sw}_Atom<{t}>", "tile": tile})
    return out


HEAD = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm90_gmma.hpp>",
        "using namespace cute;"]


def program(cases: list[dict]) -> str:
    lines = list(HEAD) + ["int main() {"]
    for i, c in enumerate(cases):
        if c["kind"] == "layout":
            lines += [f'  printf("@@{i}.table\\n"); print_layout({cvalue(c["layout"])});',
                      f'  printf("@@{i}.latex\\n"); print_latex({cvalue(c["layout"])});']
        elif c["kind"] == "smem":
            m, n = c["tile"]
            lines += [f"  {{ auto L = tile_to_shape({c['atom']}{{}}, Shape<Int<{m}>,Int<{n}>>{{}});",
                      f'    printf("@@{i}.print\\n"); print(L); printf("\\n");',
                      f'    printf("@@{i}.table\\n"); print_layout(L); printf("@@{i}.latex\\n"); print_latex(L); }}']
        elif c["kind"] == "latex1":
            lines.append(f'  printf("@@{i}.latex\\n"); print_latex({cvalue(c["layout"])});')
        else:
            m, n = c["tile"]
            lines += [f"  {{ auto ref = make_identity_tensor(make_shape(Int<{m}>{{}}, Int<{n}>{{}}));",
                      f'    printf("@@{i}.latex\\n"); print_latex_tv(composition(ref, {cvalue(c["tv"])}), '
                      f"make_shape(Int<{m}>{{}}, Int<{n}>{{}})); }}"]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_cpp(cases: list[dict], timeout: int = 1800) -> dict[str, str]:
    """CuTe's output for each ``<case>.table`` / ``<case>.latex`` (a negative offset's fill is read from outside
    CuTe's palette, idx % 8 < 0: bytes that may not be text)."""
    out = compile_and_run(program(cases), timeout)
    parts = out.split("@@")[1:]
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in parts}


def tikz_body(tex: str) -> list[str]:
    """The drawing lines of one picture: cells, the grid and the labels (not the preamble, comments, our title)."""
    return [ln for ln in tex.splitlines()
            if re.match(r"\\(node|draw)\b", ln) and not ln.startswith("\\node[anchor=west]")]


def _negative_fills(tex: str) -> str:
    """The fill of a cell whose offset is negative as ``?``: CuTe's TikzColor_BWx8 indexes its palette with ``idx % 8``
    < 0, outside its array (undefined: ``(null)`` or stray bytes, a newline among them at times)."""
    out: list[str] = []
    for line in tex.splitlines():
        if out and out[-1].startswith("\\node[fill=") and not out[-1].endswith("};"):
            out[-1] += "\n" + line  # a stray newline inside a fill
        else:
            out.append(line)
    cell = re.compile(r"\\node\[fill=.*\] at \((-?\d+),(-?\d+)\) \{(-\d+)\};", re.S)
    return "\n".join(cell.sub(lambda m: f"\\node[fill=?] at ({m[1]},{m[2]}) {{{m[3]}}};", ln) for ln in out)


def compare(cases: list[dict], cute: dict[str, str]) -> list[str]:
    import layoutlab

    bad: list[str] = []
    for i, c in enumerate(cases):
        try:
            if c["kind"] == "tv":
                x, kw = A.parse(c["tv"]), {"tile": tuple(c["tile"])}
            elif c["kind"] == "smem":  # CuTe's print of the tile, pasted
                x, kw = cute[f"{i}.print"].strip(), {}
            else:
                x, kw = c["layout"], {}
            tex = layoutlab.latex(x, **kw)
            ours_tex = tikz_body(_negative_fills(tex))
            theirs_tex = tikz_body(_negative_fills(cute[f"{i}.latex"]))
            if ours_tex != theirs_tex:
                diff = next((k for k, (o, t) in enumerate(zip(ours_tex, theirs_tex, strict=False)) if o != t),
                            min(len(ours_tex), len(theirs_tex)))
                bad.append(f"{i}.latex {c}: line {diff}: cute={theirs_tex[diff:diff + 2]} "
                           f"ours={ours_tex[diff:diff + 2]}")
            if c["kind"] not in ("layout", "smem"):
                continue
            theirs = cute[f"{i}.table"]
            ours = layoutlab.text(x)
            t_head, t_rest = theirs.split("\n", 1)
            o_head, o_rest = ours.split("\n", 1)
            if o_rest != t_rest:
                bad.append(f"{i}.table {c}:\nCuTe:\n{theirs}\nours:\n{ours}")
            th, oh = A.parse(t_head), A.parse(o_head)
            if (th != oh) if "Sw<" not in x else (A.size(th) != A.size(oh) or A.offsets(th) != A.offsets(oh)):
                bad.append(f"{i}.head {c}: cute={t_head} ours={o_head}")
            # the SVG and the HTML draw the same cells as the table: one data-offset per cell, in the same order
            want = [int(v) for v in re.findall(r"\| +(-?\d+) ", t_rest)]
            for name, doc in (("svg", layoutlab.svg(x)), ("html", layoutlab.html(x))):
                got = [int(v) for v in re.findall(r'data-offset="(-?\d+)"', doc)]
                if sorted(got) != sorted(want) or len(got) != len(want):
                    bad.append(f"{i}.{name} {c}: offsets {got[:12]}.. != the table's {want[:12]}..")
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            bad.append(f"{i} {c}: ours raised {exc!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--cute", type=Path, help="CuTe output: read if it exists, else written")
    a = ap.parse_args(argv)
    cases = gen_cases(a.seed, a.n) + gen_smem_cases(a.seed, a.n // 4)
    if a.cute and a.cute.exists():
        cute = json.loads(a.cute.read_text())
    else:
        cute = run_cpp(cases)
        if a.cute:
            a.cute.write_text(json.dumps(cute))
    bad = compare(cases, cute)
    print("\n".join(bad) or f"all {len(cases)} cases agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
