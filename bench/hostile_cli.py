"""A hostile user of the ``layoutlab`` command: ``show`` (the table, ``--svg`` / ``--html`` / ``--latex`` files,
``--color``, ``--element-bytes`` / ``--element-bits``, ``--tile``, ``--shape``), ``op`` and the server commands' own
arguments, with bad notations (past the caps, nested 1000 deep, 100,000 characters, lookalike digits and minus
signs, the hostile strings of bench/hostile_http.py), bad numbers and bad file paths.

    python bench/hostile_cli.py --seeds 10700-10703 --cases 300

The promise checked on every run: valid input exits 0; bad input exits non-zero with a one-line reason on stderr
(``layoutlab: ...``, or argparse's ``usage`` and ``error:`` line for ``serve`` / ``worker``), never a traceback,
never a reason cut off by the 400-character limit, no file written when it fails but those it names on a ``wrote``
line (written before a later file failed), and no run longer than ``--timeout`` seconds. Most cases run in this
process through ``app.cli.main`` (the console script's entry); every ``--every``-th one through the installed
console script, as a user runs it (``--tree``: another checkout's, for a before / after). Writes
bench/results/hostile_cli_<time>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
_spec = importlib.util.spec_from_file_location("hostile_http", ROOT / "bench" / "hostile_http.py")
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

OPS = ["composition", "complement", "coalesce", "logical_divide", "zipped_divide", "logical_product",
       "blocked_product", "raked_product", "right_inverse", "left_inverse", "nope", "", "__init__", "../x", "x" * 500]
GOOD_LAYOUTS = ["(4,8):(8,1)", "(4,(2,4)):(2,(1,8))", "Sw<3,3,3> o (8,64):(64,1)", "SM80_16x8x16_F32F16F16F32_TN",
                "_4", "(2,2):(1@0,1@1)"]


#: The checkout whose ``app.cli`` runs (``--tree``: a baseline revision's worktree, for a before / after).
TREE = ROOT


class Hang(Exception):
    pass


def hostile_text(rng: random.Random) -> str:
    return rng.choice([rng.choice(H.NOTATIONS), rng.choice(H.ODD_STRINGS), rng.choice(H.NUMBER_TEXTS),
                       H.random_layout(rng) + rng.choice(["", ")", ":", " o", ",", "\u2212"]),
                       "(1048576,1048576):(1,1048576)", "(" * 40 + "2" + ")" * 40, "-h" if rng.random() < 0.1 else "-"])


def draw(rng: random.Random, out: Path) -> tuple[list[str], bool]:
    """(argv, valid): one command line; ``valid`` when every part of it is good input."""
    pick = rng.random()
    if pick < 0.55:
        valid = rng.random() < 0.2
        argv = ["show", rng.choice(GOOD_LAYOUTS) if valid else hostile_text(rng)]
        for flag in rng.sample(["--svg", "--html", "--latex", "--color", "--element-bytes", "--element-bits", "--tile",
                                "--shape"], rng.randint(0, 3)):
            if flag in ("--svg", "--html", "--latex"):
                bad = rng.random() < 0.3
                valid &= not bad
                argv += [flag, rng.choice(["/nonexistent/dir/x", str(out), "", "/dev/full"]) if bad
                         else str(out / f"p{rng.randrange(10**6)}{flag[1:]}")]
            elif flag == "--color":
                argv += [flag, rng.choice(["bank", "thread", "offset"] if valid else ["bank", "BANK", "", "x" * 100])]
            elif flag in ("--element-bytes", "--element-bits"):
                n = rng.choice(["2", "4", "16"] if valid else H.NUMBER_TEXTS + ["0", "-4", "3", "1024"])
                argv += [flag, n]
            else:
                argv += [flag, rng.choice(["16,8", "8x8"] if valid else ["", ",", "a,b", "1e9,1e9", "0,0", "-1,4",
                                                                         "9" * 400 + ",1", "(16,8", "\u2212" + "1,8"])]
        return argv, False if "--tile" in argv or "--shape" in argv else valid
    if pick < 0.85:
        valid = rng.random() < 0.2
        op = rng.choice(OPS[:6] if valid else OPS)
        args = [rng.choice(GOOD_LAYOUTS[:2]) if valid else hostile_text(rng) for _ in range(rng.randint(0, 3))]
        return ["op", op, *args], False  # an op may refuse good layouts (LayoutError: exit 2): no oracle here
    cmd = rng.choice(["serve", "worker", "show", "op", "bogus", "", "--version", "-x"])
    extra = rng.choice([["--port", rng.choice(H.NUMBER_TEXTS + ["-1", "70000", "abc"])], ["--workers", "NaN"],
                        ["--gpus", rng.choice(["", "99", "all,all", "\u0661", "x" * 300])], ["--nope"],
                        ["--host", "\x00"] + ["--port", "x"]])
    return [cmd, *extra], False


def run_inline(argv: list[str], timeout: float) -> dict:
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(Hang()))
    signal.setitimer(signal.ITIMER_REAL, timeout)
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Hang:
        code, err = None, io.StringIO(f"no exit within {timeout:g} s")
    except BaseException:  # noqa: BLE001 - a traceback is what this looks for
        code = "traceback"
        err.write(traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "wall": time.monotonic() - t0}


def run_console(argv: list[str], timeout: float) -> dict:
    if any("\x00" in a or len(a.encode("utf-8", "surrogatepass")) >= 1 << 17 for a in argv):
        return run_inline(argv, timeout)  # no process can be given a NUL, or an argument of 128 kB: run it in this one
    exe = shutil.which("layoutlab", path=str(Path(sys.executable).parent))
    cmd = [exe, *argv] if exe and TREE == ROOT else [sys.executable, "-m", "app.cli", *argv]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=TREE,
                           env={**os.environ, "PYTHONPATH": str(TREE)})
        return {"code": p.returncode, "stdout": p.stdout.decode("utf-8", "replace"),
                "stderr": p.stderr.decode("utf-8", "replace"), "wall": time.monotonic() - t0}
    except subprocess.TimeoutExpired:
        return {"code": None, "stdout": "", "stderr": f"no exit within {timeout:g} s", "wall": time.monotonic() - t0}


def problems(argv: list[str], valid: bool, r: dict, before: set[str], out: Path) -> list[str]:
    found = []
    err = r["stderr"].strip()
    if r["code"] is None:
        return [err]
    if r["code"] == "traceback" or "Traceback (most recent call last)" in r["stderr"]:
        return ["traceback: " + err.splitlines()[-1][:200] if err else "traceback"]
    if valid and r["code"] != 0:
        found.append(f"valid input exited {r['code']}: {err[:200]}")
    if r["code"] == 0:
        return found
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if not lines:
        found.append(f"exit {r['code']} with nothing on stderr")
    elif argv and argv[0] in ("show", "op") and "-h" not in argv:
        reason = [ln for ln in lines if ln.startswith("layoutlab: ")]
        if len(reason) != 1 or len(reason[0]) < 16:
            found.append(f"exit {r['code']} without one 'layoutlab: <reason>' line: {err[:200]!r}")
        elif len(reason[0]) >= 411 and "characters not shown" not in reason[0]:  # cut at 400: the reason lost
            found.append(f"exit {r['code']}: the reason cut off after 400 characters: ...{reason[0][-60:]!r}")
    elif not any("error" in ln or ln.startswith("layoutlab: ") for ln in lines):
        found.append(f"exit {r['code']} without a reason: {err[:200]!r}")
    new = {p.name for p in out.iterdir()} - before
    unsaid = [n for n in new if f"wrote {out / n}" not in r["stderr"]]  # a file written before a later one failed
    if unsaid and r["code"] != 0:                                       # is named on its own "wrote" line
        found.append(f"exit {r['code']} but wrote {sorted(unsaid)[:3]} without saying so")
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="10700", help="one seed, or a range a-b (inclusive)")
    ap.add_argument("--cases", type=int, default=300, help="command lines per seed")
    ap.add_argument("--every", type=int, default=25, help="every n-th case runs the installed console script")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a run may take before it is a hang")
    ap.add_argument("--tree", help="run this checkout's app.cli instead (a git worktree of a baseline revision)")
    args = ap.parse_args()
    if args.tree:
        global TREE
        TREE = Path(args.tree).resolve()
        sys.path.insert(0, str(TREE))
        for name in [m for m in sys.modules if m.split(".")[0] in ("app", "layoutlab", "algebra")]:
            del sys.modules[name]  # hostile_http imported this checkout's algebra
    a, _, b = args.seeds.partition("-")
    seeds = list(range(int(a), int(b or a) + 1))
    runs, codes, failures, slowest = 0, {}, [], []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hostile-cli-") as tmp:
        out = Path(tmp)
        for seed in seeds:
            rng = random.Random(seed)
            for i in range(args.cases):
                argv, valid = draw(rng, out)
                if argv and argv[0] in ("serve", "worker") and not any(
                        x in argv for x in ("--nope", "--workers")) and "--port" not in argv and "--gpus" not in argv:
                    continue
                if argv and argv[0] == "serve" and "--port" in argv:
                    argv = [*argv, "--workers", "NaN"]  # a bad flag as well: argparse refuses it before any start
                before = {p.name for p in out.iterdir()}
                console = i % args.every == 0
                r = (run_console if console else run_inline)(argv, args.timeout)
                runs += 1
                codes[str(r["code"])] = codes.get(str(r["code"]), 0) + 1
                slowest.append((round(r["wall"], 3), [x[:60] for x in argv]))
                found = problems(argv, valid, r, before, out)
                if found:
                    failures.append({"seed": seed, "argv": [x[:200] for x in argv], "console": console,
                                     "problems": found, "code": r["code"], "stderr": r["stderr"][-600:]})
            print(f"seed {seed}: {runs} runs, {len(failures)} failures so far, {time.monotonic() - t0:.0f} s",
                  flush=True)
    slowest.sort(reverse=True)
    kinds: dict[str, int] = {}
    for f in failures:
        k = f"{f['argv'][0] if f['argv'] else ''} {f['problems'][0][:70]}"
        kinds[k] = kinds.get(k, 0) + 1
    print(f"\n{runs:,} runs, seeds {args.seeds}, {time.monotonic() - t0:.0f} s")
    print("exit  count")
    for c, n in sorted(codes.items()):
        print(f"{c:>9}  {n:,}")
    print(f"failures: {len(failures)}")
    for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:30]:
        print(f"  {n:5}  {k}")
    print("slowest:", slowest[:5])
    spec = importlib.util.spec_from_file_location("_server", ROOT / "bench" / "_server.py")
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)
    path = server.write_result("hostile_cli", {
        "command": "python bench/hostile_cli.py " + " ".join(sys.argv[1:]), "machine": server.machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "revision": server.revision(TREE),
        "seeds": args.seeds, "runs": runs, "exit_codes": codes, "failures": failures[:200], "failure_kinds": kinds,
        "slowest": slowest[:20], "wall_s": round(time.monotonic() - t0, 1)})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
