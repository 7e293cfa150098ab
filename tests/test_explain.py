"""explain(): the seed's worked examples, the step format, refusals, and random agreement with the real ops."""

from __future__ import annotations

import random
import re
import zlib

import pytest

import algebra as A
from algebra import LayoutError, registry
from algebra.core.layout import make_identity_layout
from algebra.core.notation import show
from algebra.teach.explain import explain, explain_ops, format_steps

P = A.parse


def last(op, *args):
    return explain(op, *args)[-1]


def check_format(steps):
    assert steps, "no steps"
    for s in steps:
        assert isinstance(s["text"], str) and s["text"]
        assert s["layout"] is None or isinstance(s["layout"], str)
        assert s["kind"] in ("step", "result", "error")
        assert isinstance(s["depth"], int) and s["depth"] >= 0
        shape_part = (s["layout"] or "").split(" o ")[-1].split(":")[0]
        if s["layout"] is not None and all(int(v) > 0 for v in re.findall(r"-?\d+", shape_part)):
            A.parse(s["layout"])  # CuTe notation (complements of negative strides can have shapes <= 0)
    assert steps[-1]["depth"] == 0


# --------------------------------------------------------------------------------------------- seed 003


@pytest.mark.parametrize(("op", "args", "want"), [
    ("composition", ("(6,2):(8,2)", "(4,3):(3,1)"), "((2,2),3):((24,2),8)"),
    ("composition", ("(4,8):(8,1)", "(8,4):(4,1)"), "(8,4):(1,8)"),
    ("composition", ("(4,8):(8,1)", "(2,8):(2,4)"), "(2,8):(16,1)"),
    ("composition", ("(8,8):(8,1)", "(8,4):(1,16)"), "(8,4):(8,2)"),
    ("complement", ("4:2", 24), "(2,3):(1,8)"),
    ("complement", ("(2,2):(1,6)", 24), "(3,2):(2,12)"),
    ("logical_divide", ("24:1", "4:2"), "(4,(2,3)):(2,(1,8))"),
    ("zipped_divide", ("(16,8):(1,16)", (2, 2)), "((2,2),(8,4)):((1,16),(2,32))"),
    ("zipped_divide", ("(16,8):(1,16)", (16, 2)), "((16,2),(1,4)):((1,16),(0,32))"),
    ("coalesce", ("(2,(1,6)):(1,(6,2))",), "12:1"),
    ("coalesce", ("(4,8):(1,4)",), "32:1"),
    ("coalesce", ("(4,8):(8,1)",), "(4,8):(8,1)"),
])
def test_seed_examples(op, args, want):
    parsed = [P(a) if isinstance(a, str) else a for a in args]
    steps = explain(op, *parsed)
    check_format(steps)
    assert steps[-1]["layout"] == want
    assert str(getattr(A, op)(*parsed)) == want


def test_composition_steps_say_skip_then_take():
    steps = explain("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)"))
    texts = " ".join(s["text"] for s in steps)
    assert "skip 3, then take 4" in texts
    assert "coalesce A" in steps[0]["text"]
    assert any(s["layout"] == "(2,2):(24,2)" for s in steps)
    assert any(s["layout"] == "3:8" for s in steps)


def test_complement_steps_show_sorted_modes_and_gaps():
    steps = explain("complement", P("(2,2):(6,1)"), 24)
    texts = [s["text"] for s in steps]
    assert any(t.startswith("sort the modes by stride: 2:1, 2:6") for t in texts)
    assert any("3 copies of that block, 2 apart, fill [0, 6)" in t for t in texts)
    assert any("ceil(24 / 12) = 2" in t for t in texts)


def test_divide_steps_show_complement_concatenation_composition():
    steps = explain("logical_divide", P("24:1"), P("4:2"))
    top = [s for s in steps if s["depth"] == 0]
    assert top[0]["text"].startswith("B* = complement(B, 24)")
    assert any(s["layout"] == "(2,3):(1,8)" for s in top)
    assert any(s["text"].startswith("concatenate (B, B*)") and s["layout"] == "(4,(2,3)):(2,(1,8))" for s in top)
    assert top[-1]["text"].startswith("compose")


