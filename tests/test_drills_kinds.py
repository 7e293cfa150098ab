"""Every drill kind over many seeds (200 by default, ``LAYOUTLAB_DRILL_SEEDS`` for more): the key is recomputed
independently and satisfies the drill's own check, every accepted spelling of it grades correct, known wrong answers
(perturbations and every named mistake's example) grade wrong and readable, and (kind, seed) reproduces the drill."""

from __future__ import annotations

import functools
import os
from fractions import Fraction
from typing import Any

import pytest
from drill_forms import accepted, rejected
from drill_keys import NEW_KINDS, tv_extra

import algebra as A
from algebra import banks as B
from algebra.hw import coalescing as C
from app.drills import gen_banks as G
from app.drills.common import lstr
from app.drills.core import Drill, generate, kinds
from app.drills.formula import Formula
from app.drills.gen_tv import percent

SEEDS = range(int(os.environ.get("LAYOUTLAB_DRILL_SEEDS", "200")))
KINDS = [k.kind for k in kinds()]


def L(text: str) -> Any:
    return A.parse(text)


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
    if d.kind == "transpose_view" and d.variant == "prove":
        mat = L(x["matrix"])
        i, j = x["coord"]
        view = A.Layout((A.size(mat[1]), A.size(mat[0])), (mat.stride[1], mat.stride[0]))  # the modes swapped
        assert view((j, i)) == mat((i, j))
        return f"{mat((i, j))}, {view((j, i))}"
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
        from app.drills.algebra_cases import check

        args = [a if isinstance(a, int) else tuple(L(t) for t in a) if isinstance(a, list) else L(a)
                for a in x["args"]]
        assert check(x["op"], args, L(d.expected)), f"{x['op']}{args} = {d.expected} fails its post-condition"
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
    if d.kind in NEW_KINDS:
        return NEW_KINDS[d.kind](d)
    if d.kind == "tv_layout":
        if d.variant in ("ldmatrix", "tiled_copy_tv"):
            return tv_extra(d)
        tv = L(x["tv"])
        if d.variant == "copy":
            rows, _ = x["tiler"]
            return " ".join(f"({tv((x['thread'], v)) % rows},{tv((x['thread'], v)) // rows})"
                            for v in range(A.size(tv[1])))
        rows, _ = x["tile"]
        if d.variant == "mma_pos":
            i = tv((x["thread"], x["value"]))
            if x["atom"] == "SM80_16x8x16_F32F16F16F32_TN":  # the PTX fragment table (seed 003)
                g, t, v = x["thread"] // 4, x["thread"] % 4, x["value"]
                ptx = {"A": (g + 8 * (v // 2 % 2), 2 * t + v % 2 + 8 * (v // 4)),
                       "B": (g, 2 * t + v % 2 + 8 * (v // 2)),  # (n, k)
                       "C": (g + 8 * (v // 2), 2 * t + v % 2)}[x["operand"]]
                assert (i % rows, i // rows) == ptx, d.prompt
            return f"({i % rows},{i // rows})"
        r, c = x["rc"]
        lane, v = next((t, v) for t in range(A.size(tv[0])) for v in range(A.size(tv[1])) if tv((t, v)) == r + rows * c)
        return f"{lane}, {v}"
    if d.kind == "symbolic":
        if d.variant.startswith("formula"):
            return A.formula(A.parse_symbolic(x["layout"]), x["names"])
        return d.expected  # checked against the engine at bound values in test_drills_symbolic.py
    if d.kind == "sectors":
        rep = C.partition_sectors(L(x["tv"]), x["element_bytes"], memory=L(x["memory"]) if x["memory"] else None,
                                  vector=x["vector"]).instructions[0]
        assert abs(rep.utilization - rep.bytes_used / (32 * rep.num_sectors)) < 1e-12
        return f"{rep.num_sectors}, {percent(Fraction(100 * rep.bytes_used, 32 * rep.num_sectors))}"
    return d.expected  # a kind without an independent key here: its forms and wrong answers are still checked


@pytest.mark.parametrize("kind", KINDS)
def test_key_is_the_truth_every_form_accepted_wrong_forms_rejected(kind: str) -> None:
    for seed in SEEDS:
        d = generate(kind, seed)
        where = f"{kind}-{seed} ({d.variant}): {d.prompt}"
        assert d.expected == key(d), where
        for form in accepted(d):
            g = d.grade(form)
            assert g.correct and g.readable, f"{where}: right answer {form!r} rejected: {g.reason}"
        for form in rejected(d):
            g = d.grade(form)
            assert g.readable and not g.correct, f"{where}: wrong answer {form!r} accepted or unreadable: {g.reason}"
        for label, _, example in d.mistakes:
            if example is not None:
                g = d.grade(example)
                assert g.mistake, f"{where}: {example!r} is not named as a mistake ({label})"
        assert d.steps and all("text" in s and "layout" in s for s in d.steps), where
        assert len(d.hints) >= 2 and d.hint(3)["steps"] == d.hint_steps()
        assert all(s in d.steps for s in d.hint_steps() if "show the answer" not in s["text"])
        assert isinstance(d.data, dict) and d.data, where
        if "op" in d.data:
            assert isinstance(d.data["args"], list), where


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
    seen: dict[tuple[str, int], Drill] = {}
    for seed in range(300):
        d = generate("banks", seed)
        if d.variant.endswith("fix"):
            seen.setdefault((d.data["layout"], d.data["ebytes"]), d)
    assert len(seen) >= 8, sorted(seen)  # 32-row tiles of halves, floats and doubles; 8-row ldmatrix tiles
    assert {eb for _, eb in seen} == {2, 4, 8}
    for (lay, _), d in seen.items():
        mine = [(f.swizzle, f.analysis.banks) for f in G.swizzle_fixes(L(lay), d.data["ebytes"], d.data["access"])]
        engine = [(f.swizzle, f.analysis.banks) for f in B.swizzle_fixes(L(lay), d.data["ebytes"], d.data["access"])]
        assert mine == engine and mine, lay
