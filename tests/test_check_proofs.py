"""The checks that prove instead of enumerating give the answers and refusal texts that every point gives: the
swizzled-tiler product checked at its unit indices (F2-linear sides), the inverses proven mode by mode
(``checks._inverts``), the complement's hole found mode by mode. Each is compared with the point-by-point check (the
proof switched off) or with a brute-force count on random inputs."""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra.core import checks, products
from algebra.core.inttuple import flatten
from algebra.core.memo import clear_caches

_KEPT_AT = products._kept_at


def _layout(rng: random.Random, pow2: bool) -> str:
    n = rng.randint(1, 3)
    sh = [rng.choice([1, 2, 4, 8] if pow2 else [1, 2, 3, 4, 6, 8]) for _ in range(n)]
    st = [rng.choice([0, 1, 2, 4, 8, 16, 64, 128] if pow2 else [0, 1, 2, 3, 4, 6, 12, -1]) for _ in range(n)]
    if rng.random() < 0.6:  # compact in a random order, some gaps
        cur, order = 1, rng.sample(range(n), n)
        for k in order:
            st[k] = cur * rng.choice([1, 1, 2])
            cur = st[k] * sh[k]
    return f"({','.join(map(str, sh))}):({','.join(map(str, st))})"


def _answers(calls: list) -> list[str]:
    out = []
    for op, args in calls:
        clear_caches()
        try:
            out.append(str(getattr(A, op)(*map(A.parse, args))))
        except A.LayoutError as err:
            out.append(f"refused: {err}")
    return out


def test_a_swizzled_tiler_product_checked_at_the_units_answers_as_every_point(monkeypatch) -> None:
    rng = random.Random(10)
    calls = []
    for _ in range(600):
        b = rng.randint(1, 3)
        m, s = rng.randint(0, 4), rng.choice([b, b + 1, b + 2, -b, -(b + 1)])
        calls.append((rng.choice(["logical_product", "zipped_product", "tiled_product", "flat_product"]),
                      [_layout(rng, rng.random() < 0.9), f"Sw<{b},{m},{s}> o 0 o {_layout(rng, rng.random() < 0.9)}"]))
    calls.append(("logical_product", ["4:2", "Sw<1,9,-3> o 0 o (32,32,1024):(1,32768,32)"]))  # refused at j = 16384
    fast = _answers(calls)
    monkeypatch.setattr(products, "f2_columns", lambda *_: None)  # no proof: every point (the last: 2^22 of them)
    monkeypatch.setattr(checks, "FULL_CAP", 1 << 22)
    assert _answers(calls) == fast
    refused = [a for a in fast if "cannot move to the offsets" in a]
    assert len(refused) >= 20 and "at (0, 16384)" in fast[-1]
    clear_caches()


def test_the_inverses_proven_mode_by_mode_answer_as_every_point(monkeypatch) -> None:
    rng = random.Random(11)
    calls = [(op, [_layout(rng, False)] + ([_layout(rng, False)] if op.startswith("max") else []))
             for op in ["right_inverse", "left_inverse", "max_common_layout", "max_common_vector"] * 300]
    fast = _answers(calls)
    monkeypatch.setattr(checks, "_inverts", lambda *_: False)
    assert _answers(calls) == fast
    clear_caches()


def test_the_inverse_proof_holds_where_it_says_so() -> None:
    rng = random.Random(12)
    proven = 0
    for _ in range(3000):
        outer = A.parse(_layout(rng, False))
        inner = A.right_inverse(outer) if rng.random() < 0.3 else A.parse(_layout(rng, False))
        if checks._inverts(outer, inner):
            proven += 1
            assert all(0 <= inner(i) < A.size(outer) and outer(inner(i)) == i for i in range(A.size(inner)))
    assert proven > 300
    assert checks._inverts(A.parse("(1024,1024):(1024,1)"), A.parse("(1024,1024):(1024,1)"))
    assert not checks._inverts(A.parse("(4,4):(1,2)"), A.parse("16:1"))  # carries: not proven


