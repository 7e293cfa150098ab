"""Write everything observable of the algebra's text face to one file, to diff before and after a refactor.

Over every case of the oracle corpus (``tests/oracle/data``): the arguments as the op table reads them, the result or
the refusal's text, the explain steps, the C++ and DSL code of the call; every text of the corpus through ``parse``,
``parse_arg`` and ``parse_layout``; every layout met through ``str(parse(str(x)))``, ``to_cpp`` (both styles,
static or not), ``to_dsl``, ``formula``, ``upcast`` / ``downcast`` / ``recast_layout``; and the HTuple helpers
(``idx2crd`` / ``crd2idx`` with and without a stride, the explained ones, ``congruent`` ... ``flat_refinement``)
over their shapes. Deterministic: two runs of the same tree write the same bytes.

    .venv/bin/python scripts/algebra_dump.py /tmp/before.txt          # on the old tree (e.g. a git worktree)
    .venv/bin/python scripts/algebra_dump.py /tmp/after.txt           # on the new one
    cmp /tmp/before.txt /tmp/after.txt

``PYTHONPATH=<tree>`` picks the tree whose ``algebra`` is dumped; the corpus is read from the current directory.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, "tests/oracle")
import cute_notation as cn  # noqa: E402

import algebra as A  # noqa: E402
from algebra.core import inttuple as it  # noqa: E402
from algebra.core import refine  # noqa: E402
from algebra.teach import codegen, formula  # noqa: E402

EXTRA = ["Int<4>{}", "Layout<Shape<_4,_8>,Stride<_8,_1>>{}",
         "cute::Layout<cute::Shape<Int<4>,C<8>>,cute::Stride<_8,_1>>", "E<1>{}", "(1@0,1@1)", "(4,4):(E<0>{},E<1>{})",
         "ArithTuple(2,3) o (4,4):(_1@0,_1@1)",
         "(2,3) o (4,4):(1@0,1@1)", "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)",
         "smem_ptr[16b](unset) o (8,64):(64,1)", "<2:1, 4:2>", "<_, <2:1,_>, 4>", "<_,_>",
         "Sw<3,4,3> o 0 o (8,64):(64,1)",
         "Sw<3,4,3> _o_ 5 _o_ (8,64):(64,1)", "Sw<1,2,3> ∘ (8,8):(8,1)", "(4,(2,4)):(2,(1,8))", "8:1", "(8):(1)",
         "(4,8)", "_4", "  _12 ", "(4,F3)", "(4,4):(F1,F2)", "(4,8):(F1,F9)", "(2,2):(1@0@1,2@1)", "Sw<3,4,3>", "(4,",
         "4:", "Sw<3,4>", "<2:1", "Layout<Shape<_4>", "x", "", "(0,2):(1,1)", "((4,),):((1,),)", "1@0",
         "(4,8):(1@0,1@1)", "Sw<2,0,5> o 0 o ((8,2),64):((64,512),1)", "ArithTuple(2,3) o",
         "ArithTuple(2,3) (4,4):(1@0,1@1)", "(2,3) o 4:1", "smem_ptr[12b](unset) o (8,64):(64,1)",
         "Sw<3,1,3> o smem_ptr[32b](x) o (8,64):(64,1)", "tuple<_2,_3>", "Shape<_2,Shape<_3,_4>>", "Stride<_1,E<0,1>>",
         "E<1,0>{}", "Sw<-1,2,3>", "(-2):(1)", "4:-1", [1, 2], ["2:1", "_", None, [3, "4:2"]], 7, True, None]


def attempt(f: Any, *a: Any, **k: Any) -> Any:
    """``f(*a, **k)``, or the exception's type and text."""
    try:
        return f(*a, **k)
    except Exception as e:  # noqa: BLE001 - every failure is part of the behaviour
        return f"!{type(e).__name__}: {e}"


def text(x: Any) -> str:
    return x if isinstance(x, str) else A.to_str(x)


def crd_text(c: Any) -> Any:
    return it.to_str(c) if isinstance(c, tuple) else c


