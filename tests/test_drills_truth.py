"""The drills never teach a wrong answer: their algebra keys are what CuTe C++ prints (a pinned corpus), their prompts
name the CuTe they grade (compile-time versus run-time ints), give nothing away, and come with fresh numbers; keys
that no other test recomputes (sectors, bank counts) are recomputed here from first principles."""

from __future__ import annotations

import re
from collections import defaultdict
from fractions import Fraction
from typing import Any

import pytest
from drill_cute_cases import DYNAMIC, MMA_TV, PARTITION, STATIC, TILED_COPY

import algebra as A
from algebra import atoms
from app.drills import algebra_cases as K
from app.drills.common import static_spelling
from app.drills.core import generate, kinds
from app.drills.gen_defined import classify
from app.drills.gen_tv import percent

KINDS = [k.kind for k in kinds()]


def arg(a: Any) -> Any:
    if isinstance(a, int):
        return a
    if isinstance(a, list):
        return tuple(A.parse(t) for t in a)
    return A.parse(a)


def test_algebra_keys_are_what_cute_prints() -> None:
    seen: dict[str, int] = defaultdict(int)
    for tag, op, raw, cute in STATIC:
        kind, variant = tag.split(":")[:2]
        args = [arg(a) for a in raw]
        where = f"{tag} {op}{tuple(raw)}: CuTe prints {cute}"
        if kind == "algebra_op" and variant != "divide_tile":
            want = K.truth(op, args)
            assert want is not None and str(want) == cute, where
        elif variant == "divide_tile":
            assert str(A.logical_divide(*args)) == cute, where
        elif (kind, variant) == ("defined", "composition"):
            verdict, printed, _ = classify(*args)
            assert (verdict == "shape") == (cute == "refused"), where  # only the shape condition is a static_assert
            if verdict in ("stride", "defined"):
                assert str(printed) == cute, where
        elif (kind, variant) == ("defined", "complement"):
            try:
                got = str(A.complement(*args))
            except A.LayoutError:
                got = "refused"
            assert got == cute, where
        elif variant == "coalesce_static":
            assert str(A.coalesce(*args)) == cute, where
        else:
            assert variant == "max_common_vector", tag
            assert A.max_common_vector(*args) == int(cute), where
        seen[tag] += 1
    assert len(seen) >= 20 and min(seen.values()) >= 10, dict(seen)


def test_run_time_ints_are_another_answer_so_prompts_say_compile_time() -> None:
    """With run-time ints CuTe only flattens (coalesce) and checks nothing (composition); the drills' keys are the
    compile-time answers, so the ``defined`` prompts spell A and B as _N layouts and say so."""
    for op, raw, static, dynamic in DYNAMIC:
        args = [A.parse(a) for a in raw]
        if op == "coalesce":
            lay = args[0]
            assert str(A.Layout(A.flatten(lay.shape), A.flatten(lay.stride))) == dynamic
            assert str(A.coalesce(lay)) != dynamic
        else:
            verdict, printed, _ = classify(*args)
            assert static == ("refused" if verdict == "shape" else str(printed)) and static != dynamic, raw
    for seed in range(80):
        d = generate("defined", seed)
        assert "compile-time _N" in d.prompt, d.prompt
        assert all(static_spelling(a if isinstance(a, str) else str(a)) in d.prompt for a in d.data["args"]), d.prompt
        v = generate("vector", seed)
        if v.variant.startswith("coalesce"):
            assert ("compile-time (_N)" in v.prompt) == (v.variant == "coalesce_static"), v.prompt


def test_tv_layouts_are_cutes() -> None:
    """The TV layouts the tv_layout drills read (MMA fragments, ldmatrix destinations, make_tiled_copy) are CuTe's."""
    for name, operand, cute in MMA_TV:
        atom = atoms.get(name)
        assert str(atom.dst if operand == "Dst" else getattr(atom, operand)) == cute, (name, operand)
    for name, bits, thr, val, tv, tiler in TILED_COPY:
        tc = atoms.make_tiled_copy(name, thr_layout=A.parse(thr), val_layout=A.parse(val), element_bits=bits)
        assert (str(tc.tv_layout), "(" + ",".join(map(str, tc.tiler)) + ")") == (tv, tiler), (name, thr, val)
    used = {generate("tv_layout", s).data.get("atom") for s in range(120)} - {None}
    pinned = {n for n, _, _ in MMA_TV} | {n for n, *_ in TILED_COPY}
    assert {u for u in used if not u.startswith("SM90_64x")} <= pinned, used - pinned  # GMMA: a few N pinned


