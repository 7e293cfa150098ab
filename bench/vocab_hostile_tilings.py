"""Hand-written hostile cases for cute_vocab's C++ program: permutations that are not bijections, negative strides,
tilers of rank 1 / 3 for the DSL's make_tiled_copy."""

import json
import random
import sys

sys.path.insert(0, "tests/oracle")
import cute_vocab as V

import algebra as A
from algebra import atoms

rng = random.Random(16460)
SM80 = "SM80_16x8x16_F32F16F16F32_TN"
cases = []
perms = [
    ["(8,4):(0,1)", None, None],
    ["(4,8):(8,1)", None, None],
    [None, "(4,4):(4,1)", None],
    [None, None, "(2,8):(8,1)"],
    ["32:-1", None, None],
    [None, "(2,8):(1,4)", None],
    ["(2,16):(16,1)", 32, None],
    [64, "(16,2):(2,1)", 32],
    [None, "(8,2):(2,0)", None],
    [None, None, "(8,2):(2,1)"],
]
for p in perms:
    for name, lay in (
        (SM80, "(2,2,1)"),
        ("SM70_8x8x4_F32F16F16F32_TN", "(2,2,1)"),
        ("SM80_16x8x8_F32TF32TF32F32_TN", "(2,2,1)"),
    ):
        try:
            tm = atoms.make_tiled_mma(name, A.parse(lay), V._perm(p))
            m, n, k = (tm.tile_size_mnk(i) for i in range(3))
            nt = tm.num_threads
        except Exception:  # we refuse: still ask CuTe
            m, n, k, nt = 32, 32, 32, 128
        cases.append(
            {
                "kind": "mma",
                "atom": name,
                "layout": lay,
                "perm": p,
                "thr": rng.randrange(nt),
                "A": [m, k],
                "B": [n, k],
                "C": [m, n],
                "row_major": rng.random() < 0.5,
                "copies": {},
                "identity": rng.choice("ABC"),
            }
        )
for tiler in ([16], [16, 64, 2], [128], [8, 8, 16], [32, 32]):
    cases.append(
        {"kind": "copy_tv", "atom": "SM75_U32x4_LDSM_N", "bits": 16, "tv": "((8,16),8):((128,1),16)", "tiler": tiler}
    )
    cases.append(
        {"kind": "copy_tv", "atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "bits": 16, "tv": "(128,8):(8,1)", "tiler": tiler}
    )
cute = V.run_cpp(cases)
bad = V.compare(cases, cute)
ref = sum(1 for i in range(len(cases)) if f"{i}.refused" in cute)
print(f"{len(cases)} cases, cute refused {ref}, differences {len(bad)}")
print("\n".join(bad))
json.dump({"cases": cases, "cute": cute}, open("/tmp/vocab_hostile_tilings.json", "w"))
