"""Drill kind ``banks``: offsets and banks of a column read, N-way conflicts, the padded bank formula, and choosing a
swizzle or a padding that makes an access conflict-free (graded with the bank model: any working choice is right),
including the 16-byte (ldmatrix) rows of a half-precision tile."""

from __future__ import annotations

import functools
import random
import re
from typing import Any

import algebra as A
from algebra import banks as B
from app.drills import sheet
from app.drills.common import lstr, pick, read_layout, row_major, step
from app.drills.core import Drill, Grade, Grid, register
from app.drills.formula import Formula
from app.drills.parsing import AnswerError, parse_int, parse_int_list, parse_padding, parse_swizzle

RULE = ("32 banks of 4 bytes: bank = (byte address / 4) mod 32. Threads of one phase hitting different 4-byte words "
        "in the same bank are serialized; the worst bank's count is the N in N-way.")


def bank_grid(r: Any, title: str, rows: int | None = None) -> Grid:
    """Lanes against their bank, one row per lane (first ``rows`` lanes)."""
    n = len(r.banks) if rows is None else min(rows, len(r.banks))
    coords = r.coordinates or list(range(n))
    return Grid(title, [[lstr(coords[t]), r.byte_addresses[t] // 1, r.banks[t]] for t in range(n)],
                col_labels=["(r,c)", "byte", "bank"], row_labels=[f"lane {t}" for t in range(n)],
                caption=f"{r.ways}-way, {r.wavefronts} wavefront{'s' if r.wavefronts != 1 else ''}")


def tile(rng: random.Random) -> tuple[Any, int, int, int]:
    """A 32-row float tile with a row pitch (words) that may be padded: (layout, columns, pitch, padding)."""
    cols = pick(rng, [8, 16, 32, 32, 64, 128])
    pad = pick(rng, [0, 0, 0, 1, 2, 4, 8])
    return A.Layout((32, cols), (cols + pad, 1)), cols, cols + pad, pad


def _column(layout: Any, col: int, ebytes: int = 4, swizzle: Any = None) -> Any:
    return B.bank_access(layout, ebytes, {"kind": "column", "index": col}, swizzle=swizzle)


@functools.lru_cache(maxsize=32)
def tile_offsets(layout_text: str) -> frozenset[int]:
    """The set of offsets a tile's layout reaches (engine-evaluated), once per tile."""
    lay = A.parse(layout_text)
    return frozenset(lay(i) for i in range(A.size(lay)))


@functools.lru_cache(maxsize=32)
def closed_swizzles(layout_text: str, max_bits: int = 5) -> tuple[tuple[int, int, int], ...]:
    """Every Sw<B,M,S> the engine's ``swizzle_fixes`` would try on this tile (1 <= B <= max_bits, S >= B, within the
    offset bits) that maps the tile's offsets onto themselves, in (B, M, S) order. Depends on the tile only, so it is
    searched once per tile, not once per drill."""
    offsets = tile_offsets(layout_text)
    bits = max(max(offsets), 1).bit_length()
    # offsets 0 .. 2^bits - 1 exactly: a swizzle whose bits all lie below `bits` permutes them, no check needed
    full = len(offsets) == 1 << bits and max(offsets) == (1 << bits) - 1
    out = []
    for b in range(1, max_bits + 1):
        for m in range(bits):
            for s in range(b, bits - m - b + 1):
                sw = A.Swizzle(b, m, s)
                if full or {sw(o) for o in offsets} == offsets:
                    out.append((b, m, s))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _fixes(layout_text: str, ebytes: int, access: tuple[tuple[str, Any], ...]) -> tuple[B.Fix, ...]:
    lanes = B.lane_offsets(A.parse(layout_text), ebytes, dict(access))  # the layout evaluated once, not per swizzle
    lay = A.parse(layout_text)
    out = []
    for bms in closed_swizzles(layout_text):
        try:
            sw = A.Swizzle(*bms)
            if B.lane_ways(lanes, ebytes, sw) == 1:
                out.append(B.Fix("swizzle", 0, bms, lay, B.lane_bank_map(lanes, ebytes, sw)))
        except A.LayoutError:  # the swizzle splits a vector access
            continue
    return tuple(out)


def swizzle_fixes(layout: Any, ebytes: int, access: dict[str, Any]) -> list[B.Fix]:
    """The engine's ``banks.swizzle_fixes(layout, ebytes, access)`` (same fixes, same order), with the tile-only part
    of the search cached per tile and the result per (tile, element size, access)."""
    return list(_fixes(str(layout), ebytes, tuple(sorted(access.items()))))


#: A tile in CuTe's C++ spellings, which carry no ':' (``composition(Swizzle<3,3,3>{}, Layout<Shape<..>,..>{})``).
_CPP_LAYOUT = re.compile(r"Layout<|make_layout\(|composition\(|make_composed_layout\(")


def _fix_grader(layout: Any, ebytes: int, access: dict[str, Any], rows: int, cols: int) -> Any:
    """Grade a swizzle (Sw<B,M,S>) or padding (pad p / ld=q / a padded layout) by the bank model."""
    text = str(layout)

    def grade(ans: str) -> Grade:
        pad = parse_padding(ans, ebytes)
        if pad is None and (":" in ans.replace("::", "") or _CPP_LAYOUT.search(ans)):
            lay = read_layout(ans)
            if isinstance(lay, A.ComposedLayout):
                return _swizzled_tile(lay)
            if not isinstance(lay, A.Layout) or lay.shape != (rows, cols) or lay.stride[1] != 1 or \
                    lay.stride[0] < cols:
                return Grade.wrong(f"a padded tile keeps shape ({rows},{cols}) and stride (pitch,1) with pitch >= "
                                   f"{cols}; {lay} is not one")
            pad = -lay.stride[0]
        if pad is not None:
            pitch = -pad if pad < 0 else cols + pad
            if pitch < cols:
                return Grade.wrong(f"a row pitch of {pitch} is shorter than a row ({cols})")
            if pitch - cols >= cols:  # the format's bound: a padding is less than one row
                raise AnswerError(f"a padding is less than one row ({cols} elements): a pitch of {pitch} pads each "
                                  f"row by {pitch - cols} elements, as much as a row or more")
            padded = A.Layout((rows, cols), (pitch, 1))
            try:
                r = B.bank_access(padded, ebytes, access)
            except A.LayoutError as err:
                return Grade.wrong(f"with a pitch of {pitch} the access is not legal: {err}")
            if r.ways == 1:
                return Grade.right(f"a pitch of {pitch} elements is conflict-free ({r.wavefronts} wavefront(s))")
            return Grade.wrong(f"with a pitch of {pitch} the access is still {r.ways}-way")
        try:
            bms = parse_swizzle(ans)
            sw = A.Swizzle(*bms)
        except A.LayoutError as err:
            return Grade.wrong(str(err))
        return _swizzle(sw)

    def _swizzled_tile(lay: Any) -> Grade:
        """The full swizzled tile ``Sw<B,M,S> o 0 o T``: on the question's tile T it is the bare swizzle; on a
        padded tile of the same shape it is judged by the bank model as it stands."""
        tile_ = lay.layout_b
        if not isinstance(lay.layout_a, A.Swizzle) or not isinstance(tile_, A.Layout):
            return Grade.wrong(f"{lay} is not a swizzle applied to a tile")
        if lay.offset != 0:
            return Grade.wrong(f"the offset {lay.offset} moves the tile off its allocation; a swizzled tile is "
                               f"Sw<B,M,S> o 0 o the tile")
        if A.size(tile_) != rows * cols or not isinstance(tile_.shape, tuple) or tile_.shape != (rows, cols):
            return Grade.wrong(f"the tile under the swizzle must keep shape ({rows},{cols}); {tile_} does not")
        if tile_.stride == layout.stride:  # a flat (rows, cols) tile: the strides are its function
            return _swizzle(lay.layout_a)
        if tile_.stride[1] != 1 or tile_.stride[0] < cols:
            return Grade.wrong(f"under the swizzle, a tile of shape ({rows},{cols}) with stride (pitch,1), pitch >= "
                               f"{cols}; {tile_} is not one")
        offsets = {tile_(i) for i in range(rows * cols)}
        if {lay.layout_a(o) for o in offsets} != offsets:
            return Grade.wrong(f"{lay.layout_a} moves offsets outside the padded tile {tile_}")
        try:
            r = B.bank_access(tile_, ebytes, access, swizzle=lay.layout_a)
        except A.LayoutError as err:
            return Grade.wrong(f"with {lay} the access is not legal: {err}")
        if r.ways == 1:
            return Grade.right(f"{lay} is conflict-free ({r.wavefronts} wavefront(s))")
        return Grade.wrong(f"with {lay} the access is still {r.ways}-way")

    def _swizzle(sw: Any) -> Grade:
        bms = (sw.bits, sw.base, sw.shift)
        offsets = tile_offsets(text)
        if bms not in closed_swizzles(text) and {sw(o) for o in offsets} != offsets:
            return Grade.wrong(f"{sw} moves offsets outside the tile (its bits reach past the tile's "
                               f"{max(offsets).bit_length()} offset bits)")
        try:
            r = B.bank_access(layout, ebytes, access, swizzle=sw)
        except A.LayoutError as err:
            return Grade.wrong(f"with {sw} the access is not legal: {err}")
        if r.ways == 1:
            return Grade.right(f"{sw} makes the access conflict-free ({r.wavefronts} wavefront(s))")
        return Grade.wrong(f"with {sw} the access is still {r.ways}-way (banks {r.banks[:8]}...)")

    return grade


@register("banks", "Banks, padding and swizzling", "Banks of a column read, N-way conflicts, the padded formula, "
          "and a swizzle or padding that removes the conflict (any working choice); the 16-byte / ldmatrix case.", 7)
def make_banks(rng: random.Random, seed: int) -> Drill:
    variant = pick(rng, ["banks", "ways", "distinct", "formula", "fix", "fix", "swizzled", "ldmatrix_ways",
                         "ldmatrix_fix"])
    if variant.startswith("ldmatrix"):
        return _ldmatrix(rng, seed, variant)
    if variant == "swizzled":
        return _swizzled(rng, seed)
    if variant == "fix":
        return _fix(rng, seed)
    from_sheet = sheet.take(rng)  # the sheet's part 7: (32,32):(32,1), padded to 33 for 7.2 and the formula, column 5
    layout, cols, pitch, pad = (A.Layout((32, 32), (32, 1)), 32, 32, 0) if from_sheet else tile(rng)
    if (variant == "formula" and pad == 0) or (variant == "banks" and from_sheet):  # the sheet's 7.2: pitch 33
        pad, pitch = (1, cols + 1) if not from_sheet else (sheet.PITCH7 - 32, sheet.PITCH7)
        layout = A.Layout((32, cols), (pitch, 1))
    col = sheet.COL7 if from_sheet else rng.randrange(cols)
    r = _column(layout, col)
    desc = f"A float (4-byte) tile of 32 rows is stored as {layout} (row pitch {pitch} words). " \
           f"Lane i of a warp reads row i, column {col}."
    first = step(f"Row i, column {col} is offset {pitch}*i + {col}; byte address 4 times that; bank = offset mod 32.",
                 layout)
    rows4 = [step(f"Row {i}: offset {layout((i, col))}, bank {r.banks[i]}.") for i in range(4)]
    verdict = step(f"The 32 lanes hit {len(set(r.banks))} distinct banks; the busiest holds {r.ways} different "
                   f"words: {r.ways}-way, {r.wavefronts} wavefront(s).")
    grids = [bank_grid(r, "Lanes and their banks", 32)]
    if variant == "banks":
        lanes = [0, 1, 2, 3] if from_sheet else sorted(rng.sample(range(32), 4))  # 7.2: rows 0..3
        want = [r.banks[t] for t in lanes]
        labels = [f"row {t}" for t in lanes]
        return Drill("banks", seed, desc + " Give the banks of rows " + ", ".join(map(str, lanes)) + ".",
                     "four integers", ", ".join(map(str, want)),
                     lambda ans: _list(ans, want, labels),
                     [step(RULE), first] + [step(f"Row {t}: offset {layout((t, col))}, bank {r.banks[t]}.")
                                            for t in lanes] + [verdict],
                     [RULE, first["text"]], variant, grids).with_data(layout=str(layout), col=col, lanes=lanes).mistake(
            "the offsets (or word addresses) instead of the banks: bank = offset mod 32",
            lambda ans: parse_int_list(ans, 4) == [layout((t, col)) for t in lanes],
            ", ".join(str(layout((t, col))) for t in lanes))
    if variant == "distinct":
        n = len(set(r.banks))
        return Drill("banks", seed, desc + " How many distinct banks do the 32 lanes hit?",
                     "one integer", str(n), lambda ans: _int(ans, n, "distinct banks"),
                     [step(RULE), first, *rows4, verdict], [RULE, first["text"]], variant, grids).with_data(
                         layout=str(layout), col=col).mistake(
            "the N of N-way instead of the number of distinct banks", lambda ans: parse_int(ans) == r.ways,
            str(r.ways))
    if variant == "ways":
        return Drill("banks", seed, desc + " How many-way is the bank conflict (1 means conflict-free)?",
                     "one integer (the N of N-way)", str(r.ways),
                     lambda ans: _int(ans, r.ways, "ways"), [step(RULE), first, *rows4, verdict],
                     [RULE, first["text"]], variant, grids).with_data(layout=str(layout), col=col).mistake(
            "the number of distinct banks instead of the N of N-way (the most words that share one bank)",
            lambda ans: parse_int(ans) == len(set(r.banks)), str(len(set(r.banks))))
    if variant == "formula":
        want = r.banks
        expected = f"({pitch}*r + {col}) mod 32"

        def grade(ans: str) -> Grade:
            f = Formula(ans, ["r"])
            bad = [(i, want[i], f({"r": i})) for i in range(32) if f({"r": i}) != want[i]]
            if not bad:
                return Grade.right("right for all 32 rows")
            i, w, g = bad[0]
            return Grade.wrong(f"wrong for {len(bad)} of 32 rows, e.g. r = {i}: bank {w}, not {g}")

        return Drill("banks", seed, desc + " Write the bank of row r as a formula in r.",
                     "a formula in r, e.g. {ex}", expected, grade,
                     [step(RULE), first, *rows4, step(f"In general: bank(r) = {expected}; {pitch} mod 32 = "
                                                      f"{pitch % 32}, so each row moves {pitch % 32} bank(s)."),
                      verdict], [RULE, first["text"]], variant, grids).with_data(layout=str(layout), col=col
                                                                                 ).with_example(*FORMULA_EXAMPLES)
    raise AssertionError(variant)  # pragma: no cover - every variant returns above


#: Example answers the formats show (each drill takes one that is wrong for it).
FORMULA_EXAMPLES = ("(40*r + 3) mod 32", "(36*r + 1) mod 32", "(34*r + 7) mod 32", "(48*r + 2) mod 32")
PAD_EXAMPLES = ("pad 2", "pad 3", "pad 6", "pad 16")

#: Element types for the fix drills: (bytes, name, row lengths in elements). Halves need M = 1 (two per 4-byte
#: word), doubles B = 4 (16 threads per phase), floats the classic Sw<5,0,S>.
ELEMENTS = [(2, "half-precision (2-byte)", [64, 128]), (4, "float (4-byte)", [32, 64, 128]),
            (8, "double (8-byte)", [16, 32, 64])]


def _fix(rng: random.Random, seed: int) -> Drill:
    """Choose a swizzle (or a padding) that makes a column read conflict-free, for halves, floats or doubles."""
    if sheet.take(rng):  # the sheet's part 7.3 / 7.4: a float tile of pitch 32 or 128 words, column 5
        (ebytes, ename, _), cols, col = ELEMENTS[1], pick(rng, sheet.COLS7), sheet.COL7
    else:
        ebytes, ename, widths = pick(rng, ELEMENTS)
        cols = pick(rng, widths)
        col = rng.randrange(cols)
    layout = row_major((32, cols))
    access = {"kind": "column", "index": col}
    r = _column(layout, col, ebytes)
    fixes = sorted(swizzle_fixes(layout, ebytes, access), key=lambda f: f.swizzle)
    pfix = B.padding_fix(layout, ebytes, access)
    best = fixes[0] if fixes else None
    expected = str(best) if best else f"pad {pfix.padding}"
    phases = {2: 1, 4: 1, 8: 2}[ebytes]
    per_word = 4 // ebytes if ebytes < 4 else 1
    steps = [step(RULE),
             step(f"Row i, column {col} is element offset {cols}*i + {col}, byte address {ebytes} times that; "
                  f"{'two halves share a 4-byte word, so the word is offset / 2' if per_word == 2 else ''}"
                  f"{'an 8-byte access is served in two phases of 16 lanes' if phases == 2 else ''}".rstrip("; "),
                  layout),
             step(f"The 32 lanes' accesses start in {len(set(r.banks))} distinct bank(s)"
                  f"{' (each 8-byte access covers that bank and the next)' if ebytes == 8 else ''}: {r.ways}-way, "
                  f"{r.wavefronts} wavefront(s)."),
             step("A swizzle Sw<B,M,S> XORs the B bits at M+S.. (bits of the row) into the B bits at M.. (bits that "
                  "pick the bank), so the rows of one column spread over different banks. M skips the offset bits "
                  "that stay inside one bank slot (1 for halves); B is as many bits as there are lanes per phase "
                  "to separate (16 lanes per phase for doubles: B = 4).")]
    if best:
        rb = best.analysis
        steps.append(step(f"{best}: rows 0..3 of column {col} land in banks {rb.banks[:4]}; every phase is "
                          f"conflict-free.", None))
        steps.append(step("Every swizzle that works: " + ", ".join(str(f) for f in fixes) + "."))
    if pfix:
        steps.append(step(f"Padding works too: a pitch of {cols + pfix.padding} elements (pad {pfix.padding}).",
                          pfix.layout))
    return Drill("banks", seed,
                 f"A {ename} tile of 32 rows is stored row-major as {layout}. Lane i of a warp reads row i, column "
                 f"{col} ({ebytes} bytes). The access is {r.ways}-way. Choose a swizzle Sw<B,M,S> on the element "
                 "offset (or a padding) that makes it conflict-free.",
                 "Sw<B,M,S> (or the swizzled tile Sw<B,M,S> o 0 o the layout), or a padding such as {ex} "
                 "(elements, less than one row; bytes and 4-byte words are read)", expected,
                 _fix_grader(layout, ebytes, access, 32, cols),
                 steps, [RULE, "Which offset bits choose the bank for this element size? XOR row bits into them."],
                 "fix", [bank_grid(r, "Lanes and their banks", 32)]).with_data(
                     layout=str(layout), col=col, ebytes=ebytes, access=access).with_example(*PAD_EXAMPLES)


def _swizzled(rng: random.Random, seed: int) -> Drill:
    """Banks of a column read through a given swizzle: the arithmetic of Sw<B,M,S> by hand."""
    from_sheet = sheet.take(rng)  # the sheet's part 7.3: rows 0..3 of column 5 through the swizzle
    cols = 32 if from_sheet else pick(rng, [32, 64, 128])
    layout, col = row_major((32, cols)), sheet.COL7 if from_sheet else rng.randrange(cols)
    access = {"kind": "column", "index": col}
    shift = cols.bit_length() - 1
    fixes = swizzle_fixes(layout, 4, access)
    fix = next((f for f in fixes if f.swizzle == (5, 0, shift)), fixes[-1])
    sw = A.Swizzle(*fix.swizzle)
    b, m, s = fix.swizzle
    r = B.bank_access(layout, 4, access, swizzle=sw)
    lanes = sorted(rng.sample(range(1, 32), 3)) if rng.random() < 0.5 and not from_sheet else [0, 1, 2, 3]
    want = [r.banks[t] for t in lanes]
    rule = (f"{sw}(o) = o XOR (((o >> {m + s}) & {(1 << b) - 1}) << {m}): the {b} bits of o starting at bit {m + s} "
            f"are XORed into the {b} bits starting at bit {m}; then bank = swizzled offset mod 32.")
    offs = {t: layout((t, col)) for t in lanes}
    rows = [step(f"Row {t}: offset {cols}*{t} + {col} = {offs[t]}; bits {m + s}.. give "
                 f"{(offs[t] >> (m + s)) & ((1 << b) - 1)}; swizzled {sw(offs[t])}; bank {r.banks[t]}.")
            for t in lanes]
    verdict = step(f"All 32 rows land in {len(set(r.banks))} distinct banks: {r.ways}-way.")
    return Drill("banks", seed,
                 f"A float (4-byte) tile of 32 rows is stored row-major, {layout}, and addressed through {sw} on the "
                 f"element offset. Lane i of a warp reads row i, column {col}. Give the banks of rows "
                 + ", ".join(map(str, lanes)) + ".", f"{len(lanes)} integers", ", ".join(map(str, want)),
                 lambda ans: _list(ans, want, [f"row {t}" for t in lanes]), [step(RULE), step(rule), *rows, verdict],
                 [RULE, rule], "swizzled", [bank_grid(r, f"Lanes and their banks through {sw}", 32)]).with_data(
                     layout=str(layout), col=col, lanes=lanes, swizzle=list(fix.swizzle))


def _ldmatrix(rng: random.Random, seed: int, variant: str) -> Drill:
    row_bytes = pick(rng, [64, 128, 128, 256])
    cols = row_bytes // 2
    layout = row_major((8, cols))
    chunk = rng.randrange(cols // 8)
    access = {"kind": "ldmatrix", "num": 1, "row": 0, "col": 8 * chunk}
    r = B.bank_access(layout, 2, access)
    desc = (f"A half-precision (2-byte) tile of 8 rows x {cols} is stored row-major, {layout}: each row is "
            f"{row_bytes} bytes. One ldmatrix phase reads 16 bytes (8 halves) from each of the 8 rows, columns "
            f"{8 * chunk}..{8 * chunk + 7}.")
    first = step(f"Row i starts at byte {row_bytes}*i; its 16 bytes cover banks "
                 f"(({row_bytes}*i + {16 * chunk}) / 4) mod 32 .. +3.", layout)
    rows = [step(f"Row {i}: byte {r.byte_addresses[i]}, banks {r.banks[i]}..{r.banks[i] + 3}.") for i in range(8)]
    verdict = step(f"The 8 rows need 32 words; the busiest bank holds {r.ways}: {r.ways}-way, "
                   f"{r.wavefronts} wavefront(s).")
    grids = [bank_grid(r, "Rows and their first bank", 8)]
    if variant == "ldmatrix_ways":
        return Drill("banks", seed, desc + " How many wavefronts does this phase take?", "one integer",
                     str(r.wavefronts), lambda ans: _int(ans, r.wavefronts, "wavefronts"),
                     [step(RULE), first, *rows, verdict], [RULE, first["text"]], variant, grids).with_data(
                         layout=str(layout), ebytes=2, access=access)
    fixes = swizzle_fixes(layout, 2, access)
    best = next((f for f in fixes if f.swizzle and f.swizzle[1] == 3), fixes[0] if fixes else None)
    pfix = B.padding_fix(layout, 2, access)
    expected = str(best) if best else f"pad {pfix.padding}" if pfix else "none"
    steps = [step(RULE), first, verdict,
             step("A 16-byte row is 8 halves, so the swizzle must move whole 8-element chunks: M = 3 keeps bits 0..2 "
                  "(inside a chunk) fixed; XOR the row bits into the chunk bits.")]
    if best:
        steps.append(step(f"{best}: the 8 rows' chunks land in banks {best.analysis.banks}; "
                          f"{best.analysis.wavefronts} wavefront.", None))
        steps.append(step("Every swizzle that works: " + ", ".join(str(f) for f in fixes) + "."))
    if pfix:
        steps.append(step(f"Padding by {pfix.padding} halves also works, but breaks the power-of-two pitch that "
                          "128-bit loads, TMA and wgmma rely on; the swizzle keeps it.", pfix.layout))
    return Drill("banks", seed, desc + f" It is {r.ways}-way. Choose Sw<B,M,S> on the element offset (or a padding) "
                 "that makes the phase conflict-free.", "Sw<B,M,S> (or the swizzled tile Sw<B,M,S> o 0 o the "
                 "layout), or a padding such as {ex} (elements, less than one row; bytes and 4-byte words are read)",
                 expected, _fix_grader(layout, 2, access, 8, cols), steps,
                 [RULE, "Keep the 8 halves of a 16-byte chunk together (M = 3) and XOR row bits into the chunk bits."],
                 variant, grids).with_data(layout=str(layout), ebytes=2, access=access).with_example(*PAD_EXAMPLES)


#: The unit each integer question of this kind counts in (parse_words.UNITS); the N of an N-way conflict is the
#: number of wavefronts one phase takes, so either word reads there.
_UNIT = {"distinct banks": "bank", "ways": ("way", "wavefront"), "wavefronts": ("wavefront", "way")}


def _int(answer: str, want: int, what: str) -> Grade:
    got = parse_int(answer, _UNIT[what])
    return Grade.right() if got == want else Grade.wrong(f"{got} {what} is not right")


def _list(answer: str, want: list[int], labels: list[str]) -> Grade:
    from app.drills.common import grade_list

    try:
        got = parse_int_list(answer, len(want))
    except AnswerError:
        raise
    return grade_list(got, want, labels)
