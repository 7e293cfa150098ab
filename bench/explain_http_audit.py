"""The op table through its three faces on fresh random inputs: the library (``registry.get(op).fn`` and
``explain``), ``POST /api/algebra`` and the workbench ``/algebra?op=..&a=..&b=..&c=..`` must give the same answer,
the same steps, and the same refusal text.

    python bench/explain_http_audit.py --seeds 17740-17749 --n 2
"""

from __future__ import annotations

import argparse
import html
import os
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp())

from fastapi.testclient import TestClient  # noqa: E402

from algebra import LayoutError  # noqa: E402
from algebra.core.notation import show  # noqa: E402
from algebra.teach import registry  # noqa: E402
from algebra.teach.explain import derive  # noqa: E402
from app.main import create_app  # noqa: E402
from bench.explain_audit import fresh_args  # noqa: E402


def text_of(x) -> str:
    if isinstance(x, tuple) and any(not isinstance(e, int | tuple) for e in x):
        return "<" + ", ".join("_" if e is None else show(e) for e in x) + ">"
    return show(x)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="17740-17741")
    ap.add_argument("--n", type=int, default=2)
    ns = ap.parse_args()
    lo, hi = map(int, ns.seeds.split("-"))
    client = TestClient(create_app(), base_url="http://127.0.0.1", raise_server_exceptions=False)
    n = bad = refused = 0
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        for op in registry.names():
            for _ in range(ns.n):
                try:
                    args = fresh_args(op, rng)
                except LayoutError:
                    continue
                texts = [text_of(a) for a in args]
                try:
                    want_args = registry.parse_args(registry.get(op), list(texts))
                except LayoutError as e:
                    print(f"UNREADABLE {op} {texts}: {e}")
                    bad += 1
                    continue
                if [show(a) for a in want_args] != [show(a) for a in args]:
                    print(f"TEXT ROUND TRIP {op} {texts}: {[show(a) for a in want_args]}")
                try:
                    result, steps = derive(op, *args)
                    lib = ("ok", show(result[0]) if registry.get(op).result == "tile" else show(result))
                except LayoutError as e:
                    lib, steps = ("refused", str(e)), e.steps
                n += 1
                r = client.post("/api/algebra", json={"op": op, "args": texts})
                api = ("ok", r.json()["result"]) if r.status_code == 200 else \
                    ("refused", r.json().get("detail")) if r.status_code == 422 else ("status", r.status_code)
                page = client.get("/algebra", params={"op": op, **dict(zip("abc", texts, strict=False))})
                problems = []
                if api != lib:
                    problems.append(f"API {api} != library {lib}")
                elif r.status_code == 200 and [(s["text"], s["layout"]) for s in r.json()["steps"]] != \
                        [(s["text"], s["layout"]) for s in steps]:
                    problems.append("API steps differ from explain's")
                text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))
                if page.status_code != 200:
                    problems.append(f"workbench status {page.status_code}")
                elif lib[0] == "refused" and lib[1] not in text:
                    problems.append("workbench does not show the refusal text")
                elif lib[0] == "ok" and lib[1] not in text:
                    problems.append("workbench does not show the result")
                refused += lib[0] == "refused"
                if problems:
                    bad += 1
                    print(f"{op} {texts}:")
                    for p in problems:
                        print("   ", p[:400])
    print(f"total {n} cases ({refused} refused), {bad} with a difference")


if __name__ == "__main__":
    main()
