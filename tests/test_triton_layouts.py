"""``algebra.doctor`` on Triton's layouts without Triton installed: the TTGIR reader (aliases, dumps, older spellings,
errors naming the field), printing back, the conversions' known answers, the CuTe text equal to the offsets at every
element, ldmatrix / stmatrix fits, and the doctor's fix never worse than the layout as given."""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra.doctor import triton_conflicts as C
from algebra.doctor import triton_fix as F
from algebra.doctor import ttgir
from algebra.doctor.triton_layouts import convert, cute_of
from algebra.doctor.triton_shared import offset_table

DUMP = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#smem = #ttg.shared_memory
#ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>"""


def test_reads_a_dump_with_aliases_and_prints_it_back():
    a = ttgir.parse(DUMP)
    assert a.name == "dot_op" and a.fields["parent"].name == "nvidia_mma" and a.fields["kWidth"] == 2
    text = ttgir.format_attr(a)
    assert text.startswith("#ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2")
    assert ttgir.parse(text) == a


@pytest.mark.parametrize("text", [
    "#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [64, 64]}>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 16>",
    "#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>",
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
    "CGALayout = [[0, 1]]}>",
])
def test_round_trip_of_printed_forms(text):
    assert ttgir.format_attr(ttgir.parse(text)) == text


def test_older_dialect_prefix_and_cta_fields():
    old = ("#triton_gpu.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0], CTAsPerCGA = [1, 2], CTASplitNum = [1, 2], CTAOrder = [1, 0]}>")
    new = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
           "CGALayout = [[0, 1]]}>")  # CGALayout counts in CTA tiles
    assert convert(old, [64, 128]).bases() == convert(new, [64, 128]).bases()
    assert convert(new, [64, 128]).bases()["block"] == [[0, 64]]


@pytest.mark.parametrize(("text", "field"), [
    ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>", "blocked.order"),
    ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4], order = [1, 0]}>",
     "blocked.warpsPerCTA"),
    ("#ttg.blocked<{sizePerThread = [1, 8] threadsPerWarp = [4, 8]}>", "blocked.sizePerThread: expected ','"),
    ("#ttg.nvidia_mma<{versionMajor = 1, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>",
     "nvidia_mma.versionMajor"),
    ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 12, 16]}>",
     "nvidia_mma.instrShape"),
    ("#ttg.slice<{dim = 5, parent = #blocked}>", "#blocked is not defined"),
    ("#ttg.linear<{register = [], lane = [[0, 1]], warp = [], block = []}>", "linear.lane"),
    ("#ttg.padded_shared<[32:+3] {order = [1, 0], shape = [64, 64]}>", "padded_shared.padding"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 96, transposed = false, elementBitWidth = 16}>",
     "nvmma_shared.swizzlingByteWidth"),
    ("#ttg.amd_mfma<{versionMajor = 3}>", "AMD"),
    ("#gpu.blocked<{}>", "dialect"),
    ("#ttg.tensor_memory<{}>", "not a layout attribute"),
    ("", "expected TTGIR text"),
])
def test_bad_text_names_the_field(text, field):
    with pytest.raises(A.LayoutError) as err:
        convert(text, [64, 64], 16)
    assert field in str(err.value)


def test_slice_of_a_3d_blocked_layout():
    text = ("#b = #ttg.blocked<{sizePerThread = [1, 1, 2], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 4, 1], "
            "order = [2, 1, 0]}>\n#ttg.slice<{dim = 0, parent = #b}>")
    t = convert(text, [16, 32])
    assert t.bases() == {"register": [[0, 1], [0, 16]], "lane": [[0, 2], [0, 4], [0, 8], [1, 0], [2, 0]],
                         "warp": [[4, 0], [8, 0]], "block": []}


def test_cute_text_equals_the_offsets_of_random_shared_layouts():
    rng = random.Random(3)
    for _ in range(40):
        shape = [1 << rng.randint(3, 6), 1 << rng.randint(3, 6)]
        v, p, m = (1 << rng.randint(0, 3) for _ in range(3))
        order = rng.choice(([1, 0], [0, 1]))
        t = convert(f"#ttg.swizzled_shared<{{vec = {v}, perPhase = {p}, maxPhase = {m}, order = {order}}}>", shape)
        c = cute_of(t)
        if c["cute"] is None:
            assert c["why"]
            continue
        lay, table = A.parse(c["cute"]), offset_table(t.ll, [], shape)
        assert all(lay((r, k)) == table[r * shape[1] + k] for r in range(shape[0]) for k in range(shape[1]))


def test_a_padded_layout_under_a_swizzle_is_refused_as_triton_refuses_it():
    """Triton's verifier: each padded_shared basis moves in one dimension by a power of two."""
    for bases in ("[[0, 1], [0, 2], [1, 2], [2, 0]]", "[[0, 1], [0, 3], [1, 0], [2, 0]]"):
        with pytest.raises(ttgir.TTGIRError, match=r"padded_shared\.offset: basis"):
            convert(f"#ttg.padded_shared<[8:+1] {{offset = {bases}, block = []}}>", [4, 4])


