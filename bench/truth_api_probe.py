"""``POST /api/algebra`` and the workbench page against the algebra, on fresh random inputs typed the ways a user
types them: CuTe's print, static markers (``_4``), C++ spellings (``Layout<Shape<..>,Stride<..>>``), odd spacing,
unicode (``∘``, no-break spaces), F2 strides and swizzles; and on broken inputs. Every answer must equal the
algebra's for the same arguments (or the same refusal), every broken input a 4xx naming the problem, never a 500.

    .venv/bin/python bench/truth_api_probe.py --seeds 17040-17041 --n 120

Prints the counts and every failure; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import html
import os
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
import truth_hunt as th  # noqa: E402

import algebra as A  # noqa: E402
from algebra.core import inttuple as it  # noqa: E402
from algebra.teach import registry  # noqa: E402


def _static(text: str) -> str:
    """CuTe's static spelling: every bare integer as ``_n`` (a negative one as ``_-n`` is not CuTe's; kept)."""
    return re.sub(r"(?<![\w@<-])(\d+)(?![\w>@])", r"_\1", text)


def _cpp(x: A.Layout) -> str:
    def t(v: Any, word: str) -> str:
        if type(v) is tuple:
            return f"{word}<" + ",".join(t(e, word) for e in v) + ">"
        return f"_{v}" if v >= 0 else f"Int<{v}>"
    if type(x.shape) is not tuple:
        return f"Layout<{t(x.shape, 'Shape')},{t(x.stride, 'Stride')}>"
    return f"Layout<{t(x.shape, 'Shape')},{t(x.stride, 'Stride')}>"


def spellings(x: Any, rng: random.Random) -> list[str]:
    """The ways a user might type ``x`` (a layout, composed layout, int or tiler text)."""
    text = str(x)
    out = [text, text.replace(",", ", ").replace(":", " : "), "\u00a0" + text + "  "]
    if isinstance(x, A.Layout) and all(type(d) is int for d in it.flatten(x.stride)):
        out.append(_static(text))
        if all(d >= 0 for d in it.flatten(x.stride)):
            out.append(_cpp(x))
        out.append(f"make_layout(make_shape{it.to_str(it.wrap(x.shape))}, make_stride{it.to_str(it.wrap(x.stride))})"
                   if type(x.shape) is tuple else f"make_layout({x.shape}, {x.stride})")
    if isinstance(x, A.ComposedLayout):
        out.append(text.replace(" o ", " ∘ "))
        out.append(text.replace(" o 0 o ", " o _0 o "))
    return out


def _arg_text(x: Any, kind: str) -> str:
    if isinstance(x, tuple) and kind == "tiler":
        return "<" + ", ".join("_" if e is None else str(e) for e in x) + ">"
    if isinstance(x, tuple):
        return it.to_str(x).replace("None", "_") if None not in it.flatten(x) else \
            "(" + ",".join(_arg_text(e, kind) for e in x) + ")"
    return "_" if x is None else str(x)


def draw(rng: random.Random, kind: str) -> Any:
    k = rng.random()
    if kind == "layout":
        if k < 0.3:
            return A.ComposedLayout(th.wide_swizzle(rng), 0, th.carry_free(rng))
        if k < 0.45:
            return A.as_f2_layout(A.ComposedLayout(th.wide_swizzle(rng), 0, th.carry_free(rng)))
        return th.plain(rng) if k < 0.8 else th.compact_perm(rng)
    if kind == "tiler":
        if k < 0.5:
            return th.plain(rng)
        if k < 0.7:
            return rng.randint(1, 12)
        return tuple(rng.choice((None, rng.randint(1, 6), th.plain(rng))) for _ in range(rng.randint(1, 3)))
    if kind == "int":
        return rng.choice((1, 2, 4, 8, 16, 32, 3, 0, -2))
    if kind in ("shape", "cotarget"):
        return rng.choice((rng.randint(1, 64), (rng.randint(1, 8), rng.randint(1, 8)), (4, (2, rng.randint(1, 4)))))
    if kind == "profile":
        return rng.choice(((1, 1), 1, (1, (1, 1))))
    if kind == "coord":
        return rng.choice((rng.randint(0, 20), (rng.randint(0, 3), rng.randint(0, 3)), (None, rng.randint(0, 2)),
                           (rng.randint(0, 2), None)))
    raise ValueError(kind)


BROKEN = ["", "(4,8):(8,1", "(4,8):(8,1))", "(4,8)::(8,1)", "(4,8):(8)", "(0,8):(1,4)", "(-4,8):(1,4)",
          "(4,8):(8,x)", "Sw<3,4> o (8,8):(8,1)", "Sw<3,4,3> o", "(4,8):(8,1)\u200b", "(4,8)：(8,1)",
          "((((((((((((((((((4))))))))))))))))))", "(" * 200 + "4" + ")" * 200, "4" * 5000, "(4,8):(8,1);",
          "<>", "<2:1,,4:1>", "make_layout(make_shape(4,8), make_stride(8,1)", "1e3", "(4.0,8):(8,1)",
          "(2,2):(F3,-1)", "(4,8):(1@0,1@)", "Sw<9,9,8> o 8:1", "Sw<3,4,1> o 8:1", "nan", "None", "null",
          "(4,8):(8,1) o", "2^40", str(1 << 41), "(65536,65536,65536):(1,65536,4294967296)"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="17040-17041")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--pages", type=int, default=3, help="one workbench page per this many calls")
    a = ap.parse_args(argv)
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp(prefix="truth-probe-"))
    from fastapi.testclient import TestClient

    from app.main import create_app
    client = TestClient(create_app(), base_url="http://127.0.0.1", raise_server_exceptions=False)
    stats: Counter = Counter()
    fails: list[str] = []
    ops = list(registry.OPS.values())
    lo, hi = map(int, a.seeds.split("-"))
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        for k in range(a.n):
            op = rng.choice(ops)
            args = [draw(rng, x.kind) for x in op.args if not x.optional or rng.random() < 0.5]
            try:
                want: Any = op.fn(*args)
                if op.result == "tile":
                    want = want[0]
                want = ("(" + ",".join(map(str, want)) + ")" if isinstance(want, tuple) else str(want)) \
                    if op.result == "value" else str(want)
                if op.result == "value" and isinstance(want, str):
                    want = want.replace(" ", "")
            except A.LayoutError as err:
                want = ("refused", str(err))
            except Exception as err:  # noqa: BLE001
                fails.append(f"{op.name}{tuple(map(str, args))}: the algebra raised {type(err).__name__}: {err}")
                continue
            base = [_arg_text(x, s.kind) for x, s in zip(args, op.args, strict=False)]
            variants = [base]
            for i, x in enumerate(args):
                for t in spellings(x, rng)[1:] if hasattr(x, "shape") else ():
                    variants.append(base[:i] + [t] + base[i + 1:])
            for texts in variants:
                r = client.post("/api/algebra", json={"op": op.name, "args": texts})
                stats[f"api {r.status_code}"] += 1
                if r.status_code >= 500:
                    fails.append(f"POST {op.name} {texts}: {r.status_code}")
                elif isinstance(want, tuple):
                    if r.status_code != 422:
                        fails.append(f"POST {op.name} {texts}: {r.status_code} {r.text[:160]}, the algebra refuses: "
                                     f"{want[1][:160]}")
                elif r.status_code != 200:
                    fails.append(f"POST {op.name} {texts}: {r.status_code} {r.text[:200]}, the algebra gives {want}")
                elif r.json()["result"].replace(" ", "") != want.replace(" ", ""):
                    fails.append(f"POST {op.name} {texts}: {r.json()['result']}, the algebra gives {want}")
            if k % a.pages == 0:
                params = {"op": op.name, **dict(zip("abc", variants[-1], strict=False))}
                r = client.get("/algebra", params=params)
                stats[f"page {r.status_code}"] += 1
                body = html.unescape(r.text)
                if r.status_code != 200:
                    fails.append(f"GET /algebra {params}: {r.status_code}")
                elif not isinstance(want, tuple) and op.result != "value" and want not in body:
                    fails.append(f"GET /algebra {params}: the page does not show {want}")
                elif isinstance(want, tuple) and "CuTe would print" in want[1] and "CuTe would print" not in body:
                    fails.append(f"GET /algebra {params}: the page does not show the refusal {want[1][:120]}")
        for bad in BROKEN:
            for op in (registry.OPS["composition"], registry.OPS["complement"], registry.OPS["layout_add"]):
                r = client.post("/api/algebra", json={"op": op.name, "args": [bad, "(4,8):(8,1)"][:len(op.args)]})
                stats[f"broken {r.status_code}"] += 1
                if not 400 <= r.status_code < 500:
                    fails.append(f"POST {op.name} [{bad[:40]!r}, ...]: {r.status_code} {r.text[:120]}")
                elif bad and len(r.json().get("detail", "")) < 12:
                    fails.append(f"POST {op.name} [{bad[:40]!r}, ...]: {r.status_code} says only {r.text[:120]}")
            r = client.get("/algebra", params={"op": "composition", "a": bad, "b": "4:1"})
            stats[f"broken page {r.status_code}"] += 1
            if r.status_code >= 500:
                fails.append(f"GET /algebra a={bad[:40]!r}: {r.status_code}")
    for key in sorted(stats):
        print(f"{key:24s} {stats[key]:6d}")
    print(f"failures: {len(fails)}")
    for f in fails[:80]:
        print(" ", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
