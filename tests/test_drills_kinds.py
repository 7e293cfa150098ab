"""Every drill kind over 200 seeds: the answer key is the engine's result and is accepted, a perturbed answer is
rejected, an equivalent non-canonical answer is accepted, and (kind, seed) reproduces the same drill."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

import algebra as A
from algebra import banks as B
from algebra import coalescing as C
from app.drills import gen_banks as G
from app.drills.common import lstr
from app.drills.core import Drill, generate, kinds
from app.drills.formula import Formula

SEEDS = range(200)
KINDS = [k.kind for k in kinds()]


def L(text: str) -> Any:
    return A.parse(text)


def bump_int(text: str, index: int = -1) -> str:
    """Add 1 to the index-th integer of ``text``."""
    nums = list(re.finditer(r"\d+", text))
    m = nums[index]
    return text[:m.start()] + str(int(m.group()) + 1) + text[m.end():]


def same_function(a: Any, b: Any) -> bool:
    return A.size(a) == A.size(b) and all(a(i) == b(i) for i in range(A.size(a)))


def layout_perturbation(expected: str) -> str:
    """A one-integer change of the expected layout that changes its function (checked with the engine)."""
    want = L(expected)
    n = len(re.findall(r"\d+", expected))
    for k in range(n - 1, -1, -1):
        cand = bump_int(expected, k)
        try:
            got = L(cand)
        except A.LayoutError:
            continue
        if not same_function(got, want):
            return cand
    raise AssertionError(f"no function-changing perturbation of {expected}")


def split_last_mode(layout: Any) -> str | None:
    """The same function with the last top-level mode split in two: (.., 2k:d) -> (.., (2,k):(d,2d))."""
    shape, stride = layout.shape, layout.stride
    if not isinstance(shape, tuple) or isinstance(shape[-1], tuple) or shape[-1] % 2 or shape[-1] < 4:
        return None
    s, d = shape[-1], stride[-1]
    return str(A.Layout(shape[:-1] + ((2, s // 2),), stride[:-1] + ((d, 2 * d),)))


# ----------------------------------------------------------------------------------------- key recomputation


def key(d: Drill) -> str:
    """The answer recomputed from the drill's inputs with the engine (independently of the generator)."""
    x = d.data
    if d.kind == "offsets":
        lay = L(x["layout"])
        if "coords" in x:
            return ", ".join(str(lay(c)) for c in x["coords"])
        m, n = A.size(lay[0]), A.size(lay[1])
        return "\n".join(" ".join(str(lay((i, j))) for j in range(n)) for i in range(m))
    if d.kind == "natural_coord":
        if d.variant == "offset":
            return str(L(x["layout"])(x["x"]))
        if d.variant == "idx":
            return lstr(A.idx2crd(x["x"], x["shape"]))
        if d.variant == "three":
            lay = L(x["layout"])
            top = A.idx2crd(x["x"], tuple(A.size(lay[i]) for i in range(A.rank(lay))))
            return f"{lstr(top)} {lstr(A.idx2crd(x['x'], lay.shape))} {lay(x['x'])}"
        if d.variant == "flat":
            c, s = x["coord"], x["shape"]
            return lstr(tuple(A.idx2crd(ci, si) if isinstance(si, tuple) else ci for ci, si in zip(c, s, strict=True)))
        inner = x["shape"][1] if isinstance(x["shape"][1], tuple) else x["shape"][0]
        return " ".join(lstr(A.idx2crd(k, inner)) for k in range(A.product(inner)))
    if d.kind == "majorness":
        return d.expected  # checked by test_majorness_matches_reference_layouts
    if d.kind == "index_formula":
        return d.expected  # checked by evaluation in test_formula_key_evaluates_to_the_layout
    if d.kind == "transpose_view":
        mat = L(x["matrix"])
        m, n = A.size(mat[0]), A.size(mat[1])
        return str(A.composition(mat, A.Layout((n, m), (m, 1))))
    if d.kind == "tiled_view":
        z = A.zipped_divide(L(x["matrix"]), tuple(A.Layout(t) for t in x["tile"]))
        if d.variant == "spot":
            return ", ".join(str(z(tuple(tuple(v) for v in p))) for p in x["picks"])
        return str(z) if d.variant == "layout" else d.expected
    if d.kind == "algebra_op" and d.variant == "divide_tile":
        div = A.logical_divide(*[L(a) for a in x["args"]])
        return ", ".join(str(div((i, x["tile"]))) for i in range(A.size(div[0])))
    if d.kind == "algebra_op":
        args = [a if isinstance(a, int) else tuple(L(t) for t in a) if isinstance(a, list) else L(a)
                for a in x["args"]]
        return str(getattr(A, x["op"])(*args))
    if d.kind == "banks":
        lay = L(x["layout"])
        if d.variant == "swizzled":
            r = B.bank_access(lay, 4, {"kind": "column", "index": x["col"]}, swizzle=A.Swizzle(*x["swizzle"]))
            return ", ".join(str(r.banks[t]) for t in x["lanes"])
        if d.variant in ("banks", "ways", "formula"):
            r = B.bank_access(lay, 4, {"kind": "column", "index": x["col"]})
            if d.variant == "banks":
                return ", ".join(str(r.banks[t]) for t in x["lanes"])
            if d.variant == "ways":
                return str(r.ways)
            return d.expected
        if d.variant == "ldmatrix_ways":
            return str(B.bank_access(lay, 2, x["access"]).wavefronts)
        return d.expected  # a fix: any working choice; checked by the bank model in the grader tests
    if d.kind == "design_view":
        return d.expected  # checked by test_design_view_key_composes_to_the_view
    if d.kind == "tv_layout":
        tv = L(x["tv"])
        if d.variant == "copy":
            rows, _ = x["tiler"]
            return " ".join(f"({tv((x['thread'], v)) % rows},{tv((x['thread'], v)) // rows})"
                            for v in range(A.size(tv[1])))
        rows, _ = x["tile"]
        if d.variant == "mma_pos":
            i = tv((x["lane"], x["value"]))
            return f"({i % rows},{i // rows})"
        r, c = x["rc"]
        lane, v = next((t, v) for t in range(32) for v in range(A.size(tv[1])) if tv((t, v)) == r + rows * c)
        return f"{lane}, {v}"
    if d.kind == "symbolic":
        if d.variant.startswith("formula"):
            return A.formula(A.parse_symbolic(x["layout"]), x["names"])
        return d.expected  # checked against the engine at bound values in test_drills_symbolic.py
    if d.kind == "sectors":
        rep = C.partition_sectors(L(x["tv"]), 4, memory=L(x["memory"]) if x["memory"] else None,
                                  vector=x["vector"]).instructions[0]
        return f"{rep.num_sectors}, {round(100 * rep.utilization, 1):g}%"
    raise AssertionError(d.kind)


