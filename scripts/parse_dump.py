"""Write everything observable of the text readers outside the core to one file, to diff before and after a refactor.

- the op table's argument reader (``algebra.registry.parse_value`` / ``parse_tuple``) for every argument kind over
  curated texts, deterministic random texts over the tuple notation's alphabet and nestings from 1 to 40 deep;
- ``POST /api/algebra`` for every op: its examples, and each argument in turn replaced by malformed or odd texts
  (status and the JSON answer);
- the drills' answer readers (``parse_nested``, ``parse_int``, ``parse_int_list``, ``parse_table``, ``parse_pairs``,
  ``read_layout``, ``flatten``) over every string literal of the drill tests, and every drill kind for a few seeds:
  the drill's texts and the grade of its key, its examples, its mistakes' examples and a set of typed answers;
- ``layoutlab.inputs.layout_of`` / ``panels`` over texts and duck-typed arrays, tensors and CuTe-like objects.

Deterministic: two runs of the same tree write the same bytes. Run it from the repository root (as
``scripts/algebra_dump.py``, whose ``attempt`` it shares).

    .venv/bin/python scripts/parse_dump.py /tmp/before.txt     # on the old tree
    .venv/bin/python scripts/parse_dump.py /tmp/after.txt      # on the new one
    cmp /tmp/before.txt /tmp/after.txt
"""

from __future__ import annotations

import ast
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp(prefix="parse-dump-"))
os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver,localhost,127.0.0.1,::1")
os.environ.setdefault("LAYOUTLAB_WARM", "0")
sys.setrecursionlimit(3000)

import algebra as A  # noqa: E402
from algebra import registry  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from algebra_dump import attempt  # noqa: E402 - f(*a), or the exception's type and text

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("layout", "tiler", "int", "shape", "profile", "coord")
ALPHABET = "()_,-0123456789 x:<>@o[]"
CURATED = ["", " ", "0", "3", "-3", "+3", "_3", " _3 ", "__3", "_", "__", "_ 3", "(_)", "(_,1)", "(1,_)", "(_,_)",
           "(_3,1)", "(1,(0,_))", "( 1 , ( 0 , 2 ) )", "(1,2)", "(1,(0,2))", "((1,2),3)", "(1)", "((1))", "(1,)",
           "(,1)", "(1,,2)", "()", "(", ")", "(1", "1)", "(1))", "((1)", "1 2", "(1 2)", "(1,2)x", "x", "(x)",
           "(1,x)", "(1, x, 2)", "(1,2):(3,4)", "4:1", "8", "(8,8)", "<2:1, 4:1>", "<>", "< >", "[1,2]", "[1,[2,3]]",
           "[1,null]", "[[]]", "[1,", "[]", "[\"2:1\", null]", "(1,-2)", "(1,- 2)", "(1,--2)", "-", "(-)", "1-2",
           "(1@0,1@1)", "Sw<3,4,3>", "Int<4>{}", "_4", "(_4,_8)", "(4,(2,4)):(2,(1,8))", "Sw<3,3,3> o (8,64):(64,1)",
           "(4,8", "12", "24", "1.5", "0x10", "1e3", "٣", "(١,٢)", "\t(1,\n2)\t", "(1,2) ", " (1,2)", "(1 ,2 )",
           "(1,2)(3)", "((1,2)", "(1,2))", "(((1,(2,_)),3),_)", "(_,(_,_))", "(0,_,1)", "-0", "(-0,0)",
           "99999999999999999999", "(1,99999999999999999999)", "(1,2,3,4,5,6,7,8)", "(1;2)", "(1.2)", "1_000"]


