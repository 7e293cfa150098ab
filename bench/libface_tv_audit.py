"""TV pictures of random (thread, value) layouts (holes, duplicates, nested modes) in every renderer of
``layoutlab`` against print_latex_tv's rule computed by hand: cell (m, n) is labelled by the first (t, v), threads
outer and values inner, with TV(t, v) = m + M * n; fills by thread (t mod 32), offset or bank.

    python bench/libface_tv_audit.py --seed 16330 --n 60
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

from libface_audit import CELL, NODE, Case, prod  # noqa: E402
from libface_notebook_audit import tv_labels  # noqa: E402

import layoutlab  # noqa: E402
from layoutlab import web  # noqa: E402

SPAN = re.compile(r'<span class="([^"]*)" data-offset="(\d+)"(?: data-thread="(\d+)" data-value="(\d+)")?>'
                  r"([^<]*)</span>")
TV_TIKZ = ("{rgb,255:red,175;green,175;blue,255}", "{rgb,255:red,175;green,255;blue,175}",
           "{rgb,255:red,255;green,255;blue,175}", "{rgb,255:red,255;green,175;blue,175}",
           "{rgb,255:red,210;green,210;blue,255}", "{rgb,255:red,210;green,255;blue,210}",
           "{rgb,255:red,255;green,255;blue,210}", "{rgb,255:red,255;green,210;blue,210}")


def gen(rng):
    m, n = rng.choice([(4, 4), (8, 4), (4, 8), (8, 8), (16, 8), (2, 16), (6, 5)])
    while True:
        t = rng.choice([2, 4, 8, (2, 4), (4, 2), (2, 2, 2)])
        v = rng.choice([1, 2, 4, (2, 2)])
        if prod(t) * prod(v) <= 4 * m * n:
            break

    def strides(s):
        return tuple(strides(x) for x in s) if isinstance(s, tuple) else rng.choice([0, 1, 2, 3, 4, 8, m, m + 1])
    while True:
        tv = Case((t, v), (strides(t), strides(v)))
        if max(tv.value(k) for k in range(prod(tv.shape))) < m * n:
            return tv, m, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=60)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    pal, faults, cells = web.palette(), [], 0
    for _ in range(a.n):
        tv, m, n = gen(rng)
        colour = rng.choice([None, "thread", "offset", "bank"])
        eb = rng.choice([1, 2, 4, 8])
        text = tv.text()
        want = tv_labels(tv, m, n)
        exp = [want.get((i, j), "") for i in range(m) for j in range(n)]
        thr = [int(x[1:x.index("V")]) if x else -1 for x in exp]
        idx = [i + m * j for i in range(m) for j in range(n)]
        pcol = [(-1 if t < 0 else t % 32) if colour in (None, "thread") else
                (o % 32 if colour == "offset" else (o * eb // 4) % 32) for t, o in zip(thr, idx, strict=True)]
        where = f"{text} tile=({m}, {n}) colour={colour} element_bytes={eb}"
        h = SPAN.findall(layoutlab.html(text, colour, eb, tile=(m, n)))
        if [htmlmod.unescape(x[4]) for x in h] != exp or [int(x[1]) for x in h] != idx:
            faults.append(f"html: {where}: labels or data-offset differ")
        elif any((f"p{c}" if c >= 0 else "x") not in cls.split() for (cls, *_), c in zip(h, pcol, strict=False)):
            faults.append(f"html: {where}: a cell's colour class differs")
        s = re.findall(CELL, layoutlab.svg(text, colour, eb, tile=(m, n)))
        if [htmlmod.unescape(x[2]) for x in s] != exp:
            faults.append(f"svg: {where}: labels differ")
        elif any(f != (pal[c] if c >= 0 else "#fff") for (_, f, _), c in zip(s, pcol, strict=False)):
            faults.append(f"svg: {where}: a cell's fill differs")
        rows = layoutlab.text(text, tile=(m, n)).rstrip("\n").split("\n")[3::2]
        got = [c.strip() for r in rows for c in r.split("|")[1:-1]]
        if got != exp:
            faults.append(f"text: {where}: labels differ")
        nodes = [NODE.match(ln) for ln in layoutlab.latex(text, colour, eb, tile=(m, n)).split("\n")]
        seen = {(int(g[1]), int(g[2])): g for g in (x.groups() for x in nodes if x)}
        for k, lab in enumerate(exp):
            i, j = divmod(k, n)
            g = seen.get((i, j))
            if not lab:
                if g is not None:
                    faults.append(f"latex: {where}: a node at the hole ({i},{j})")
                continue
            fill = TV_TIKZ[thr[k] % 8] if colour in (None, "thread") else f"llab{pcol[k]}"
            t_, v_ = lab[1:].split("V")
            node = "\\shortstack{T" + t_ + " \\\\ V" + v_ + "}"
            if g is None or g[3] != node or g[0] != fill:
                faults.append(f"latex: {where}: node ({i},{j}) is {g}, want {lab} filled {fill}")
                break
        cells += 4 * m * n
    for f in faults:
        print(f)
    print(f"seed {a.seed}: {a.n} TV layouts, {cells} cells checked over 4 renderers, {len(faults)} defects")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
