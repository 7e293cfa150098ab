"""Drill kind ``triton_layout``: reading a TTGIR layout as Triton prints it. Which element a lane holds in a register
(a blocked or an NVIDIA MMA layout, read through its LinearLayout bases), and how many wavefronts warp 0's store of
a blocked tensor into a swizzled_shared buffer takes (the instructions the compiler issues, under the bank model).
Keys come from ``algebra.doctor.triton_layouts`` / ``triton_conflicts``; the tests recompute them from the layouts'
definitions."""

from __future__ import annotations

import random

from algebra.doctor import triton_conflicts as TC
from algebra.doctor import triton_layouts as TL
from app.drills.common import pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import parse_rc
from app.drills.parsing import parse_int

RULE = ("A Triton layout is linear over bits: each bit of the register, lane and warp index adds (XOR) one basis "
        "vector (row, col); the element is the XOR of the bases of the set bits.")
STORE_RULE = ("Each lane stores the widest run of elements that is consecutive in its registers and in shared "
              "memory (at most 16 bytes); phases of 32 / 16 / 8 lanes for 4 / 8 / 16-byte stores; a phase costs as "
              "many wavefronts as the most different 4-byte words in one bank.")


def _split(rng: random.Random, total: int) -> list[int]:
    a = 1 << rng.randint(0, total.bit_length() - 1)
    return [a, total // a]


def blocked(rng: random.Random) -> str:
    spt = [pick(rng, [1, 1, 2, 4]), pick(rng, [1, 2, 4, 8])]
    tpw = _split(rng, 32)
    wpc = _split(rng, pick(rng, [1, 2, 4]))
    order = pick(rng, [[1, 0], [1, 0], [0, 1]])
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


def mma(rng: random.Random) -> str:
    if rng.random() < 0.5:
        w = _split(rng, pick(rng, [1, 2, 4]))
        return f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = {w}, instrShape = [16, 8]}}>"
    n = pick(rng, [16, 32, 64])
    return (f"#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = [{pick(rng, [1, 2, 4])}, 1], "
            f"instrShape = [16, {n}, 16]}}>")


def _bits(x: int) -> list[int]:
    return [i for i in range(x.bit_length()) if (x >> i) & 1]


def _holds(rng: random.Random, seed: int) -> Drill:
    text = blocked(rng) if rng.random() < 0.55 else mma(rng)
    shape = [pick(rng, [16, 32, 64]), pick(rng, [16, 32, 64])]
    t = TL.convert(text, shape)
    b = t.ll.bases
    lane = 5 if rng.random() < 0.5 else rng.randrange(32)
    warp = rng.randrange(1 << len(b["warp"]))
    reg = rng.randrange(1 << len(b["register"]))
    row, col = t.ll(register=reg, lane=lane, warp=warp)
    want = (row, col)
    steps = [step(f"The layout for a {shape[0]}x{shape[1]} tensor has bases register {b['register']}, lane "
                  f"{b['lane']}, warp {b['warp']}.")]
    for name, x in (("register", reg), ("lane", lane), ("warp", warp)):
        used = [b[name][i] for i in _bits(x)]
        steps.append(step(f"{name} {x} sets bit(s) {_bits(x) or 'none'}: bases {used or 'none'}."))
    steps.append(step(f"XOR of those bases: ({row}, {col})."))

    def grade(ans: str) -> Grade:
        got = parse_rc(ans)  # (25, 11), 25, 11, row 25, col 11, r=25 c=11
        if got == want:
            return Grade.right()
        if got == (col, row):
            return Grade.wrong("that is (col, row): dim0 is the row")
        return Grade.wrong(f"({got[0]}, {got[1]}) is another element")

    prompt = (f"A tensor<{shape[0]}x{shape[1]}xf16> has the layout\n{text}\nWhich element (row, col) does lane "
              f"{lane} of warp {warp} hold in register {reg}?")
    d = Drill("triton_layout", seed, prompt, "one (row, col), e.g. (3, 12)", f"({row}, {col})", grade, steps,
              [RULE, steps[0]["text"]], variant="holds")
    d.with_data(layout=text, shape=shape, register=reg, lane=lane, warp=warp)
    if row != col:
        d.mistake("(col, row): dim0 is the row, dim1 the column", lambda a: parse_rc(a) == (col, row),
                  f"({col}, {row})")
    return d


def _store(rng: random.Random, seed: int) -> Drill:
    text = blocked(rng)
    shape = [pick(rng, [32, 64]), pick(rng, [32, 64, 128])]
    vec, per, maxp = pick(rng, [1, 2, 4, 8]), pick(rng, [1, 1, 2, 4]), pick(rng, [1, 2, 4, 8])
    shared = f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = {maxp}, order = [1, 0]}}>"
    d_, s_ = TL.convert(text, shape), TL.convert(shared, shape, 16)
    p = TC.plan(d_, s_, 16, "store", 0)
    want = p["wavefronts"]
    ins = p["instructions"]
    steps = [step(f"{p['why']}."),
             step(f"Warp 0 issues {p['count']} such store(s) over the {shape[0]}x{shape[1]} tensor (every repeat of "
                  "the CTA tile is a register of the layout)."),
             step("Per store: " + ", ".join(str(i["wavefronts"]) for i in ins[:16])
                  + (" ..." if len(ins) > 16 else "") + f" wavefronts (ideal {ins[0]['ideal']} each)."),
             step(f"In all {want} wavefronts against an ideal of {p['ideal']}.")]

    def grade(ans: str) -> Grade:
        n = parse_int(ans, "wavefront")
        if n == want:
            return Grade.right()
        if n == p["ideal"] and want != n:
            return Grade.wrong("that is the ideal; the swizzle does not reach it")
        return Grade.wrong(f"{n} wavefronts is not what this store takes")

    prompt = (f"Warp 0 stores a tensor<{shape[0]}x{shape[1]}xf16> with layout\n{text}\ninto shared memory laid out as"
              f"\n{shared}\nHow many wavefronts do all of warp 0's store instructions take in total?")
    d = Drill("triton_layout", seed, prompt, "one integer (wavefronts), e.g. 48", str(want), grade, steps,
              [STORE_RULE, steps[0]["text"]], variant="store")
    d.with_data(distributed=text, shared=shared, shape=shape, instruction=p["kind"], count=p["count"])
    if p["ideal"] != want:
        d.mistake("the ideal, not the count: the swizzle leaves conflicts", lambda a: parse_int(a) == p["ideal"],
                  str(p["ideal"]))
    return d


@register("triton_layout", "Reading Triton's layouts", "Which element a lane holds in a TTGIR blocked / MMA layout, "
          "and the wavefronts of a store into a swizzled_shared buffer.", 15)
def make_triton(rng: random.Random, seed: int) -> Drill:
    return _holds(rng, seed) if rng.random() < 0.5 else _store(rng, seed)
