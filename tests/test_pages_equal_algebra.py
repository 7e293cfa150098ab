"""The pages' drawn cells and stated facts equal the algebra computed independently (tests/page_cells.py: CuTe
notation parsed and evaluated from the definition), on fresh permalinks (seeds 16610-16639): the explorer for plain,
nested, negative, basis and swizzled layouts, and the workbench's A, B and result grids for every op, each result
checked against its op's defining property."""

from __future__ import annotations

import random
import re
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

import algebra as A
from tests import page_cells as P


@pytest.fixture(scope="module")
def http(app):
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def _mode(rng: random.Random, basis: bool = False):
    def leaf_stride():
        if basis:
            return f"{rng.randrange(1, 4)}@{rng.randrange(0, 2)}"
        return rng.choice([0, 1, 2, 3, 4, 8, 16, -1, -2, -4, 5])
    if rng.random() < 0.35:
        n = rng.randrange(2, 4)
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(n)]
        return f"({','.join(map(str, shape))})", f"({','.join(str(leaf_stride()) for _ in range(n))})"
    return str(rng.choice([1, 2, 3, 4, 5, 8])), str(leaf_stride())


def fresh_layout(rng: random.Random, kind: str) -> str:
    rank = rng.randrange(1, 4)
    modes = [_mode(rng, basis=kind == "basis") for _ in range(rank)]
    text = (f"({','.join(s for s, _ in modes)}):({','.join(d for _, d in modes)})" if rank > 1
            else f"{modes[0][0]}:{modes[0][1]}")
    if kind == "positive":
        text = text.replace("-", "")
    if kind == "swizzled":
        b = rng.randrange(1, 4)
        m, s = rng.randrange(0, 3), rng.randrange(b, b + 3)
        text = f"Sw<{b},{m},{s}> o {text.replace('-', '')}"
    return text


def compact_layout(rng: random.Random, max_size: int = 64) -> str:
    """A fresh injective, compact layout: a nested shape whose strides are the prefix products of its leaves taken in
    a random order (so the divides and products, which refuse most random operands, get operands they take)."""
    while True:
        modes = [[rng.choice([1, 2, 2, 3, 4]) for _ in range(rng.choice([1, 1, 2]))]
                 for _ in range(rng.randrange(1, 4))]
        flat = [n for m in modes for n in m]
        total = 1
        for n in flat:
            total *= n
        if total <= max_size:
            break
    order, strides, run = rng.sample(range(len(flat)), len(flat)), [0] * len(flat), 1
    for k in order:
        strides[k], run = run, run * flat[k]
    it = iter(strides)
    parts = [(m, [next(it) for _ in m]) for m in modes]

    def fmt(xs):
        return str(xs[0]) if len(xs) == 1 else f"({','.join(map(str, xs))})"
    if len(parts) == 1:
        return f"{fmt(parts[0][0])}:{fmt(parts[0][1])}"
    return f"({','.join(fmt(m) for m, _ in parts)}):({','.join(fmt(d) for _, d in parts)})"


def _facts(page: str) -> dict[str, str]:
    return dict(re.findall(r'id="fact-(\w+)">([^<]*)<', page))


def _cosize(text: str):
    """CuTe's cosize: size(coshape), coshape = 1 + sum (s - 1) |d| (per coordinate for scaled bases)."""
    _, _, shape, stride = P.parse(text)
    per: dict[int, int] = {}
    for n, d in zip(P.leaves(shape), P.leaves(stride), strict=True):
        k, m = (d[0], d[1]) if isinstance(d, P.Basis) else (d, 0)
        per[m] = per.get(m, 0) + (n - 1) * abs(k)
    out = 1
    for m in range(max(per) + 1):
        out *= 1 + per.get(m, 0)
    return out


@pytest.mark.parametrize("kind", ["positive", "negative", "basis", "swizzled"])
def test_the_explorer_draws_each_cell_and_states_each_fact_as_the_definition(http, kind):
    rng = random.Random(16610 + ["positive", "negative", "basis", "swizzled"].index(kind))
    for _ in range(12):
        text = fresh_layout(rng, kind)
        r = http.get("/?" + urlencode({"layout": text}))
        assert r.status_code == 200, (text, r.status_code)
        if 'role="alert"' in r.text:  # refused: the algebra refuses it too
            with pytest.raises(ValueError):
                A.parse(text)
            continue
        want = [[P.label(v) for v in row] for row in P.view(text)]
        assert P.grid_cells(r.text, "grid-explorer") == want, text
        _, _, shape, _ = P.parse(text)
        facts = _facts(r.text)
        assert facts["size"].replace(",", "") == str(P.size(shape)), (text, facts)  # 1,920: thousands marked
        assert facts["rank"] == str(1 if isinstance(shape, int) else len(shape)), (text, facts)
        assert facts["depth"] == str(P.depth(shape)), (text, facts)
        if kind != "swizzled":
            assert facts["cosize"].replace(",", "") == str(_cosize(text)), (text, facts)


