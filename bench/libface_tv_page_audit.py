"""The TV atlas page (``/tv?atom=...&operand=...``) against ``layoutlab`` for random atoms: every cell's thread and
value label the same (one grid model).

    python bench/libface_tv_page_audit.py
"""
# ruff: noqa: E401, E402, E501, E701, E702, B905, BLE001
import os
import random
import re
import sys

os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver"); os.environ.setdefault("LAYOUTLAB_DATA", "/tmp/libface/data")
sys.path[0] = str(__import__("pathlib").Path(__file__).resolve().parents[1]); sys.path.insert(0, sys.path[0] + "/tests")
from conftest import parse_grid
from fastapi.testclient import TestClient

from algebra import atoms
from app.main import create_app
from layoutlab.inputs import panels

c = TestClient(create_app(), raise_server_exceptions=False).__enter__()
rng = random.Random(16340)
names = [n for n in atoms.names()]
picked = rng.sample(names, 12) + ["SM80_16x8x16_F32F16F16F32_TN", "SM70_8x8x4_F32F16F16F32_NT", "SM75_U32x4_LDSM_N"]
checked = bad = 0
for name in picked:
    a = atoms.get(name)
    ops = ("src", "dst") if hasattr(a, "src_layout") else ("A", "B", "C")
    try:
        ps = panels(a)
    except Exception as e:
        print("panels", name, type(e).__name__, e); continue
    for op, p in zip(ops, ps):
        r = c.get(f"/tv?atom={name}&operand={op}")
        ids = re.findall(r'<div class="grid[^"]*" id="([^"]+)"', r.text)
        if r.status_code != 200 or not ids:
            print("page", name, op, r.status_code, len(ids)); continue
        if p.note:
            print("note", name, op, p.note); continue
        want = {(i, j): (f"T{p.threads[i][j]}V{p.values[i][j]}" if p.threads[i][j] >= 0 else "") for i in range(p.rows) for j in range(p.cols)}
        found = None
        for gid in ids:
            g = parse_grid(r.text, gid)
            got = {k: v[0] for k, v in g.cells.items()}
            if len(got) == len(want) and g.cells:
                found = got
                break
        if found is None:
            # deferred grid: read meta threads/values
            for gid in ids:
                g = parse_grid(r.text, gid)
                m = getattr(g, "meta_json", None) or {}
                th, va = m.get("threads"), m.get("values")
                if th and len(th) == p.rows and len(th[0]) == p.cols:
                    found = {(i, j): (f"T{th[i][j]}V{va[i][j]}" if th[i][j] >= 0 else "") for i in range(p.rows) for j in range(p.cols)}
                    break
        if found is None:
            print("no grid of", p.rows, "x", p.cols, "on the page for", name, op, [ (parse_grid(r.text, g).cells and max(parse_grid(r.text, g).cells)) for g in ids]); continue
        checked += len(want)
        if found != want:
            bad += 1
            k = next(k for k in sorted(want) if found.get(k) != want[k])
            print("DIFF", name, op, k, "page", found.get(k), "layoutlab", want[k])
print("atoms", len(picked), "cells", checked, "defects", bad)
