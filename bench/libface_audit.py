"""Audit of the library face: fresh random layouts drawn by every renderer of ``layoutlab`` (text, HTML, SVG, TikZ)
and by the explorer page, each cell's number and colour checked against offsets computed here from the definition
(``L(c) = sum c_k * d_k`` over the flattened modes, colexicographic; swizzles, F2 strides and scaled bases written
out by hand, not through ``algebra``).

    python bench/libface_audit.py --seed 16300 --n 60 [--page] [--pdflatex]

Prints one line per defect and a summary of counts (layouts, cells checked, renderers, defects).
"""

from __future__ import annotations

import argparse
import html as htmlmod
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import layoutlab  # noqa: E402
from layoutlab import web  # noqa: E402

GREY = ("black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70")


# ---------------------------------------------------------------- independent algebra (no ``algebra`` import)

def flat(t):
    return [x for s in t for x in flat(s)] if isinstance(t, tuple) else [t]


def prod(t):
    p = 1
    for x in flat(t):
        p *= x
    return p


def clmul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a, b = a << 1, b >> 1
    return r


class Leaf:
    """A stride leaf that is not an int: ``Leaf("f2", v)`` (F2 vector) or ``Leaf("basis", v, m)`` (v@m)."""

    def __init__(self, kind, v, m=0):
        self.kind, self.v, self.m = kind, v, m


def nota(t, leaf=str):
    return "(" + ",".join(nota(x, leaf) for x in t) + ")" if isinstance(t, tuple) else leaf(t)


class Case:
    """shape, stride (leaves: int, ("f2", v) or ("basis", v, m)), swizzle (B, M, S) or None, offset."""

    def __init__(self, shape, stride, swz=None, off=0, origin=()):
        self.shape, self.stride, self.swz, self.off, self.origin = shape, stride, swz, off, origin

    def text(self) -> str:
        def leaf(d):
            if isinstance(d, Leaf):
                return f"F{d.v}" if d.kind == "f2" else f"{d.v}@{d.m}"
            return str(d)
        core = f"{nota(self.shape)}:{nota(self.stride, leaf)}"
        if self.origin:
            return f"ArithTuple({','.join(map(str, self.origin))}) o {core}"
        if self.swz is None:
            return core
        b, m, s = self.swz
        return f"Sw<{b},{m},{s}> o {self.off} o {core}"

    def kind(self) -> str:
        leaves = flat(self.stride)
        if any(isinstance(d, Leaf) and d.kind == "basis" for d in leaves):
            return "basis"
        if any(isinstance(d, Leaf) for d in leaves):
            return "f2"
        return "swizzled" if self.swz else "plain"

    def value(self, k: int):
        """L(k) for 1-D index k (colex over the flattened modes)."""
        fs, fd = flat(self.shape), flat(self.stride)
        coords = []
        for s in fs:
            coords.append(k % s)
            k //= s
        kind = self.kind()
        if kind == "basis":
            n = max(1 + max(d.m for d in fd if isinstance(d, Leaf)), len(self.origin))
            out = [*self.origin] + [0] * (n - len(self.origin))
            for c, d in zip(coords, fd, strict=True):
                if isinstance(d, Leaf):
                    out[d.m] += c * d.v
            return "(" + ",".join(map(str, out)) + ")"
        if kind == "f2":
            v = 0
            for c, d in zip(coords, fd, strict=True):
                v ^= clmul(c, d.v) if isinstance(d, Leaf) else c * d
            return v
        v = self.off + sum(c * d for c, d in zip(coords, fd, strict=True))
        if self.swz is not None:
            b, m, s = self.swz
            mask = ((1 << b) - 1) << (m + max(0, s))
            v = v ^ ((v & mask) >> s) if s >= 0 else v ^ ((v & mask) << -s)
        return v

    def table(self):
        rows = prod(self.shape[0]) if isinstance(self.shape, tuple) and len(self.shape) > 1 else 1
        n = prod(self.shape)
        cols = n // rows
        return [[self.value(i + rows * j) for j in range(cols)] for i in range(rows)]

    def width(self):
        """print_layout's cell width: num_digits(cosize) + 2, CuTe's cosize = sum (s-1)|d| + 1 (ints)."""
        if self.kind() != "plain":
            return None
        c = 1 + sum((s - 1) * abs(d) for s, d in zip(flat(self.shape), flat(self.stride), strict=True))
        return len(str(c)) + 2


# ---------------------------------------------------------------- random inputs