def _result(page: str) -> str | None:
    m = re.search(r"<h3>result = ([^<]+)</h3>", page)
    return m and m.group(1).replace("&lt;", "<").replace("&gt;", ">")


def _values(text: str) -> list:
    _, _, shape, _ = P.parse(text)
    return [P.evaluate(text, i) for i in range(P.size(shape))]


def _check_definition(op: str, a: str, b: str, r: str) -> None:
    """The result's defining property, from the definition (CuTe's post-conditions)."""
    va, vr = _values(a), _values(r)
    if op == "coalesce":
        assert vr == va, (a, r)
    elif op == "composition":
        vb = _values(b)
        assert all(vr[i] == va[vb[i]] for i in range(len(vb)) if vb[i] < len(va)) and len(vr) == len(vb), (a, b, r)
    elif op == "right_inverse":
        assert all(va[vr[i]] == i for i in range(len(vr))), (a, r)
    elif op == "left_inverse":
        assert all(vr[va[i]] == i for i in range(len(va))), (a, r)
    elif op == "complement":
        if len(set(va)) == len(va):  # an injective A: (A, R) is injective too
            both = [x + y for y in vr for x in va]
            assert len(set(both)) == len(both), (a, b, r)
    elif op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        vb = _values(b)  # the tile mode comes first in every divide: R(i) = A(B(i)) where B(i) is in A's domain
        assert all(vr[i] == va[vb[i]] for i in range(len(vb)) if 0 <= vb[i] < len(va)), (op, a, b, r)
    elif op in ("logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product"):
        assert len(vr) == len(va) * len(_values(b)), (op, a, b, r)
        if op in ("logical_product", "zipped_product", "tiled_product"):  # A is the first mode, as it was
            assert vr[:len(va)] == va, (op, a, b, r)


OPS = ["coalesce", "composition", "complement", "right_inverse", "left_inverse", "logical_divide", "zipped_divide",
       "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product",
       "raked_product"]


@pytest.mark.parametrize("op", OPS)
def test_the_workbench_draws_a_b_and_the_result_as_the_definition(http, op):
    rng = random.Random(16620 + OPS.index(op))
    drawn = 0
    structured = op.endswith(("_divide", "_product")) or op == "left_inverse"
    for n in range(24):
        a = compact_layout(rng) if structured and n % 2 else fresh_layout(rng, "positive")
        if op in ("complement",):
            b = str(rng.choice([24, 32, 64, 128]))
        elif op in ("coalesce", "right_inverse", "left_inverse"):
            b = ""
        else:
            b = compact_layout(rng, 16) if structured and n % 2 else fresh_layout(rng, "positive")
        q = {"op": op, "a": a, **({"b": b} if b else {})}
        r = http.get("/algebra?" + urlencode(q))
        assert r.status_code == 200, (q, r.status_code)
        res = _result(r.text)
        args = [A.parse(a)] + ([int(b)] if b.isdigit() else [A.parse(b)] if b else [])
        try:
            lib = str(getattr(A, op)(*args))
        except ValueError:
            assert res is None and 'role="alert"' in r.text, (q, res)
            continue
        assert res == lib, (q, res, lib)
        assert P.grid_cells(r.text, "grid-a") == [[P.label(v) for v in row] for row in P.view(a)], q
        if b and not b.isdigit():
            assert P.grid_cells(r.text, "grid-b") == [[P.label(v) for v in row] for row in P.view(b)], q
        assert P.grid_cells(r.text, "grid-r") == [[P.label(v) for v in row] for row in P.view(res)], q
        _check_definition(op, a, b, res)
        drawn += 1
    assert drawn >= 3, (op, drawn)


