"""Drill kind ``read_rung`` ("Read this rung"): one rung of the GEMM ladder, its shared-memory layout as the rung
declares it (gpu_worker/gemm_decl.py, the layout the kernel was built with) and one instruction of the kernel that
touches it. How many wavefronts does it take (the bank model), what does the next rung's layout make of the same
instruction, and the layout fact behind it: the bank a padded row starts in, the chunk a swizzled element lands in."""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from algebra.banks import analyze
from app.drills.common import pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import parse_int
from gpu_worker.gemm_decl import DECLS
from gpu_worker.gemm_layouts import Access, SmemOperand

RULE = ("32 banks of 4 bytes, bank = (byte address / 4) mod 32. A warp's request splits into phases: 4-byte accesses "
        "one phase of 32 lanes, 16-byte accesses four phases of 8 lanes, ldmatrix (and a wgmma core matrix) one phase "
        "per 8x8 matrix of eight 16-byte rows. A phase costs as many wavefronts as the most distinct words in one "
        "bank.")
#: Rung pairs whose layouts differ, for "what does the next layout make of it": the padding, the swizzle.
NEXT = {2: (3, 4)}


def _choices() -> list[tuple[int, SmemOperand, Access]]:
    return [(r, op, a) for r, d in sorted(DECLS.items()) for op in d.smem for a in op.accesses]


def _analysis(op: SmemOperand, access: Access, coords: list[tuple[int, int]]) -> Any:
    lay = A.parse(op.layout)
    addrs = [op.element_bytes * lay(c) for c in coords]
    if access.kind == "ldmatrix":
        return analyze(addrs, kind="ldmatrix")
    return analyze(addrs, access_bytes=access.width)


