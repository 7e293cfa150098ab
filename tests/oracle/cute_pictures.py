"""The pictures of the kernel vocabulary against CuTe's printers (host-only C++): ``print_latex(TiledMMA)`` (C, A
and B: every cell's thread, value and fill), ``print_latex(MMA_Atom)`` and ``print_latex(TiledCopy)`` (S and D),
against every renderer of ``layoutlab`` on the same object: the panels (the grid model the pages and notebook draw),
the TikZ (``layoutlab.latex``: each cell's node), the table (``layoutlab.text``: ``T<t>V<v>``), the SVG and the
HTML (each cell's ``data-thread`` / ``data-value`` at its ``data-offset``, the column-major index in the tile).

Cases reuse ``cute_vocab``'s draws: tiled MMAs on SM70 / SM80 / SM90 atoms with atom layouts and permutations, MMA
atoms alone, tiled copies in both forms (thread / value layouts; a TV layout and a tiler).

    python tests/oracle/cute_pictures.py --seed 10820 --n 40
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cute_vocab as V  # noqa: E402
from cute_cpp import compile_and_resume, oracle_cli  # noqa: E402

import algebra as A  # noqa: E402
from algebra import atoms  # noqa: E402

Cells = dict[tuple[int, int], tuple[int, int, str]]  # (row, col) -> (thread, value, fill)
NODE = re.compile(r"\\node\[fill=(.*)\] at \((-?\d+),(-?\d+)\) \{\\shortstack\{T(\d+) \\\\ V(\d+)\}\};")


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    layouts = ["(1,1,1)", "(2,1,1)", "(1,2,1)", "(2,2,1)", "(4,1,1)", "(1,4,1)", "(2,2,1):(2,1,0)", "(4,2,1)",
               "(1,1,2)"]
    out: list[dict] = []
    while len(out) < n:
        r = rng.random()
        if r < 0.45:
            c = V._mma_case(rng, layouts)
            out.append({"kind": "mma", "atom": c["atom"], "layout": c["layout"], "perm": c["perm"]})
        elif r < 0.55:
            out.append({"kind": "atom", "atom": rng.choice(list(V.MMAS))})
        else:
            out.append(V._copy_case(rng))
    return out


def _mma_obj(c: dict) -> Any:
    if c["kind"] == "atom":
        return atoms.get(c["atom"])
    return atoms.make_tiled_mma(c["atom"], A.parse(c["layout"]), V._perm(c["perm"]))


def _copy_obj(c: dict) -> Any:
    if c["kind"] == "copy":
        return atoms.make_tiled_copy(c["atom"], A.parse(c["thr"]), A.parse(c["val"]), element_bits=c["bits"])
    return atoms.make_tiled_copy(c["atom"], layout_tv=A.parse(c["tv"]), tiler=tuple(c["tiler"]),
                                 element_bits=c["bits"])


def program(cases: list[dict]) -> list[str]:
    """Case ``i`` is ``void c<i>()``."""
    lines = list(V.HEADERS)
    for i, c in enumerate(cases):
        lines += [f"void c{i}() {{", f'  printf("@@{i}\\n");']
        if c["kind"] in ("atom", "mma"):  # print_latex(TiledMMA)'s body, on named tensors
            mma = (f"make_tiled_mma(MMA_Atom<{V.MMAS[c['atom']][0]}>{{}})" if c["kind"] == "atom" else
                   f"make_tiled_mma({V.MMAS[c['atom']][0]}{{}}, {V._cpp_layout(A.parse(c['layout']))}, "
                   f"{V._cpp_perm(c['perm'])})")
            lines += [f"  auto mma = {mma};", "  auto t = tile_shape(mma);",
                      "  auto C = composition(make_identity_tensor(select<0,1>(t)), mma.get_layoutC_TV());",
                      "  auto A = composition(make_identity_tensor(select<0,2>(t)), mma.get_layoutA_TV());",
                      "  auto B = composition(make_identity_tensor(select<1,2>(t)), mma.get_layoutB_TV());",
                      "  detail::print_latex_mma(C, A, B, t);"]
        else:
            atom = f"Copy_Atom<{V.COPIES[c['atom']]}, {V.ELEM[c['bits']]}>{{}}"
            if c["kind"] == "copy":
                lines.append(f"  print_latex(make_tiled_copy({atom}, {V._cpp_layout(A.parse(c['thr']))}, "
                             f"{V._cpp_layout(A.parse(c['val']))}));")
            else:
                tiler = "Shape<" + ",".join(f"Int<{x}>" for x in c["tiler"]) + ">{}"
                tv = V._cpp_layout(A.parse(c["tv"]))
                lines.append(f"  print_latex(make_tiled_copy_impl({atom}, {tv}, {tiler}));")
        lines += [f'  printf("{DONE}\\n"); fflush(stdout);', "}"]
    return lines


DONE, DIED = "%% done", "CuTe's program died"  # DIED: print_latex wrote past its grid's array (a TV layout off it)


def run_cpp(cases: list[dict], timeout: int = 1800) -> dict[int, str]:
    """Each case's print; one that kills the program is ``DIED: <status>`` and the run goes on from the next."""
    got: dict[int, str] = {}

    def read(out: str) -> None:
        for part in out.split("@@")[1:]:
            head, body = part.split("\n", 1)
            if body.rstrip().endswith(DONE[1:]):
                got[int(head)] = body

    died = compile_and_resume(program(cases), len(cases), read, got.__contains__, timeout)
    got.update({i: f"{DIED}: status {status}" for i, (status, _) in died.items()})
    return got