def test_product_steps():
    steps = explain("logical_product", P("(2,2):(1,2)"), P("3:1"))
    top = [s["text"] for s in steps if s["depth"] == 0]
    assert top[0] == "cotarget = size(A) * cosize(B) = 4*3 = 12"
    assert steps[-1]["layout"] == "((2,2),3):((1,2),4)"
    raked = explain("raked_product", P("(2,2):(1,2)"), P("(2,3):(1,2)"))
    assert "rake" in raked[-1]["text"]
    assert raked[-1]["layout"] == str(A.raked_product(P("(2,2):(1,2)"), P("(2,3):(1,2)")))


def test_evaluate_and_coordinates():
    h = P("(4,(2,4)):(2,(1,8))")
    steps = explain("evaluate", h, (1, 5))
    assert steps[-1]["value"] == "19" and steps[-1]["layout"] is None
    assert explain("evaluate", h, 5)[-1]["value"] == "3"
    assert explain("evaluate", P("(3,(2,3)):(3,(12,1))"), 16)[-1]["value"] == "17"
    assert explain("evaluate", P("(3,(2,3)):(3,(12,1))"), (1, (1, 2)))[-1]["value"] == "17"
    assert explain("idx2crd", 7, (3, (2, 3)))[-1]["value"] == "(1,(0,1))"
    assert explain("crd2idx", (1, (0, 1)), (3, (2, 3)))[-1]["value"] == "7"
    sw = P("Sw<3,4,3> o 0 o (8,64):(64,1)")
    steps = explain("evaluate", sw, (1, 0))
    assert steps[-1]["value"] == str(sw((1, 0)))
    ident = make_identity_layout((4, 8))
    assert explain("evaluate", ident, 9)[-1]["value"] == "(1,2)"


def test_partitions_carry_the_offset():
    tile = P("(16,8):(1,16)")
    lt = explain("local_tile", tile, (4, 2), (1, 2))
    real = A.local_tile(tile, (4, 2), (1, 2))
    assert lt[-1]["layout"] == str(real[0]) and lt[-1]["offset"] == real[1]
    lp = explain("local_partition", tile, P("(16,2):(1,16)"), 17)
    real = A.local_partition(tile, P("(16,2):(1,16)"), 17)
    assert lp[-1]["layout"] == str(real[0]) and lp[-1]["offset"] == real[1]


def test_max_common_vector():
    steps = explain("max_common_vector", P("(4,8):(1,4)"), P("32:1"))
    assert steps[-1]["value"] == "32"
    assert explain("max_common_vector", P("(4,8):(8,1)"), P("32:1"))[-1]["value"] == "1"


def test_swizzled_layouts():
    c = P("Sw<3,4,3> o 0 o (8,64):(64,1)")
    steps = explain("logical_divide", c, (P("8:1"), P("8:1")))
    assert steps[-1]["layout"] == str(A.logical_divide(c, (P("8:1"), P("8:1"))))
    assert explain("composition", A.Swizzle(3, 4, 3), P("(8,64):(64,1)"))[-1]["layout"] == \
        "Sw<3,4,3> o 0 o (8,64):(64,1)"


def test_refusal_reraises_with_partial_steps():
    with pytest.raises(LayoutError) as exc:
        explain("composition", P("(6,2):(8,2)"), P("4:2"))
    err = exc.value
    with pytest.raises(LayoutError) as real:
        A.composition(P("(6,2):(8,2)"), P("4:2"))
    assert str(err) == str(real.value)
    assert err.steps[-1]["kind"] == "error" and str(err) in err.steps[-1]["text"]
    assert len(err.steps) > 1
    with pytest.raises(LayoutError, match="unknown op"):
        explain("no_such_op", P("4:1"))
    with pytest.raises(LayoutError):
        explain("complement", P("(2,2):(1,1)"))


