"""Inputs of any size and of the wrong kind.

An operand or a tiler of up to 2^40 cells is an ordinary input (ops are symbolic), so no page may enumerate what it
will not draw: the size cases here once walked 2^32-2^40 offsets (tens of seconds, then a MemoryError or the kernel's
OOM killer). A coordinate layout, a swizzle or a tiler where a plain layout goes is refused by the field's name: those
cases once reached the engine and answered 500 or 'cannot evaluate this input (TypeError ...)'."""

from __future__ import annotations

import pytest

import algebra as A
from app.config import MAX_CELLS, MAX_SIZE

BIG = "(1048576,1048576):(1048576,1)"  # 2^40 cells


@pytest.fixture
def walked(monkeypatch):
    """Every A.offsets the services call, by size; a walk over MAX_SIZE cells is recorded and refused at once
    (instead of allocating gigabytes). The test asserts that none was asked for."""
    sizes: list[int] = []
    real = A.offsets

    def offsets(layout):
        sizes.append(A.size(layout))
        if sizes[-1] > MAX_SIZE:
            raise MemoryError(f"enumerating {sizes[-1]} cells of {layout}")
        return real(layout)

    monkeypatch.setattr(A, "offsets", offsets)
    yield sizes
    assert max(sizes, default=0) <= MAX_SIZE, sizes


@pytest.mark.parametrize("params", [
    {"op": "flat_divide", "a": "(8,8):(1,8)", "b": "(65536,65536):(65536,1)"},
    {"op": "logical_divide", "a": "(4,2,3):(2,1,8)", "b": "1099511627776:1"},
    {"op": "zipped_divide", "a": "(8,8):(1,8)", "b": "<1048576:1, 1048576:1>"},
    {"op": "zipped_product", "a": "(2,2):(1,2)", "b": "(65536,65536):(65536,1)"},
])
def test_a_divide_by_a_huge_tiler_does_not_walk_it(client, walked, params):
    """A small A divided by a 2^32-2^40 tiler: the "A highlighted by B" panel walked zipped_divide(A, B) whole."""
    r = client.get("/algebra", params=params)
    assert r.status_code == 200
    assert "A highlighted by B" in r.text or "the result by copy of A" in r.text
    assert "render cap" in r.text and 'role="alert"' not in r.text


@pytest.mark.parametrize("params", [
    {"op": "local_tile", "a": BIG, "b": "<1048576:1, 1048576:1>", "c": "(0,0)"},
    {"op": "local_partition", "a": BIG, "b": "(2,2):(2,1)", "c": "1"},
])
def test_a_huge_tile_is_not_walked_to_outline_it(client, walked, params):
    """local_tile / local_partition of a 2^40-cell A: the cells to outline in A's grid were enumerated although A's
    grid is over the render cap and never drawn."""
    r = client.get("/algebra", params=params)
    assert r.status_code == 200
    assert "first element at offset" in r.text and 'role="alert"' not in r.text


def test_a_small_tile_is_still_outlined(client):
    r = client.get("/algebra", params={"op": "local_tile", "a": "(16,16):(16,1)", "b": "<4:1, 4:1>", "c": "(1,2)"})
    assert r.status_code == 200
    assert "first element at offset 72 of A" in r.text
    assert r.text.count(" acc") + r.text.count('"acc') >= 16
    assert MAX_CELLS >= 256


@pytest.mark.parametrize("kind", ["mma", "copy"])
def test_a_partition_walk_divides_the_tensor_once_not_once_per_thread(monkeypatch, kind):
    """The walkthrough slices every thread's fragment out of one thread-fragment layout: with 1024 threads, building
    that layout per thread (three divides and a composition each) took over a second."""
    from algebra.hw import atoms_tiled
    from app.services import walkthrough as W

    calls = []
    real = atoms_tiled.zipped_divide
    monkeypatch.setattr(atoms_tiled, "zipped_divide", lambda *a: (calls.append(1), real(*a))[1])
    if kind == "mma":
        atoms_tiled.TiledMMA._thrfrg.cache_clear()
        walk = W.mma_walk("SM80_16x8x16_F32F16F16F32_TN", "(4,8,1)", "", "1023")
    else:
        atoms_tiled.TiledCopy._tidfrg.cache_clear()
        walk = W.copy_walk("SM80_CP_ASYNC_CACHEALWAYS_16B", "(128,8):(8,1)", "(1,8):(8,1)", 16, "(128,64):(64,1)",
                           "(128,64):(64,1)", "1023")
    assert walk.num_threads == 1024 and walk.thread == 1023
    assert [len(p.grid.marks) for p in walk.parts] == ([8, 4, 4] if kind == "mma" else [8, 8])
    assert len(calls) <= 12, len(calls)