def cute_panels(c: dict, tex: str) -> dict[str, Cells]:
    """CuTe's picture as panels: an MMA's C at (m, n), A at (m, k - K - 1), B at (k - K - 1, n); a copy's S at
    (m, n), D at (m, n + N + 3)."""
    out: dict[str, Cells] = {}
    if c["kind"] in ("mma", "atom"):
        x = _mma_obj(c)
        k = x.tile_size_mnk(2) if c["kind"] == "mma" else x.shape_mnk[2]
        for fill, a, b, t, v in NODE.findall(tex):
            a, b, cell = int(a), int(b), (int(t), int(v), fill)
            if a >= 0 and b >= 0:
                out.setdefault("C", {})[(a, b)] = cell
            elif a >= 0:
                out.setdefault("A", {})[(a, b + k + 1)] = cell
            else:
                out.setdefault("B", {})[(b, a + k + 1)] = cell
        return out
    n = it_product(_copy_obj(c).tiler[1:])
    for fill, a, b, t, v in NODE.findall(tex):
        a, b, cell = int(a), int(b), (int(t), int(v), fill)
        side = "S" if b < n else "D"
        out.setdefault(side, {})[(a, b if side == "S" else b - n - 3)] = cell
    return out


def it_product(t: Any) -> int:
    return A.inttuple.product(tuple(t)) if t else 1


def _panel_cells(p: Any) -> Cells:
    from layoutlab.render import _TV_TIKZ

    return {(m, n): (p.threads[m][n], p.values[m][n], _TV_TIKZ[p.threads[m][n] % 8])
            for m in range(p.rows) for n in range(p.cols) if p.threads[m][n] >= 0}


def ours(c: dict) -> tuple[dict[str, Cells], list[Any], Any]:
    """Our panels (name -> cells), the Panel objects and the object drawn."""
    from layoutlab.inputs import panels

    x = _mma_obj(c) if c["kind"] in ("mma", "atom") else _copy_obj(c)
    ps = panels(x)
    names = ["A", "B", "C"] if c["kind"] in ("mma", "atom") else ["S", "D"]
    if len(ps) != len(names):
        raise AssertionError(f"{len(ps)} panels, not {names}")
    return {nm: _panel_cells(p) for nm, p in zip(names, ps, strict=True)}, ps, x


def _renderers_agree(ps: list[Any], x: Any) -> list[str]:
    """Every renderer of the same panels gives the cells the panels hold."""
    import layoutlab
    from layoutlab import render

    bad: list[str] = []
    want = [(m + p.rows * n, p.threads[m][n], p.values[m][n]) for p in ps for m in range(p.rows)
            for n in range(p.cols) if p.threads[m][n] >= 0]  # row by row, panel after panel
    for name, doc in (("html", layoutlab.html(x)), ("svg", layoutlab.svg(x))):
        got = [tuple(map(int, c)) for c in re.findall(r'data-offset="(\d+)" data-thread="(\d+)" data-value="(\d+)"',
                                                       doc)]
        if got != want:
            k = next((j for j, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), min(len(got), len(want)))
            bad.append(f"{name}: cell {k} of {len(want)} differs from the panels: {got[k:k + 1]} != {want[k:k + 1]}")
    tables = render.text(ps).split("\n\n")
    for p, table in zip(ps, tables, strict=False):
        rows = [ln for ln in table.splitlines() if re.match(r"^ *\d+  \|", ln)]
        cells = [[s.strip() for s in r.split("|")[1:-1]] for r in rows]
        exp = [[f"T{t}V{v}" if t >= 0 else "" for t, v in zip(tr, vr, strict=True)]
               for tr, vr in zip(p.threads, p.values, strict=True)]
        if cells != exp:
            bad.append(f"text: {p.title}: its cells differ from the panel")
    if render.latex_cells(ps) <= render.LATEX_CELLS:
        tex = layoutlab.latex(x)
        for k, (p, scope) in enumerate(zip(ps, tex.split("\\begin{scope}")[1:], strict=True)):
            got_c = {(int(a), int(b)): (int(t), int(v), f) for f, a, b, t, v in NODE.findall(scope)}
            if got_c != _panel_cells(p):
                bad.append(f"latex: panel {k} ({p.title}): its nodes differ from the panel")
    return bad


OFF_GRID = "CuTe's picture is off its grid"  # a fault of CuTe's print_latex, reported apart from our mismatches


