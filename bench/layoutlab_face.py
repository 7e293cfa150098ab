"""How long the library face takes to draw: ``layoutlab.html`` / ``svg`` / ``text`` / ``latex`` per layout size (the
median of --repeat runs, in ms) and the size of each output, written to bench/results/layoutlab_face_<date>.json.

    .venv/bin/python bench/layoutlab_face.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import layoutlab  # noqa: E402
from algebra import LayoutError, atoms  # noqa: E402

CASES = [("(4,8):(8,1)", "32 cells"), ("(32,32):(32,1)", "1,024 cells"),
         ("Sw<3,4,3> o _0 o (64,64):(64,1)", "4,096 swizzled"), ("(128,128):(1,128)", "16,384 cells"),
         ("(256,256):(256,1)", "65,536 cells (the render cap)"),
         ("SM80_16x8x16_F32F16F16F32_TN", "an MMA atom: A, B, C")]


def timed(fn, repeat: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        try:
            out = fn()
        except LayoutError:
            return float("nan"), 0
        times.append((time.perf_counter() - t) * 1000)
        size = len(out)
    return statistics.median(times), size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    heads = ["html ms", "html kB", "svg ms", "text ms", "latex ms"]
    print(f"{'layout':<34} {'what':<28} " + " ".join(f"{h:>8}" for h in heads))
    for text, what in CASES:
        x = atoms.get(text) if text.startswith("SM") else text
        row = {"layout": text, "what": what}
        for name, fn in (("html", layoutlab.html), ("svg", layoutlab.svg), ("text", layoutlab.text),
                         ("latex", layoutlab.latex)):
            ms, size = timed(lambda fn=fn, x=x: fn(x), args.repeat)
            row[f"{name}_ms"], row[f"{name}_bytes"] = (None if ms != ms else round(ms, 2)), size
        rows.append(row)
        cols = [row["html_ms"], row["html_bytes"] / 1000, row["svg_ms"], row["text_ms"], row["latex_ms"]]
        print(f"{text[:34]:<34} {what:<28} " + " ".join(f"{'-' if v is None else f'{v:.1f}':>8}" for v in cols))
    print("latex: - = refused (over the 4,096-cell cap of one TikZ picture)")
    out = ROOT / "bench" / "results" / f"layoutlab_face_{datetime.date.today():%Y%m%d}.json"
    out.write_text(json.dumps({"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                           "load": os.getloadavg()}, "repeat": args.repeat, "rows": rows},
                              indent=1, allow_nan=True) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