def _wavefronts(addresses: list[int], access_bytes: int) -> tuple[int, int]:
    """CONTRACT §3 from its text: phases of 32 / 16 / 8 threads for <= 4 / 8 / 16-byte accesses; in a phase, the
    most distinct 4-byte words in one bank (at least 1); (ways = the largest, wavefronts = the sum)."""
    per = 32 if access_bytes <= 4 else 16 if access_bytes == 8 else 8
    counts = []
    for p in range(0, len(addresses), per):
        words: dict[int, set[int]] = {}
        for a in addresses[p:p + per]:
            for w in range(a // 4, (a + max(access_bytes, 4) - 1) // 4 + 1):  # a wide access spans its words
                words.setdefault(w % 32, set()).add(w)
        counts.append(max((len(v) for v in words.values()), default=1))
    return max(counts), sum(counts)


def _verdict(page: str) -> tuple[int, int]:
    verdict = page[page.index('id="verdict"'):]  # the access's own verdict, before the compare panels
    return (int(re.search(r'data-k="ways">(\d+)<', verdict).group(1)),
            int(re.search(r'data-k="wavefronts">(\d+)<', verdict).group(1)))


def test_the_banks_lab_states_ways_and_wavefronts_as_the_bank_model_from_its_definition(http):
    rng = random.Random(16640)
    checked = 0
    for _ in range(24):
        eb = rng.choice([1, 2, 4, 8, 16])
        rows, cols = rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64])
        pad = rng.choice([0, 0, 1, 2, 4])
        text = f"({rows},{cols}):({cols + pad},1)"
        if rng.random() < 0.4:
            b = rng.randrange(1, 4)
            text = f"Sw<{b},{rng.randrange(0, 4)},{rng.randrange(b, b + 3)}> o ({rows},{cols}):({cols},1)"
        kind = rng.choice(["column", "row"])
        index = rng.randrange(0, cols if kind == "column" else rows)
        q = {"layout": text, "element_bytes": eb, "access": f"{kind}:{index}"}
        r = http.get("/banks?" + urlencode(q))
        assert r.status_code == 200, (q, r.status_code)
        if 'role="alert"' in r.text:
            continue
        coords = ([(t, index) for t in range(min(32, rows))] if kind == "column"
                  else [(index, t) for t in range(min(32, cols))])
        view = P.view(text)
        addresses = [eb * view[i][j] for i, j in coords]
        assert _verdict(r.text) == _wavefronts(addresses, eb), (q, _verdict(r.text))
        checked += 1
    assert checked >= 12, checked