def test_partition_keys_are_cutes() -> None:
    """local_tile / local_partition as CuTe C++ returns them (a counting tensor over the layout), value order too:
    the partition drill's key for the same arguments."""
    from drill_keys import partition

    class Given:
        def __init__(self, op: str, args: list) -> None:
            self.variant, self.data = op, {"op": op, "args": args}

    for op, args, cute in PARTITION:
        assert partition(Given(op, args)) == ", ".join(map(str, cute)), (op, args)
    seen = set()
    for seed in range(40):
        d = generate("partition", seed)
        seen.add(d.variant)
        assert d.expected == partition(d), d.prompt
    assert seen == {op for op, _, _ in PARTITION} == {"local_tile", "local_partition"}


TOKEN = re.compile(r"[0-9(),:@_]+")


@pytest.mark.parametrize("kind", KINDS)
def test_no_prompt_shows_its_own_key(kind: str) -> None:
    """A layout or tuple key never appears as a whole layout / tuple in its prompt (B = the identity, an A that is
    already coalesced, a flat L with run-time ints, a square row-major A that is its own transposing B, (0,0))."""
    for seed in range(150):
        d = generate(kind, seed)
        key = d.expected.split(", ")[-1] if kind == "defined" else d.expected
        if "(" not in key and ":" not in key:
            continue
        shown = {t.strip(",:").replace("_", "") for t in TOKEN.findall(d.prompt)}
        assert key.replace("_", "") not in shown, f"{kind}-{seed}: {d.prompt} -> {d.expected}"


@pytest.mark.parametrize("kind", KINDS)
def test_fresh_numbers(kind: str) -> None:
    prompts = {generate(kind, s).prompt for s in range(100)}
    assert len(prompts) >= 70, f"{kind}: {len(prompts)} distinct prompts in 100 seeds"


def test_sector_keys_from_byte_addresses() -> None:
    """Sectors and utilization recomputed from the TV layout's byte addresses (not the coalescing model)."""
    for seed in range(150):
        d = generate("sectors", seed)
        tv, vec = A.parse(d.data["tv"]), d.data["vector"]
        m = re.search(r"A (\d+)x(\d+) (fp32|fp16|fp64|int8) tile \((\d+)-byte elements\)", d.prompt)
        rows, cols, eb = int(m[1]), int(m[2]), int(m[4])
        assert eb == {"fp32": 4, "fp16": 2, "fp64": 8, "int8": 1}[m[3]] == d.data["element_bytes"], d.prompt
        assert A.size(tv[0]) >= 32, d.prompt  # the prompt speaks of a full warp
        addrs = set()
        for t in range(32):
            offs = [tv((t, v)) if d.data["memory"] is None else (tv((t, v)) % rows) * cols + tv((t, v)) // rows
                    for v in range(vec)]
            # one vector access: the values are consecutive in memory and naturally aligned
            assert offs == list(range(offs[0], offs[0] + vec)) and offs[0] % vec == 0, d.prompt
            addrs.update(eb * o for o in offs)
        sectors = {a // 32 for a in addrs}
        util = Fraction(100 * eb * len(addrs), 32 * len(sectors))
        assert d.expected == f"{len(sectors)}, {percent(util)}", d.prompt
        shown = Fraction(d.expected.split(", ")[1][:-1])
        exact = (util * 1000).denominator == 1  # 6.25%, 3.125% are shown exactly; 100/3 % as 33.3%
        assert shown == util if exact else abs(shown - util) < Fraction(1, 20), d.prompt


def test_bank_keys_from_offsets() -> None:
    """Banks, N-way, distinct banks and the bank formula of a column read, from the offsets (4-byte words)."""
    n = defaultdict(int)
    for seed in range(200):
        d = generate("banks", seed)
        if d.variant not in ("banks", "ways", "distinct", "formula", "swizzled"):
            continue
        lay, col = A.parse(d.data["layout"]), d.data["col"]
        offs = [lay((i, col)) for i in range(32)]
        if d.variant == "swizzled":
            b, m, s = d.data["swizzle"]
            offs = [o ^ (((o >> (m + s)) & ((1 << b) - 1)) << m) for o in offs]
        banks = [o % 32 for o in offs]
        if d.variant in ("banks", "swizzled"):
            want = ", ".join(str(banks[t]) for t in d.data["lanes"])
        elif d.variant == "ways":
            want = str(max(len({o for o in offs if o % 32 == b}) for b in set(banks)))
        elif d.variant == "distinct":
            want = str(len(set(banks)))
        else:
            a, c = (int(x) for x in re.fullmatch(r"\((\d+)\*r(?: \+ (\d+))?\) mod 32", d.expected).groups("0"))
            want = d.expected if all((a * r + c) % 32 == banks[r] for r in range(32)) else "a wrong formula"
        assert d.expected == want, d.prompt
        n[d.variant] += 1
    assert min(n.values()) >= 5, dict(n)


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("explain", "majorness", "defined")])
def test_the_second_hint_is_a_step_not_the_key(kind: str) -> None:
    for seed in range(100):
        d = generate(kind, seed)
        if len(d.expected) >= 6:
            assert d.expected not in d.hint(2)["text"], f"{kind}-{seed}: {d.hint(2)['text']}"