def perturbed(d: Drill) -> str:
    """A wrong answer close to the key."""
    if d.kind == "majorness":
        return {"row": "column", "column": "neither", "neither": "row"}[d.expected]
    layout_answer = d.kind in ("transpose_view", "design_view") or (d.kind, d.variant) == ("tiled_view", "layout")
    if layout_answer or (d.kind == "algebra_op" and d.variant != "divide_tile"):
        return layout_perturbation(d.expected)
    if d.kind == "banks" and d.variant.endswith("fix"):
        return "Sw<1,0,1>" if "Sw<" in d.expected else "pad 0"
    if d.kind == "sectors":
        return bump_int(d.expected, 0)
    if d.kind == "index_formula" and not re.search(r"\d", d.expected):
        return d.expected + " + 1"
    if d.kind == "symbolic" and d.variant.startswith(("transpose", "tiled")):
        head, stride = d.expected.split(":")
        return head + ":" + bump_int(stride)
    if d.kind == "symbolic" and not re.search(r"\d", d.expected):
        return d.expected + " + 1"
    return bump_int(d.expected)


def equivalent(d: Drill) -> str | None:
    """A different spelling (or a different but equally right answer) that must be accepted."""
    e = d.expected
    if d.kind == "offsets":
        return "[" + " , ".join(e.split(", ")) + "]" if "coords" in d.data else e.replace("\n", " ; ")
    if d.kind == "natural_coord":
        if d.variant in ("idx", "flat"):
            return " ".join(re.findall(r"\d+", e))  # fully flattened: unambiguous given the shape
        if d.variant == "three":
            return "[" + e.replace(" ", ", ") + "]"
        return e.replace(",", " , ") if d.variant == "mapping" else f" = {e} "
    if d.kind == "majorness":
        return {"row": "Row-Major", "column": "column major", "neither": "NEITHER"}[e]
    if d.kind == "index_formula":
        terms = [t.strip() for t in e.split("+")]
        return " + ".join(reversed([re.sub(r"^(\w+)\*(\d+)$", r"\2\1", t) for t in terms]))
    if d.kind == "transpose_view":
        alt = split_last_mode(L(e))
        return alt or re.sub(r"(\d+)", r"_\1", e)
    if d.kind == "tiled_view":
        if d.variant == "layout":
            return e.split(":", 1)[1]  # the strides alone
        return e.replace(",", " ") if d.variant == "spot" else e.replace("*", " * ").replace(" + ", "+")
    if d.kind == "algebra_op" and d.variant == "divide_tile":
        return "[" + e + "]"
    if d.kind == "algebra_op":
        return re.sub(r"(\d+)", r"_\1", e).replace(",", ", ")
    if d.kind == "design_view":
        if d.variant == "transpose":
            return re.sub(r"(\d+)", r"_\1", e)
        mat = L(d.data["matrix"])
        (m, n), key_ = (A.size(mat[0]), A.size(mat[1])), d.variant
        rs, cs = {"cols2": (1, 2), "rows2": (2, 1), "cols4": (1, 4), "both2": (2, 2)}[key_]
        return f"<{m // rs}:{rs}, {n // cs}:{cs}>"
    if d.kind == "banks":
        if d.variant in ("fix", "ldmatrix_fix"):
            lay, access, eb = d.data["layout"], d.data["access"], d.data["ebytes"]
            others = [bms for bms in CANDIDATES if str(A.Swizzle(*bms)) != e and works(lay, eb, access, bms)]
            if others:
                return "Swizzle<{},{},{}>".format(*others[0])
            pad = B.padding_fix(L(lay), eb, access)
            return f"pad {pad.padding}" if pad else None
        return {"banks": e.replace(", ", " "), "swizzled": e.replace(", ", "; "), "ways": f"{e}-way",
                "formula": e.replace("mod", "%"),
                "ldmatrix_ways": f" {e} "}[d.variant]
    if d.kind == "tv_layout":
        return " ".join(reversed(re.findall(r"\(\d+,\d+\)", e))) if d.variant == "copy" else e.replace(",", " ")
    if d.kind == "symbolic":
        if d.variant.startswith(("transpose", "tiled")):
            return re.sub(r"(\d+)\*(\w+)", r"\2 * \1", e.split(":")[1])  # the strides alone, ld*8 for 8*ld
        return " + ".join(reversed(["*".join(reversed(t.strip().split("*"))) for t in e.split("+")]))
    if d.kind == "sectors":
        s, u = e.split(", ")
        return f"{s} sectors, {float(u[:-1]) / 100}"
    return None


