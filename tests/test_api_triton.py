"""``POST /api/triton/layout`` and ``POST /api/triton/conflicts`` (CONTRACT §6) through the app: the contract's
fields, answers computed here independently of the algebra (offsets of swizzled_shared from its definition,
wavefronts from the bank map of the addresses each lane stores), #ttg.linear round trips, and 422s that name the
field."""

from __future__ import annotations

import random

import pytest

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
SW = "#ttg.swizzled_shared<{{vec = {v}, perPhase = {p}, maxPhase = {m}, order = [1, 0]}}>"
MMA3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>"


def swizzled_offset(r: int, c: int, cols: int, vec: int, per: int, maxp: int) -> int:
    """Triton's swizzled_shared by its definition: row r's vector index XOR (r / perPhase) % maxPhase."""
    return r * cols + (((c // vec) ^ ((r // per) % maxp)) * vec) % cols + c % vec


@pytest.mark.parametrize(("v", "p", "m", "shape"), [(8, 1, 8, [64, 64]), (4, 2, 4, [32, 64]), (1, 1, 1, [16, 32]),
                                                   (2, 4, 8, [128, 16]), (8, 2, 4, [128, 128])])
def test_swizzled_shared_offsets_follow_the_definition(client, v, p, m, shape):
    r = client.post("/api/triton/layout", json={"layout": SW.format(v=v, p=p, m=m), "shape": shape})
    assert r.status_code == 200, r.text
    out = r.json()
    rows, cols = shape
    assert out["kind"] == "swizzled_shared" and set(out["bases"]) == {"offset", "block"}
    assert out["offsets"] == [[swizzled_offset(i, j, cols, v, p, m) for j in range(cols)] for i in range(rows)]


def test_swizzle_shows_as_cute_and_its_bits(client):
    out = client.post("/api/triton/layout", json={"layout": SW.format(v=8, p=1, m=8), "shape": [64, 64]}).json()
    assert out["cute"] == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    assert out["swizzle"]["name"] == "Sw<3,3,3>" and out["swizzle"]["yyy_mask"] == 0b111 << 6


def test_blocked_bases_and_tv_layout(client):
    out = client.post("/api/triton/layout", json={"layout": BLOCKED, "shape": [64, 64]}).json()
    assert out["kind"] == "blocked" and "offsets" not in out
    assert out["bases"] == {"register": [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]],
                            "lane": [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], "warp": [[4, 0], [8, 0]], "block": []}
    assert out["cute"] == "((8,16),(8,4)):((512,1),(64,16))"  # (thread, value) -> column-major index
    assert (out["registers"], out["lanes"], out["warps"]) == (32, 32, 4)


def test_linear_round_trips(client):
    """The bases of any layout, written as #ttg.linear, read back to the same bases."""
    for layout, shape in ((BLOCKED, [64, 64]), (MMA3, [64, 128]), (BLOCKED, [16, 256])):
        b = client.post("/api/triton/layout", json={"layout": layout, "shape": shape}).json()["bases"]
        text = (f"#ttg.linear<{{register = {b['register']}, lane = {b['lane']}, warp = {b['warp']}, "
                f"block = {b['block']}}}>")
        again = client.post("/api/triton/layout", json={"layout": text, "shape": shape}).json()
        assert again["kind"] == "linear" and again["bases"] == b


def test_padded_shared_offsets(client):
    out = client.post("/api/triton/layout", json={
        "layout": "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 64]}>", "shape": [16, 64]}).json()
    assert out["offsets"] == [[r * 64 + c + ((r * 64 + c) // 32) * 4 for c in range(64)] for r in range(16)]
    assert out["cute"] == "(16,(32,2)):(72,(1,36))" and out["paddings"] == [[32, 4]]


def _bank_wavefronts(addresses: list[int], access: int) -> int:
    """CONTRACT §3 computed here: phases of 32/16/8 lanes, distinct 4-byte words per bank."""
    per = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[access]
    total = 0
    for s in range(0, len(addresses), per):
        words = {a // 4 + k for a in addresses[s:s + per] for k in range(max(1, access // 4))}
        banks: dict[int, int] = {}
        for w in words:
            banks[w % 32] = banks.get(w % 32, 0) + 1
        total += max(banks.values())
    return total


@pytest.mark.parametrize(("v", "p", "m"), [(1, 1, 1), (8, 1, 8), (4, 1, 4), (8, 2, 4), (2, 1, 8)])
def test_blocked_store_wavefronts_equal_the_bank_model(client, v, p, m):
    """Blocked [1,8] x [4,8] x [4,1] on 64 x 64 fp16: warp 0's lane t holds row t // 8 + 16 * rep (rep = registers
    3, 4) and columns 8 * (t % 8) .. + 7 (registers 0-2); they go out as 16-byte vectors unless the swizzle moves
    vectors of fewer than 8 elements."""
    shape, cols = [64, 64], 64
    body = {"distributed": BLOCKED, "shared": SW.format(v=v, p=p, m=m), "shape": shape, "element_bits": 16}
    out = client.post("/api/triton/conflicts", json=body).json()
    vec = min(8, v) if m > 1 else 8
    total = 0
    for rep in range(4):  # registers 3, 4: rows + 16, + 32
        for k in range(8 // vec):  # a swizzle finer than 8 elements splits each lane's 8 into 8 / vec stores
            addrs = [2 * swizzled_offset(16 * rep + t // 8, 8 * (t % 8) + vec * k, cols, v, p, m) for t in range(32)]
            total += _bank_wavefronts(addrs, 2 * vec)
    assert out["instructions"][0]["vector_bytes"] == 2 * vec
    assert out["wavefronts"] == total == sum(i["wavefronts"] for i in out["instructions"])
    assert out["ideal"] == sum(i["ideal"] for i in out["instructions"])
    for key in ("kind", "vector_bytes", "wavefronts", "ideal"):
        assert key in out["instructions"][0]
    assert out["fix"]["wavefronts"] == out["fix"]["ideal"] == 16 and out["fix"]["ttgir"].startswith("#ttg.")


def test_mma_accumulator_store_uses_stmatrix(client):
    body = {"distributed": MMA3, "shared": SW.format(v=1, p=1, m=1), "shape": [64, 64], "element_bits": 16}
    out = client.post("/api/triton/conflicts", json=body).json()
    assert {i["kind"] for i in out["instructions"]} == {"stmatrix.x4"}
    assert (out["wavefronts"], out["ideal"]) == (128, 16)  # 8 rows of 128 bytes on the same 4 banks
    fix = out["fix"]
    assert fix["wavefronts"] == 16 and fix["ttgir"] == ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = "
                                                        "false, elementBitWidth = 16}>")
    assert fix["cute"] == "Sw<3,3,3> o 0 o (64,64):(64,1)" and fix["wgmma"] is True
    load = client.post("/api/triton/conflicts", json={**body, "op": "load"}).json()
    assert {i["kind"] for i in load["instructions"]} == {"ldmatrix.x4"}


def test_another_warp(client):
    body = {"distributed": BLOCKED, "shared": SW.format(v=1, p=1, m=1), "shape": [64, 64], "warp": 3}
    out = client.post("/api/triton/conflicts", json=body).json()
    assert out["warp"] == 3 and out["warps"] == 4
    r = client.post("/api/triton/conflicts", json={**body, "warp": 4})
    assert r.status_code == 422 and r.json()["detail"].startswith("warp:")


@pytest.mark.parametrize(("body", "field"), [
    ({"layout": "#ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                "order = [1, 0]}>", "shape": [64, 64]}, "layout: blocked.sizePerThread"),
    ({"layout": "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 4], warpsPerCTA = [4, 1], "
                "order = [1, 0]}>", "shape": [64, 64]}, "layout: blocked.threadsPerWarp"),
    ({"layout": "#ttg.blocked<{sizePerThread = [1, 8]", "shape": [64, 64]}, "layout: "),
    ({"layout": "#ttg.swizzled_shared<{vec = 8, perPhase = 1, order = [1, 0]}>", "shape": [64, 64]},
     "layout: swizzled_shared.maxPhase"),
    ({"layout": "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", "shape": [64, 64]}, "layout: "),
    ({"layout": SW.format(v=8, p=1, m=8), "shape": [64, 48]}, "shape:"),
    ({"layout": SW.format(v=8, p=1, m=8), "shape": [64, 64], "element_bits": 12}, "element_bits"),
    ({"layout": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
      "shape": [64, 32]}, "layout: nvmma_shared.swizzlingByteWidth"),
    ({"layout": "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
      "shape": [64, 64], "element_bits": 8}, "element_bits:"),
    ({"layout": BLOCKED, "shape": [64, 64], "extra": 1}, "extra"),
])
def test_bad_layouts_are_422_naming_the_field(client, body, field):
    r = client.post("/api/triton/layout", json=body)
    assert r.status_code == 422, r.text
    assert field in r.json()["detail"]


@pytest.mark.parametrize(("patch", "field"), [
    ({"shared": BLOCKED}, "shared:"), ({"distributed": SW.format(v=8, p=1, m=8)}, "distributed:"),
    ({"op": "copy"}, "op"), ({"shape": [1024, 1024]}, "shape:"), ({"distributed": "#ttg.blocked<{}>"},
                                                                  "distributed: blocked.sizePerThread"),
])
def test_bad_conflicts_are_422_naming_the_field(client, patch, field):
    body = {"distributed": BLOCKED, "shared": SW.format(v=8, p=1, m=8), "shape": [64, 64], **patch}
    r = client.post("/api/triton/conflicts", json=body)
    assert r.status_code == 422, r.text
    assert field in r.json()["detail"]


def test_offsets_nest_as_the_shape(client):
    """Rank 1: a flat list (offsets[c]); rank 3: offsets[i][j][k]."""
    one = client.post("/api/triton/layout", json={"layout": SW.format(v=1, p=1, m=1).replace("[1, 0]", "[0]"),
                                                  "shape": [16]}).json()
    assert one["offsets"] == list(range(16))
    three = client.post("/api/triton/layout", json={
        "layout": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [2, 1, 0]}>",
        "shape": [2, 4, 8]}).json()
    assert three["offsets"] == [[[i * 32 + j * 8 + k for k in range(8)] for j in range(4)] for i in range(2)]


@pytest.mark.parametrize("shape", [[128, 128], [256, 256], [128, 512]])
def test_conflicts_of_a_large_tensor_with_one_warp_are_answered(client, shape):
    """The fix's search is priced by the instructions it looks at, not the elements times the candidates."""
    one_warp = BLOCKED.replace("warpsPerCTA = [4, 1]", "warpsPerCTA = [1, 1]")
    for bits in (8, 16, 32):
        body = {"distributed": one_warp, "shared": SW.format(v=8, p=1, m=8), "shape": shape, "element_bits": bits}
        r = client.post("/api/triton/conflicts", json=body)
        assert r.status_code == 200, r.text
        assert r.json()["fix"]["wavefronts"] <= r.json()["wavefronts"]


def test_offsets_of_a_layout_split_among_ctas(client):
    """A CGALayout splits the tensor among CTAs, each holding its part at the same offsets: [64, 16] over two CTAs
    along dim 1 is a 64 x 8 swizzled tile in each (it was a 422, 'the shared layout has 512 offsets for the 1024
    elements'); a zero CTA basis broadcasts."""
    sw = SW.format(v=4, p=2, m=4).replace("order = [1, 0]", "order = [1, 0], CGALayout = [[0, 1], [0, 0]]")
    r = client.post("/api/triton/layout", json={"layout": sw, "shape": [64, 16]})
    assert r.status_code == 200, r.text
    assert r.json()["offsets"] == [[swizzled_offset(i, j % 8, 8, 4, 2, 4) for j in range(16)] for i in range(64)]


def test_offsets_of_a_layout_that_stores_an_element_twice_are_null_with_the_reason(client):
    """Triton takes a shared_linear layout with a zero offset basis (each element at two offsets): the view is
    answered, its offsets null with the reason (it was a 422)."""
    r = client.post("/api/triton/layout", json={"layout": "#ttg.shared_linear<{offset = [[0, 1], [0, 0]]}, "
                                                          "alignment = 16>", "shape": [1, 2]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["offsets"] is None and "offsets 0 and 2" in out["offsets_note"] and out["cute"] is None


def _xor_span(vs: list[list[int]], rank: int) -> list[list[int]]:
    out = [[0] * rank]
    for v in vs:
        out += [[a ^ b for a, b in zip(x, v, strict=True)] for x in out]
    return out


def _split(rng, total: int) -> list[int]:
    out = [1, 1]
    while total > 1:
        out[rng.randrange(2)] *= 2
        total //= 2
    return out


def _one_order(held: list[list[list[int]]], v: int) -> bool:
    """Every lane of every warp stores lane 0's (of warp 0) offsets moved by a multiple of v, the same move for each
    v-aligned run, and its offsets are whole aligned runs of v: one register order makes v-element vectors."""
    base = held[0][0]
    start = {o: o - o % v for o in base}
    for lane in (x for w in held for x in w):
        move = {start[o]: g - o for g, o in zip(lane, base, strict=True)}
        if any(g - o != move[start[o]] or move[start[o]] % v for g, o in zip(lane, base, strict=True)):
            return False
        if any(o - o % v + j not in set(lane) for o in lane for j in range(v)):
            return False
    return True


def _fresh_shared(client, rng, rows: int, cols: int, bits: int) -> tuple[str, list[list[int]] | None]:
    """A swizzled_shared (offsets by Triton's definition), padded_shared (offset + paddings) or nvmma_shared (offsets
    as /api/triton/layout lists them) layout and its offsets[r][c]; None where the route refuses it."""
    pick, order = rng.randrange(3), rng.choice(([1, 0], [0, 1]))
    if pick == 0:
        v, p, m = 1 << rng.randint(0, 4), 1 << rng.randint(0, 3), 1 << rng.randint(0, 4)
        table = [[swizzled_offset(r, c, cols, v, p, m) if order == [1, 0] else swizzled_offset(c, r, rows, v, p, m)
                  for c in range(cols)] for r in range(rows)]
        return SW.format(v=v, p=p, m=m).replace("[1, 0]", str(order)), table
    if pick == 1:
        iv, pad = 1 << rng.randint(2, 8), 1 << rng.randint(0, 4)
        lin = [[r * cols + c if order == [1, 0] else c * rows + r for c in range(cols)] for r in range(rows)]
        return (f"#ttg.padded_shared<[{iv}:+{pad}] {{order = {order}, shape = [{rows}, {cols}]}}>",
                [[x + (x // iv) * pad for x in row] for row in lin])
    shared = (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {rng.choice((0, 32, 64, 128))}, transposed = "
              f"{rng.choice(('true', 'false'))}, elementBitWidth = {bits}}}>")
    got = client.post("/api/triton/layout", json={"layout": shared, "shape": [rows, cols], "element_bits": bits})
    return shared, (got.json()["offsets"] if got.status_code == 200 else None)  # None: a swizzle wider than a row


@pytest.mark.parametrize("seed", range(14000, 14012))
def test_fresh_stores_equal_a_brute_force_count_from_the_offsets(client, seed):
    """Fresh blocked stores (CTA tiles smaller and larger than the tensor) into swizzled, padded and NVMMA shared
    layouts: each lane's elements from the route's bases, and from their offsets alone the widest vector every lane
    of every warp stores in one register order, then warp k's instructions priced by CONTRACT §3 (265 of 265 draws
    of seeds 14000-14099 agreed; stmatrix stores are left to the tests above)."""
    rng = random.Random(seed)
    for _ in range(3):
        bits = rng.choice((8, 16, 32))
        rows, cols = 1 << rng.randint(0, 7), 1 << rng.randint(0, 7)
        while not 32 <= rows * cols <= 1 << 12:
            rows, cols = 1 << rng.randint(0, 7), 1 << rng.randint(0, 7)
        dist = (f"#ttg.blocked<{{sizePerThread = {[1 << rng.randint(0, 3), 1 << rng.randint(0, 3)]}, threadsPerWarp "
                f"= {_split(rng, 32)}, warpsPerCTA = {_split(rng, 1 << rng.randint(0, 3))}, order = "
                f"{rng.choice(([1, 0], [0, 1]))}}}>")
        shared, table = _fresh_shared(client, rng, rows, cols, bits)
        if table is None:
            continue
        b = client.post("/api/triton/layout", json={"layout": dist, "shape": [rows, cols]}).json()["bases"]
        warp = rng.randrange(1 << len(b["warp"]))
        out = client.post("/api/triton/conflicts", json={"distributed": dist, "shared": shared, "shape": [rows, cols],
                                                         "element_bits": bits, "warp": warp}).json()
        if not out["instruction"].startswith("st.shared"):
            continue
        regs, lanes, warps = _xor_span(b["register"], 2), _xor_span(b["lane"], 2), _xor_span(b["warp"], 2)
        held = [[[table[g[0] ^ x[0] ^ w[0]][g[1] ^ x[1] ^ w[1]] for g in regs] for x in lanes] for w in warps]
        eb, v = bits // 8, 1
        while 2 * v * eb <= 16 and _one_order(held, 2 * v):
            v *= 2
        assert out["instructions"][0]["vector_bytes"] == v * eb, (dist, shared, [rows, cols], bits)
        total, seen = 0, set()
        for i, o in enumerate(held[warp][0]):
            if o % v == 0 and o not in seen:
                seen.add(o)
                total += _bank_wavefronts([held[warp][t][i] * eb for t in range(32)], v * eb)
        assert out["wavefronts"] == total, (dist, shared, [rows, cols], bits, warp)


def test_an_attribute_written_over_several_lines_reads_as_on_one_line(client):
    """A TTGIR attribute wrapped over lines (as pasted from a pretty-printed module, alias definitions included) is one
    attribute: it was refused ("expected a field name, found the end of the text"). The API and the notebook read it
    through the one TTGIR parser."""
    import layoutlab

    wrapped = BLOCKED.replace(", threadsPerWarp", ",\n    threadsPerWarp").replace(", order", ",\n  order")
    aliased = "#blocked = " + wrapped + "\n#mma = " + MMA3.replace(", ", ",\n   ") + "\n"
    for text, one in ((wrapped, BLOCKED), (aliased, MMA3)):
        r = client.post("/api/triton/layout", json={"layout": text, "shape": [64, 64]})
        assert r.status_code == 200, r.text
        assert r.json() == client.post("/api/triton/layout", json={"layout": one, "shape": [64, 64]}).json()
        assert layoutlab.text(text, shape=(64, 64)) == layoutlab.text(one, shape=(64, 64))
    r = client.post("/api/triton/layout", json={"layout": BLOCKED[:-3] + "\n", "shape": [64, 64]})
    assert r.status_code == 422 and "end of the text" in r.json()["detail"]
