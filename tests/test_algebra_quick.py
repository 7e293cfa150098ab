"""The fast paths (``algebra.core.quick``) and the cache (``algebra.core.memo``) change no answer and no refusal.

Every op with a fast path is run twice on the same inputs: as an ordinary call (fast path, cache) and with a muted
recorder active, which runs the general code (the code ``explain`` records). The answers, or the refusal messages,
must be the same strings, and a second ordinary call (from the cache) must give them again.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import algebra as A
from algebra.core import checks, memo, quick
from algebra.core.notation import show
from algebra.core.recorder import recording

sys.path.insert(0, str(Path(__file__).resolve().parent / "oracle"))
import cute_cases as cc  # noqa: E402
import test_cute_corpus as corpus  # noqa: E402

FAST_OPS = sorted(name[2:] for name in dir(quick) if name.startswith("q_"))


def _answer(fn, args) -> str:
    try:
        return str(fn(*args))
    except A.LayoutError as e:
        return f"refused: {e}"


def _general(fn, args) -> str:
    """The general code's answer; a result with a shape <= 0 refused as the op asked for by itself refuses it."""
    with recording() as rec:
        rec.muted += 1
        try:
            res = fn(*args)
        except A.LayoutError as e:
            return f"refused: {e}"
    err = checks.not_a_layout(f"{fn.__name__}({', '.join(show(a) for a in args)})", res)
    return str(res) if err is None else f"refused: {err}"


def _check(records: list[dict]) -> int:
    n = 0
    for rec in records:
        fn = getattr(A, rec["op"])
        args = [cc.to_py(a) for a in rec["args"]]
        want = _general(fn, args)
        assert _answer(fn, args) == want, (rec["op"], rec["args"])
        assert _answer(fn, args) == want, ("from the cache", rec["op"], rec["args"])
        n += 1
    return n


def test_the_fast_paths_cover_the_corpus_ops():
    assert set(FAST_OPS) >= {"composition", "complement", "coalesce", "logical_divide", "zipped_divide",
                             "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product"}


@pytest.mark.parametrize("part", range(4))
def test_fast_paths_and_cache_give_the_general_answers_on_the_corpus(part):
    records = [r for r in corpus.CORPUS if r["op"] in FAST_OPS][part::16]  # a quarter of the corpus in all
    assert _check(records) > 600


def test_fast_paths_and_cache_give_the_general_answers_on_fresh_cases():
    records = cc.gen_cases(seed=2311, n=1200, ops=[op for op in FAST_OPS if op in cc.OPS], neg=0.1, deep=0.2)
    assert _check(records) == 1200


def test_a_refusal_is_kept_and_raised_again():
    a, b = A.parse("(6,2):(8,2)"), A.parse("4:4")
    memo.clear_caches()
    msgs = []
    for _ in range(3):
        with pytest.raises(A.LayoutError) as e:
            A.composition(a, b)
        msgs.append(str(e.value))
    assert len(set(msgs)) == 1 and "CuTe would print (2,2):(32,2)" in msgs[0]
    info = A.composition.cache_info()
    assert info.hits >= 2 and info.currsize >= 1


def test_deep_layouts_are_kept_and_big_ones_are_not():
    memo.clear_caches()
    deep = A.parse("((((2,2),2),2),2):((((1,2),4),8),16)")  # depth 4, 5 leaves: kept
    A.coalesce(deep)
    A.coalesce(deep)
    assert A.coalesce.cache_info().hits == 1
    big = A.Layout(tuple([1] * 65))  # 65 leaves: over the 64 a cache entry may hold
    assert str(A.coalesce(big)) == "1:0"
    assert A.coalesce.cache_info().currsize == 1


def test_the_check_enumerates_only_the_points_inside_a():
    # 2^18 coordinates of B, two of which land inside A (size 4): checked exactly, CuTe's answer stands
    a, b = A.parse("(4,1):(0,4)"), A.parse("(4,(2,256),128):(1024,(12,12288),3)")
    assert str(A.composition(a, b)) == "(4,(2,256),(2,64)):(1024,(12,12288),(0,4))"


def _brute(a, b, r):
    size_a = A.size(a)
    for i in range(A.size(b)):
        x = b(i)
        if 0 <= x < size_a and a(x) != r(i):
            return i, x, a(x), r(i)
    return None


def test_the_pruned_enumeration_finds_the_smallest_counterexample():
    """``relevant_counterexample`` against every coordinate of B, on what CuTe prints (checks off), also where
    B's strides are negative (a partial sum below 0 can come back into A)."""
    rng = random.Random(7)
    seen = {"hit": 0, "none": 0}
    for _ in range(400):
        ra, rb = rng.choice([2, 3]), rng.choice([1, 2, 3])
        a = A.Layout(tuple(rng.choice([2, 3, 4, 6]) for _ in range(ra)),
                     tuple(rng.choice([1, 2, 3, 8, 12]) for _ in range(ra)))
        b = A.Layout(tuple(rng.choice([1, 2, 3, 4]) for _ in range(rb)),  # negative strides too
                     tuple(rng.choice([0, 1, 2, 3, 4, 6, -1, -3]) for _ in range(rb)))
        r = checks.cute_would_print(A.composition, a, b)
        if r is None:
            continue
        got = checks.relevant_counterexample(a, b, r)
        assert got == _brute(a, b, r), (str(a), str(b), str(r))
        seen["hit" if got else "none"] += 1
    assert seen["hit"] > 20 and seen["none"] > 100, seen


def test_only_plain_layouts_take_the_fast_paths():
    """Non-negative int strides, any nesting: the flat modes; a negative or a basis stride: the general code."""
    assert quick.flat_plain((2, (2, 4)), (1, (2, 4))) == ((2, 2, 4), (1, 2, 4))
    assert quick.flat_plain(8, 0) == ((8,), (0,))
    assert quick.flat_plain((2, (2, 4)), (1, (-2, 4))) is None
    ident = A.make_identity_layout((4, 8))  # strides 1@0, 1@1
    assert quick.flat_plain(ident.shape, ident.stride) is None
    assert quick.q_logical_divide(ident, A.Layout(2)) is None
    assert quick.q_complement(A.parse("(3):(-1)"), 2) is None