def describe(rung: int, op: SmemOperand, access: Access, coords: list[tuple[int, int]]) -> str:
    """The instruction in words: which elements each lane (or row address) touches."""
    if access.kind == "ldmatrix":
        starts = ", ".join(f"({coords[8 * m][0]},{coords[8 * m][1]})" for m in range(len(coords) // 8))
        return (f"{access.name}: four 8x8 matrices of eight 16-byte rows, the matrices' first elements at (row, col) "
                f"{starts}, each matrix 8 consecutive rows from there")
    if access.width == 16 and op.element_bytes == 2:
        rows = sorted({r for r, _ in coords})
        return (f"{access.name}: 32 lanes of 16 bytes, lanes 8j..8j+7 covering row {rows[0]} + j, its eight 16-byte "
                f"chunks in order (rows {rows[0]}..{rows[-1]})")
    if access.width == 16:  # rung 1: float4 of 4 consecutive rows at one k
        quarters = ["/".join(str(r) for r in sorted({coords[8 * q + i][0] for i in range(8)})) for q in range(4)]
        return (f"{access.name}: each lane one float4 (rows r..r+3 at k = {coords[0][1]}); lanes 8q..8q+7 start at "
                "rows " + "; ".join(f"q={q}: {s}" for q, s in enumerate(quarters)))
    if op.element_bytes == 4:  # rung 1's widening stores
        return (f"{access.name}: lane l writes one float at row {coords[0][0]} + l/2, k {coords[0][1]} + 8 (l % 2)")
    return (f"{access.name}: lane l writes one 4-byte word (two bf16) at row {coords[0][0]} + l/4, column "
            f"{coords[0][1]} + 2 (l % 4)")


def _tile_text(rung: int, op: SmemOperand) -> str:
    kind = {4: "fp32 (widened from bf16)", 2: "bf16"}[op.element_bytes]
    return f"Rung {rung} ({DECLS[rung].name}) keeps its {op.operand} tile in shared memory as {op.layout}, {kind}"


#: The unit each integer question of this kind counts in (parse_words.UNITS).
_UNIT = {"wavefronts": ("wavefront", "way"), "is not the bank": "bank", "is not the chunk": "chunk"}


def _int_grader(want: int, what: str):
    def grade(ans: str) -> Grade:
        got = parse_int(ans, _UNIT[what])
        return Grade.right() if got == want else Grade.wrong(f"{got} {what} is not right")
    return grade


def _wavefronts(rng: random.Random, seed: int) -> Drill:
    rung, op, access = pick(rng, [c for c in _choices() if c[2].counter is not None])
    coords = pick(rng, access.instances())
    r = _analysis(op, access, coords)
    text = describe(rung, op, access, coords)
    steps = [step(RULE), step(f"Element (r, c) is at element offset L(r, c) of {op.layout}; times {op.element_bytes} "
                              "bytes, its byte address.", A.parse(op.layout)),
             *[step(f"Phase {p}: {len(lanes)} addresses, banks {sorted({r.banks[i] for i in lanes})[:8]}..., "
                    f"{r.phases[p]} wavefront(s).") for p, lanes in enumerate(r.phase_lanes)],
             step(f"Total: {r.wavefronts} wavefronts over {len(r.phases)} phases ({r.ways}-way at worst)"
                  + (": conflict-free." if r.ways == 1 else f"; {r.wavefronts - len(r.phases)} more than the floor."))]
    d = Drill("read_rung", seed, f"{_tile_text(rung, op)}. One instruction of its kernel: {text}. How many "
              "wavefronts does it take?", "one integer (wavefronts)", str(r.wavefronts),
              _int_grader(r.wavefronts, "wavefronts"), steps,
              [RULE, steps[1]["text"]], f"wavefronts/{rung}").with_data(
        rung=rung, operand=op.operand, layout=op.layout, element_bytes=op.element_bytes, access=access.name,
        kind=access.kind, width=access.width, coords=[list(c) for c in coords])
    if r.ways != r.wavefronts:
        d.mistake("the N of N-way (the worst phase) instead of the wavefronts summed over the phases",
                  lambda ans: parse_int(ans) == r.ways, str(r.ways))
    if len(r.phases) != r.wavefronts:
        d.mistake("one wavefront a phase: that is the conflict-free floor, not this layout's cost",
                  lambda ans: parse_int(ans) == len(r.phases), str(len(r.phases)))
    return d


def _next(rng: random.Random, seed: int) -> Drill:
    rung = 2
    nxt = pick(rng, NEXT[rung])
    operand = pick(rng, ["A", "B"])
    op, op2 = DECLS[rung].operand(operand), DECLS[nxt].operand(operand)
    access = next(a for a in op.accesses if a.kind == "ldmatrix")
    coords = pick(rng, access.instances())
    before, after = _analysis(op, access, coords), _analysis(op2, access, coords)
    fact = DECLS[nxt].fact
    steps = [step(RULE), step(f"Under {op.layout}: {before.wavefronts} wavefronts ({before.ways}-way): rows are "
                              f"{op.pitch * 2} bytes apart, a multiple of 128, so the 8 rows of a matrix share 4 "
                              "banks.", A.parse(op.layout)),
             step(f"Under {op2.layout}: {fact}", A.parse(op2.layout)),
             step(f"The same instruction now takes {after.wavefronts} wavefronts.")]
    d = Drill("read_rung", seed, f"{_tile_text(rung, op)}. {describe(rung, op, access, coords)}: it takes "
              f"{before.wavefronts} wavefronts. Rung {nxt} keeps the same tile as {op2.layout}. How many wavefronts "
              "does the same instruction take there?", "one integer (wavefronts)", str(after.wavefronts),
              _int_grader(after.wavefronts, "wavefronts"), steps,
              [RULE, f"Where do the 8 row addresses of one matrix fall under {op2.layout}?"], f"next/{nxt}").with_data(
        rung=nxt, operand=operand, layout=op2.layout, element_bytes=2, access=access.name, kind="ldmatrix", width=16,
        coords=[list(c) for c in coords], before=before.wavefronts)
    return d.mistake("the old layout's count: the next rung changes where rows start", lambda ans:
                     parse_int(ans) == before.wavefronts, str(before.wavefronts))


def _shift(rng: random.Random, seed: int) -> Drill:
    rung = pick(rng, [2, 3, 3])
    op = DECLS[rung].operand(pick(rng, ["A", "B"]))
    row = rng.randrange(1, min(op.shape[0], 32))
    byte = op.element_bytes * A.parse(op.layout)((row, 0))
    bank = byte // 4 % 32
    steps = [step(RULE), step(f"Row {row} starts at element {byte // op.element_bytes} = {row} x {op.pitch} (the pitch "
                              f"of {op.layout}), byte {byte}, word {byte // 4}.", A.parse(op.layout)),
             step(f"Bank = {byte // 4} mod 32 = {bank}: each row moves {op.pitch * op.element_bytes // 4 % 32} banks "
                  "along" + (", so 8 consecutive rows' 16-byte chunks tile all 32 banks." if rung == 3 else
                             ": every row starts in bank 0, and ldmatrix's 8 rows collide."))]
    d = Drill("read_rung", seed, f"{_tile_text(rung, op)}. In which bank does row {row} (column 0) start?",
              "one integer (a bank, 0-31)", str(bank), _int_grader(bank, "is not the bank"), steps,
              [RULE, f"Row {row} starts {row} pitches into the tile."], f"shift/{rung}").with_data(
        rung=rung, operand=op.operand, layout=op.layout, element_bytes=op.element_bytes, row=row)
    if byte // 4 != bank:
        d.mistake("the word address instead of the bank: bank = word mod 32", lambda ans: parse_int(ans) == byte // 4,
                  str(byte // 4))
    return d


def _chunk(rng: random.Random, seed: int) -> Drill:
    rung = pick(rng, [4, 5, 6, 7, 8])
    op = pick(rng, [o for o in DECLS[rung].smem if o.swizzle])
    r, c = rng.randrange(op.shape[0]), rng.randrange(op.shape[1])
    off = A.parse(op.layout)((r, c))
    chunk = off % op.shape[1] // 8
    b, m, s = op.swizzle
    steps = [step(RULE), step(f"Unswizzled, ({r},{c}) is element {r * op.pitch + c}: row {r}, chunk {c // 8} (8 bf16 "
                              "per 16-byte chunk).", A.parse(op.base)),
             step(f"{op.swizzle_text} XORs offset bits {m + s}..{m + s + b - 1} (the row mod 8 = {r % 8}) into bits "
                  f"{m}..{m + b - 1} (the chunk): chunk {c // 8} ^ {r % 8} = {chunk}.", A.parse(op.layout)),
             step("So the 8 rows of one chunk column land in 8 different chunks: an 8-row read of 16-byte rows "
                  "(ldmatrix, a wgmma core matrix) covers all 32 banks once.")]
    d = Drill("read_rung", seed, f"{_tile_text(rung, op)}. In which 16-byte chunk (0-7) of row {r} does element "
              f"({r},{c}) end up?", "one integer (a chunk, 0-7)", str(chunk), _int_grader(chunk, "is not the chunk"),
              steps, [RULE, "Which offset bits pick the chunk, and which bits does the swizzle XOR into them?"],
              f"chunk/{rung}").with_data(rung=rung, operand=op.operand, layout=op.layout, element_bytes=2,
                                         coord=[r, c])
    if c // 8 != chunk:
        d.mistake("the chunk before the swizzle: Sw<3,3,3> moves it by the row mod 8", lambda ans:
                  parse_int(ans) == c // 8, str(c // 8))
    return d


@register("read_rung", "Read this rung", "One rung of the GEMM ladder: its shared-memory layout and one instruction "
          "of its kernel. How many wavefronts, and which layout fact of the next rung removes them.", 16)
def make_read_rung(rng: random.Random, seed: int) -> Drill:
    return pick(rng, [_wavefronts, _wavefronts, _wavefronts, _next, _shift, _chunk])(rng, seed)