def main(path: str) -> None:
    out = open(path, "w")

    def w(*parts: Any) -> None:
        out.write(" | ".join(str(p) for p in parts) + "\n")

    cases: dict[str, dict] = {}
    for p in sorted(Path("tests/oracle/data").glob("*.json")):
        data = json.loads(p.read_text())
        for rec in data if isinstance(data, list) else []:
            if rec.get("op"):
                cases.setdefault(cn.key(rec), rec)
    texts, objs = set(), []
    for rec in cases.values():
        op, raw = rec["op"], rec["args"]
        texts |= {a for a in raw if isinstance(a, str)}
        if isinstance(rec.get("cute"), str):
            texts.add(rec["cute"].split(" @ ")[0])
        if op not in A.registry.OPS:
            continue
        entry = A.registry.get(op)
        args = attempt(A.registry.parse_args, entry, list(raw))
        w("REC", op, json.dumps(raw))
        if isinstance(args, str):
            w("  parse_args", args)
            args = attempt(lambda raw=raw: [cn.to_py(a) for a in raw])
            if isinstance(args, str):
                continue
        w("  args", [x if isinstance(x, int) else text(x) for x in args])
        res = attempt(entry.fn, *args)
        pair = type(res) is tuple and len(res) == 2 and not isinstance(res[0], int | tuple)
        w("  res", res if isinstance(res, str) else (str(res[0]), str(res[1])) if pair else text(res))
        try:
            w("  explain", json.dumps(A.explain.derive(op, *raw)[1], default=str))
        except Exception as e:  # noqa: BLE001
            w("  explain!", type(e).__name__, e, json.dumps(getattr(e, "steps", None), default=str))
        w("  cpp", json.dumps(attempt(codegen.op_to_cpp, op, *args)))
        w("  dsl", json.dumps(attempt(codegen.op_to_dsl, op, *args)))
        for x in list(args) + ([] if isinstance(res, str) else [res]):
            if type(x) is tuple and len(x) == 2 and isinstance(x[0], A.Layout):
                x = x[0]
            if isinstance(x, A.Layout | A.ComposedLayout | A.Swizzle) or type(x) is tuple:
                objs.append(x)

    for t in sorted(texts):
        w("TXT", t, "parse", text(attempt(A.parse, t)), "arg", text(attempt(A.parse_arg, t)), "layout",
          text(attempt(A.parse_layout, t)))
    for t in EXTRA:
        w("XTR", repr(t), "parse", text(attempt(A.parse, t)), "arg", text(attempt(A.parse_arg, t)))
        p = attempt(A.parse, t)
        if not isinstance(p, str):
            w("   ", attempt(A.to_str, p), attempt(A.notation.show, p), attempt(A.to_cpp, p),
              attempt(A.to_cpp, p, "type"), attempt(A.to_dsl, p), attempt(A.to_cpp, p, static=False))

    shapes = set()
    for x in objs[:20000]:
        inner = x if isinstance(x, A.Layout) else getattr(x, "layout_b", None)
        if isinstance(x, A.Layout | A.ComposedLayout | A.Swizzle):
            w("OBJ", x, attempt(lambda x=x: str(A.parse(str(x)))), attempt(A.to_cpp, x), attempt(A.to_cpp, x, "type"),
              attempt(A.to_cpp, x, static=False), attempt(A.to_dsl, x))
            w("   ", attempt(formula.formula, x), attempt(A.notation.show, x))
            for n in (2, 4, 3):
                w("   up/down", n, text(attempt(A.upcast, x, n)), text(attempt(A.downcast, x, n)),
                  text(attempt(A.recast_layout, x, 16, 8 * n)))
        else:
            w("TUP", attempt(A.to_str, x), attempt(A.notation.show, x), attempt(A.to_cpp, x), attempt(A.to_dsl, x))
        if isinstance(inner, A.Layout):
            shapes.add((inner.shape, inner.stride))

    shapes = sorted(shapes, key=repr)[:6000]
    idx2crd, crd2idx = A.registry.get("idx2crd").fn, A.registry.get("crd2idx").fn
    for sh, st in shapes:
        n = attempt(it.product, sh)
        for k in [0, 1, 5, 17] + ([n - 1, n, n + 3] if isinstance(n, int) else []):
            w("IT", sh, st, k, attempt(it.idx2crd, k, sh), attempt(it.idx2crd, k, sh, st),
              attempt(it.crd2idx, k, sh, st), attempt(it.crd2idx, k, sh))
            c = attempt(it.idx2crd, k, sh)
            w("   crd", attempt(it.crd2idx, c, sh, st), attempt(idx2crd, k, sh), attempt(crd2idx, c, sh))
            try:
                w("   ex", json.dumps(A.explain("idx2crd", k, sh), default=str),
                  json.dumps(A.explain("crd2idx", crd_text(c), sh), default=str))
            except Exception as e:  # noqa: BLE001
                w("   ex!", e)
        w("   misc", *(attempt(f, sh) for f in (it.flatten, it.depth, it.rank, it.prefix_product, it.compact_major,
                                                it.compact_row_major, it.unwrap, it.product_each, it.to_str,
                                                it.check_shape)),
          attempt(it.check_stride, st),
          attempt(lambda sh=sh: it.coordinates(sh)[:50] if it.product(sh) < 5000 else None))
    pairs = [(a[0], b[0]) for a, b in zip(shapes, shapes[1:] + shapes[:1], strict=True)]
    pairs += [(a[0], a[0]) for a in shapes[:500]]
    for a, b in pairs[:8000]:
        w("PR", a, b, *(attempt(f, a, b) for f in (it.congruent, it.weakly_congruent, it.compatible,
                                                  it.weakly_compatible, it.shape_div, it.ceil_div, it.evenly_divides)),
          attempt(it.shape_div, a, it.product(b) if isinstance(b, tuple) else b),
          *(attempt(f, a, b) for f in (refine.common_refinement, refine.common_coarsening, refine.flat_refinement)))
    rng = random.Random(7)
    evaluate = A.registry.get("evaluate").fn
    for _ in range(3000):
        sh = rng.choice(shapes)[0]
        lay = rng.choice(shapes)
        c = attempt(it.idx2crd, rng.randrange(64), sh)
        w("EV", lay, c, attempt(evaluate, A.Layout(*lay) if not isinstance(attempt(A.Layout, *lay), str) else None, c))
        try:
            w("   ", json.dumps(A.explain("evaluate", str(A.Layout(*lay)), crd_text(c)), default=str))
        except Exception as e:  # noqa: BLE001
            w("   !", e)
    out.close()


if __name__ == "__main__":
    main(sys.argv[1])