@pytest.mark.parametrize("path,body,detail", [
    ("/api/banks", {"layout": "(4,8):(1@1,1@0)", "element_bytes": 4}, "layout: (4,8):(1@1,1@0) has basis (E) strides"),
    ("/api/banks", {"layout": "(32,32):(32,1)", "access": {"kind": "thread_layout", "layout": "<2:1, 2:1>"}},
     "access.layout: '<2:1, 2:1>' is not a layout"),
    ("/api/banks", {"layout": "(32,32):(32,1)", "access": {"kind": "thread_layout", "layout": "Sw<3,3,3>"}},
     "access.layout: 'Sw<3,3,3>' is not a layout"),
    ("/api/sectors", {"tv": "(4,8):(1@1,1@0)"}, "TV layout: (4,8):(1@1,1@0) has basis (E) strides"),
    ("/api/tiled", {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "Sw<3,4,3> o (8,8):(8,1)"},
     "thread layout: Sw<3,4,3> o 0 o (8,8):(8,1) is swizzled"),
    ("/api/partition", {"atom": "SM80_16x8x16_F32F16F16F32_TN", "atom_layout": "(2,2):(1@0,1@1)"},
     "atom layout: (2,2):(1@0,1@1) has basis (E) strides"),
])
def test_layouts_of_the_wrong_kind_are_refused_by_name(client, path, body, detail):
    """Coordinate layouts where offsets are needed, swizzled or bare swizzle / tiler text where a plain layout is:
    these reached the engine and came back as 'cannot evaluate this input (TypeError / AttributeError ...)'."""
    r = client.post(path, json=body)
    assert r.status_code == 422
    assert r.json()["detail"].startswith(detail), r.json()["detail"]


def test_a_coordinate_layout_on_the_banks_page_is_named(client):
    r = client.get("/banks", params={"layout": "(4,8):(1@1,1@0)", "access": "column:0"})
    assert r.status_code == 200 and "has basis (E) strides" in r.text and "cannot evaluate" not in r.text
    r = client.get("/banks", params={"layout": "(32,32):(32,1)", "access": "thread_layout:Sw<3,3,3>"})
    assert r.status_code == 200 and "access: thread layout: &#39;Sw&lt;3,3,3&gt;&#39; is not a layout" in r.text


@pytest.mark.parametrize("params,detail", [
    ({"variant": "custom", "layout": "(4,8):(1@1,1@0)"}, "maps coordinates to coordinates"),
    ({"variant": "naive", "access": {"kind": "thread_layout", "layout": "<2:1, 2:1>"}}, "is not a layout"),
    ({"variant": "naive", "access": {"kind": "thread_layout", "layout": "(4,8):(1@1,1@0)"}}, "maps lanes to"),
])
def test_lab_job_layouts_of_the_wrong_kind_are_422(client, params, detail):
    """The smem benchmark's parameter check evaluated these and raised TypeError: a 500 from both the JSON route
    and the lab form."""
    r = client.post("/api/bench/jobs", json={"kind": "smem", "params": params})
    assert r.status_code == 422 and detail in r.json()["detail"], r.text
    form = {"kind": "smem", "variant": params["variant"], "layout": params.get("layout", ""),
            "access": params.get("access", {}).get("kind", "column"),
            "thread_layout": params.get("access", {}).get("layout", "")}
    page = client.post("/lab/jobs", data=form)
    assert page.status_code == 422 and detail in page.text


@pytest.mark.parametrize("shape", [8, 1, (1,), (8,), (2, (3, 4)), ((2, 1), (1, 3), 5), (16, 16),
                                   ((2, 2), 2, (1, (3, 2)))])
def test_hover_coordinates_are_the_natural_coordinates(shape):
    """The grids' hover coordinates come from products of the modes' lists (one idx2crd per cell was a quarter of a
    second for a 128x128 column mode): the same text as idx2crd gives."""
    from algebra import inttuple as it
    from app.services.layouts import coord_texts

    n = it.product(shape)
    assert coord_texts(shape) == [it.to_str(it.idx2crd(k, shape)) for k in range(n)]


TMA_CALL = ("cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, {4096, 4096}, {8192}, {%s}, {1, 1}, "
            "CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, "
            "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)")


def test_a_huge_tma_box_is_judged_not_drawn_whole(client):
    """boxDim = {10^12, 1}: the rules refuse it, and the drawing of the box row (one entry per 16-byte chunk) took
    10 s and ran out of memory; it now stops at MAX_DRAWN_CHUNKS."""
    from algebra.doctor.solver_desc import MAX_DRAWN_CHUNKS

    r = client.post("/api/solve/tma", json={"call": TMA_CALL % "1000000000000, 1"})
    assert r.status_code == 200 and r.json()["valid"] is False
    assert any(c["rule"].startswith("box") and not c["ok"] for c in r.json()["checks"])
    box = r.json()["box"]
    assert box["chunks"] == 125_000_000_000 and box["shown_chunks"] == MAX_DRAWN_CHUNKS
    assert len(box["chunk_of"][0]) == MAX_DRAWN_CHUNKS
    ok = client.post("/api/solve/tma", json={"call": TMA_CALL % "64, 64"}).json()["box"]
    assert ok["shown_chunks"] == ok["chunks"] == 8 and len(ok["chunk_of"]) == 64


