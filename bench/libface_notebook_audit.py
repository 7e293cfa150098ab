"""Audit of the library face in a notebook: a fresh notebook of random layouts (bare ``A.parse(...)`` as a cell's last
line, pycute Layouts, numpy arrays, TV layouts with ``tile=``, hostile objects) executed with a real Jupyter kernel
(nbclient + ipykernel); each output's cells checked against offsets computed by hand (bench/libface_audit.py's
``Case``), and every hostile cell against "a one-line reason, no traceback".

    python bench/libface_notebook_audit.py --seed 16310 --n 30
"""

from __future__ import annotations

import argparse
import html as htmlmod
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

from libface_audit import Case, flat, gen, prod  # noqa: E402

SPAN = re.compile(r'<span(?: class="[^"]*")? data-offset="([^"]*)"([^>]*)>([^<]*)</span>')

PRELUDE = """import algebra as A, layoutlab, numpy as np
from algebra import atoms
from pycute import Layout as PyCuteLayout
class Obj:
    def __init__(s, shape, stride): s.shape, s.stride = shape, stride
class Boom:
    @property
    def shape(self): raise RuntimeError("boom")
    stride = (1, 4)
"""

HOSTILE = ["layoutlab.show(None)", "layoutlab.show('(4,8:(8,1)')", "layoutlab.show(Obj((4, 8), (1,)))",
           "layoutlab.show(Obj('4', '8'))", "layoutlab.show(np.zeros((0, 4)))",
           "layoutlab.show('(1024,1024):(1,1024)')",
           "layoutlab.show('65537:1')", "layoutlab.show('(4,8):(8,1)', colour='rainbow')",
           "layoutlab.show('(4,8):(8,1)', element_bytes=0)", "layoutlab.show('(4,8):(1,4)', tile=(2, 2))",
           "layoutlab.show('#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
           "order = [1, 0]}>')", "layoutlab.show(Boom())", "A.parse('(4,8):(8,1')",
           "layoutlab.show(b'(4,8):(8,1)')", "layoutlab.show(3.5)"]