def _ptx_m16n8k16(operand: str) -> dict[tuple[int, int], str]:
    """The PTX ISA's fragment tables for mma.m16n8k16 (f16 A / B, f32 C): (row, col) -> T<lane>V<value>, with A as
    M x K, B as N x K and C as M x N."""
    cells = {}
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for v in range(8 if operand == "A" else 4):
            if operand == "A":
                rc = (g + 8 * ((v // 2) % 2), 2 * t + (v % 2) + 8 * (v // 4))
            elif operand == "B":
                rc = (g, 2 * t + (v % 2) + 8 * (v // 2))
            else:
                rc = (g + 8 * (v // 2), 2 * t + (v % 2))
            cells[rc] = f"T{lane}V{v}"
    return cells


@pytest.mark.parametrize("operand", ["A", "B", "C"])
def test_the_tv_atlas_draws_the_sm80_mma_fragments_as_the_ptx_tables(http, operand):
    r = http.get("/tv?" + urlencode({"atom": "SM80_16x8x16_F32F16F16F32_TN", "operand": operand}))
    assert r.status_code == 200
    grid = P.grid_cells(r.text, "grid-tv")
    want = _ptx_m16n8k16(operand)
    assert {(i, j): c for i, row in enumerate(grid) for j, c in enumerate(row)} == want, operand


@pytest.mark.parametrize(("query", "field"), [
    ({"op": "right_inverse", "a": "(4,8):(8,1)", "b": "4:1"}, "b"),
    ({"op": "left_inverse", "a": "(4,8):(8,1)", "b": "2"}, "b"),
    ({"op": "composition", "a": "(4,8):(8,1)", "b": "4:1", "c": "3"}, "c"),
    ({"op": "coalesce", "a": "(4,8):(8,1)", "b": "(1,1)", "c": "x"}, "c"),
])
def test_the_workbench_names_an_argument_its_op_does_not_take(http, query, field):
    """A permalink's argument that the op does not read was dropped and the op drawn without it; it is named."""
    import html

    r = http.get("/algebra?" + urlencode(query))
    text = html.unescape(r.text)
    assert r.status_code == 200 and 'role="alert"' in r.text and f"{field}: {query['op']} takes" in text, text[-800:]
    assert _result(r.text) is None
    del query[field]
    assert _result(http.get("/algebra?" + urlencode(query)).text) is not None


def _idx2crd(i: int, shape):
    """Colexicographic: the natural coordinate of 1-D index i in shape."""
    if isinstance(shape, int):
        return i % shape if shape else 0
    out = []
    for s in shape:
        out.append(_idx2crd(i % P.size(s), s))
        i //= P.size(s)
    return tuple(out)


def _crd_text(c) -> str:
    return str(c) if isinstance(c, int) else "(" + ",".join(_crd_text(x) for x in c) + ")"


def test_the_workbench_states_idx2crd_crd2idx_and_evaluate_as_the_definition(http):
    """The value ops: idx2crd / crd2idx by colexicographic order from the definition, evaluate as the dot product."""
    rng = random.Random(16650)
    for _ in range(10):
        text = compact_layout(rng) if rng.random() < 0.5 else fresh_layout(rng, "positive")
        _, _, shape, _ = P.parse(text)
        shape_text = text.split(":")[0]
        i = rng.randrange(P.size(shape))
        crd = _crd_text(_idx2crd(i, shape))
        for op, a, b, want in (("idx2crd", str(i), shape_text, crd), ("crd2idx", crd, shape_text, str(i)),
                               ("evaluate", text, crd, P.label(P.evaluate(text, i)))):
            r = http.get("/algebra?" + urlencode({"op": op, "a": a, "b": b}))
            got = re.search(r'id="op-result">([^<]*)<', r.text)
            assert r.status_code == 200 and got and got.group(1) == want, (op, a, b, want, got and got.group(1))


def test_the_workbench_draws_the_other_layout_ops_as_their_definition(http):
    """layout_add R(i) = A(i) + B(i); nullspace A(R(i)) = 0; filter_zeros, upcast, downcast, flat_product,
    max_common_layout, greatest_common_domain: the page's result is the library's and each drawn cell its notation."""
    rng = random.Random(16651)
    drawn = 0
    for op in ("layout_add", "nullspace", "filter_zeros", "filter", "upcast", "downcast", "flat_product",
               "max_common_layout", "greatest_common_domain"):
        for n in range(8):
            a = compact_layout(rng) if n % 2 else fresh_layout(rng, "positive")
            if op in ("upcast", "downcast"):
                b = str(rng.choice([2, 4]))
            elif op in ("nullspace", "filter_zeros", "filter"):
                b = ""
            elif op == "layout_add":  # B: A's shape with fresh strides
                shape_text, strides = a.split(":", 1)
                b = shape_text + ":" + re.sub(r"\d+", lambda m: str(rng.randrange(0, 9)), strides)
            else:
                b = compact_layout(rng, 16)
            q = {"op": op, "a": a, **({"b": b} if b else {})}
            r = http.get("/algebra?" + urlencode(q))
            res = _result(r.text)
            args = [A.parse(a)] + ([int(b)] if b.isdigit() else [A.parse(b)] if b else [])
            try:
                lib = str(getattr(A, op)(*args))
            except ValueError:
                assert res is None, (q, res)
                continue
            assert res == lib, (q, res, lib)
            if "grid-r" in r.text:
                assert P.grid_cells(r.text, "grid-r") == [[P.label(v) for v in row] for row in P.view(res)], q
            vr = _values(res)
            if op == "layout_add":
                va, vb = _values(a), _values(b)
                assert vr == [x + y for x, y in zip(va, vb, strict=True)], q
            if op == "nullspace":
                va = _values(a)
                assert all(va[x] == 0 for x in vr if 0 <= x < len(va)), q
            drawn += 1
    assert drawn >= 30, drawn


def test_the_workbench_draws_local_tile_and_local_partition_as_their_definition(http):
    """local_tile(A, <tr:1, tc:1>, (x, y)) is A's rows x*tr.., columns y*tc.. (drawn from the tile's first element,
    whose offset the heading states); local_partition(A, T, t) is A's cells (r0 + i*R, c0 + j*C) where T(r0, c0) = t
    and (R, C) is T's shape."""
    rng = random.Random(16660)
    for _ in range(8):
        rows, cols = rng.choice([8, 16, 32]), rng.choice([8, 16, 32])
        a = rng.choice([f"({rows},{cols}):({cols},1)", f"({rows},{cols}):(1,{rows})",
                        f"({rows},{cols}):({cols + 2},1)"])
        full = P.view(a)
        tr, tc = rng.choice([2, 4]), rng.choice([2, 4, 8])
        x, y = rng.randrange(rows // tr), rng.randrange(cols // tc)
        r = http.get("/algebra?" + urlencode({"op": "local_tile", "a": a, "b": f"<{tr}:1, {tc}:1>", "c": f"({x},{y})"}))
        origin = full[x * tr][y * tc]
        assert f"first element at offset {origin} of A" in r.text or origin == 0, (a, tr, tc, x, y)
        want = [[str(full[x * tr + i][y * tc + j] - origin) for j in range(tc)] for i in range(tr)]
        assert P.grid_cells(r.text, "grid-r") == want, (a, tr, tc, x, y)
        tR, tC = rng.choice([2, 4]), rng.choice([2, 4, 8])
        thr = rng.choice([f"({tR},{tC}):({tC},1)", f"({tR},{tC}):(1,{tR})"])
        t = rng.randrange(tR * tC)
        r0, c0 = next((i, j) for i, row in enumerate(P.view(thr)) for j, v in enumerate(row) if v == t)
        r = http.get("/algebra?" + urlencode({"op": "local_partition", "a": a, "b": thr, "c": str(t)}))
        origin = full[r0][c0]
        want = [[str(full[r0 + i * tR][c0 + j * tC] - origin) for j in range(cols // tC)] for i in range(rows // tR)]
        assert P.grid_cells(r.text, "grid-r") == want, (a, thr, t)