def _tv_cells(x: Any) -> tuple[int, int, dict[str, Cells]]:
    """A tiled copy's (M, N) and its TV layouts' function as cells: value v of thread t at index i = TV(t, v) of the
    column-major tile, cell (i % M, i // M); of several (t, v) on one cell the first, threads outer (CuTe's order)."""
    from layoutlab.render import _TV_TIKZ

    m, n = it_product(x.tiler[:1]), it_product(x.tiler[1:])
    out: dict[str, Cells] = {}
    for name, tv in (("S", x.get_layoutS_TV()), ("D", x.get_layoutD_TV())):
        cells: Cells = {}
        for t in range(it_product(tv.shape[:1])):
            for v in range(it_product(tv.shape[1:])):
                i = tv(t, v)
                cells.setdefault((i % m, i // m), (t, v, _TV_TIKZ[t % 8]))
        out[name] = cells
    return m, n, out


def _off_grid(i: int, c: dict, x: Any, theirs: dict[str, Cells], mine: dict[str, Cells]) -> tuple[list, list]:
    """Our copy panels against the TV layouts' function (mismatches), and CuTe's nodes off its own M x N grid: CuTe
    composes the identity tensor with the TV layout mode by mode, so an index M * n + m can come out as the
    coordinate (M * n + m, 0) with no carry into n (faults). Off-grid panels are put back at their index, then
    compared as any other."""
    m, n, want = _tv_cells(x)
    bad = [f"{i}.{nm} {c}: ours differ from the TV layout's function at "
           f"{sorted(set(want[nm].items()) ^ set(mine.get(nm, {}).items()))[:4]}"
           for nm in want if mine.get(nm) != want[nm]]
    faults = []
    for nm, cells in theirs.items():
        off = sorted(k for k in cells if not (0 <= k[0] < m and 0 <= k[1] < n))
        if off:
            theirs[nm] = {((a + m * b) % m, (a + m * b) // m): cell for (a, b), cell in cells.items()}
            at = ", ".join(f"({a},{b}) T{cells[(a, b)][0]}V{cells[(a, b)][1]}" for a, b in off[:8])
            faults.append(f"{i}.{nm} {c}: {OFF_GRID}: {len(off)} nodes outside its {m} x {n} grid at {at}; the TV "
                          f"layout's function puts them at {[((a + m * b) % m, (a + m * b) // m) for a, b in off[:8]]}")
    return bad, faults


def compare(cases: list[dict], cute: dict[int, str], faults: list[str] | None = None) -> list[str]:
    """Our mismatches; CuTe's own faults (``OFF_GRID``) go to ``faults`` (and are mismatches when it is None)."""
    bad: list[str] = []
    for i, c in enumerate(cases):
        try:
            if cute[i].startswith(DIED):  # CuTe's fault only where the TV layout leaves the tile and ours refuses it
                x = _copy_obj(c) if c["kind"] not in ("mma", "atom") else None
                off = x and [(nm, tv) for nm, tv in (("S", x.get_layoutS_TV()), ("D", x.get_layoutD_TV()))
                             if A.cosize(tv) > it_product(x.tiler)]
                try:
                    ours(c)
                    refused = ""
                except A.LayoutError as exc:
                    refused = str(exc)
                fl = [f"{i} {c}: {cute[i]} in print_latex; {nm} TV layout {tv} reaches index {A.cosize(tv) - 1} "
                      f"of the {' x '.join(map(str, x.tiler))} tile; ours refuse: {refused}" for nm, tv in off or []]
                if not (fl and "outside the" in refused):
                    bad.append(f"{i} {c}: {cute[i]}, and ours {'refuse: ' + refused if refused else 'draw it'}")
                elif faults is None:
                    bad += fl
                else:
                    faults += fl
                continue
            theirs = cute_panels(c, cute[i])
            mine, ps, x = ours(c)
            if c["kind"] not in ("mma", "atom"):
                wrong, fl = _off_grid(i, c, x, theirs, mine)
                if faults is None:
                    bad += fl
                else:
                    faults += fl
                bad += wrong
            for name, cells in theirs.items():
                if mine.get(name) != cells:
                    diff = sorted(set(cells.items()) ^ set(mine.get(name, {}).items()))[:4]
                    bad.append(f"{i}.{name} {c}: cute and ours differ at {diff}")
            if set(theirs) != set(mine):
                bad.append(f"{i} {c}: panels cute={sorted(theirs)} ours={sorted(mine)}")
            bad += [f"{i} {c}: {b}" for b in _renderers_agree(ps, x)]
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            bad.append(f"{i} {c}: ours raised {exc!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    def judged(cases: list[dict], cute: dict[int, str]) -> list[str]:
        faults: list[str] = []
        bad = compare(cases, cute, faults)
        print("\n".join(faults))
        return bad

    return oracle_cli(__doc__, 30, lambda a: gen_cases(a.seed, a.n), run_cpp, judged, argv)


if __name__ == "__main__":
    sys.exit(main())