def tv_labels(tv: Case, rows: int, cols: int) -> dict:
    """print_latex_tv's label of each cell: the first (thread, value), threads outer, values inner."""
    nthr = prod(tv.shape[0])
    nval = prod(tv.shape) // nthr
    out: dict = {}
    for t in range(nthr):
        for v in range(nval):
            idx = tv.value(t + nthr * v)
            out.setdefault((idx % rows, idx // rows), f"T{t}V{v}")
    return out


def main(argv=None) -> int:
    import nbclient
    import nbformat

    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=30)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    sources, checks = [PRELUDE], [None]
    while len(sources) < a.n + 1:
        case = gen(rng)
        text = case.text()
        sources.append(f'A.parse("{text}")')
        checks.append(("layout", case))
        if case.kind() == "plain" and rng.random() < 0.5:
            sources.append(f"PyCuteLayout({case.shape!r}, {case.stride!r})")
            checks.append(("layout", case))
        fs, fd = flat(case.shape), flat(case.stride)
        if case.kind() == "plain" and all(d >= 0 for d in fd) and rng.random() < 0.5:
            span = 1 + sum((s - 1) * d for s, d in zip(fs, fd, strict=True))
            src = (f"np.lib.stride_tricks.as_strided(np.zeros({span}), "
                   f"shape={tuple(fs)!r}, strides={tuple(8 * d for d in fd)!r})")
            sources.append(src)
            checks.append(("layoutlab.show", Case(tuple(fs), tuple(fd))))
            sources[-1] = f"layoutlab.show({src})"
    for _ in range(max(3, a.n // 6)):  # TV layouts: (thread, value) -> index in an M x N tile
        m, n = rng.choice([(4, 4), (8, 4), (8, 8), (16, 8), (4, 16)])
        t = rng.choice([2, 4, 8, 16, 32])
        t = min(t, m * n)
        v = m * n // t
        perm = rng.choice([(m * n // t, 1), (1, t)])
        tv = Case((t, v), perm)
        sources.append(f'layoutlab.show("{tv.text()}", tile=({m}, {n}))')
        checks.append(("tv", tv, m, n))
    objects = ['atoms.get("SM80_16x8x16_F32F16F16F32_TN")', 'atoms.get("SM70_8x8x4_F32F16F16F32_NT")',
               'atoms.get("SM75_U32x4_LDSM_N")',
               'atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", atom_layout=A.Layout((2, 2, 1)))',
               'atoms.make_tiled_mma("SM70_8x8x4_F32F16F16F32_NT", atom_layout=A.Layout((1, 2, 1)))',
               'atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", thr_layout=A.Layout((16, 8), (8, 1)), '
               'val_layout=A.Layout((1, 8)), element_bits=16)',
               'atoms.make_tiled_copy_A("SM75_U32x4_LDSM_N", atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", '
               'atom_layout=A.Layout((2, 2, 1))), element_bits=16)',
               'A.parse("ArithTuple(2,3) o (4,4):(1@0,1@1)")']
    for src in rng.sample(objects, len(objects)):
        sources.append(src)
        checks.append(("object", src))
    for h in HOSTILE:
        sources.append(h)
        checks.append(("hostile",))
    sources.append("import layoutlab as L2; L2.show(A.parse('(2,2):(1,2)'))")  # import twice: formatters stay one
    checks.append(("layout", Case((2, 2), (1, 2))))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    faults, cells_checked, drawn = [], 0, 0
    for src, c, chk in zip(sources, nb.cells, checks, strict=True):
        if chk is None:
            continue
        outs = c.outputs
        html = "".join(o.get("data", {}).get("text/html", "") for o in outs)
        alltext = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + html
                          + "".join(o.get("traceback", [])) for o in outs)
        if chk[0] == "hostile":
            errs = [o for o in outs if o.output_type == "error"]
            tb = "".join(errs[0].get("traceback", [])) if errs else ""
            if "Traceback" in alltext or ("File " in tb and "line " in tb) or len(tb.split("\n")) > 2:
                faults.append(f"notebook: {src}: a traceback in the cell: {(tb or alltext)[-300:]!r}")
            elif not alltext.strip():
                faults.append(f"notebook: {src}: no output at all")
            continue
        if any(o.output_type == "error" for o in outs):
            faults.append(f"notebook: {src}: error {[o.get('evalue') for o in outs if o.output_type == 'error']}")
            continue
        spans = SPAN.findall(html)
        if chk[0] == "object":  # the kernel's drawing is layoutlab.html's here (checked against CuTe elsewhere)
            import algebra as A  # noqa: F401 - the names the sources use
            import layoutlab
            from algebra import atoms  # noqa: F401
            want = [(o, rest, lab) for o, rest, lab in SPAN.findall(layoutlab.html(eval(src)))]  # noqa: S307
            if spans != want or not spans:
                faults.append(f"notebook: {src}: {len(spans)} cells drawn, layoutlab.html draws {len(want)}")
            cells_checked += len(spans)
            drawn += 1
            continue
        if chk[0] == "tv":
            _, tv, m, n = chk
            want = tv_labels(tv, m, n)
            got = [htmlmod.unescape(lab) for _, _, lab in spans]
            exp = [want.get((i, j), "") for i in range(m) for j in range(n)]
            if got != exp:
                k = next((k for k in range(min(len(got), len(exp))) if got[k] != exp[k]), None)
                faults.append(f"notebook: {src}: {len(got)} cells, first difference at {k}: "
                              f"{got[k] if k is not None else ''} != {exp[k] if k is not None else ''}")
            idx = [o for o, _, _ in spans]
            if idx != [str(i + m * j) for i in range(m) for j in range(n)]:
                faults.append(f"notebook: {src}: data-offset is not the cell's index in the tile")
            cells_checked += len(got)
            drawn += 1
            continue
        case = chk[1]
        want = [str(x) for row in case.table() for x in row]
        got = [(htmlmod.unescape(o), htmlmod.unescape(lab)) for o, _, lab in spans]
        if got != [(w, w) for w in want]:
            k = next((k for k in range(min(len(got), len(want))) if got[k] != (want[k], want[k])), None)
            faults.append(f"notebook: {src}: {len(got)} cells, want {len(want)}; first difference at {k}")
        if chk[0] == "layout" and not any("+-" in o.get("data", {}).get("text/plain", "") for o in outs):
            faults.append(f"notebook: {src}: no text/plain table beside the HTML")
        cells_checked += len(got)
        drawn += 1
    for f in faults:
        print(f)
    print(f"seed {a.seed}: {len(sources) - 1} notebook cells ({drawn} drawn, {len(HOSTILE)} hostile), "
          f"{cells_checked} cells checked, {len(faults)} defects")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