def rand_shape(rng, depth=0, leaves=None):
    r = rng.random()
    if depth < 2 and r < 0.25:
        return tuple(rand_shape(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    return rng.choice([1, 2, 2, 3, 4, 4, 5, 8])


def like(shape, f):
    return tuple(like(s, f) for s in shape) if isinstance(shape, tuple) else f(shape)


def gen(rng) -> Case:
    r = rng.random()
    while True:
        shape = tuple(rand_shape(rng) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.1:
            shape = shape[0] if not isinstance(shape[0], tuple) else shape
        if 1 <= prod(shape) <= 512:
            break
    if r < 0.45:  # plain: positive, zero, negative strides
        return Case(shape, like(shape, lambda s: rng.choice([0, 1, 2, 3, 4, 8, 16, 32, 100, -1, -4, -17])))
    if r < 0.7:  # swizzled, CuTe's condition |S| >= B
        b = rng.randint(1, 3)
        m = rng.randint(0, 3)
        s = rng.choice([b, b + 1, 3, -b]) if rng.random() < 0.3 else max(b, rng.randint(b, 4))
        return Case(shape, like(shape, lambda x: rng.choice([1, 2, 4, 8, 16, 64])), (b, m, s), rng.choice([0, 0, 1, 8]))
    if r < 0.85:  # scaled basis strides
        def leaf(x):
            return Leaf("basis", rng.choice([1, 1, 2, -1]), rng.randint(0, 1)) if rng.random() < 0.9 else 0
        st = like(shape, leaf)
        if not any(isinstance(d, Leaf) for d in flat(st)):
            st = like(shape, lambda x: Leaf("basis", 1, 0))
        origin = tuple(rng.randint(0, 9) for _ in range(rng.choice([0, 0, 1, 2, 3])))
        return Case(shape, st, origin=origin)
    return Case(shape, like(shape, lambda x: Leaf("f2", rng.choice([1, 2, 3, 5, 9, 16, 17]))))


# ---------------------------------------------------------------- renderers read back

SPAN = re.compile(r'<span(?: class="([^"]*)")?( data-offset="[^"]*"[^>]*)>([^<]*)</span>')
CELL = re.compile(r'<g class="cell"([^>]*)><rect [^>]*fill="([^"]+)"[^>]*/><text [^>]*>([^<]*)</text>')
NODE = re.compile(r"\\node\[fill=([^\]]+)\] at \((-?\d+),(-?\d+)\) \{(.*)\};$")


def attr(s: str, name: str) -> str | None:
    m = re.search(fr'{name}="([^"]*)"', s)
    return htmlmod.unescape(m.group(1)) if m else None


def check(case: Case, faults: list[str], counts: dict, colour: str | None, eb: int, page=None, tex=False) -> None:
    text = case.text()
    want = case.table()
    rows, cols = len(want), len(want[0])
    label = [[str(v) for v in row] for row in want]
    num = case.kind() in ("plain", "swizzled", "f2")
    pal = web.palette()

    def col_index(i, v):
        if not num:
            return None
        c = colour or "offset"
        return v % 32 if c == "offset" else (v * eb // 4) % 32 if c == "bank" else i % 32

    def bad(renderer, msg):
        faults.append(f"{renderer}: {text} (colour={colour}, element_bytes={eb}): {msg}")

    # text
    out = layoutlab.text(text)
    lines = out.rstrip("\n").split("\n")
    got = [[c.strip() for c in ln.split("|")[1:-1]] for ln in lines[3::2]]
    if got != label:
        diff = next(((i, j) for i in range(rows) for j in range(cols) if got[i][j] != label[i][j]), None)
        bad("text", f"cell {diff} reads {got[diff[0]][diff[1]] if diff else got}, want "
                    f"{label[diff[0]][diff[1]] if diff else label}")
    w = case.width()
    if w is not None and lines[2] != "    " + ("+" + "-" * w) * cols + "+":
        bad("text", f"rule {lines[2]!r}, want width {w}")
    counts["cells"] += rows * cols
    # html
    h = layoutlab.html(text, colour, eb)
    spans = SPAN.findall(h)
    if len(spans) != rows * cols:
        bad("html", f"{len(spans)} cells, want {rows * cols}")
    else:
        for k, (cls, attrs, lab) in enumerate(spans):
            i, j = divmod(k, cols)
            if htmlmod.unescape(lab) != label[i][j] or attr(attrs, "data-offset") != label[i][j]:
                bad("html", f"cell ({i},{j}) reads {lab!r}/{attr(attrs, 'data-offset')!r}, want {label[i][j]}")
                break
            ci = col_index(i, want[i][j])
            if ci is not None and f"p{ci}" not in (cls or "").split():
                bad("html", f"cell ({i},{j}) = {label[i][j]} has class {cls!r}, want p{ci}")
                break
    counts["cells"] += rows * cols
    # svg
    s = layoutlab.svg(text, colour, eb)
    cells = CELL.findall(s)
    if len(cells) != rows * cols:
        bad("svg", f"{len(cells)} cells, want {rows * cols}")
    else:
        for k, (attrs, fill, lab) in enumerate(cells):
            i, j = divmod(k, cols)
            if htmlmod.unescape(lab) != label[i][j] or attr(attrs, "data-offset") != label[i][j]:
                bad("svg", f"cell ({i},{j}) reads {lab!r}, want {label[i][j]}")
                break
            ci = col_index(i, want[i][j])
            if ci is not None and fill != pal[ci]:
                bad("svg", f"cell ({i},{j}) = {label[i][j]} filled {fill}, want {pal[ci]} (palette {ci})")
                break
    counts["cells"] += rows * cols
    # latex
    tx = layoutlab.latex(text, colour, eb)
    nodes = [NODE.match(ln) for ln in tx.split("\n")]
    nodes = [m.groups() for m in nodes if m]
    column = isinstance(case.shape, int) or len(case.shape) == 1
    seen = {}
    for fill, a, b, lab in nodes:
        m, n = (0, int(a)) if column else (int(a), int(b))
        seen[m, n] = (fill, lab.replace("\\_", "_"))
    if len(seen) != rows * cols:
        bad("latex", f"{len(seen)} nodes, want {rows * cols}")
    else:
        for i in range(rows):
            for j in range(cols):
                fill, lab = seen[i, j]
                if lab != label[i][j]:
                    bad("latex", f"node ({i},{j}) reads {lab!r}, want {label[i][j]}")
                    break
                if num:
                    v = want[i][j]
                    c = colour
                    exp = (GREY[v % 8] if c is None else f"llab{v % 32}" if c == "offset" else
                           f"llab{(v * eb // 4) % 32}" if c == "bank" else f"llab{(j if column else i) % 32}")
                    if fill != exp:
                        bad("latex", f"node ({i},{j}) = {v} filled {fill}, want {exp}")
                        break
    counts["cells"] += rows * cols
    if tex and shutil.which("pdflatex"):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "t.tex").write_text(tx)
            r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=d,
                               capture_output=True, text=True, timeout=120)
            counts["pdflatex"] += 1
            if r.returncode != 0:
                bad("pdflatex", r.stdout[-300:])
    # the explorer page
    if page is not None:
        import urllib.parse

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from conftest import parse_grid

        r = page.get("/?layout=" + urllib.parse.quote(text))
        gid = re.search(r'<div class="grid[^"]*" id="([^"]+)"', r.text)
        if r.status_code != 200 or gid is None:
            bad("page", f"status {r.status_code}, grid {'found' if gid else 'missing'}")
        else:
            g = parse_grid(r.text, gid.group(1))
            for i in range(rows):
                for j in range(cols):
                    t, cls = g.cells.get((i, j), (None, set()))
                    if t != label[i][j]:
                        bad("page", f"cell ({i},{j}) reads {t!r}, want {label[i][j]}")
                        return
                    ci = col_index(i, want[i][j]) if colour in (None, "offset") else None
                    if ci is not None and f"p{ci}" not in cls:
                        bad("page", f"cell ({i},{j}) = {label[i][j]} has class {cls}, want p{ci}")
                        return
            counts["cells"] += rows * cols


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--page", action="store_true", help="also the explorer page through the app")
    ap.add_argument("--pdflatex", type=int, default=0, help="compile the TikZ of the first N layouts")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    faults: list[str] = []
    counts = {"layouts": 0, "cells": 0, "pdflatex": 0}
    kinds: dict[str, int] = {}
    page = None
    if a.page:
        import os

        from fastapi.testclient import TestClient

        os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver")

        from app.main import create_app
        page = TestClient(create_app(), raise_server_exceptions=False).__enter__()
    for k in range(a.n):
        case = gen(rng)
        colour = rng.choice([None, None, "offset", "bank", "thread"])
        eb = rng.choice([1, 2, 4, 8, 16])
        try:
            check(case, faults, counts, colour, eb, page, tex=k < a.pdflatex)
        except Exception as exc:  # noqa: BLE001 - a refusal or crash is a finding, reported with its input
            faults.append(f"raised: {case.text()} (colour={colour}, element_bytes={eb}): {type(exc).__name__}: {exc}")
        counts["layouts"] += 1
        kinds[case.kind()] = kinds.get(case.kind(), 0) + 1
    for f in faults:
        print(f)
    renderers = 4 + (1 if page else 0)
    print(f"seed {a.seed}: {counts['layouts']} layouts {kinds}, {counts['cells']} cells checked over {renderers} "
          f"renderers, {counts['pdflatex']} compiled with pdflatex, {len(faults)} defects")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