@pytest.mark.parametrize("kind", KINDS)
def test_key_is_engine_result_accepted_perturbed_rejected_equivalent_accepted(kind: str) -> None:
    for seed in SEEDS:
        d = generate(kind, seed)
        where = f"{kind}-{seed} ({d.variant}): {d.prompt}"
        assert d.expected == key(d), where
        g = d.grade(d.expected)
        assert g.correct and g.readable, f"{where}: key rejected: {g.reason}"
        bad = perturbed(d)
        g = d.grade(bad)
        assert not g.correct, f"{where}: perturbed answer {bad!r} accepted"
        alt = equivalent(d)
        if alt is not None:
            g = d.grade(alt)
            assert g.correct, f"{where}: equivalent answer {alt!r} rejected: {g.reason}"
        assert d.steps and all("text" in s and "layout" in s for s in d.steps), where
        assert len(d.hints) >= 2 and d.hint(3)["steps"] == d.steps


@pytest.mark.parametrize("kind", KINDS)
def test_generation_is_reproducible(kind: str) -> None:
    for seed in (0, 1, 12345, 2**31 - 1):
        a, b = generate(kind, seed), generate(kind, seed)
        assert (a.prompt, a.expected, a.id) == (b.prompt, b.expected, b.id)
    prompts = {generate(kind, s).prompt for s in range(30)}
    assert len(prompts) >= 10, "fresh numbers: 30 seeds should give many different questions"


