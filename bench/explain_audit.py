"""Audit of the op table's derivations on fresh random inputs.

For every op of ``algebra.teach.registry`` and a seed range: the derivation's last step equals the op's answer; every
step that names an op call and its layout (``op(args) = L``, ``B* = complement(B, S)``, ``mode i: op(args)`` and the
nested result under it, ...) recomputes; a refusal ends in an "error" step with the library's own text. With
``--dump FILE`` the derivations are written as JSON, so that two runs in fresh processes (``--order plain-first`` /
``explain-first``) can be compared for a memo-warm / memo-cold difference.

    python bench/explain_audit.py --seeds 17700-17739 --n 12 --dump /tmp/a.json --order explain-first
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import algebra as A  # noqa: E402
from algebra import LayoutError  # noqa: E402
from algebra.core.notation import show  # noqa: E402
from algebra.teach import registry  # noqa: E402
from algebra.teach.explain import derive  # noqa: E402
from app.drills.parse_layout import _split_top  # noqa: E402
from tests.test_explain import args_for, rand_layout  # noqa: E402

P = A.parse


def swz(rng: random.Random):
    b, m = rng.choice((1, 2, 3)), rng.choice((0, 1, 2, 3))
    s = rng.choice((b, b + 1, 3))
    base = rng.choice((P("(8,8):(8,1)"), P("(8,16):(16,1)"), P("(4,8):(1,4)"), P("64:1")))
    return A.composition(A.Swizzle(b, m, s), base)


def fresh_args(op: str, rng: random.Random):
    r = rng.random()
    if r < 0.12 and op in ("composition", "right_inverse", "left_inverse", "logical_divide", "coalesce",
                           "complement", "logical_product", "upcast", "downcast"):
        a = swz(rng)
        if op in ("composition", "logical_divide", "logical_product"):
            return (a, rand_layout(rng))
        if op in ("upcast", "downcast"):
            return (a, rng.choice((2, 4)))
        return (a,)
    return args_for(op, rng)


SPLIT = re.compile(r",\s*(?![^()<>]*[)>])")


def _split_args(text: str) -> list[str]:
    """The arguments of a call's text, split at the commas outside brackets (the drills' reader)."""
    return [part.strip() for part in _split_top(text)]


def _value(text: str):
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if ":" in text or text.startswith("<") or text.startswith("Sw"):
        return P(text)
    return registry.parse_tuple(text, "x", allow_keep=True)


CALL = re.compile(r"(?<![\w*])(?<! o )(" + "|".join(sorted(registry.OPS, key=len, reverse=True)) + r")\(")


def _calls(text: str):
    """Each ``op(args)`` in ``text``, with the text just after its closing parenthesis."""
    for m in CALL.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] in "(<":
                depth += 1
            elif text[i] in ")>":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        yield m.group(1), text[m.end():i], text[i + 1:]


def _eval(op: str, argtext: str):
    args = [_value(a) for a in _split_args(argtext)]
    return registry.get(op).fn(*args)


LAY = r"(\S+(?: o \S+)*)"
NAMED = [  # (pattern, what the layout it states must equal, from the context's A, B, B*, A*)
    (re.compile(r"^B\* = " + LAY + "$"), lambda c, m: c.get("B*")),
    (re.compile(r"^concatenate \(B, B\*\) = " + LAY + ":"), lambda c, m: A.make_layout(c["B"], c["B*"])),
    (re.compile(r"^compose: A o \(B, B\*\) = " + LAY + ";"),
     lambda c, m: A.composition(c["A"], A.make_layout(c["B"], c["B*"]))),
    (re.compile(r"^A\* o B = " + LAY + ":"), lambda c, m: A.composition(c["A*"], c["B"])),
    (re.compile(r"^concatenate \(A, A\* o B\) = " + LAY + ":"),
     lambda c, m: A.make_layout(c["A"], A.composition(c["A*"], c["B"]))),
    (re.compile(r"^A is the single mode (\S+): (\d+) of its elements, (-?\d+) apart, are " + LAY + "$"),
     lambda c, m: A.composition(P(m.group(1)), A.Layout(int(m.group(2)), int(m.group(3))))),
]


def _sub(argtext: str, ctx: dict) -> list:
    out = []
    for a in _split_args(argtext):
        if a in ("A", "B", "block") and ("B" if a == "block" else a) in ctx:
            out.append(ctx["A" if a == "block" else a])
        elif a in ("A", "B", "block") or "..." in a:
            raise KeyError(a)
        else:
            out.append(_value(a))
    return out


def step_errors(steps: list[dict], args: tuple = ()) -> list[str]:
    bad = []
    ctxs = {0: {k: v for k, v in zip("AB", args, strict=False) if isinstance(v, A.Layout)}}
    for k, s in enumerate(steps):
        t, d = s["text"], s["depth"]
        ctx = ctxs.setdefault(d, {})
        for op, argtext, after in _calls(t):
            try:
                cargs = _sub(argtext, ctx)
            except (KeyError, LayoutError):
                continue
            if re.match(r"mode [\d.]+: ", t) and after.strip() == "":
                b = cargs[1] if len(cargs) > 1 else None
                b = A.Layout(b) if isinstance(b, int) else b
                ctxs[d + 1] = {"A": cargs[0], "B": b} if isinstance(b, A.Layout) else {"A": cargs[0]}
            try:
                got = registry.get(op).fn(*cargs)
            except LayoutError:
                continue
            except Exception as e:  # noqa: BLE001
                bad.append(f"cannot recompute {op}({argtext}): {type(e).__name__} {e} in {t!r}")
                continue
            shown = show(got[0] if isinstance(got, tuple) and len(got) == 2 and op.startswith("local_") else got)
            if op == "complement" and (t.startswith("B* = complement(B") or t.startswith("A* = complement(A")):
                ctx["B*" if t.startswith("B*") else "A*"] = got
            m = re.match(r"\s*=\s*" + LAY, after)
            if m and not m.group(1).startswith("(A") and m.group(1).rstrip(".;,:") != shown:
                bad.append(f"{op}({argtext}) = {m.group(1)} but recomputes to {shown}: {t!r}")
            if re.match(r"mode [\d.]+: ", t) and after.strip() == "":
                last = None
                for s2 in steps[k + 1:]:
                    if s2["depth"] <= d:
                        break
                    last = s2
                if last is not None and last["depth"] == d + 1 and last["kind"] == "result" \
                        and last["layout"] is not None and last["layout"] != shown:
                    bad.append(f"{t!r}: nested result {last['layout']} but {op} gives {shown}")
        m = re.match(r"mode [\d.]+ of B: (\S+)$", t)
        if m and "A" in ctx:
            ctxs[d + 1] = {"A": ctx["A"], "B": P(m.group(1))}
        m = re.match(r"mode \d+: A_\d+ = (\S+), B_\d+ = (\S+)$", t)
        if m:
            ctxs[d + 1] = {"A": P(m.group(1)), "B": P(m.group(2)) if ":" in m.group(2) else None}
        for rx, want in NAMED:
            m = rx.match(t)
            if not m:
                continue
            try:
                w = want(ctx, m)
            except (KeyError, LayoutError):
                continue
            if w is not None and show(w) != m.groups()[-1]:
                bad.append(f"{t!r}: recomputes to {show(w)}")
    return bad


def case_record(op: str, args: tuple) -> dict:
    fn = registry.get(op).fn
    rec = {"op": op, "args": [show(a) if not isinstance(a, tuple) else repr(a) for a in args], "_args": args}
    try:
        plain = fn(*args)
        plain_s = show(plain[0]) + f"@{plain[1]}" if op.startswith("local_") else show(plain)
    except LayoutError as e:
        plain_s = "refused: " + str(e)
    except Exception as e:  # noqa: BLE001
        plain_s = f"CRASH {type(e).__name__}: {e}"
    rec["plain"] = plain_s
    try:
        result, steps = derive(op, *args)
        rec["steps"] = steps
        res_s = show(result[0]) + f"@{result[1]}" if op.startswith("local_") else show(result)
        rec["result"] = res_s
    except LayoutError as e:
        rec["steps"] = getattr(e, "steps", None)
        rec["result"] = "refused: " + str(e)
    except Exception as e:  # noqa: BLE001
        rec["result"] = f"CRASH {type(e).__name__}: {e}"
        rec["steps"] = None
    return rec


def check(rec: dict) -> list[str]:
    bad = []
    if rec["result"] != rec["plain"]:
        bad.append(f"explain's answer {rec['result']!r} != the op's {rec['plain']!r}")
    steps = rec["steps"]
    if not steps:
        return bad + ["no steps"]
    last = steps[-1]
    if rec["result"].startswith("refused: "):
        if last["kind"] != "error" or last["text"] != "refused: " + rec["result"][9:]:
            bad.append(f"refusal's last step {last['text']!r}")
    else:
        if last["depth"] != 0 or last["kind"] != "result":
            bad.append(f"last step {last}")
        want = rec["result"].split("@")[0] if rec["op"].startswith("local_") else rec["result"]
        if last["layout"] is not None and last["layout"] != want:
            bad.append(f"last step layout {last['layout']} != result {want}")
        if last["layout"] is None and last.get("value") != want:
            bad.append(f"last step value {last.get('value')} != result {want}")
    bad += step_errors(steps, rec['_args'])
    return bad


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="17700-17709")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--dump")
    ap.add_argument("--order", default="explain-first", choices=("explain-first", "plain-first"))
    ap.add_argument("--ops")
    ns = ap.parse_args()
    lo, hi = map(int, ns.seeds.split("-"))
    ops = ns.ops.split(",") if ns.ops else registry.names()
    cases = []
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        for op in ops:
            for _ in range(ns.n):
                try:
                    cases.append((op, fresh_args(op, rng)))
                except LayoutError:
                    pass
    if ns.order == "plain-first":  # warm the memo with every plain call first
        for op, args in cases:
            try:
                registry.get(op).fn(*args)
            except Exception:  # noqa: BLE001, S112
                continue
    recs, nbad, per_op = [], 0, {}
    for op, args in cases:
        rec = case_record(op, args)
        rec2 = case_record(op, args)  # again, memo warm
        rec2.pop("_args")
        bad = check(rec)
        if json.dumps(rec2, default=str) != json.dumps({k: v for k, v in rec.items() if k != '_args'}, default=str):
            bad.append("second derivation differs from the first")
        st = per_op.setdefault(op, [0, 0, 0])
        st[0] += 1
        st[1] += rec["result"].startswith("refused")
        if bad:
            st[2] += 1
            nbad += 1
            print(f"{op}{tuple(rec['args'])}:")
            for b in bad[:4]:
                print("   ", b)
        rec.pop("_args")
        recs.append(rec)
    for op, (n, r, b) in per_op.items():
        print(f"{op:24s} cases {n:4d} refused {r:4d} defects {b:3d}")
    print(f"total {len(recs)} cases, {nbad} with defects")
    if ns.dump:
        Path(ns.dump).write_text(json.dumps(recs, default=str, sort_keys=True))


if __name__ == "__main__":
    main()
