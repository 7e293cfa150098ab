"""Bounded work and memory per request: the banks lab's swizzle search, sectors of big partitions, byte-bounded
caches and the rendered-page cache (issue 12's repros). No timing asserts: the work is counted instead."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import algebra as A
from algebra import banks as B
from algebra.core.memo import BoundedCache, approx_bytes, bounded
from algebra.hw import bankfix
from algebra.hw import coalescing as C


def _brute_swizzle_fixes(lay, eb, access, max_bits):
    """The exhaustive search the bounded one replaced: every closed Sw<B,M,S> within the offset bits."""
    n = A.size(lay)
    offsets = {lay(i) for i in range(n)}
    bits = max(max(offsets), 1).bit_length()
    out = []
    for b in range(1, max_bits + 1):
        for m in range(bits):
            for s in range(b, bits - m - b + 1):
                sw = A.Swizzle(b, m, s)
                if {sw(o) for o in offsets} != offsets:
                    continue
                try:
                    r = B.bank_access(lay, eb, access, swizzle=sw)
                except A.LayoutError:
                    continue
                if r.ways == 1:
                    out.append((b, m, s))
    return out


tiles = st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from([8, 16, 32, 64]), st.integers(0, 3),
                  st.sampled_from([1, 2, 4, 8]), st.integers(0, 7), st.sampled_from(["column", "row"]))


@settings(max_examples=60, deadline=None)
@given(tiles)
def test_bounded_swizzle_search_finds_every_fix_the_exhaustive_one_does(t):
    rows, cols, pad, eb, idx, kind = t
    lay = A.Layout((rows, cols), (cols + pad, 1))
    access = {"kind": kind, "index": idx % (cols if kind == "column" else rows)}
    if B.bank_access(lay, eb, access).ways == 1:
        assert bankfix.swizzle_fixes(lay, eb, access, max_bits=3) == []
        return
    mine = [f.swizzle for f in bankfix.swizzle_fixes(lay, eb, access, max_bits=3)]
    brute = _brute_swizzle_fixes(lay, eb, access, 3)
    if len(mine) < 24:  # below MAX_CLOSURE_CHECKS the bounded search is exhaustive over what can matter
        assert mine == brute, (str(lay), eb, access)
    for f in bankfix.swizzle_fixes(lay, eb, access, max_bits=3):
        assert f.analysis.ways == 1
        assert f.analysis.banks == B.bank_access(lay, eb, access, swizzle=A.Swizzle(*f.swizzle)).banks


@settings(max_examples=60, deadline=None)
@given(tiles)
def test_padding_fix_matches_trying_every_padding(t):
    rows, cols, pad, eb, idx, kind = t
    lay = A.Layout((rows, cols), (cols + pad, 1))
    access = {"kind": kind, "index": idx % (cols if kind == "column" else rows)}
    fix = B.padding_fix(lay, eb, access)
    expected = None
    for p in range(max(1, 128 // eb) + 1):
        try:
            if B.bank_access(A.Layout((rows, cols), (cols + pad + p, 1)), eb, access).ways == 1:
                expected = p
                break
        except A.LayoutError:
            continue
    assert (fix.padding if fix else None) == expected


def _count_work(monkeypatch):
    calls = {"bank_maps": 0}
    real = B.lane_bank_map

    def counted(*a, **k):
        calls["bank_maps"] += 1
        return real(*a, **k)

    monkeypatch.setattr(B, "lane_bank_map", counted)
    return calls


@pytest.mark.parametrize("layout,eb,access", [
    ("(256,256):(1,33554432)", 4, {"kind": "column", "index": 0}),
    ("(256,256):(1,33554432)", 4, {"kind": "row", "index": 0}),
    ("(256,256):(256,1)", 4, {"kind": "column", "index": 0}),
    ("(128,128):(128,1)", 2, {"kind": "column", "index": 0}),
    ("(128,128):(128,1)", 2, {"kind": "ldmatrix", "num": 4}),
])
def test_swizzle_search_work_is_capped(monkeypatch, layout, eb, access):
    calls = _count_work(monkeypatch)
    best = B.best_swizzle_fix(A.parse(layout), eb, access)
    assert calls["bank_maps"] <= bankfix.MAX_SWIZZLE_CANDIDATES + 8
    if best is not None:
        assert best.analysis.ways == 1
        sw = A.Swizzle(*best.swizzle)
        offs = set(A.offsets(A.parse(layout)))
        assert {sw(o) for o in offs} == offs


def test_swizzle_search_prefers_the_widest_hardware_mode():
    best = B.best_swizzle_fix(A.Layout((8, 64), (64, 1)), 2, {"kind": "column", "index": 0})
    assert best.swizzle == (3, 3, 3)
    best = B.best_swizzle_fix(A.Layout((64, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4})
    assert best.swizzle == (3, 3, 3)


def test_swizzle_search_refuses_a_tile_over_its_cap():
    with pytest.raises(A.LayoutError, match="cap"):
        B.best_swizzle_fix(A.Layout((512, 256), (256, 1)), 4, {"kind": "column", "index": 0})


def test_banks_page_repro_answers_with_the_comparison(client):
    r = client.get("/banks", params={"layout": "(256,256):(1,33554432)", "access": "column:0", "element_bytes": "4"})
    assert r.status_code == 200 and "naive" in r.text and "swizzled" in r.text
    r = client.get("/banks", params={"layout": "(128,128):(128,1)", "access": "column:0", "element_bytes": "2"})
    assert r.status_code == 200 and "padded" in r.text


def test_sectors_of_a_million_element_partition(client):
    r = client.post("/api/sectors", json={"tv": "(32,32768):(1,32)", "element_bytes": 4})
    assert r.status_code == 422 and "1,024 instructions" in r.json()["detail"]
    r = client.post("/api/sectors", json={"tv": "Sw<3,3,3> o (1024,1024):(1024,1)", "element_bytes": 4})
    assert r.status_code == 422 and "65,536" in r.json()["detail"]
    r = client.post("/api/sectors", json={"tv": "(1024,1024):(1024,1)", "element_bytes": 4})
    assert r.status_code == 200
    j = r.json()
    assert j["vector"] == 4 and len(j["instructions"]) == 256
    j = client.post("/api/sectors", json={"tv": "(1024,1024):(1,1024)", "element_bytes": 4}).json()
    assert j["vector"] == 1 and len(j["instructions"]) == 1024  # at the cap, still answered


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=2, max_size=4),
       st.lists(st.sampled_from([0, 1, 2, 3, 4, 8, 16, 32]), min_size=4, max_size=4), st.sampled_from([1, 2, 4, 8]))
def test_additive_sectors_equal_the_value_by_value_walk(shape, strides, eb):
    """The fast path (T(t) + V(v) of a plain layout) and the general one (through an identity memory layout) agree."""
    thr = tuple(shape[: len(shape) // 2]) or (1,)
    val = tuple(shape[len(shape) // 2:])
    tv = A.Layout((thr, val), (tuple(strides[: len(thr)]), tuple(strides[2: 2 + len(val)])))
    ident = A.Layout(A.cosize(tv) + 1)
    assert C.widest_vector(tv, eb) == C.widest_vector(tv, eb, memory=ident)
    fast = C.partition_sectors(tv, eb)
    slow = C.partition_sectors(tv, eb, memory=ident)
    assert [(s.sectors, s.bytes_used) for s in fast.instructions] == [(s.sectors, s.bytes_used)
                                                                     for s in slow.instructions]


def test_bounded_cache_stays_under_its_bytes():
    cache = BoundedCache(1 << 20, "test")
    for k in range(20_000):
        cache.put(("key", k), [k] * 200)
    assert cache.bytes <= 1 << 20 and 0 < len(cache) < 20_000
    assert cache.get(("key", 19_999)) is not None and cache.get(("key", 0)) is None
    cache.put("huge", list(range(100_000)))  # over 1/8 of the budget: not kept
    assert cache.get("huge") is None


def test_bounded_decorator_and_estimates():
    seen = []

    @bounded(1 << 16)
    def f(x):
        seen.append(x)
        return "y" * x

    assert f(10) == f(10) and seen == [10]
    for x in range(200):
        f(x + 100)
    assert f.cache.bytes <= 1 << 16
    assert approx_bytes([list(range(100))] * 100) > 100 * 100 * 28  # sampled, not undercounted


def test_memoized_ops_stay_under_their_budget():
    from algebra import memo

    rng = random.Random(5)
    for _ in range(3 * memo.MEMO_ENTRIES):
        a = A.Layout((rng.randint(1, 64), rng.randint(1, 64)), (rng.randint(1, 99), rng.randint(1, 99)))
        A.coalesce(a)
    assert 0 < A.coalesce.cache_info().currsize <= memo.MEMO_ENTRIES
    big = A.Layout(tuple([1] * 65))  # over the small-argument test (64 leaves): runs, never kept
    before = A.coalesce.cache_info()
    assert str(A.coalesce(big)) == str(A.coalesce(big)) == "1:0"
    after = A.coalesce.cache_info()
    assert after.currsize == before.currsize and after.hits == before.hits


def test_layout_service_cache_counts_unenumerated_views_in_bytes():
    from app.services import layouts

    before = layouts._cache.bytes
    for k in range(50):
        layouts.describe_layout(f"({(1 << 21) + k},4):(1,{(1 << 22) + k})")
    grown = layouts._cache.bytes - before
    assert grown >= 50 * 1000  # each view holds KBs of code and text: counted, not 1 unit each
    assert layouts._cache.bytes <= layouts.LAYOUT_CACHE_BYTES


def test_rendered_pages_are_cached_per_query_and_fragment(client):
    url = "/?layout=(12,20):(20,1)"
    a, b = client.get(url), client.get(url)
    assert a.status_code == b.status_code == 200 and a.text == b.text
    frag = client.get(url, headers={"HX-Request": "true"})
    assert frag.status_code == 200 and len(frag.text) < len(a.text)
    assert client.get("/?layout=(12,21):(21,1)").text != a.text
    assert b.headers["content-security-policy"] and b.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path,params", [
    ("/algebra", {"op": "blocked_product", "a": "(64,64):(64,1)", "b": "(16,16):(1,16)"}),
    ("/banks", {"layout": "(1024,1024):(1024,1)", "access": "column:0", "element_bytes": "4"}),
])
def test_pages_do_not_enumerate_grids_they_will_not_draw(client, monkeypatch, path, params):
    """A blocked_product of 64x64 by 16x16 (or a 1024x1024 banks tile) has 2^20 cells: the page names the render cap
    without walking them."""
    from app.config import MAX_CELLS
    from app.services import layouts

    walked = []
    real = layouts._fill_table
    monkeypatch.setattr(layouts, "_fill_table", lambda view, lay: (walked.append(A.size(lay)), real(view, lay)))
    r = client.get(path, params=params)
    assert r.status_code == 200 and "render cap" in r.text
    assert all(n <= MAX_CELLS for n in walked), walked


def test_a_search_stopped_by_its_cap_says_so(monkeypatch, client):
    """Past a cap the search cannot claim that no swizzle exists: it names the cap, and the lab shows that."""
    lay, access = A.Layout((8, 64), (64, 1)), {"kind": "column", "index": 0}  # fp16: Sw<3,3,3> fixes it
    assert B.best_swizzle_fix(lay, 2, access).swizzle == (3, 3, 3)
    monkeypatch.setattr(bankfix, "MAX_CLOSURE_CHECKS", 0)
    with pytest.raises(A.LayoutError, match="cap"):
        B.best_swizzle_fix(lay, 2, access)
    monkeypatch.setattr(bankfix, "MAX_CLOSURE_CHECKS", 24)
    monkeypatch.setattr(bankfix, "MAX_SWIZZLE_CANDIDATES", 1)
    monkeypatch.setattr(bankfix, "hardware_swizzles", lambda *a: [])
    with pytest.raises(A.LayoutError, match="first 1 candidates"):
        B.best_swizzle_fix(lay, 2, access)
    from app.services import banks as S

    monkeypatch.setattr(S, "_preset_fix", lambda *a: None)
    cmp = S.compare("(8,64):(64,1)", None, 2, access)
    assert cmp[-1]["view"] is None and "cap" in cmp[-1]["why"]