def test_formula_key_evaluates_to_the_layout() -> None:
    for seed in SEEDS:
        d = generate("index_formula", seed)
        lay, names = L(d.data["layout"]), d.data["names"]
        f = Formula(d.expected, names)
        for i in range(A.size(lay)):
            nat = A.idx2crd(i, lay.shape)
            assert f(dict(zip(names, A.flatten(nat), strict=True))) == lay(i)


def test_majorness_matches_reference_layouts() -> None:
    for seed in SEEDS:
        d = generate("majorness", seed)
        lay = L(d.data["layout"])
        m, n = A.size(lay[0]), A.size(lay[1])
        ld_row, ld_col = lay((1, 0)) if m > 1 else n, lay((0, 1)) if n > 1 else m
        row = same_function2(lay, A.Layout((m, n), (ld_row, 1)), m, n) and ld_row >= n
        col = same_function2(lay, A.Layout((m, n), (1, ld_col)), m, n) and ld_col >= m
        assert d.expected == ("row" if row else "column" if col else "neither"), d.prompt


def same_function2(a: Any, b: Any, m: int, n: int) -> bool:
    return all(a((i, j)) == b((i, j)) for i in range(m) for j in range(n))


def test_design_view_key_composes_to_the_view() -> None:
    for seed in SEEDS:
        d = generate("design_view", seed)
        mat = L(d.data["matrix"])
        view = A.composition(mat, L(d.expected))
        rs, cs = {"cols2": (1, 2), "rows2": (2, 1), "cols4": (1, 4), "both2": (2, 2), "transpose": (0, 0)}[d.variant]
        vm, vn = A.size(view[0]), A.size(view[1])
        for i in range(vm):
            for j in range(vn):
                src = (j, i) if d.variant == "transpose" else (rs * i, cs * j)
                assert view((i, j)) == mat(src)


CANDIDATES = [(b, m, s) for b in (1, 2, 3, 5) for m in (0, 3) for s in (3, 5, 7) if s >= b]


@functools.cache
def closed(layout: str, bms: tuple[int, int, int]) -> bool:
    """The swizzle maps the tile's offsets onto themselves (checked here, offset by offset)."""
    lay, sw = L(layout), A.Swizzle(*bms)
    offsets = {lay(i) for i in range(A.size(lay))}
    return {sw(o) for o in offsets} == offsets


def works(layout: str, eb: int, access: dict, bms: tuple[int, int, int]) -> bool:
    """A legal, conflict-free choice by the engine's bank model."""
    try:
        return closed(layout, bms) and B.bank_access(L(layout), eb, access, swizzle=A.Swizzle(*bms)).ways == 1
    except A.LayoutError:  # the swizzle splits a vector access: not a legal choice
        return False


def test_swizzle_answers_are_checked_by_the_bank_model() -> None:
    for seed in range(120):
        d = generate("banks", seed)
        if not d.variant.endswith("fix"):
            continue
        lay, access, eb = d.data["layout"], d.data["access"], d.data["ebytes"]
        for bms in CANDIDATES:
            assert d.grade(str(A.Swizzle(*bms))).correct == works(lay, eb, access, bms), (d.prompt, bms)


def test_cached_fix_search_is_the_engines() -> None:
    """One drill per tile: the drills' cached search finds exactly the engine's fixes, in its order."""
    seen: dict[str, Drill] = {}
    for seed in range(200):
        d = generate("banks", seed)
        if d.variant.endswith("fix"):
            seen.setdefault(d.data["layout"], d)
    assert len(seen) == 6, sorted(seen)  # 32 x {32, 64, 128} floats, 8 x {32, 64, 128} halves
    for lay, d in seen.items():
        mine = [(f.swizzle, f.analysis.banks) for f in G.swizzle_fixes(L(lay), d.data["ebytes"], d.data["access"])]
        engine = [(f.swizzle, f.analysis.banks) for f in B.swizzle_fixes(L(lay), d.data["ebytes"], d.data["access"])]
        assert mine == engine and mine, lay