def test_text_arguments_are_parsed():
    assert explain("composition", "(6,2):(8,2)", "(4,3):(3,1)")[-1]["layout"] == "((2,2),3):((24,2),8)"
    assert explain("logical_divide", "(8,8):(8,1)", "<4:1, 2:1>")[-1]["layout"] == \
        str(A.logical_divide(P("(8,8):(8,1)"), (P("4:1"), P("2:1"))))
    assert explain("complement", "4:2", "24")[-1]["layout"] == "(2,3):(1,8)"


def test_format_steps_indents():
    text = format_steps(explain("logical_divide", P("24:1"), P("4:2")))
    assert "\n  " in text


# --------------------------------------------------------------------------------------------- random agreement

SIZES = (1, 2, 3, 4, 6, 8)


def rand_shape(rng, depth=2):
    n = rng.choice((1, 1, 2, 2, 3))
    out = []
    for _ in range(n):
        if depth > 0 and rng.random() < 0.25:
            out.append(rand_shape(rng, depth - 1))
        else:
            out.append(rng.choice(SIZES))
    return out[0] if n == 1 else tuple(out)


def rand_layout(rng, compact=False):
    s = rand_shape(rng)
    if compact or rng.random() < 0.4:
        lay = A.Layout(s)
        if rng.random() < 0.5:
            return A.make_layout_row_major(s)
        return lay
    strides = A.inttuple.repeat_like(s, 0)
    flat = [rng.choice((0, 1, 2, 3, 4, 6, 8, 12, 16, 32, -1, -4)) for _ in A.flatten(s)]
    strides = A.inttuple.unflatten(tuple(flat), s)
    return A.Layout(s, strides)


def rand_tiler(rng, layout):
    if rng.random() < 0.5 or not isinstance(layout.shape, tuple):
        return rand_layout(rng)
    modes = []
    for _ in range(rng.randint(1, len(layout.shape))):
        r = rng.random()
        modes.append(None if r < 0.15 else rng.choice((1, 2, 4)) if r < 0.4 else rand_layout(rng))
    return tuple(modes)


def args_for(op, rng):
    a = rand_layout(rng)
    if op in ("coalesce", "filter", "right_inverse", "left_inverse", "filter_zeros", "nullspace"):
        return (a,)
    if op == "tile_unzip":
        tiler = (rng.choice((2, 4)), rng.choice((3, 4, 6)))
        return (A.logical_divide(A.Layout((8, 12)), tiler), tiler)
    if op in ("upcast", "downcast"):
        return (rand_layout(rng, compact=True), rng.choice((1, 2, 4)))
    if op == "recast_layout":
        return (rand_layout(rng, compact=True), rng.choice((8, 16, 32)), rng.choice((8, 16, 32, 64)))
    if op == "complement":
        return (a,) if rng.random() < 0.5 else (a, rng.choice((8, 16, 24, 64, 96)))
    if op in ("composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
              "logical_product", "zipped_product", "tiled_product", "flat_product"):
        return (a, rand_tiler(rng, a))
    if op in ("blocked_product", "raked_product", "max_common_vector", "max_common_layout"):
        return (a, rand_layout(rng))
    if op in ("layout_add", "greatest_common_domain"):  # a layout of the same size (its shape, another order)
        return (a, rng.choice((A.Layout(a.shape), A.make_layout_row_major(a.shape), a, A.Layout(A.size(a), 2))))
    if op == "tile_to_shape":
        return (rand_layout(rng, compact=True), rng.choice(((8, 8), (16, 8), (4, 6, 8), 24, (12, 4))))
    if op == "local_tile":
        return (A.Layout((8, 12)), (rng.choice((2, 4)), rng.choice((3, 4, 6))), (rng.randrange(2), rng.randrange(2)))
    if op == "local_partition":
        thr = rand_layout(rng, compact=True)
        return (A.Layout((8, 12)), thr, rng.randrange(A.size(thr)))
    if op == "evaluate":
        return (a, rng.randrange(A.size(a)))
    if op == "idx2crd":
        s = rand_shape(rng)
        s = s if isinstance(s, tuple) else (s,)
        return (rng.randrange(A.size(s)), s)
    s = rand_shape(rng)
    s = s if isinstance(s, tuple) else (s,)
    return (A.idx2crd(rng.randrange(A.size(s)), s), s)