@pytest.mark.parametrize("seed", [1, 2])
def test_the_complement_hole_is_the_least_sum_missed(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        a, r = A.parse(_layout(rng, False)), A.parse(_layout(rng, False))
        cot = rng.choice([1, 7, 64, 100, 3000])
        modes = [(s, d) for x in (a, r) for s, d in zip(*map(flatten, (x.shape, x.stride)), strict=True)]
        sums = {x + y for x in A.offsets(a) for y in A.offsets(r)}
        assert checks._first_hole(modes, cot) == next((x for x in range(cot) if x not in sums), None)


#: Each check that reads points one by one, on an input no proof settles with more points than the caps below.
OVER_CAP = [("composition", ["(4,4,4):(F1,F4,F16)", "(10,10):(1,10)"], "A o B (F2 strides, 100 points", 64),
            ("composition", ["(384,3):(1,768)", "(128,64,128):(12,1,1)"], "A o B (1,048,576 points", 64),
            ("composition", ["(3,100):(1,3)", "Sw<1,0,1>"], "A o Sw (300 points", 64),
            ("logical_product", ["(2,4):(1,2)", "Sw<3,4,3> o 0 o (32,32,1024):(1,1024,32)"], "(8,388,608 points", 64),
            ("layout_add", ["(10,10):(F1,F16)", "(10,10):(F2,F32)"], "not confirmed here (100 points", 64),
            ("slice_composed", [[None, 3], "Sw<3,4,3> o 8 o (64,64):(2,512)"], "not confirmed here (64 points", 16),
            ("slice_composed", [[None, 1], "Sw<1,0,1> o 1 o (64,4):(F1,F64)"], "not confirmed here (64 points", 16)]
#: The inverses over the cap read a sample of corners and steps, never every point: refused with its counterexample
#: (the least under the cap too), answered where proven (swizzles that cancel), else refused naming the cap.
OVER_CAP_INVERSES = [("left_inverse", "(60,30):(2,1)", "(2,60):(60,1) here; at i = 179, L(179) = 120, R(120) = 60"),
                     ("right_inverse", "Sw<2,0,3> o 5 o (10,10):(1,10)", "100:1 o -5 o Sw<2,0,3>"),
                     ("right_inverse", "Sw<3,3,3> o 0 o (3,16,32):(1,3,48)", "Sw<3,3,3> o 0 o 1536:1"),  # proven
                     ("right_inverse", "Sw<3,3,3> o 0 o (3,17,32):(1,3,51)",
                      "CuTe would print Sw<3,3,3> o 0 o 1632:1 here, not confirmed (1,632 points to check one by one, "
                      "over the 16-point cap)")]
#: Self-checks that loop over something else than points.
NOT_POINTS = {"whole_refusal": "a message", "merge_swizzles": "the bits either swizzle touches",
              "post_complement": "the modes, and bit sets of the sums below a bound that doubles"}


@pytest.mark.parametrize(("op", "args", "names", "cap"), OVER_CAP)
def test_a_check_counts_its_points_before_reading_them(monkeypatch, op: str, args: list, names: str, cap: int) -> None:
    monkeypatch.setattr(checks, "FULL_CAP", 64)
    monkeypatch.setattr(checks, "ENUM_CAP", 16)
    clear_caches()
    fn = products.slice_composed if op == "slice_composed" else getattr(A, op)
    with pytest.raises(A.LayoutError, match="points to check one by one, over the") as e:
        fn(*[A.parse(a) if isinstance(a, str) else tuple(a) for a in args])
    assert names in str(e.value) and f"over the {cap}-point cap)" in str(e.value)
    clear_caches()


@pytest.mark.parametrize(("op", "arg", "said"), OVER_CAP_INVERSES)
def test_an_inverse_over_the_cap_is_not_read(monkeypatch, op: str, arg: str, said: str) -> None:
    monkeypatch.setattr(checks, "FULL_CAP", 16)
    monkeypatch.setattr(checks, "offsets", lambda x: pytest.fail(f"{x} read over the cap"))
    clear_caches()
    assert said in _answers([(op, [arg])])[0]
    clear_caches()


def test_every_check_that_loops_counts_through_capped() -> None:
    """Each post-condition (``checks.POST``) and each op that checks itself (calls ``checking()``) and loops reaches
    ``checks.capped`` through the functions of its module (and those it imports from the core), or loops over
    something else (NOT_POINTS); each is tried
    over the cap above."""
    import ast
    from pathlib import Path

    root = Path(checks.__file__).parent
    defs, checked = {}, set(checks.POST.values()) | set(checks.POST_OUTERMOST.values())
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                calls = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
                loops = any(isinstance(n, (ast.For, ast.comprehension)) for n in ast.walk(node))
                defs[(path.stem, node.name)] = (calls, loops)
    names = {(f.__module__.rsplit(".", 1)[1], f.__name__) for f in checked}
    names |= {k for k, (calls, _) in defs.items() if "checking" in calls}
    def where(mod: str, fn: str) -> tuple[str, str] | None:
        """The function a call names: in its own module, else the one core function of that name (imported)."""
        if (mod, fn) in defs:
            return mod, fn
        others = [k for k in defs if k[1] == fn]
        return others[0] if len(others) == 1 else None

    for mod, name in sorted(names):
        seen, todo, reach, loops = set(), [(mod, name)], False, False
        while todo:
            key = where(*todo.pop())
            if key is None or key in seen:
                continue
            seen.add(key)
            calls, loop = defs[key]
            reach, loops = reach or "capped" in calls, loops or loop
            todo += [(key[0], c) for c in calls if c != "checking"]
        assert reach or not loops or name in NOT_POINTS, f"{mod}.{name} reads points without checks.capped"
    tried = {op for op, *_ in OVER_CAP}
    assert {"composition", "layout_add", "logical_product", "slice_composed"} <= tried


def _slices(rng: random.Random, n: int) -> list:
    """Random slices of swizzled layouts: int or F2 strides, offsets that carry or not, fixed modes anywhere."""
    out = []
    for _ in range(n):
        b = rng.randint(1, 3)
        sw = f"Sw<{b},{rng.randint(0, 4)},{rng.choice([b, b + 1, b + 2, -b, -(b + 1)])}>"
        f2 = rng.random() < 0.25
        lay = A.parse(_layout(rng, rng.random() < 0.9))
        shape, stride = (lay.shape, lay.stride) if type(lay.shape) is tuple else ((lay.shape, 2), (lay.stride, 64))
        if f2:
            stride = tuple(f"F{rng.choice([1, 3, 9, 16, 33])}" if rng.random() < 0.6 else str(abs(d)) for d in stride)
        text = f"({','.join(map(str, shape))}):({','.join(map(str, stride))})"
        c = tuple(None if rng.random() < 0.5 else rng.randrange(s) for s in shape)
        c = c if None in c else (None, *c[1:])
        out.append((c, f"{sw} o {rng.choice([0, 0, 0, 1, 8, 16, 40, 64, 256])} o {text}"))
    return out


def _slice_answers(calls: list) -> list[str]:
    out = []
    for c, x in calls:
        clear_caches()
        try:
            out.append(str(products.slice_composed(c, A.parse(x))))
        except A.LayoutError as err:
            out.append(f"refused: {err}")
    return out


def test_a_swizzled_slice_proven_on_the_bits_answers_as_every_point(monkeypatch) -> None:
    calls = _slices(random.Random(13), 240) + [((None, 1), "Sw<3,2,3> o 8 o (8,32):(32,1)"),  # (2,2,2):(36,56,144)
                                               ((None, 9), "Sw<3,2,3> o 8 o (8,32):(32,1)")]  # CuTe XORs: refused
    proven, real = [], products._slice_proven
    monkeypatch.setattr(products, "_slice_proven", lambda *a: proven.append(real(*a)) or proven[-1])
    fast = _slice_answers(calls)
    monkeypatch.setattr(products, "_slice_proven", lambda *_: False)  # no proof: every point
    monkeypatch.setattr(products, "f2_columns", lambda *_: None)
    assert _slice_answers(calls) == fast
    assert sum(proven) >= 50 and sum(a.startswith("refused") for a in fast) >= 15 and "at j = 4," in fast[-1]
    assert sum("F" in c[1] and not a.startswith("refused") for c, a in zip(calls, fast, strict=True)) >= 20
    clear_caches()


#: Slices proven on the bits: answered over the point cap, their points not read.
PROVEN_SLICES = [((None, 3), "Sw<3,4,3> o 0 o (256,64):(1,256)", "Sw<3,4,3> o 768 o (256):(1)"),
                 ((None, 1), "Sw<2,3,2> o 8 o (64,4):(4,1)", "Sw<2,3,2> o 8 o (64):(4)"),  # 1 below every bit
                 ((None, None, 3, None), "Sw<3,4,3> o 0 o (16,8,8,64):(1,16,128,1024)",
                  "(16,(4,2),64):(1,(-16,64),1024)"),  # decays: y bits fixed, z bits kept
                 ((None, None, 3, None), "Sw<3,4,3> o 0 o (16,8,8,96):(1,16,128,1024)",
                  "(16,(4,2),96):(1,(-16,64),1024)"),  # 96: steps above the swizzle's bits
                 ((None, 1), "Sw<1,0,1> o 0 o (64,4):(F1,F64)", "Sw<1,0,1> o 0 o (64):(F1)")]


@pytest.mark.parametrize(("crd", "arg", "want"), PROVEN_SLICES)
def test_a_proven_slice_is_answered_over_the_cap(monkeypatch, crd: tuple, arg: str, want: str) -> None:
    monkeypatch.setattr(checks, "ENUM_CAP", 16)
    monkeypatch.setattr(products, "_kept_at", lambda c, s, j: _KEPT_AT(c, s, 0) if j == 0 else pytest.fail(f"j = {j}"))
    assert str(products.slice_composed(crd, A.parse(arg))[0]) == want
    clear_caches()
