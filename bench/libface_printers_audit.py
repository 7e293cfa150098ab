"""Other printers' layouts drawn by ``layoutlab`` and the explorer's ``/api/layout``: random pycute ``Layout`` /
``ComposedLayout`` objects (swizzles with negative shifts, offsets, rank-1 tuple shapes) drawn as objects, as pycute's
print (``SW_3_4_3 o 0 o (8, 64):(64, 1)``, ``(8,):(2,)``) and as the CuTe DSL's (``S<3,4,3> o 0 o ...``); each cell
compared with pycute's own value at that coordinate. Then random tiled copies with shared and past-the-tile pairs:
``/api/tiled`` and ``layoutlab`` against print_latex_copy's rule (threads outer, values inner) computed here.

    python bench/libface_printers_audit.py --seed 17360 --n 60
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repository, not bench/

import pycute  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

import algebra as A  # noqa: E402
import layoutlab  # noqa: E402
from algebra import atoms  # noqa: E402

CELL = re.compile(r'data-offset="([^"]*)"(?: data-thread="(\d+)" data-value="(\d+)")?')


def rand_shape(rng: random.Random, depth: int = 0):
    if depth < 2 and rng.random() < 0.25:
        return tuple(rand_shape(rng, depth + 1) for _ in range(rng.randint(1, 2)))
    return rng.choice([1, 2, 2, 3, 4, 4, 8])


def strides_for(rng: random.Random, shape, neg: bool):
    if isinstance(shape, tuple):
        return tuple(strides_for(rng, s, neg) for s in shape)
    d = rng.choice([0, 1, 1, 2, 4, 8, 16, 32, 3])
    return -d if neg and rng.random() < 0.3 else d


def obj(rng: random.Random):
    """A pycute Layout or ComposedLayout (a swizzle over a layout, its shape at times a rank-1 tuple)."""
    shape = tuple(rand_shape(rng) for _ in range(rng.randint(1, 3)))
    if len(shape) == 1 and rng.random() < 0.5:
        shape = shape[0]
    swz = rng.random() < 0.6
    layout = pycute.Layout(shape, strides_for(rng, shape, neg=not swz))
    if not swz:
        return layout
    b, m = rng.randint(0, 3), rng.randint(0, 4)
    s = rng.choice([x for x in range(-6, 7) if abs(x) >= max(b, 1)])  # pycute's shiftr(a, 0) never returns
    return pycute.ComposedLayout(pycute.Swizzle(b, m, s), rng.choice([0, 0, 0, 8, 64]), layout)


def want_cells(x) -> list[str]:
    inner = x.layoutA if hasattr(x, "layoutA") else x
    shape, n = inner.shape, pycute.size(inner)
    rows = pycute.product(shape[0]) if isinstance(shape, tuple) and len(shape) > 1 else 1
    return [str(x(i + rows * j)) for i in range(rows) for j in range(n // rows)]


def dsl_text(x) -> str:
    s = str(x)
    return re.sub(r"SW_(\d+)_(\d+)_(-?\d+)", r"S<\1,\2,\3>", s)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=60)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp())
    from app.main import create_app

    client = TestClient(create_app(), base_url="http://localhost")
    defects, refused, cells, layouts = [], [], 0, 0
    for _ in range(args.n):
        x = obj(rng)
        want = want_cells(x)
        layouts += 1
        for name, inp in (("object", x), ("pycute print", str(x)), ("DSL print", dsl_text(x))):
            for render in (layoutlab.html, layoutlab.svg):
                try:
                    got = [g[0] for g in CELL.findall(render(inp))]
                except A.LayoutError as exc:
                    got = f"refused: {exc}"
                cells += len(got) if isinstance(got, list) else 0
                if got != want:
                    defects.append(f"{name} {render.__name__} {x}: {got[:6]} != {want[:6]}")
        for text in (str(x), dsl_text(x)):
            r = client.post("/api/layout", json={"layout": text})
            got = [str(v) for row in r.json()["table"]["offsets"] for v in row] if r.status_code == 200 else r.text
            if got != want:
                defects.append(f"/api/layout {text}: {str(got)[:80]} != {want[:6]}")
    copies = 0
    for _ in range(args.n // 2):
        nthr, nval = rng.choice([2, 4, 8]), rng.choice([1, 2, 3])
        tv = A.Layout((nthr, nval), (rng.choice([0, 1, 1, 2]), rng.choice([0, 1, 2, nthr, nthr + 1])))
        m = rng.randint(1, max(1, A.cosize(tv)))
        tiler = (m,) if rng.random() < 0.5 else (m, 1)
        try:
            tc = atoms.make_tiled_copy("UniversalCopy_16b", layout_tv=tv, tiler=tiler, element_bits=16)
        except A.LayoutError:
            continue
        copies += 1
        flat, label = A.offsets(tv), {}
        for t in range(nthr):
            for v in range(nval):
                e = flat[t + nthr * v]
                if 0 <= e < m and e not in label:
                    label[e] = (t, v)
        want = [label.get(e) for e in range(m)]
        r = client.post("/api/tiled", json={"atom": "UniversalCopy_16b", "layout_tv": str(tv),
                                            "tiler": ",".join(map(str, tiler))})
        api = [(t, v) if t >= 0 else None for tr, vr in zip(r.json()["threads"], r.json()["values"], strict=True)
               for t, v in zip(tr, vr, strict=True)] if r.status_code == 200 else r.text
        try:
            ll = [(int(t), int(v)) if t else None for _, t, v in CELL.findall(layoutlab.html(tc))[:m]]
        except A.LayoutError as exc:
            ll = f"refused: {exc}"
        cells += sum(isinstance(g, list) for g in (api, ll)) * m
        if r.status_code == 422 and "divisibility condition" in r.text:  # get_layoutS_TV refused: reported apart
            refused.append(f"{tv} over {tiler}: {r.json()['detail'][:100]}")
            api = want
        for name, got in (("/api/tiled", api), ("layoutlab", ll)):
            if got != want:
                defects.append(f"{name} {tv} over {tiler}: {str(got)[:80]} != {want[:8]}")
    for d in defects:
        print("DEFECT", d)
    for d in refused:
        print("REFUSED by /api/tiled, drawn by layoutlab from its TV layout:", d)
    print(f"seed {args.seed}: {layouts} pycute objects x 3 spellings x 2 renderers + /api/layout x 2, {copies} tiled "
          f"copies (API and layoutlab; {len(refused)} refused by the API), {cells:,} cells checked, "
          f"{len(defects)} defects")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