def test_mma_v2_dot_operand_load_uses_ldmatrix_and_transposed_b_uses_trans():
    a = convert(DUMP.replace("opIdx = 1", "opIdx = 0"), [64, 32])
    row = convert("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>", [64, 32], 16)
    p = C.plan(a, row, 16, "load")
    assert p["kind"] == "ldmatrix.x4" and p["wavefronts"] == p["ideal"]
    b = convert(DUMP, [32, 64])
    p = C.plan(b, convert("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>", [32, 64],
                          16), 16, "load")
    assert p["kind"].startswith("ldmatrix.") and p["kind"].endswith(".trans")


def test_the_fix_is_never_worse_than_the_layout_as_given():
    rng = random.Random(5)
    for _ in range(12):
        spt = [1, rng.choice((1, 2, 4, 8))]
        tpw = rng.choice(([4, 8], [8, 4], [32, 1], [1, 32], [2, 16]))
        dist = convert(f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = [2, 2], "
                       f"order = {rng.choice(([1, 0], [0, 1]))}}}>", [64, 64])
        sh = convert(f"#ttg.swizzled_shared<{{vec = {rng.choice((1, 2, 8))}, perPhase = 1, "
                     f"maxPhase = {rng.choice((1, 4))}, order = [1, 0]}}>", [64, 64], 16)
        before = C.plan(dist, sh, 16)["wavefronts"]
        f = F.fix(dist, sh, 16)
        after = C.plan(dist, convert(f["ttgir"], [64, 64], 16), 16)["wavefronts"]
        assert after == f["wavefronts"] <= before and f["wavefronts"] >= f["ideal"]


def test_plan_fast_equals_plan_by_analyze():
    dist = convert("#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], "
                   "order = [0, 1]}>", [128, 64])
    for text in ("#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
                 "#ttg.padded_shared<[64:+2] {order = [1, 0], shape = [128, 64]}>"):
        sh = convert(text, [128, 64], 16)
        slow, fast = C.plan(dist, sh, 16), C.plan(dist, sh, 16, fast=True)
        assert slow["wavefronts"] == fast["wavefronts"] == sum(i["wavefronts"] for i in slow["instructions"])


def test_dot_operands_of_a_cluster_hold_the_whole_k_in_each_cta():
    """A dot operand broadcasts its parent's CTAs along K: a CTA split of K in the parent is no split of the
    operand's K (Triton 3.9's to_linear_layout), for MMA and FMA (blocked) parents alike."""
    mma = ("#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], CGALayout = [[0, 1]], "
           "instrShape = [16, 8]}>\n")
    assert convert(mma + "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>", [256, 8]).bases() == {
        "register": [[0, 1], [0, 2], [8, 0], [0, 0], [64, 0], [128, 0]],
        "lane": [[0, 4], [0, 0], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [16, 0], [32, 0]], "block": [[0, 0]]}
    assert convert(mma + "#ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>", [64, 32]).bases()["block"] == [[0, 16]]
    fma = ("#b = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 8], order = [1, 0], "
           "CGALayout = [[0, 1]]}>\n#ttg.dot_op<{opIdx = 0, parent = #b}>")
    assert convert(fma, [8, 16]).bases() == {
        "register": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0]],
        "lane": [[0, 0], [0, 0], [0, 0], [4, 0], [0, 0]], "warp": [[0, 0], [0, 0], [0, 0]], "block": [[0, 0]]}


def test_nvmma_shared_of_a_rank_3_tensor_collapses_the_outer_dimensions_into_rows():
    """Triton 3.9 lays a rank-3 nvmma_shared buffer out as the 2-D one of (dim0 x dim1) rows of dim2 (the 8-row
    swizzle atom, then rows, then the contiguous dimension's repeats); a transposed rank-3 one is refused."""
    text = "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16, rank = 3}>"
    assert convert(text, [2, 8, 64], 16).bases() == {
        "offset": [[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 8], [0, 0, 16], [0, 1, 0], [0, 2, 8], [0, 4, 16],
                   [1, 0, 0], [0, 0, 32]], "block": []}
    with pytest.raises(A.LayoutError, match="transposed layout of a rank-3"):
        convert(text.replace("false", "true"), [64, 2, 8], 16)


def test_wgmma_with_an_n_that_is_not_a_power_of_two():
    """instrShape [16, 160, 16]: its dot operand A is read (it does not depend on N); its accumulator is refused
    naming instrShape (Triton's own conversion asserts on it)."""
    mma = ("#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
           "instrShape = [16, 160, 16]}>\n")
    assert convert(mma + "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", [64, 64]).bases()["warp"] == [
        [16, 0], [32, 0]]
    with pytest.raises(A.LayoutError, match=r"nvidia_mma.instrShape: N = 160 is not a power of two"):
        convert(mma + "#mma", [64, 256])


