"""The corpus half of ``bench/algebra.py``: CuTe's recorded cases (``tests/oracle/data/corpus_*.json``) through
``algebra`` and through pycute, in one process, on the same inputs.

The cases are those of the corpus ops (composition, complement, coalesce, the divides, the products) with plain
layouts and int tilers that pycute answers (it has no swizzles, no basis strides and no blocked / raked products);
every check of ``algebra`` is on, and a refusal counts as an answer (it is caught, as a caller would). The inputs
are built before the clock starts for both libraries. Three figures per op group, each the best of ``repeat``
rounds (the three interleaved in each round), in CPU time of this thread (so other work on a shared
machine does not count):

- ``cold``: the algebra's caches cleared, one pass over the cases;
- ``x3``: the caches cleared once, then three passes (the second and third find the results memoized);
- ``pycute``: one pass (pycute caches nothing, so three passes cost three times one).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "oracle" / "data"
OPS = ("composition", "complement", "coalesce", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
       "logical_product", "zipped_product", "tiled_product")
GROUPS = {"composition": "composition", "complement": "complement", "coalesce": "coalesce"} | {
    op: op.split("_")[1] + "s" for op in OPS if "_" in op}  # divides, products


def _parse_tuple(text: str) -> Any:
    sys.path.insert(0, str(ROOT / "tests" / "oracle"))
    import cute_notation as cn

    return cn.parse_tuple(text)


def _convert(arg: Any, layout: Any) -> Any:
    """A corpus argument (CuTe notation text, an int, a list for a tiler) as ``layout(shape, stride)`` objects."""
    if arg is None or type(arg) is int:
        return arg
    if type(arg) is list:
        return tuple(_convert(x, layout) for x in arg)
    depth = 0
    for i, ch in enumerate(arg):
        depth += (ch == "(") - (ch == ")")
        if ch == ":" and depth == 0:
            return layout(_parse_tuple(arg[:i]), _parse_tuple(arg[i + 1:]))
    return _parse_tuple(arg)


def load_cases(limit: int, seed: int) -> list[dict]:
    """The corpus records of OPS with plain arguments (no swizzle, no ``@`` stride), each key once, shuffled with
    ``seed`` and cut to ``limit`` (0: all)."""
    seen: dict[str, dict] = {}
    for path in sorted(DATA.glob("corpus_*.json")):
        for rec in json.loads(path.read_text()):
            if rec["op"] in OPS and not any(type(a) is str and ("Sw<" in a or "@" in a) for a in rec["args"]):
                seen.setdefault(rec["op"] + json.dumps(rec["args"]), rec)
    cases = list(seen.values())
    random.Random(seed).shuffle(cases)
    return cases[:limit] if limit else cases


def measure(algebra: Any, pycute: Any, records: list[dict], repeat: int) -> dict:
    """Per op group and in all: cases, seconds for ``cold``, ``x3`` and ``pycute`` (see the module doc), ratios."""
    from algebra.core.memo import clear_caches

    ours_err = algebra.LayoutError
    jobs: list[tuple] = []
    for rec in records:
        try:
            p_args = tuple(_convert(a, pycute.Layout) for a in rec["args"])
            getattr(pycute, rec["op"])(*p_args)
        except Exception:  # noqa: BLE001 - pycute cannot take this case: leave it out for both
            continue
        jobs.append((GROUPS[rec["op"]], getattr(algebra, rec["op"]), getattr(pycute, rec["op"]),
                     tuple(_convert(a, algebra.Layout) for a in rec["args"]), p_args))

    def ours(js: list) -> int:
        refused = 0
        for _, f, _, args, _ in js:
            try:
                f(*args)
            except ours_err:
                refused += 1
        return refused

    def theirs(js: list) -> None:
        for _, _, g, _, args in js:
            g(*args)

    def timed(fn: Any, js: list, passes: int) -> float:
        clear_caches()
        t0 = time.thread_time()
        for _ in range(passes):
            fn(js)
        return time.thread_time() - t0

    out: dict = {}
    groups = sorted({j[0] for j in jobs}) + ["all"]
    for g in groups:
        js = [j for j in jobs if g in ("all", j[0])]
        cold = x3 = p = float("inf")
        for _ in range(repeat):  # interleaved, so that a burst of other work on the machine hits all three alike
            cold = min(cold, timed(ours, js, 1))
            x3 = min(x3, timed(ours, js, 3))
            p = min(p, timed(theirs, js, 1))
        out[g] = {"cases": len(js), "refused": ours(js), "cold_s": round(cold, 5), "x3_s": round(x3, 5),
                  "pycute_s": round(p, 5), "ratio_cold": round(p / cold, 2), "ratio_x3": round(3 * p / x3, 2)}
    return out