def test_tma_values_over_64_bits_are_refused(client):
    r = client.post("/api/solve/tma", json={"call": TMA_CALL % f"{10 ** 400}, 1"})
    assert r.status_code == 422 and r.json()["detail"] == "box_dim[0]: 10000000000000000000... (401 digits) does not " \
        "fit in 64 bits"
    r = client.post("/api/solve/tma", json={"dtype": "FLOAT16", "global_dim": [1 << 64, 4], "global_strides": [8],
                                            "box_dim": [8, 8]})
    assert r.status_code == 422 and r.json()["detail"] == "global_dim[0]: 18446744073709551616 does not fit in 64 bits"


def test_descriptor_doctor_reads_prefixes_as_cpp_does_and_refuses_basis_strides(client):
    """``0b101`` was read as the hex digits b101; a basis-stride tile came back as 'cannot evaluate this input'."""
    assert client.post("/api/solve/descriptor", json={"descriptor": "0b101"}).json()["value"] == "0x0000000000000005"
    assert client.post("/api/solve/descriptor", json={"descriptor": "0x4000004000010000"}).status_code == 200
    r = client.post("/api/solve/descriptor/encode", json={"tile": "(64,64):(1@0,1@1)"})
    assert r.status_code == 422 and r.json()["detail"].startswith("tile: strides must be integers")


def test_a_pasted_tma_call_keeps_its_minus_signs(client):
    """{-1, -1} was read as {1, 1} (the pattern matched digits only): a refused call judged valid-looking."""
    r = client.post("/api/solve/tma", json={"call": TMA_CALL.replace("{4096, 4096}", "{-1, 4096}") % "64, 64"})
    assert r.status_code == 200 and r.json()["global_dim"] == [-1, 4096] and r.json()["valid"] is False
    assert any(c["text"].startswith("globalDim[0] = -1 must be in") for c in r.json()["checks"])


def test_the_page_cache_counts_the_query_string(client):
    """A rendered page is cached under its query string: a 50 KB query string with a 10 KB error page was counted as
    10 KB, so the 16 MB cache could hold several times that in keys."""
    from app.middleware import PageCacheMiddleware

    client.get("/healthz")
    node = client.app.middleware_stack
    while not isinstance(node, PageCacheMiddleware):
        node = node.app
    node.cache.clear()  # the app is shared by the module's tests: start from an empty cache, whatever ran before
    before = node.cache.bytes
    r = client.get("/", params={"layout": "(4,8):(8,1)", "pad": "x" * 50_000})
    assert r.status_code == 200
    assert node.cache.bytes - before >= 50_000 + len(r.content)


@pytest.mark.parametrize("body", [
    b'{"element_bytes": 2, "tile": "(64,64):(64,1)", "accesses": [{"name": "ldmatrix.x4", "kind": "ldmatrix", '
    b'"index": [0, 0], "num": 4, "\\ud800": "16:F1"}]}',  # an unknown key, echoed in the answer: was a 500
    b'{"element_bytes": 2, "tile": "(64,64):(64,1)\\udc00", "accesses": []}',
    b'{"element_bytes": 2, "tile": "\xed\xa0\x80", "accesses": []}',  # the surrogate's bytes (not UTF-8)
])
def test_a_lone_surrogate_in_a_json_body_is_a_named_422(client, body):
    r = client.post("/api/solve/smem", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text[:300]
    assert "lone UTF-16 surrogate" in r.json()["detail"]
    pair = client.post("/api/layout", content=b'{"layout": "(4,8):(8,1)", "note": "\\ud83d\\ude00"}',
                       headers={"content-type": "application/json"})  # an escaped pair is one character
    detail = str(pair.json()["detail"])  # refused as a key the body does not take, not as a surrogate
    assert pair.status_code == 422 and "note" in detail and "surrogate" not in detail, detail


@pytest.mark.parametrize("body, named", [
    (b"[" * 100_000, "JSON nested too deeply to read"),
    (b'{"x":' * 50_000, "JSON nested too deeply to read"),
    (b'{"layout": ' + b"7" * 5000 + b"}", "a JSON number with more than 4,300 digits"),
])
def test_a_body_the_json_reader_stops_on_is_a_400_that_says_why(client, body, named):
    """The reader's RecursionError and int-digits ValueError were answered "body: could not be read"."""
    r = client.post("/api/layout", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and named in r.json()["detail"], r.text[:300]


def test_a_form_that_is_not_valid_multipart_says_why(client):
    """Starlette's "Invalid multipart data." named neither the body nor the parser's reason."""
    r = client.post("/drills/answer", content=b"id=offsets-1&answer=3",
                    headers={"content-type": "multipart/form-data; boundary=zz", "HX-Request": "true"})
    assert r.status_code == 400 and "body: not valid multipart/form-data (Expected boundary" in r.text, r.text[:300]
