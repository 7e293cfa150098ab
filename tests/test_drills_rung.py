"""Drill kind ``read_rung``: every key recomputed from the drill's data by hand (the phases and banks written out here,
not the bank model's code), the layouts are the rungs' declared ones, and the variants and rungs all occur."""

from __future__ import annotations

from collections import Counter

import algebra as A
from app.drills.core import generate
from gpu_worker.gemm_decl import DECLS

SEEDS = range(300)


def wavefronts_by_hand(layout: str, eb: int, kind: str, width: int, coords: list) -> int:
    lay = A.parse(layout)
    addrs = [eb * lay(tuple(c)) for c in coords]
    if kind == "ldmatrix":
        per, words = 8, 4  # one 8x8 matrix of 16-byte rows per phase
    else:
        per, words = {4: 32, 8: 16, 16: 8}[width], max(1, width // 4)
    total = 0
    for p in range(0, len(addrs), per):
        ws = {a // 4 + k for a in addrs[p:p + per] for k in range(words)}
        total += max(sum(1 for w in ws if w % 32 == b) for b in range(32))
    return total


def test_keys_by_hand():
    seen = Counter()
    for seed in SEEDS:
        d = generate("read_rung", seed)
        x, kind = d.data, d.variant.split("/")[0]
        seen[kind] += 1
        seen[f"rung{x['rung']}"] += 1
        assert x["layout"] == DECLS[x["rung"]].operand(x["operand"]).layout, d.prompt  # the declared layout
        assert x["layout"] in d.prompt
        if kind in ("wavefronts", "next"):
            want = wavefronts_by_hand(x["layout"], x["element_bytes"], x["kind"], x["width"], x["coords"])
        elif kind == "shift":
            lay = A.parse(x["layout"])
            want = lay((x["row"], 0)) * x["element_bytes"] // 4 % 32
            assert want == (x["row"] * (72 if x["rung"] == 3 else 64) * 2 // 4) % 32
        else:
            r, c = x["coord"]
            want = (c // 8) ^ (r % 8)  # Sw<3,3,3>: the 16-byte chunk XOR the row mod 8
        assert d.expected == str(want), (seed, d.prompt)
        if kind == "next":
            assert x["before"] == 32 and want == 4  # rung 2's conflict, gone under the padding or the swizzle
    assert min(seen[k] for k in ("wavefronts", "next", "shift", "chunk")) >= 20, seen
    assert all(seen[f"rung{r}"] for r in DECLS), seen


def test_the_unpadded_rung_shows_its_conflict_and_the_fixed_ones_do_not():
    keys = {}
    for seed in SEEDS:
        d = generate("read_rung", seed)
        if d.variant.startswith("wavefronts/") and "ldmatrix" in d.data["access"]:
            keys.setdefault(d.data["rung"], set()).add(d.expected)
    assert keys[2] == {"32"} and keys[3] == keys[4] == {"4"}


def test_wrong_counts_are_named():
    for seed in SEEDS:
        d = generate("read_rung", seed)
        if d.variant == "wavefronts/2" and "ldmatrix" in d.data["access"]:
            g = d.grade("8")
            assert not g.correct and "N of N-way" in g.mistake
            assert "floor" in d.grade("4").mistake
            assert d.grade("32 wavefronts").correct and not d.grade("thirty").readable
            return
    raise AssertionError("no rung-2 ldmatrix drill in the seeds")