@pytest.mark.parametrize("op", explain_ops())
def test_random_agreement_with_the_real_op(op):
    real_fn = registry.get(op).fn
    rng = random.Random(zlib.crc32(op.encode()))
    done = refused = 0
    for _ in range(400):
        try:
            args = args_for(op, rng)
        except LayoutError:
            continue
        try:
            real = real_fn(*args)
        except (ZeroDivisionError, IndexError, TypeError):
            continue  # a crash of the op itself is the op's bug, not the explanation's
        except LayoutError as err:
            with pytest.raises(LayoutError) as got:
                explain(op, *args)
            assert str(got.value) == str(err)
            assert got.value.steps[-1]["kind"] == "error"
            refused += 1
            continue
        steps = explain(op, *args)
        check_format(steps)
        end = steps[-1]
        if isinstance(real, tuple) and len(real) == 2 and isinstance(real[0], A.Layout):
            assert end["layout"] == str(real[0]) and end["offset"] == real[1]
        elif isinstance(real, A.Layout | A.ComposedLayout):
            assert end["layout"] == str(real), (op, [str(x) for x in args])
        else:
            assert end["layout"] is None and end["value"] == show(real)
        done += 1
    assert done > 20, (op, done, refused)


def test_no_step_claims_a_coalesce_that_changes_the_function():
    """A step "coalesce A to X" states that X is A: same size, same value at every 1-D coordinate. A composition
    whose A ends in a size-1 mode keeps that mode's stride past size(A) and must say so, not claim a coalesce."""
    steps = explain("composition", P("(4,1):(1,0)"), P("(2,2):(2,1)"))
    assert not any(s["text"].startswith("coalesce A to") for s in steps)
    assert any("past" in s["text"] and s["layout"] == "(4,2):(1,0)" for s in steps)
    rng = random.Random(11)
    for _ in range(300):
        a, b = rand_layout(rng), rand_layout(rng)
        try:
            steps = explain("composition", a, b)
        except LayoutError:
            continue
        for s in steps:
            if s["text"].startswith("coalesce A to"):
                c = A.parse(s["layout"])
                assert A.size(c) == A.size(a) and all(c(i) == a(i) for i in range(A.size(a))), s["text"]


def test_the_steps_are_the_run_that_computed_the_answer():
    """explain runs the op once, with the recorder: a refusal met on the way is the derivation's last step."""
    from algebra.teach.explain import derive

    result, steps = derive("logical_divide", P("(8,8):(8,1)"), (P("4:1"), P("2:1")))
    assert steps[-1]["layout"] == str(result) == str(A.logical_divide(P("(8,8):(8,1)"), (P("4:1"), P("2:1"))))
    with pytest.raises(LayoutError) as exc:
        derive("composition", P("(6,2):(8,2)"), P("4:4"))
    assert exc.value.steps[-1]["kind"] == "error"
    assert any("skip 4, then take 4" in s["text"] for s in exc.value.steps)


def test_concurrent_derivations_do_not_mix_their_steps():
    """The recorder is a context variable: derivations in parallel threads each get exactly their own steps, and an
    ordinary call made meanwhile records nothing."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [("composition", P("(6,2):(8,2)"), P("(4,3):(3,1)")), ("complement", P("(2,2):(1,6)"), 24),
            ("logical_divide", P("24:1"), P("4:2")), ("blocked_product", P("(2,2):(1,2)"), P("(3,4):(1,3)"))] * 8
    alone = [explain(*job) for job in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda job: explain(*job), jobs))
        plain = list(pool.map(lambda job: A.composition(job[1], job[2]) if job[0] == "composition" else None, jobs))
    assert together == alone
    assert all(p is None or str(p) == "((2,2),3):((24,2),8)" for p in plain)
