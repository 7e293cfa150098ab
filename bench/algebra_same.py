"""Every answer, refusal text and derivation of ``algebra``, dumped one per line, to compare two trees byte for byte.

For every case of CuTe's corpus (``tests/oracle/data/corpus_*.json``, every op): the printed result or the refusal
message, in one cold pass (caches cleared once), a warm pass (the same order: every call a cache hit), a shuffled
pass and a pass that clears the caches before each case; then generated cases (``tests/oracle/cute_cases.py``)
the same ways; the derivation (``explain``: every step's text, depth, kind and layout) of every ``--explain-every``-th
case of both; and CuTe's print (``checks.cute_would_print``) of every refused case.

    python bench/algebra_same.py --out /tmp/after.txt
    python bench/algebra_same.py --root /tmp/old_tree --out /tmp/before.txt   # a folder holding an algebra/ package
    cmp /tmp/before.txt /tmp/after.txt
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(ROOT), help="the folder whose algebra/ package is dumped")
    ap.add_argument("--random", type=int, default=6000, help="generated cases")
    ap.add_argument("--explain-every", type=int, default=7)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "oracle"))
    sys.path.insert(0, str(Path(args.root).resolve()))
    import cute_cases as cc
    import cute_notation as cn

    import algebra as A
    from algebra.core.checks import cute_would_print
    from algebra.core.memo import clear_caches

    assert Path(A.__file__).resolve().is_relative_to(Path(args.root).resolve()), A.__file__
    seen: dict[str, dict] = {}
    for path in sorted((ROOT / "tests" / "oracle" / "data").glob("corpus_*.json")):
        for rec in json.loads(path.read_text()):
            seen.setdefault(cc.key(rec), rec)
    corpus = list(seen.values())
    gen = (cc.gen_cases(1, args.random // 2) + cc.gen_cases(2, args.random // 4, big=0.3, neg=0.3, deep=0.3)
           + cc.gen_cases(3, args.random // 4, neg=0.5, deep=0.5))
    lines: list[str] = []

    def fn_of(op: str):
        return getattr(A, op, None) or A.registry.get(op).fn

    def answer(rec: dict) -> str:
        try:
            res = fn_of(rec["op"])(*[cn.to_py(a) for a in rec["args"]])
        except A.LayoutError as e:
            return f"refused {type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 - a crash is dumped like an answer
            return f"error {type(e).__name__}: {e}"
        return f"{type(res).__name__} {res if type(res) not in (int, tuple) else cn.tstr(res)}"

    refused: set[str] = set()

    def one_pass(label: str, cases: list[dict], clear_each: bool = False) -> None:
        for rec in cases:
            if clear_each:
                clear_caches()
            out = answer(rec)
            if out.startswith("refused"):
                refused.add(cc.key(rec))
            lines.append(f"{label} {cc.key(rec)} => {out}")

    for name, cases in (("corpus", corpus), ("gen", gen)):
        clear_caches()
        one_pass(f"{name}-cold", cases)
        one_pass(f"{name}-warm", cases)
        shuffled = cases[:]
        random.Random(5).shuffle(shuffled)
        clear_caches()
        one_pass(f"{name}-shuffled", shuffled)
        one_pass(f"{name}-each", cases, clear_each=True)
        for i, rec in enumerate(cases):
            a = [cn.to_py(x) for x in rec["args"]]
            if i % args.explain_every == 0:
                try:
                    steps = A.explain(rec["op"], *a)
                    head = "ok"
                except A.LayoutError as e:
                    steps, head = getattr(e, "steps", []), f"refused: {e}"
                except Exception as e:  # noqa: BLE001
                    steps, head = [], f"error {type(e).__name__}: {e}"
                lines.append(f"{name}-explain {cc.key(rec)} {head}")
                lines.extend("  " + json.dumps(s, sort_keys=True, default=str) for s in steps)
            if cc.key(rec) in refused or i % args.explain_every == 3:
                try:
                    r = cute_would_print(fn_of(rec["op"]), *a)
                    lines.append(f"{name}-cute {cc.key(rec)} => {r}")
                except Exception as e:  # noqa: BLE001
                    lines.append(f"{name}-cute {cc.key(rec)} => error {type(e).__name__}: {e}")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} lines ({len(corpus)} corpus cases, {len(gen)} generated) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
