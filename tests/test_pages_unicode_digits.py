"""Digits of other scripts (Arabic-Indic ٨, fullwidth ８) in typed numbers: refused naming the field, as the layout
parser, the banks lab's access field and the menus refuse them. Before, a TTGIR attribute with ``vec = ٨``, a Triton
shape ``٦٤,٦٤`` and a descriptor tile ``٦٤`` were read as 8 and 64 (``\\d`` and ``str.isdecimal`` take every
script's digits), answering for text Triton and CuTe do not accept."""

from __future__ import annotations

from urllib.parse import quote

import pytest

SHARED = "#ttg.swizzled_shared<{{vec = {v}, perPhase = 1, maxPhase = 8, order = [1, 0]}}>"
BLOCKED = "#ttg.blocked<{{sizePerThread = [1, {v}], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}}>"


@pytest.mark.parametrize("digit", ["\u0668", "\uff18", "\U0001d7ea"])
@pytest.mark.parametrize("attr", [SHARED, BLOCKED])
def test_a_ttgir_attribute_with_other_scripts_digits_is_refused(client, digit, attr):
    r = client.post("/api/triton/layout", json={"layout": attr.format(v=digit), "shape": [64, 64]})
    assert r.status_code == 422, r.text[:200]
    assert r.json()["detail"].startswith("layout")
    ok = client.post("/api/triton/layout", json={"layout": attr.format(v="8"), "shape": [64, 64]})
    assert ok.status_code == 200


@pytest.mark.parametrize("url, named", [
    ("/?ttgir=" + quote(SHARED.format(v="8")) + "&shape=" + quote("\u0666\u0664,\u0666\u0664"),
     "shape: &#39;\u0666\u0664,\u0666\u0664&#39; is not a list of sizes"),
    ("/tv?tt_layout=" + quote(SHARED.format(v="8")) + "&tt_shape=" + quote("\u0666\u0664,64"),
     "shape: &#39;\u0666\u0664,64&#39; is not a list of sizes"),
    ("/tv?dmn=" + quote("\u0666\u0664"), "tile MN: expected integers such as 64,64"),
    ("/tv?dk=" + quote("\uff16\uff14"), "tile K: expected integers such as 64,64")])
def test_page_fields_with_other_scripts_digits_are_named(client, url, named):
    r = client.get(url)
    assert r.status_code == 200
    assert named in r.text