def test_no_inverse_of_a_layout_that_is_its_own_inverse() -> None:
    n = 0
    for seed in range(400):
        d = generate("algebra_op", seed)
        if d.variant.endswith("_inverse"):
            lay = A.parse(d.data["args"][0])
            assert d.expected not in (str(lay), str(A.coalesce(lay))), d.prompt
            n += 1
    assert n >= 20


def test_cosize_step_says_what_cute_computes() -> None:
    """cosize is CuTe's L(size - 1) + 1; with strides >= 0 that is the largest offset + 1, reached at the end."""
    for seed in range(60):
        d = generate("layout_stats", seed)
        lay = A.parse(d.data["layout"])
        last = A.size(lay) - 1
        assert A.cosize(lay) == lay(last) + 1 == max(lay(i) for i in range(A.size(lay))) + 1
        assert any(f"L({last}) = {lay(last)}" in s["text"] and "not necessarily" not in s["text"] for s in d.steps)


def test_spoken_choices_are_read_and_contradictions_are_not() -> None:
    d = next(generate("majorness", s) for s in range(50) if generate("majorness", s).expected == "row")
    for said in ("it's row-major", "Answer: row", "row-major (LayoutRight)", "row (mode 1 has stride 1)"):
        assert d.grade(said).correct, said
    for said in ("row-major (LayoutLeft)", "row-major (neither)"):
        g = d.grade(said)
        assert not g.correct and not g.readable, said
    e = next(generate("defined", s) for s in range(50) if generate("defined", s).expected == "defined")
    assert e.grade("It's defined").correct


def test_a_designed_b_of_the_wrong_size_is_refused_before_composing() -> None:
    """A o B has B's size: a B (or tiler) of another size is wrong whatever it is, and is not composed (a 40-mode B
    of size 2^40 would make the algebra's never-wrong check walk it)."""
    huge = "(" + ",".join(["2"] * 40) + "):(" + ",".join(["1"] * 40) + ")"
    for seed in range(20):
        d = generate("design_view", seed)
        for ans in (huge, "<" + ", ".join([huge, huge]) + ">"):
            g = d.grade(ans)
            assert g.readable and not g.correct and "as many elements as B" in g.reason, g.reason
        assert d.grade(d.expected).correct


def test_spot_questions_ask_for_different_moved_things() -> None:
    """Swizzle questions mostly ask for values the swizzle moves (else the answer repeats the question); spot checks
    of a tiled view ask for two different elements, not the origin."""
    for seed in range(150):
        d = generate("swizzle", seed)
        if d.variant == "apply":
            sw = A.Swizzle(*d.data["swizzle"])
            assert sum(sw(x) != x for x in d.data["xs"]) >= 2, d.prompt
        elif d.variant == "composed":
            tile = A.parse(d.data["layout"].split(" o ")[-1])
            got = [int(v) for v in d.expected.split(", ")]
            coords = [tuple(c) for c in d.data["coords"]]
            assert len(set(coords)) == 3 and sum(tile(c) != g for c, g in zip(coords, got, strict=True)) >= 2
        t = generate("tiled_view", seed)
        if t.variant == "spot":
            picks = [(tuple(e), tuple(w)) for e, w in t.data["picks"]]
            assert len(set(picks)) == 2 and ((0, 0), (0, 0)) not in picks, t.prompt


def test_formulas_are_capped_in_operations_not_just_characters() -> None:
    """Grading evaluates a formula at every coordinate (and a dozen bindings of the symbols): a 480-character formula
    of 160 operations is refused by name, while every key and a padded key within the cap is read."""
    from app.drills.formula import MAX_OPERATIONS

    for kind in ("index_formula", "symbolic", "tiled_view"):
        for seed in range(40):
            d = generate(kind, seed)
            if not ("formula" in d.variant or d.variant.startswith("element")):
                continue
            var = re.findall(r"[A-Za-z]\w*", d.expected)[0]
            assert d.grade(d.expected + f" + 0*{var}" * 8).correct, d.expected
            g = d.grade(d.expected + "+0" * MAX_OPERATIONS)
            assert not g.readable and f"at most {MAX_OPERATIONS}" in g.reason, g.reason


def test_coordinate_ranges_are_capped_in_total() -> None:
    """``(0..63,0..63)`` expands to 4096 pairs; hundreds of such ranges in one answer are refused by name, not
    expanded (a million pairs)."""
    from app.drills.parsing import MAX_PAIRS, parse_pairs

    assert len(parse_pairs("(0..63,0..63)")) == MAX_PAIRS
    d = next(generate("tv_layout", s) for s in range(100) if generate("tv_layout", s).variant == "copy")
    for ans in ("(0..63,0..63) " * 280, "(0..4095,0) " * 300, "(0..63,0..63) (0,0)"):
        g = d.grade(ans)
        assert not g.readable and f"more than {MAX_PAIRS} cells" in g.reason, g.reason
    assert d.grade(d.expected).correct
