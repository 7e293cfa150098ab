"""Fresh drills against keys and verdicts computed here by brute force, without the generators' code paths: a bank
model of its own (32 banks of 4 bytes, phases by access width) for the fix drills, where any working swizzle or
padding is right and every other one wrong; and answers written in the forms the formats name (a (row,col) pair
bare or labelled)."""

from __future__ import annotations

import random
import re
from collections import defaultdict

import pytest

from app.drills.core import generate

SEEDS = random.Random(8400).sample(range(10**6, 2**31 - 1), 400)


def _swizzle(b: int, m: int, s: int, x: int) -> int:
    return x ^ ((x & (((1 << b) - 1) << (m + s))) >> s)


def _cost(lanes: list[list[int]], per_phase: int) -> int:
    """The worst phase's count of distinct 4-byte words in one bank; ``lanes`` holds each lane's words."""
    worst = 1
    for p in range(0, len(lanes), per_phase):
        banks: dict[int, set[int]] = defaultdict(set)
        for words in lanes[p:p + per_phase]:
            for w in words:
                banks[w % 32].add(w)
        worst = max([worst] + [len(v) for v in banks.values()])
    return worst


def _conflict_free(d, pitch: int, sw: tuple[int, int, int] | None) -> bool | None:
    """The fix drill's access on a (rows, cols) row-major tile of pitch ``pitch``, through ``sw``: True when
    conflict-free, False when not, None when the choice is not legal (a swizzle that moves offsets out of the tile or
    splits a 16-byte row)."""
    rows, cols = (int(x) for x in re.match(r"\((\d+),(\d+)\)", d.data["layout"]).groups())
    if sw and {_swizzle(*sw, o) for o in range(rows * cols)} != set(range(rows * cols)):
        return None
    f = (lambda o: _swizzle(*sw, o)) if sw else (lambda o: o)
    access = d.data.get("access", {})
    if access.get("kind") == "ldmatrix":
        lanes = []
        for i in range(8):
            o = pitch * i + access["col"]
            if any(f(o + k) != f(o) + k for k in range(8)) or f(o) * 2 % 16:
                return None
            lanes.append([f(o) * 2 // 4 + k for k in range(4)])
        return _cost(lanes, 8) == 1
    eb = d.data["ebytes"]
    lanes = [sorted({(f(pitch * i + d.data["col"]) * eb + k) // 4 for k in range(eb)}) for i in range(32)]
    return _cost(lanes, 32 if eb <= 4 else 128 // eb) == 1


def test_fix_drills_take_exactly_the_choices_that_work() -> None:
    """Every Sw<B,M,S> that keeps the tile and removes the conflict is right (also one whose mask reaches past the
    tile's bits, e.g. Sw<4,3,4> on 1024 elements: on the tile it is Sw<3,3,4>); every other one, and every padding
    that leaves a conflict, is wrong."""
    found: dict[str, list] = {"fix": [], "ldmatrix_fix": []}
    for s in SEEDS:
        d = generate("banks", s)
        if d.variant in found and len(found[d.variant]) < 4:
            found[d.variant].append(d)
    fixes = found["fix"] + found["ldmatrix_fix"]
    assert len(fixes) == 8
    right = wrong = 0
    for d in fixes:
        cols = int(re.match(r"\(\d+,(\d+)\)", d.data["layout"]).group(1))
        choices = [(f"Sw<{b},{m},{s}>", (b, m, s), cols) for b in (1, 2, 3, 4, 5) for m in (0, 1, 2, 3)
                   for s in range(b, b + 3)]
        choices += [(f"pad {p}", None, cols + p) for p in range(0, 12)]
        for text, sw, pitch in choices:
            works = _conflict_free(d, pitch, sw)
            g = d.grade(text)
            assert g.readable, (d.id, text, g.reason)
            assert g.correct == bool(works), (d.id, d.prompt, text, g.reason)
            right += g.correct
            wrong += not g.correct
    assert right >= 20 and wrong >= 200, (right, wrong)


def test_a_register_is_read_as_every_other_pair_is() -> None:
    """mma_registers' one-register question reads (row, col) as the other pair questions do: ``(r,c)``, ``r, c``,
    ``row r, col c``; the pair swapped or moved is wrong, and two pairs are not one."""
    drills = [d for d in (generate("mma_registers", s) for s in SEEDS[:80]) if d.variant == "register"][:6]
    assert drills
    for d in drills:
        r, c = (int(x) for x in re.findall(r"\d+", d.expected))
        for text in (f"({r},{c})", f"{r}, {c}", f"{r},{c}", f"row {r}, col {c}", f"col {c}, row {r}"):
            assert d.grade(text).correct, (d.id, text)
        for text in (f"({r},{c + 1})", f"({r + 1},{c})"):
            g = d.grade(text)
            assert g.readable and not g.correct, (d.id, text)
        assert not d.grade(f"({r},{c}) ({r},{c})").readable


def test_a_layout_answer_may_close_like_a_sentence_or_a_statement() -> None:
    """A typed layout read with a closing ``.`` or ``;``, in backticks, or as a C++ ``auto L = ...;`` statement
    (readable, so graded: the key right, a near miss wrong)."""
    seen = set()
    for kind in ("algebra_op", "transpose_view", "tiled_view", "vector", "design_view"):
        d = next(d for d in (generate(kind, s) for s in SEEDS) if re.fullmatch(r"[\d(),:]+", d.expected))
        key = d.expected
        for text in (f"{key}.", f"{key};", f"`{key}`", f"auto L = {key};"):
            assert d.grade(text).correct, (d.id, text)
        last = re.search(r"(\d+)\)*$", key)
        near = key[:last.start(1)] + str(int(last.group(1)) + 1) + key[last.end(1):]
        g = d.grade(f"{near};")
        assert g.readable and not g.correct, (d.id, near)
        seen.add(kind)
    assert len(seen) == 5


def test_numbers_and_swizzles_may_close_like_a_sentence() -> None:
    """A closing full stop after the last number, pair or swizzle is read (a decimal point is still refused)."""
    for kind, variant in (("layout_stats", None), ("offsets", "coords"), ("partition", None), ("arith", "basis"),
                          ("banks", "fix"), ("natural_coord", "idx")):
        d = next(d for d in (generate(kind, s) for s in SEEDS)
                 if variant is None or d.variant.split("/")[0] == variant)
        assert d.grade(f"{d.expected}.").correct, (d.id, d.expected)
        last = re.search(r"(\d+)\D*$", d.expected)
        near = d.expected[:last.start(1)] + str(int(last.group(1)) + 1) + d.expected[last.end(1):]
        g = d.grade(f"{near}.")
        assert g.readable and not g.correct, (d.id, near)
    d = next(d for d in (generate("offsets", s) for s in SEEDS) if d.variant == "coords")
    assert not d.grade(d.expected.replace(",", ".", 1)).readable  # "10. 0" is not two numbers


def _flat(x):
    return [v for y in x for v in _flat(y)] if isinstance(x, tuple) else [x]


def _nested(text: str):
    return eval(text.replace("_", ""), {"__builtins__": {}})  # CuTe notation of an int tuple is a Python literal


def _layout(text: str):
    """shape:stride of CuTe notation as flat lists, A(i) evaluated here: colexicographic split of i, the last mode
    taking what is left (A as written, extended past its size)."""
    shape, stride = (_flat(_nested(p)) if "(" in p else [int(p)] for p in text.split(":"))

    def at(i: int) -> int:
        out = 0
        for k, (s, d) in enumerate(zip(shape, stride, strict=True)):
            c, i = (i, 0) if k == len(shape) - 1 else (i % s, i // s)
            out += c * d
        return out

    return at, shape, stride


def _complement_one(n: int, d: int, m: int) -> tuple[list[int], list[int]]:
    """complement(n:d, m) for one mode n:d, d > 0: the gaps below d, then the copies past n*d."""
    shape, stride = ([d], [1]) if d > 1 else ([], [])
    return shape + [-(-m // (n * d))], stride + [n * d]


def test_divide_and_composition_keys_hold_for_a_as_written() -> None:
    """Fresh algebra_op drills: composition keys are A(B(i)) at every i, divide keys A((B, B*)(i, j)) at every
    (i, j), with A evaluated here as written, also where B reaches past size(A); a case where CuTe's coalesced A
    extends differently (A = (4,1):(8,1), B = 3:1) is never drawn (algebra_cases.as_written)."""
    import algebra as A
    from app.drills import algebra_cases as K

    a, b = A.parse("(4,1):(8,1)"), A.parse("3:1")
    assert str(A.logical_divide(a, b)) == "(3,2):(8,24)" and not K.as_written("logical_divide", [a, b],
                                                                             A.logical_divide(a, b))
    checked = 0
    for s in [1595530403, 331844015] + SEEDS[:300]:  # the first two drew such a case before
        d = generate("algebra_op", s)
        op, args = d.data["op"], d.data["args"]
        if op == "composition" and isinstance(args[1], str):
            fa, fb, key = _layout(args[0])[0], _layout(args[1])[0], _layout(d.expected)
            n = 1
            for x in key[1]:
                n *= x
            assert all(key[0](i) == fa(fb(i)) for i in range(n)), d.id
        elif op == "logical_divide" and isinstance(args[1], str) and ":" in args[1]:
            fa, sa, _ = _layout(args[0])
            _, (bn,), (bd,) = _layout(args[1])
            if bd == 0:
                continue
            size_a = 1
            for x in sa:
                size_a *= x
            cs, cd = _complement_one(bn, bd, size_a)
            tile = _layout(f"({','.join(map(str, [bn] + cs))}):({','.join(map(str, [bd] + cd))})")[0]
            want = [[fa(tile(i + bn * j)) for j in range(_prod(cs))] for i in range(bn)]
            if d.variant == "divide_tile":
                k = d.data["tile"]
                assert [int(x) for x in d.expected.split(",")] == [want[i][k] for i in range(bn)], d.id
            else:
                key = _layout(d.expected)[0]
                assert all(key(i + bn * j) == want[i][j] for i in range(bn) for j in range(_prod(cs))), d.id
        else:
            continue
        checked += 1
    assert checked >= 40, checked


def _prod(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def test_fresh_drills_of_every_kind_grade_through_the_route_function() -> None:
    """tests/drill_hunt.py on seed 9400: every kind's key, its other spellings and the answers recomputed there are
    right, the near misses wrong, graded by service.grade_answer; seeds 9400-9599 run behind the oracle marker."""
    import drill_hunt

    got = drill_hunt.hunt(9400, 1)
    assert got["drills"] == 25 and got["recomputed"] >= 10, got
    assert got["wrong accepted"] == got["right refused"] == 0, got


@pytest.mark.oracle
@pytest.mark.parametrize("seed", range(9400, 9600))
def test_fresh_drills_hunt(seed: int) -> None:
    import drill_hunt

    got = drill_hunt.hunt(seed, 2)
    assert got["wrong accepted"] == got["right refused"] == 0, got


def test_mma_registers_follows_a_lane_of_the_tiled_mma() -> None:
    """The thread of an mma_registers drill is a lane CuTe's ``get_slice`` reads (``thr_layout_vmnk``'s offsets), as
    /api/partition takes it: SM70's quad-pairs are lanes 0-3 and 16-19, and ``get_slice(4)`` would read lane 0's
    coordinate: seed 13485 asked for "thread 5" of SM70_8x8x4_F32F16F16F32_TN (1,1,1) (8 threads) and keyed lane 1's
    elements (1,0) (1,1) (3,0) ...; seed 13460 thread 8 of SM70 (2,1,1). The prompt names the lanes where they are
    not 0..n-1."""
    import algebra as A
    from algebra import atoms

    seen = 0
    for seed in range(13450, 13500):
        d = generate("mma_registers", seed)
        if not d.data["atom"].startswith("SM70"):
            continue
        tm = atoms.make_tiled_mma(d.data["atom"], A.Layout(tuple(d.data["atom_layout"])))
        lanes = sorted(set(A.offsets(tm.thr_layout_vmnk)))
        assert d.data["thread"] in lanes, (d.id, d.data)
        assert "lanes 0-3, 16-19" in d.prompt or "lanes 0-7, 16-23" in d.prompt, d.prompt
        seen += 1
    assert seen >= 5
