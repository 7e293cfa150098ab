"""``GET /api/bench/gemm/rungs`` against a bank model written here from CONTRACT §3 alone (32 banks x 4 bytes, phases
by access width, ldmatrix one phase per 8-row matrix), not the app's: every access that the banks lab links to, the
wgmma descriptor against ``algebra.hw.hopper``'s encoder and decoder, the TMA boxes against the declared layouts, the
links against pages that draw that layout, and the "read this rung" drill (seeds 14600-14699) against the API."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import algebra as A
from algebra.hw.hopper import decode_gmma_descriptor, make_gmma_desc, smem_atom, swizzle_to_bytes

PLAIN = re.compile(r"\((\d+),(\d+)\):\((\d+),(\d+)\)")
SWZ = re.compile(r"Sw<(\d+),(\d+),(\d+)>")


def _swizzle(text: str | None):
    if not text:
        return lambda x: x
    b, m, s = (int(g) for g in SWZ.fullmatch(text).groups())
    mask = ((1 << b) - 1) << (m + s)
    return lambda x: x ^ ((x & mask) >> s)


def _offset(plain: str, swizzle: str | None, r: int, c: int) -> int:
    _, _, s0, s1 = (int(g) for g in PLAIN.fullmatch(plain).groups())
    return _swizzle(swizzle)(r * s0 + c * s1)


def _cost(addresses: list[int], width: int, per_phase: int) -> tuple[int, int]:
    """(wavefronts, phases): per phase the most distinct 4-byte words in one bank, at least 1."""
    total = phases = 0
    for p in range(0, len(addresses), per_phase):
        words: dict[int, set[int]] = {}
        for a in addresses[p:p + per_phase]:
            for k in range(max(1, width // 4)):
                words.setdefault((a // 4 + k) % 32, set()).add(a // 4 + k)
        total, phases = total + max(len(v) for v in words.values()), phases + 1
    return total, phases


def _model(url: str, element_bytes: int) -> tuple[int, int]:
    q = {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}
    kind, _, arg = q["access"].partition(":")
    sw = q.get("swizzle") or None
    if kind == "ldmatrix":  # .x4: matrices (0,0), (8,0), (0,8), (8,8) in 16-byte columns; 8 rows each
        r0, c0 = (int(x) for x in arg.split(","))
        num, per = int(q.get("num", 4)), 16 // element_bytes
        spots = [(0, 0), (8, 0), (0, per), (8, per)] if num == 4 else [(8 * m, 0) for m in range(num)]
        rows = [element_bytes * _offset(q["layout"], sw, r0 + dr + i, c0 + dc) for dr, dc in spots for i in range(8)]
        return _cost(rows, 16, 8)
    width = element_bytes * int(q.get("vector", 1))
    addrs = [element_bytes * _swizzle(sw)(int(x)) for x in arg.split(",")]
    return _cost(addrs, width, 32 if width <= 4 else 16 if width == 8 else 8)


@pytest.fixture(scope="module")
def rungs(client: Any) -> list[dict]:
    return client.get("/api/bench/gemm/rungs").json()


def _element_bytes(rung: dict, operand: str) -> int:
    url = next(b["url"] for b in rung["links"]["banks"] if b["operand"] == operand)
    return int(parse_qs(urlsplit(url).query)["element_bytes"][0])


def test_every_prediction_is_this_bank_model_on_the_linked_access(rungs):
    checked = 0
    for r in rungs:
        links = {(b["operand"], b["access"]): b["url"] for b in r["links"]["banks"]}
        for s in r["smem"]:
            A.parse(s["layout"])
            eb = _element_bytes(r, s["operand"])
            rows, cols, s0, s1 = (int(g) for g in PLAIN.fullmatch(s["layout"].split(" o ")[-1]).groups())
            # a row-major tile allocates rows x pitch (a padded row keeps its pad); a column-major one cols x pitch
            assert s["bytes"] == eb * (rows * s0 if s1 == 1 else cols * s1), (r["rung"], s["operand"])
            for a in s["accesses"]:
                url = links[(s["operand"], a["name"])]
                q = parse_qs(urlsplit(url).query)
                assert q["layout"][0].split(":")[1] == s["layout"].split(" o ")[-1].split(":")[1]  # same strides
                assert (q.get("swizzle", [""])[0] or None) == s["swizzle"]
                assert _model(url, eb) == (a["predicted_wavefronts"], a["ideal"]), (r["rung"], a["name"])
                checked += 1
    assert checked == 36
    ideal = {r["rung"]: all(a["predicted_wavefronts"] == a["ideal"] for s in r["smem"] for a in s["accesses"])
             for r in rungs}
    assert not ideal[2] and all(ideal[k] for k in (3, 4, 5, 6, 7, 8))


def test_descriptors_and_tma_boxes_agree_with_the_hopper_code_and_the_layouts(rungs):
    for r in rungs:
        w = r["wgmma_desc"]
        if w is None:
            assert r["tma"] is None and r["rung"] < 6
            continue
        value = int(w["value"], 16)
        d = decode_gmma_descriptor(value)
        assert (d.leading_byte_offset, d.stride_byte_offset, d.layout_type, d.base_offset) == (
            w["leading_byte_offset"], w["stride_byte_offset"], w["layout_type"], w["base_offset"])
        a = next(s for s in r["smem"] if s["operand"] == "A")
        rows, cols, s0, _ = (int(g) for g in PLAIN.fullmatch(a["layout"].split(" o ")[-1]).groups())
        eb = _element_bytes(r, "A")
        atom = smem_atom("K", cols * eb, 8 * eb)
        assert make_gmma_desc(atom, 64, cols).value == value
        assert str(atom).split(" o ")[0] == a["swizzle"] and w["swizzle"] == "SWIZZLE_128B"
        for box in r["tma"]:
            inner, outer = box["box_dim"]
            lay = A.parse(box["smem_layout"])
            brows, bcols, _, _ = (int(g) for g in PLAIN.fullmatch(box["smem_layout"].split(" o ")[-1]).groups())
            assert (inner, outer) == (bcols, brows) and box["bytes"] == inner * outer * eb == eb * A.size(lay)
            b, m, s = (int(g) for g in SWZ.fullmatch(box["smem_layout"].split(" o ")[0]).groups())
            span = 16 << swizzle_to_bytes((b, m, s), 8 * eb)[0]
            assert box["swizzle"] == f"CU_TENSOR_MAP_SWIZZLE_{span}B" and inner * eb == span
            op = next(s for s in r["smem"] if s["operand"] == box["operand"])
            assert op["layout"].split(" o ")[0] == box["smem_layout"].split(" o ")[0]
            assert A.size(A.parse(op["layout"])) == A.size(lay) * box["multicast"]


def test_every_link_answers_and_draws_its_layout(client, rungs):
    for r in rungs:
        urls = [r["links"]["page"], *r["links"]["explorer"].values(), *(b["url"] for b in r["links"]["banks"]),
                *(u for u in r["links"]["tv"].values() if u), *(b["url"] for b in r["links"]["doctor"]["tma"])]
        for u in urls:
            got = client.get(u)
            assert got.status_code == 200, u
            layout = parse_qs(urlsplit(u).query).get("layout")
            if layout:
                assert layout[0] in html.unescape(got.text), u
        page = html.unescape(client.get(r["links"]["page"]).text)
        for s in r["smem"]:
            assert s["layout"] in page
            for a in s["accesses"]:
                key = f'data-operand="{s["operand"]}" data-access="{re.escape(a["name"])}">'
                row = re.search(key + r"(.*?)</tr>", page, re.S)
                tds = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
                cells = [re.sub("<[^>]+>", "", x).strip() for x in tds]
                assert cells[-3].split()[0] == str(a["predicted_wavefronts"]) and cells[-2] == str(a["ideal"])


def test_the_read_this_rung_drill_agrees_with_the_api(rungs):
    from app.drills.core import generate

    by = {r["rung"]: r for r in rungs}
    for seed in range(14600, 14700):
        d = generate("read_rung", seed)
        data = d.data
        s = next(x for x in by[data["rung"]]["smem"] if x["operand"] == data["operand"])
        assert s["layout"] == data["layout"]
        plain, sw = s["layout"].split(" o ")[-1], s["swizzle"]
        if "coords" in data:
            eb = data["element_bytes"]
            addrs = [eb * _offset(plain, sw, a, b) for a, b in data["coords"]]
            ldsm = data["kind"] == "ldmatrix"
            width = 16 if ldsm else data["width"]
            mine, _ = _cost(addrs, width, 8 if ldsm or width == 16 else 32 if width <= 4 else 16)
            api = next(a for a in s["accesses"] if a["name"] == data["access"])["predicted_wavefronts"]
            assert d.expected == str(mine) == str(api), seed
        elif "row" in data:
            assert d.expected == str(data["element_bytes"] * _offset(plain, sw, data["row"], 0) // 4 % 32), seed
        else:
            r, c = data["coord"]
            assert d.expected == str(_offset(plain, sw, r, c) % 64 // 8), seed
