"""The CuTe DSL (``nvidia-cutlass-dsl``, ``cutlass.cute``) as an oracle: static layouts are computed at trace time
inside one ``@cute.jit`` function on the CPU (no GPU needed) and printed with ``str``.

The DSL does not refuse every case CuTe C++ refuses: some raise (recorded as ``"refused"``), some crash the process
(a non-injective complement divides by zero: SIGFPE). So the cases run in a worker process that prints each
answer as it goes; after a crash the case being run is recorded as ``"crash"`` and a new worker continues.

    python tests/oracle/cute_dsl.py FILE.json        # score the DSL against the C++ answers in a corpus file
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cute_cases as cc  # noqa: E402


def available() -> bool:
    try:
        import cutlass.cute  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means no DSL
        return False
    return True


def supported(case: dict) -> bool:
    """Cases the DSL's API can express (no profile in filter, no by-mode tiler in the zipped/tiled products)."""
    op, args = case["op"], case["args"]
    if op == "filter" and len(args) > 1:
        return False
    return not (op in ("zipped_product", "tiled_product", "flat_product") and isinstance(args[1], list))


def _worker(path: str, start: int) -> None:
    import cutlass.cute as cute

    cases = json.loads(Path(path).read_text())

    def conv(a):
        if a is None or isinstance(a, int):
            return a
        if isinstance(a, list):
            return tuple(conv(x) for x in a)
        if a.startswith("Sw<") and " o " not in a:
            return cute.make_swizzle(*cc.split_composed(a + " o 0 o 1:0")[0])
        if a.startswith("Sw<"):
            (b, m, s), off, inner = cc.split_composed(a)
            return cute.make_composed_layout(cute.make_swizzle(b, m, s), off, conv(inner))
        if ":" in a:
            shape, stride = cc.split_layout(a)
            return cute.make_layout(shape, stride=stride)
        return cc.parse_tuple(a)

    def call(op, args):
        if op == "complement" and len(args) == 1:
            return cute.complement(args[0], cute.cosize(cute.filter(args[0])))
        if op == "coalesce" and len(args) == 2:
            return cute.coalesce(args[0], target_profile=args[1])
        if op == "tile_to_shape" and len(args) == 2:
            r = len(args[1]) if isinstance(args[1], tuple) else 1
            return cute.tile_to_shape(args[0], args[1], tuple(range(1, r + 1)) if r > 1 else 1)
        if op.endswith(("_divide", "_product")) and isinstance(args[1], int):
            return getattr(cute, op)(args[0], cute.make_layout(args[1]))
        return getattr(cute, op)(*args)

    def work():
        for i in range(start, len(cases)):
            print(f"#{i}", flush=True)
            c = cases[i]
            if not supported(c):
                print(f"@{i} n/a", flush=True)
                continue
            try:
                out = str(call(c["op"], [conv(a) for a in c["args"]]))
                if out.startswith("S<"):  # the DSL prints a swizzle as S<B,M,S>, C++ as Sw<B,M,S>
                    out = "Sw" + out[1:]
            except Exception as e:  # noqa: BLE001 - the DSL's way of refusing
                out = "refused"
                print(f"!{i} {type(e).__name__}: {str(e)[:150]!r}", flush=True)
            print(f"@{i} {out}", flush=True)

    @cute.jit
    def run():
        work()

    run()


def run_cases(cases: list[dict], timeout: float = 600) -> list[str]:
    """The DSL's answer for each case: a layout string, an int, ``"refused"`` or ``"crash"``."""
    out: dict[int, str] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
    start = 0
    while start < len(cases):
        p = subprocess.run([sys.executable, __file__, "--worker", f.name, str(start)], capture_output=True,
                           text=True, timeout=timeout)
        last = start
        for line in p.stdout.splitlines():
            if line.startswith("#"):
                last = int(line[1:])
            elif line.startswith("@"):
                i, _, res = line[1:].partition(" ")
                out[int(i)] = res
        if p.returncode != 0 and last not in out:
            out[last] = "crash"
        elif p.returncode != 0:
            raise RuntimeError(f"DSL worker failed: {p.stderr[-2000:]}")
        start = max(out) + 1 if out else len(cases)
    Path(f.name).unlink()
    return [out[i] for i in range(len(cases))]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        _worker(argv[1], int(argv[2]))
        return 0
    recs = [r for p in argv for r in json.loads(Path(p).read_text())]
    dsl = run_cases(recs)
    stats: Counter = Counter()
    for rec, d in zip(recs, dsl, strict=True):
        v = d if d in ("crash", "n/a") else cc.judge(rec["cute"], d)
        stats[rec["op"], v] += 1
        if v not in ("exact", "n/a") and not (d == "crash" and rec["cute"] == "refused"):
            print(f"[{v}] {rec['op']} {json.dumps(rec['args'])}\n  c++: {rec['cute']}\n  dsl: {d}")
    for k in sorted(stats):
        print(k, stats[k])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
