"""Job parameters take JSON's types as the schema declares them, for every kind: ``true``, ``4.0``, ``"32"``,
unicode digits, NaN and infinities are refused by the field's name (422), never read as 1, 4 or 32; a swizzle that is
given is read whatever the variant; ``access.offsets`` is 32 lanes. Fresh values from seeds 14600+."""

from __future__ import annotations

import math
import random

import pytest

from gpu_worker import registry
from gpu_worker.registry import ParamsError

#: (kind, a valid base, the integer fields to poison)
CASES = [
    ("smem", {}, ["element_bytes", "rows", "cols", "nacc", "iterations", "runs"]),
    ("transpose", {"dtype": "fp16", "tile": 64}, ["n", "tile", "block_rows", "runs"]),
    ("gemm", {"rung": 7}, ["rung", "m", "n", "k", "iters", "warmup"]),
    ("compile_only", {"nvcc": "skip"}, ["hold_ms"]),
]
HOSTILE = [True, False, "32", "１２８", "٣٢", "1_024", " 32 ", 32.0, 64.0, math.nan, math.inf, -math.inf, [32],
           {"v": 32}, None]


def _refused(kind: str, params: dict) -> str:
    with pytest.raises(ParamsError) as exc:
        registry.validate(kind, params)
    return str(exc.value)


@pytest.mark.parametrize(("kind", "base", "fields"), CASES)
def test_a_number_field_takes_only_a_json_integer(kind, base, fields):
    for f in fields:
        for v in HOSTILE:
            if v is None and f in ("tile",):
                continue
            msg = _refused(kind, {**base, f: v})
            assert msg.startswith(f"{f}:") and "integer" in msg or "Input should be" in msg, (f, v, msg)
            assert f in msg, (f, v, msg)


def test_fresh_integers_still_validate_and_bools_in_int_choices_do_not():
    rng = random.Random(14600)
    for _ in range(40):
        eb = rng.choice([1, 2, 4, 8, 16])
        rows, cols = rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64])
        m = registry.validate("smem", {"element_bytes": eb, "rows": rows, "cols": cols, "runs": 20, "iterations": 1})
        assert (m.element_bytes, m.rows, m.cols) == (eb, rows, cols)
    # True == 1 and 4.0 == 4: an int Literal alone would take both
    assert "element_bytes" in _refused("smem", {"element_bytes": True})
    assert "element_bytes" in _refused("smem", {"element_bytes": 4.0})
    assert "access.num" in _refused("smem", {"access": {"kind": "ldmatrix", "num": True}})
    assert "rung" in _refused("gemm", {"rung": True})
    assert "element_bytes" in _refused("smem_solve", {"element_bytes": True, "tile": "(8,64):(64,1)",
                                                      "accesses": [{"kind": "row", "index": 0}]})
    assert "defines" in _refused("compile_only", {"template": "smem", "defines": {"WARPS": True}})
    assert "profile" in _refused("smem", {"profile": 1})


def test_offsets_are_32_lanes_of_ints_or_pairs():
    base = {"element_bytes": 4, "rows": 32, "cols": 32}
    ok = registry.validate("smem", {**base, "access": {"kind": "offsets", "offsets": [[i, 0] for i in range(32)]}})
    assert ok.access.offsets[5] == [5, 0]
    assert "access.offsets" in _refused("smem", {**base, "access": {"kind": "offsets", "offsets": list(range(33))}})
    assert "access.offsets" in _refused("smem", {**base, "access": {"kind": "offsets",
                                                                    "offsets": [True] + list(range(31))}})
    assert "access.offsets" in _refused("smem", {**base, "access": {"kind": "offsets",
                                                                    "offsets": [[1, 2, 3]] + list(range(31))}})


def test_a_swizzle_is_read_by_variant_swizzle_only():
    """A malformed swizzle is refused whatever the variant; a well-formed one given to a variant that does not read
    it is refused by name too (tests/test_lab_fields_read.py covers every field and variant)."""
    for bad in ("NaN", "Sw<3,3>", "１２８", "Sw<9,0,3>"):
        assert "swizzle" in _refused("smem", {"variant": "naive", "swizzle": bad})
    assert _refused("smem", {"variant": "naive", "swizzle": "Sw<5,0,5>"}).startswith("swizzle: variant naive")
    assert registry.validate("smem", {"variant": "swizzle", "swizzle": "Sw<5,0,5>"}).swizzle == "Sw<5,0,5>"


def test_the_http_route_names_the_field(client):
    r = client.post("/api/bench/jobs", json={"kind": "gemm", "params": {"rung": True}})
    assert r.status_code == 422 and r.json()["detail"].startswith("rung:"), r.text
    r = client.post("/api/bench/jobs", json={"kind": "smem", "params": {"rows": "32"}})
    assert r.status_code == 422 and "rows" in r.json()["detail"], r.text


def test_a_coordinate_layout_is_refused_from_its_strides_before_any_cell():
    """``(256,256):(1@0,1@1)`` used to be enumerated (65,536 coordinate cells, about 0.9 s of CPU) before the refusal;
    the strides say it already."""
    import time

    registry.validate("smem", {"variant": "custom", "layout": "(8,8):(8,1)"})  # imports done
    for text in ("(256,256):(1@0,1@1)", "(256,256):(256,1@0)", "(128,512):(1@1,1@0)"):
        t = time.thread_time()
        msg = _refused("smem", {"variant": "custom", "layout": text})
        assert "maps coordinates to coordinates" in msg and time.thread_time() - t < 0.2, (text, msg)


def test_smem_solve_layout_choices_are_typed():
    base = {"element_bytes": 2, "tile": "(64,64):(64,1)", "accesses": [{"kind": "column", "index": 0}]}
    for bad, field in ((({"kind": "padding", "pad": True}), "layouts.0.padding.pad"),
                       ({"kind": "padding", "pad": 1.5}, "layouts.0.padding.pad"),
                       ({"kind": "swizzle", "swizzle": [True, 3, 3]}, "layouts.0.swizzle.swizzle.0"),
                       ({"kind": "swizzle", "swizzle": [3, 3, 3], "extra": 1}, "layouts.0.swizzle.extra"),
                       ({"kind": "xor", "xor": "x"}, "layouts.0.xor.xor"),
                       ({"kind": "xor", "xor": {"a": 1}}, "layouts.0.xor.xor.a"),
                       ({"kind": "nope"}, "layouts.0")):
        msg = _refused("smem_solve", {**base, "layouts": [bad]})
        assert field in msg and "tagged-union" not in msg, (bad, msg)
    ok = registry.validate("smem_solve", {**base, "layouts": [{"kind": "padding", "pad": 8}, "best"]})
    assert ok.spec()["layouts"] == [{"kind": "padding", "pad": 8}, "best"]
    assert registry.validate("smem_solve", base).spec()["layouts"] == [{"kind": "naive"}, "best"]
