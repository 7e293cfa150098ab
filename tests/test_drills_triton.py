"""The ``triton_layout`` drill kind: keys recomputed from the layouts' definitions (a blocked layout's element by
sizePerThread / threadsPerWarp / warpsPerCTA / order, wrapped over the tensor; a store's wavefronts from the bank map
of the byte addresses each lane writes), graded answers, and the usual mistake named."""

from __future__ import annotations

import re

from app.drills.core import generate


def _blocked_element(text: str, shape: list[int], reg: int, lane: int, warp: int) -> tuple[int, int] | None:
    """Element of a blocked layout by its definition (order[0] fastest; a CTA tile repeated over registers, or
    broadcast where it is larger than the tensor). None when the layout is not blocked."""
    m = re.search(r"sizePerThread = \[(\d+), (\d+)\], threadsPerWarp = \[(\d+), (\d+)\], warpsPerCTA = "
                  r"\[(\d+), (\d+)\], order = \[(\d), (\d)\]", text)
    if not m:
        return None
    spt, tpw, wpc = [int(m[1]), int(m[2])], [int(m[3]), int(m[4])], [int(m[5]), int(m[6])]
    order = [int(m[7]), int(m[8])]

    def split(x: int, sizes: list[int]) -> list[int]:
        out = [0, 0]
        for d in order:
            out[d] = x % sizes[d]
            x //= sizes[d]
        return out
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(2)]
    per_thread = spt[0] * spt[1]
    inner, rep = reg % per_thread, reg // per_thread
    reps = [max(1, shape[d] // tile[d]) for d in range(2)]
    r_in, l_, w_ = split(inner, spt), split(lane, tpw), split(warp, wpc)
    r_out = split(rep, reps)
    return tuple((r_in[d] + spt[d] * (l_[d] + tpw[d] * (w_[d] + wpc[d] * r_out[d]))) % shape[d] for d in range(2))


def test_holds_keys_follow_the_blocked_definition():
    seen = 0
    for seed in range(300):
        d = generate("triton_layout", seed)
        if d.variant != "holds":
            continue
        x = d.data
        want = _blocked_element(x["layout"], x["shape"], x["register"], x["lane"], x["warp"])
        if want is None:
            continue
        # blocked layouts whose CTA tile is larger than the tensor drop registers: only check the others
        if "sizePerThread" in x["layout"] and all(
                int(a) * int(b) * int(c) <= s for a, b, c, s in zip(
                    *(re.findall(r"\[(\d+), (\d+)\]", x["layout"])[:3]), x["shape"], strict=True)):
            assert d.expected == f"({want[0]}, {want[1]})", d.prompt
            assert d.grade(f"({want[0]},{want[1]})").correct
            seen += 1
    assert seen >= 20


def _wavefronts(addresses: list[int], access: int) -> int:
    per = {2: 32, 4: 32, 8: 16, 16: 8}[access]
    total = 0
    for s in range(0, 32, per):
        words = {a // 4 + k for a in addresses[s:s + per] for k in range(max(1, access // 4))}
        banks: dict[int, int] = {}
        for w in words:
            banks[w % 32] = banks.get(w % 32, 0) + 1
        total += max(banks.values())
    return total


def test_store_keys_are_the_bank_model_of_the_lane_addresses():
    from algebra.doctor import triton_conflicts as TC
    from algebra.doctor import triton_layouts as TL
    from algebra.doctor.triton_shared import offset_table

    checked = 0
    for seed in range(200):
        d = generate("triton_layout", seed)
        if d.variant != "store":
            continue
        x = d.data
        shape = x["shape"]
        dist, sh = TL.convert(x["distributed"], shape), TL.convert(x["shared"], shape, 16)
        table = offset_table(sh.ll, [], shape)
        m = TC.mapping(dist, sh, 16)
        vec = TC.plan(dist, sh, 16)["vector"]
        if vec is None:  # stmatrix: its rows are checked in test_api_triton
            continue
        b = dist.ll.bases
        regs = [i for i, v in enumerate(b["register"]) if any(v)]
        vbits = [i for i in regs if m.reg[regs.index(i)] in [1 << k for k in range(vec.bit_length() - 1)]]
        rest = [i for i in regs if i not in vbits]
        total = 0
        for n in range(1 << len(rest)):
            reg = sum(1 << rest[j] for j in range(len(rest)) if (n >> j) & 1)
            addrs = []
            for lane in range(32):
                r, c = dist.ll(register=reg, lane=lane, warp=0)
                addrs.append(2 * table[r * shape[1] + c])
            total += _wavefronts(addrs, 2 * vec)
        assert d.expected == str(total), d.prompt
        assert d.grade(f"{total} wavefronts").correct and not d.grade(str(total + 1)).correct
        checked += 1
    assert checked >= 50


def test_the_transposed_pair_is_named():
    for seed in range(100):
        d = generate("triton_layout", seed)
        if d.variant == "holds" and d.mistakes:
            row, col = (int(v) for v in d.expected.strip("()").split(", "))
            g = d.grade(f"({col}, {row})")
            assert not g.correct and g.mistake
            return
    raise AssertionError("no holds drill with row != col in 100 seeds")


def test_holds_reads_the_row_and_column_in_words():
    """``row 7, col 0``, ``r=7 c=0`` and ``7, 0`` are the pair (7, 0); the swapped or bumped pair stays wrong, two
    pairs are unreadable."""
    checked = 0
    for seed in range(3000, 3200):
        d = generate("triton_layout", seed)
        if d.variant != "holds":
            continue
        row, col = (int(v) for v in d.expected.strip("()").split(", "))
        for ans in (f"row {row}, col {col}", f"r={row} c={col}", f"{row}, {col}", f"col {col}, row {row}"):
            assert d.grade(ans).correct, (d.id, ans)
        assert not d.grade(f"row {row + 1}, col {col}").correct
        assert not d.grade(f"row {row}, column {col + 1}").correct
        if row != col:
            assert d.grade(f"row {col}, col {row}").mistake
        assert not d.grade(f"({row}, {col}) ({row}, {col})").readable
        checked += 1
    assert checked >= 50