def show(x: Any) -> str:
    if isinstance(x, str):
        return repr(x)
    if isinstance(x, tuple):
        return "(" + ", ".join(show(e) for e in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(show(e) for e in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in x.items()) + "}"
    if x is None or isinstance(x, bool | int | float):
        return repr(x)
    return f"{type(x).__name__}<{x}>"


def random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(0, 10)
        if rng.random() < 0.5:  # mostly tuple-ish
            out.append("".join(rng.choice("()_,-0123 ") for _ in range(k)))
        else:
            out.append("".join(rng.choice(ALPHABET) for _ in range(k)))
    return out


def nestings() -> list[str]:
    out = []
    for d in (1, 2, 5, 23, 24, 25, 26, 30, 32, 33, 40):
        o, c = "(" * d, ")" * d
        out += [o + "3" + c, o + "3,2" + c, o + "_" + c, o + "3" + c[1:]]
    return out


def dump_registry(w: Any) -> None:
    w("== registry.parse_value")
    texts = CURATED + random_texts(6000, 1) + nestings()
    for t in texts:
        for kind in KINDS:
            w(f"{kind} {t!r} -> {show(attempt(registry.parse_value, t, kind, 'w'))}")
    w("== registry.parse_tuple")
    for t in texts:
        for keep in (False, True):
            w(f"{keep} {t!r} -> {show(attempt(registry.parse_tuple, t, 'what', keep))}")
    w("== deep (RecursionError as it comes)")
    for d in (500, 1500, 2900):
        for kind in ("shape", "profile", "coord"):
            r = attempt(registry.parse_value, "(" * d + "1" + ")" * d, kind, "w")
            levels = 0
            while isinstance(r, tuple):
                r, levels = r[0], levels + 1
            w(f"{kind} depth {d} -> {levels} levels, {show(r)[:200]}")


ODD = ["", " ", "x", "(4,8", "(1,", "(x)", "(_)", "(1,_)", "_3", "(_3,1)", "3", "-3", "0", "(1,2)", "(1,(0,_))",
       "(1,2):(3,4)", "<2:1, 4:1>", "<>", "[1,", "[1,null]", "[[1,2],3]", "1.5", "(1,)", "()", "((1,2),3)", "24",
       "(3,(2,3))", "4:2", "Sw<3,3,3>", "(3,-2)", "(8,0)", "99999999999999999999", "(" * 30 + "2" + ")" * 30,
       "(" * 33 + "2" + ")" * 33, "(2,(2,(2,(2,(2,(2,(2,2)))))))"]


def dump_api(w: Any) -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app

    w("== POST /api/algebra")
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        def post(op: str, args: list) -> None:
            r = c.post("/api/algebra", json={"op": op, "args": args})
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text
            w(f"{op} {json.dumps(args)} -> {r.status_code} {json.dumps(body, sort_keys=True)}")

        for name, op in registry.OPS.items():
            for ex in op.examples:
                post(name, list(ex.args))
            base = list(op.examples[-1].args)
            for k in range(len(op.args)):
                for odd in ODD:
                    args = list(base) + [op.examples[0].args[j] if j < len(op.examples[0].args) else "1"
                                         for j in range(len(base), k)]
                    args = (args + [odd])[:k] + [odd] + args[k + 1:]
                    post(name, args[:max(len(base), k + 1)])
        for args in (["(8,8):(1,8)", [2, None]], ["(8,8):(1,8)", [[2, 1], "4:1"]], ["4:2", 24], ["4:2", [[[]]]],
                     ["4:2", None], ["4:2", True], ["4:2", 2.5]):
            post("logical_divide", list(args))
            post("complement", list(args))
        post("local_tile", ["(16,16):(16,1)", "<4:1, 4:1>", [1, 2]])
        post("local_tile", ["(16,16):(16,1)", "<4:1, 4:1>", [1, None]])
        post("coalesce", ["(2,(1,6)):(1,(6,2))", [1, [1, 1]]])
        post("idx2crd", ["7", [3, [2, 3]]])
        post("crd2idx", [[1, [0, 1]], "(3,(2,3))"])


def test_literals() -> list[str]:
    out: list[str] = []
    for name in ("test_drills_parsing.py", "test_drills_symbolic.py", "test_drills_adversarial.py",
                 "test_drills_kinds.py", "test_drills_examples.py"):
        p = ROOT / "tests" / name
        if not p.exists():
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                out.append(node.value)
    return sorted(set(out))


ANSWERS = ["", "1", "(1,2)", "((1,2),3)", "(4,8):(8,1)", "(4,8):(1,4)", "_", "x", "(1,(1,2))", "0, 4, 8", "12:1",
           "(2,2):(1,2)", "Sw<3,3,3> o (8,64):(64,1)", "<2:1, 4:1>", "row-major", "(0,0) (1,1)", "i + 4*j", "32",
           "(_4,_8):(_8,_1)", "((2,2),(2,2)):((1,4),(2,8))", "1 2\n3 4"]


def dump_drills(w: Any) -> None:
    from app.drills import parsing
    from app.drills.common import read_layout
    from app.drills.core import generate, kinds

    w("== drill readers")
    for t in test_literals() + CURATED + random_texts(1500, 2):
        w(f"{t!r}")
        nested = attempt(parsing.parse_nested, t)
        w(f"  nested {show(nested)}")
        if not (isinstance(nested, str) and nested.startswith("!")):
            w(f"  flatten {show(parsing.flatten(nested))} flat {show(A.flatten(nested))}")
        w(f"  int {show(attempt(parsing.parse_int, t))}")
        w(f"  ints {show(attempt(parsing.parse_int_list, t))}")
        w(f"  table {show(attempt(parsing.parse_table, t, 2, 2))}")
        w(f"  pairs {show(attempt(parsing.parse_pairs, t))}")
        w(f"  layout {show(attempt(read_layout, t))} tiler {show(attempt(read_layout, t, True))}")
    w("== drills")
    for k in kinds():
        for seed in range(4):
            d = attempt(generate, k.kind, seed)
            if isinstance(d, str):
                w(f"{k.kind} {seed} {d}")
                continue
            w(f"{k.kind} {seed} {d.variant!r} {d.prompt!r} {d.answer_format!r} {d.expected!r} {show(d.data)}")
            w(f"  steps {show(d.steps)}")
            tries = [d.expected, *d.examples, *[m[2] for m in d.mistakes if m[2]], *ANSWERS]
            for a in tries:
                g = d.grade(a)
                w(f"  {a!r} -> {g.correct} {g.readable} {g.reason!r} {g.mistake!r} {show(g.items)} {show(g.cells)}")


class Arrayish:
    def __init__(self, shape: Any, strides: Any, itemsize: int) -> None:
        self.shape, self.strides, self.itemsize = shape, strides, itemsize

    def __str__(self) -> str:
        return f"array{self.shape}/{self.strides}/{self.itemsize}"


class Tensorish:
    def __init__(self, shape: Any, stride: Any) -> None:
        self.shape, self._stride = shape, stride

    def stride(self) -> Any:
        return self._stride

    def element_size(self) -> int:
        return 2

    def __str__(self) -> str:
        return f"tensor{self.shape}/{self._stride}"


class Cuteish:
    def __init__(self, shape: Any, stride: Any) -> None:
        self.shape, self.stride = shape, stride

    def __str__(self) -> str:
        return f"{self.shape}:{self.stride}"


def dump_layoutlab(w: Any) -> None:
    from layoutlab import inputs

    w("== layoutlab.inputs")
    objs: list[Any] = [*CURATED, "(4,8):(8,1)", "S<3,4,3> o 0 o (8,64):(64,1)", "SW_3_4_3 o (8,64):(64,1)",
                       "(_4,_8):(_8,_1)", "#blocked", A.Layout((4, 8)), 7, None, (1, 2), [1, 2]]
    for shape, strides, item in [((8,), (4,), 4), ((4, 8), (32, 4), 4), ((), (), 4), ((4, 8), (3, 4), 4),
                                 (((4,),), (4,), 4), ([[4]], [4], 4), ((4, 8), (16, 2), 2), ((1,), (2,), 2)]:
        objs.append(Arrayish(shape, strides, item))
    for shape, stride in [((8,), (1,)), ((4, 8), (8, 1)), ((), ()), (((4,),), (1,)), ([[4]], [1]), ((2, 3, 4),
                          (12, 4, 1))]:
        objs.append(Tensorish(shape, stride))
        objs.append(Cuteish(shape, stride))
    objs += [Cuteish((4, (2, 2)), (1, (4, 8))), Cuteish("x", "y"), Cuteish((4,), (1,))]
    for o in objs:
        lay = attempt(inputs.layout_of, o)
        ps = attempt(inputs.panels, o)
        txt = show(ps) if isinstance(ps, str) else [(p.title, p.notation, p.rows, p.cols, p.note,
                                                     p.view.offsets if p.view else None) for p in ps]
        w(f"{show(o)} -> {show(lay)} | {show(txt) if not isinstance(txt, str) else txt}")
    for o, tile in [("(32,4):(1,32)", (8, 16)), ("(32,4):(1,32)", 8), ("(32,4):(1,32)", ((2, 4), 16)),
                    ("(32,4):(1,32)", (0, 4))]:
        ps = attempt(inputs.panels, o, tile=tile)
        w(f"{o} tile {show(tile)} -> {show(ps) if isinstance(ps, str) else [(p.title, p.rows, p.cols) for p in ps]}")


def main(path: str) -> None:
    lines: list[str] = []
    w = lines.append
    dump_registry(w)
    dump_api(w)
    dump_drills(w)
    dump_layoutlab(w)
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"{path}: {len(lines):,} lines")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/parse_dump.txt")