def test_a_blocked_layout_larger_than_the_shape_keeps_its_registers_as_zero_bases():
    """Triton 3.6 (the H200's) and 3.8 (``pip install triton`` here) keep a blocked layout's registers past the
    shape as zero bases (broadcasts), as they do for MMA layouts and dot operands (seed 14018 of the fresh audit)."""
    text = "#ttg.blocked<{sizePerThread = [8, 16], threadsPerWarp = [4, 8], warpsPerCTA = [2, 8], order = [1, 0]}>"
    assert convert(text, [2, 32]).bases() == {
        "register": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [0, 0], [0, 0]],
        "lane": [[0, 16], [0, 0], [0, 0], [0, 0], [0, 0]], "warp": [[0, 0]] * 4, "block": []}
    one = "#ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
    assert convert(one, [4]).bases()["register"] == [[1], [2], [0]]  # the oracle's seed 67


@pytest.mark.parametrize(("text", "field"), [
    # Triton's parser refuses these keys; read silently, the misspelt field would be dropped (a wrong layout)
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposd = true, elementBitWidth = 16}>",
     "nvmma_shared.transposd"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], CGALayot = [[0, 1]]}>",
     "swizzled_shared.CGALayot"),
    ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
     "unknownField = 3}>", "blocked.unknownField"),
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8], "
     "CTALayout = [[0, 1]]}>", "nvidia_mma.CTALayout"),
    ("#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], blocks = []}>",
     "linear.blocks"),
])
def test_a_field_the_attribute_does_not_have_is_refused_by_name(text, field):
    with pytest.raises(A.LayoutError) as err:
        convert(text, [64, 64], 16)
    assert field in str(err.value) and "not a field" in str(err.value)


def test_mma_v2_with_another_tile_is_converted_as_triton_converts_it():
    """Triton's conversion takes any version-2 instrShape of powers of two from 8 (its verifier takes any): [16, 16]
    and [32, 8] were refused ('mma.sync tiles are [16, 8]'); bases from Triton 3.6's to_linear_layout. A dot operand
    does not depend on its parent's tile, so one of a parent Triton cannot lay out itself is still read."""
    mma = "#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = {}}}>"
    lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    assert convert(mma.format([16, 16]), [64, 64]).bases() == {
        "register": [[0, 1], [8, 0], [0, 8], [0, 32], [32, 0]], "lane": lane, "warp": [[0, 16], [16, 0]], "block": []}
    assert convert(mma.format([32, 8]), [64, 64]).bases() == {
        "register": [[0, 1], [8, 0], [16, 0], [0, 16], [0, 32]], "lane": lane, "warp": [[0, 8], [32, 0]], "block": []}
    with pytest.raises(A.LayoutError, match=r"nvidia_mma\.instrShape: \[16, 4\]"):
        convert(mma.format([16, 4]), [64, 64])
    dot = "#mma = {}\n#ttg.dot_op<{{opIdx = 1, parent = #mma, kWidth = 2}}>"
    assert convert(dot.format(mma.format([4, 64])), [128, 32]).bases() == convert(
        dot.format(mma.format([16, 8])), [128, 32]).bases()


@pytest.mark.parametrize("cga", ["[[0, 2]]", "[[0, 3]]", "[[1, 1]]"])
def test_a_cga_layout_that_leaves_a_cta_tile_empty_is_refused_as_triton_refuses_it(cga):
    """Triton 3.6 aborts on these (its LinearLayout is not surjective); they were read (CTA bases [0, 32], [0, 48],
    [32, 32]). [[0, 1], [0, 1]] (two CTAs on one tile) and [[0, 0]] (a broadcast) are taken, as Triton takes them."""
    for text in ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                 "order = [1, 0], CGALayout = %s}>",
                 "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], CGALayout = %s}>"):
        with pytest.raises(A.LayoutError, match=r"\.CGALayout: the bases reach 1 of the 2 bits"):
            convert(text % cga, [64, 64], 16)
    ok = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], " \
         "CGALayout = %s}>"
    assert convert(ok % "[[0, 1], [0, 1]]", [64, 64]).bases()["block"] == [[0, 32], [0, 32]]
    assert convert(ok % "[[0, 0]]", [64, 64]).bases()["block"] == [[0, 0]]


BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


@pytest.mark.parametrize(("text", "says"), [
    (f"{BLOCKED}\n{SWIZZLED}", "line 1"),          # two layouts pasted into one field: which one is meant?
    (f"{SWIZZLED}\n\n{BLOCKED}", "line 1"),
    (f"#a = {BLOCKED}\n{SWIZZLED}\n#a", "line 2"),
    (f"#a = {BLOCKED}\n#a = {SWIZZLED}\n#a", "#a is defined twice"),
])
def test_text_that_holds_more_than_one_layout_is_refused_not_read_as_its_last(text, says):
    """Only alias definitions may come before the layout: a bare attribute on an earlier line (two layouts pasted
    into one field) and an alias given two values are refused by line, not answered for whichever came last (the
    route answered the last attribute's layout for both)."""
    with pytest.raises(A.LayoutError) as err:
        ttgir.parse(text)
    assert says in str(err.value)


def test_a_dump_whose_last_line_is_an_alias_definition_still_reads():
    assert ttgir.parse(f"#a = {BLOCKED}").name == "blocked"
    assert ttgir.parse(f"#a = {BLOCKED}\n#b = {SWIZZLED}\n#a").name == "blocked"
