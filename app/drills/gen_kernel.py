"""Drill kinds on CuTe's kernel vocabulary: which elements (registers) a thread of a small tiled MMA holds
(``partition_C`` / ``partition_fragment_C``), and whether a tiled copy covers its tile (name a duplicate or a hole).
The keys come from ``algebra.atoms`` (checked against CuTe C++ by tests/oracle/test_vocab_oracle.py)."""

from __future__ import annotations

import random
import re

import algebra as A
from algebra import atoms
from app.drills.common import grade_cells, lstr, pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import negation, parse_rc
from app.drills.parsing import AnswerError, clean, parse_pairs
from layoutlab.model import lanes_text, mma_lanes

#: small tiled MMAs: (atom, atom layout, permutation or None)
MMAS = [("SM80_16x8x8_F16F16F16F16_TN", (1, 1, 1)), ("SM80_16x8x8_F16F16F16F16_TN", (2, 1, 1)),
        ("SM80_16x8x16_F32F16F16F32_TN", (1, 2, 1)), ("SM80_8x8x4_F64F64F64F64_TN", (2, 1, 1)),
        ("SM70_8x8x4_F32F16F16F32_TN", (1, 1, 1)), ("SM70_8x8x4_F16F16F16F16_NT", (2, 1, 1)),
        ("SM80_16x8x8_F32TF32TF32F32_TN", (1, 1, 1))]
RULE_C = ("thr_mma = mma.get_slice(t); partition_C(C) is (MMA, MMA_M, MMA_N): the atom's C values of thread t "
          "(its ThrV coordinate, the flat coordinate of t in thr_layout_vmnk), repeated over the atoms along M and N "
          "and over the tiles of C. Register k of partition_fragment_C (compact, the same shape) holds element "
          "offset + partition_C(k), column-major in C.")


def _thread_cells(tm: atoms.TiledMMA, rows: int, cols: int, t: int) -> tuple[A.Layout, int, list[tuple[int, int]]]:
    frag, off = tm.partition_C(A.Layout((rows, cols)), t)
    return frag, off, [((off + frag(k)) % rows, (off + frag(k)) // rows) for k in range(A.size(frag))]


@register("mma_registers", "Which registers does thread t hold", "Follow one thread of a tiled MMA: the elements of C "
          "its accumulators hold (partition_C / partition_fragment_C), and which element one register holds.", 17)
def make_mma_registers(rng: random.Random, seed: int) -> Drill:
    name, lay = pick(rng, MMAS)
    tm = atoms.make_tiled_mma(name, A.Layout(lay))
    m, n, _ = (tm.tile_size_mnk(i) for i in range(3))
    rm, rn = pick(rng, [(1, 1), (1, 2), (2, 1)])
    rows, cols = m * rm, n * rn
    lanes = mma_lanes(tm)  # get_slice reads a lane: SM70's quad-pairs are lanes 0-3 and 16-19, not 0-7
    t = lanes[rng.randrange(len(lanes))]
    frag, off, cells = _thread_cells(tm, rows, cols, t)
    regs = tm.partition_fragment_C(A.Layout((rows, cols)), t)
    tv = tm.get_layoutC_TV()
    vmnk = A.get_flat_coord(tm.thr_layout_vmnk, t)
    where = "" if lanes[-1] < len(lanes) else f" (lanes {lanes_text(lanes)}, as mma.get_slice reads them)"
    head = (f"mma = make_tiled_mma({name}{{}}, Layout<Shape<_{lay[0]},_{lay[1]},_{lay[2]}>>{{}}) has "
            f"{tm.num_threads} threads{where}; its C tile is {m}x{n} "
            f"(get_layoutC_TV() = {tv}). C is a {rows}x{cols} column-major tensor.")
    steps = [step(RULE_C),
             step(f"Thread {t} sits at (V,M,N,K) = {lstr(vmnk)} of thr_layout_vmnk {tm.thr_layout_vmnk}."),
             step(f"partition_C(C) = {frag} at offset {off}; partition_fragment_C = {regs}.", frag)]
    variant = pick(rng, ["cells", "cells", "register"])
    if variant == "cells":
        steps += [step(f"Register {k}: offset {off} + {frag(k)} = {off + frag(k)} -> {lstr(c)}.")
                  for k, c in enumerate(cells)]
        expected = " ".join(lstr(c) for c in cells)

        def grade(ans: str) -> Grade:
            return grade_cells(parse_pairs(ans), cells, f"thread {t}", "held by")

        d = Drill("mma_registers", seed, f"{head} Which elements (row, col) of C do thread {t}'s accumulators "
                  f"(thr_mma.partition_fragment_C(C), {A.size(frag)} registers) hold?",
                  "(row,col) pairs in any order, e.g. {ex}", expected, grade, steps, [RULE_C, steps[1]["text"]],
                  "cells")
        d.with_data(atom=name, atom_layout=list(lay), tile=[rows, cols], thread=t)
        other = lanes[(lanes.index(t) + 1) % len(lanes)]
        _, _, oc = _thread_cells(tm, rows, cols, other)
        d.mistake(f"the elements of thread {other}: the thread index is the flat coordinate in thr_layout_vmnk",
                  lambda ans, oc=oc: set(parse_pairs(ans)) == set(oc) and set(oc) != set(cells),
                  " ".join(lstr(c) for c in oc))
        return d.with_example("(0,0) (0,1)", "(1,0) (1,1) (9,0) (9,1)", "(2,4) (3,4)", "(0,0)")
    k = rng.randrange(A.size(frag))
    want = cells[k]
    steps.append(step(f"Register {k} of the fragment: partition_C({k}) = {frag(k)}, plus offset {off}: element "
                      f"{off + frag(k)} -> {lstr(want)}."))

    def grade_reg(ans: str) -> Grade:
        got = parse_rc(ans)  # (2,18), 2, 18, row 2, col 18: one pair, read as every other (row, col) drill reads it
        if got == want:
            return Grade.right()
        return Grade.wrong(f"{lstr(got)} is not the element register {k} of thread {t} holds")

    d = Drill("mma_registers", seed, f"{head} Thread {t}'s accumulators are tCrC = thr_mma.partition_fragment_C(C) "
              f"= {regs}. Which element (row, col) of C does register tCrC({k}) hold?", "one (row,col) pair, e.g. {ex}",
              lstr(want), grade_reg, steps, [RULE_C, steps[1]["text"]], "register")
    d.with_data(atom=name, atom_layout=list(lay), tile=[rows, cols], thread=t, register=k)
    wrong = ((off + regs(k)) % rows, (off + regs(k)) // rows)
    if wrong != want:
        d.mistake("the register layout instead of partition_C: tCrC is compact; the element is partition_C's",
                  lambda ans, w=wrong: parse_rc(ans) == w, lstr(wrong))
    return d.with_example("(0,0)", "(1,1)", "(2,3)", "(15,7)")


# ------------------------------------------------------------------------------------------- coverage

#: copy atoms and element sizes the coverage drill draws from: (atom, bits, values per thread per instruction)
COPY_ATOMS = [("UniversalCopy_32b", 16, 2), ("UniversalCopy_32b", 32, 1), ("UniversalCopy_64b", 16, 4),
              ("UniversalCopy_64b", 32, 2)]


def _random_copy(rng: random.Random) -> tuple[atoms.TiledCopy, str, str]:
    """A small tiled copy: from thread / value layouts (sometimes with a stride-0 or a doubled thread stride), or
    from a TV layout and a tiler (sometimes a tiler larger than the TV layout covers, or a thread stride halved).
    Returns (tiled copy, how it was built, variant)."""
    while True:
        atom, bits, nval = pick(rng, COPY_ATOMS)
        tm, tn = pick(rng, [(2, 4), (4, 2), (4, 4), (2, 8), (8, 2), (4, 8), (8, 4)])
        thr_stride = pick(rng, [(tn, 1), (1, tm), (tn, 0), (0, tm), (2 * tn, 1), (1, 2 * tm)])
        thr = A.Layout((tm, tn), thr_stride)
        vm = pick(rng, [1, nval]) if nval > 1 else 1
        val = A.Layout((vm, nval // vm * pick(rng, [1, 1, 2])))
        if rng.random() < 0.5:
            val = A.make_layout_row_major(val.shape)
        try:
            tc = atoms.make_tiled_copy(atom, thr, val, element_bits=bits)
            if rng.random() < 0.4:
                tv, tiler = tc.tv_layout, list(tc.tiler)
                if rng.random() < 0.5:
                    tiler[1] *= 2
                elif A.size(tv[0]) > 1:
                    lay0 = tv[0]
                    flat_s, flat_d = A.flatten(lay0.shape), A.flatten(lay0.stride)
                    if flat_d[-1] % 2 == 0 and flat_d[-1] > 0:
                        flat_d = flat_d[:-1] + (flat_d[-1] // 2,)
                    tv = A.make_layout(A.Layout(flat_s, flat_d), tv[1])
                tc = atoms.make_tiled_copy(atom, layout_tv=tv, tiler=tuple(tiler), element_bits=bits)
                how = (f"make_tiled_copy(Copy_Atom<{atom}, {bits}-bit>{{}}, layout_tv = {tv}, tiler = "
                       f"{lstr(tuple(tiler))})")
                variant = "layout_tv"
            else:
                how = f"make_tiled_copy(Copy_Atom<{atom}, {bits}-bit>{{}}, thr = {thr}, val = {val})"
                variant = "thr_val"
        except A.LayoutError:
            continue
        if len(tc.tiler) == 2 and tc.tiler[0] * tc.tiler[1] <= 512:
            return tc, how, variant


WORDS = {"covers": ("covers", "cover", "yes", "exact", "exactly", "ok", "complete", "covered", "fine", "full"),
         "duplicate": ("duplicate", "dup", "twice", "duplicated", "repeated", "double", "claimedtwice", "overlap"),
         "hole": ("hole", "uncovered", "missing", "gap", "empty", "nobody", "unclaimed", "notcovered")}
RULE_COVER = ("A tiled copy's TV layout maps (thread, value) to the column-major index of its tiler tile. It covers "
              "the tile when every index 0..M*N-1 is hit exactly once. An index hit twice is a duplicate (two "
              "threads copy the same element); an index hit by nobody is a hole. Claims past the tile (a stride-0 "
              "thread mode's) are neither.")


def _read_cover(ans: str) -> tuple[str, tuple[int, int] | None]:
    text = clean(ans).lower()
    word = re.sub(r"[^a-z ]", " ", re.sub(r"\([^a-z()]*\)", " ", text))  # the (row,col), not a "(or covers)"
    word = word.replace("claimed twice", "claimedtwice").replace("not covered", "notcovered")
    toks = [w for w in word.split() if w]
    if (neg := negation(word)) is not None:
        raise AnswerError(f"'{neg}' negates the answer: say 'covers', or name a duplicate or a hole")
    found = {k for k, forms in WORDS.items() for w in toks if w in forms}
    if "no" in toks and not found:
        raise AnswerError("say which: a duplicate (row,col) or a hole (row,col)")
    if len(found) != 1:
        raise AnswerError("expected 'covers', 'duplicate (row,col)' or 'hole (row,col)'")
    kind = found.pop()
    if kind == "covers":
        if re.search(r"\d", text):
            raise AnswerError("'covers' takes no element")
        return kind, None
    pairs = parse_pairs(text)
    if len(pairs) != 1:
        raise AnswerError("name one element: duplicate (row,col) or hole (row,col)")
    return kind, pairs[0]


@register("copy_coverage", "Does this tiled copy cover its tile", "Check a tiled copy's TV layout against its tile: "
          "find an element two threads copy (a duplicate) or one nobody copies (a hole).", 17)
def make_copy_coverage(rng: random.Random, seed: int) -> Drill:
    tc, how, variant = _random_copy(rng)
    atom, bits = tc.atom.name, tc.element_bits
    d = tc.coverage_detail(limit=1 << 12)
    rows = tc.tiler[0]
    dups = {tuple(e["element"]) for e in d["duplicate_elements"]}
    holes = {tuple(e) for e in d["uncovered_elements"]}
    tile = "x".join(map(str, tc.tiler))
    if dups:
        e = max(dups, key=lambda c: (c[1], c[0]))
        expected = f"duplicate {lstr(e)}"
    elif holes:
        e = max(holes, key=lambda c: (c[1], c[0]))
        expected = f"hole {lstr(e)}"
    else:
        expected = "covers"
    steps = [step(RULE_COVER, tc.tv_layout),
             step(f"{how}: TV layout {tc.tv_layout} over a {tile} tile ({A.size(tc.tv_layout)} claims for "
                  f"{rows * (A.size(A.Layout(tuple(tc.tiler))) // rows)} elements)."),
             step(f"{d['duplicates']} element(s) claimed more than once, {d['uncovered']} claimed by nobody, "
                  f"{d['outside']} claim(s) outside the tile.")]
    if d["duplicate_elements"]:
        ex = d["duplicate_elements"][0]
        steps.append(step(f"e.g. {lstr(tuple(ex['element']))} is claimed by "
                          + ", ".join(f"thread {t} value {v}" for t, v in ex["claims"]) + "."))
    if holes:
        steps.append(step(f"e.g. nobody claims {lstr(min(holes, key=lambda c: (c[1], c[0])))}."))

    def grade(ans: str) -> Grade:
        kind, cell = _read_cover(ans)
        if kind == "covers":
            return Grade.right() if expected == "covers" else Grade.wrong("the copy does not cover its tile exactly")
        if expected == "covers":
            return Grade.wrong(f"every element of the {tile} tile is claimed exactly once")
        assert cell is not None
        if not (0 <= cell[0] < rows and 0 <= cell[1] < A.size(A.Layout(tuple(tc.tiler))) // rows):
            return Grade.wrong(f"{lstr(cell)} is outside the {tile} tile")
        if kind == "duplicate":
            return Grade.right() if cell in dups else Grade.wrong(f"{lstr(cell)} is not claimed more than once")
        return Grade.right() if cell in holes else Grade.wrong(f"{lstr(cell)} is claimed by a thread")

    drill = Drill("copy_coverage", seed, f"{how} has the TV layout {tc.tv_layout} ((thread, value) -> column-major "
                  f"index of its {tile} tile). Does it cover its tile exactly? Answer 'covers', or name one element "
                  "that is claimed twice ('duplicate (row,col)') or by nobody ('hole (row,col)').",
                  "covers, duplicate (row,col) or hole (row,col), e.g. {ex}", expected, grade, steps,
                  [RULE_COVER, steps[1]["text"]], variant)
    drill.with_data(atom=atom, element_bits=bits, tv=str(tc.tv_layout), tiler=list(tc.tiler),
                    duplicates=d["duplicates"], uncovered=d["uncovered"])
    if expected != "covers":
        drill.mistake("assuming make_tiled_copy always tiles exactly: a stride-0 thread mode or a tiler larger than "
                      "the TV layout leaves duplicates or holes",
                      lambda ans: _read_cover(ans)[0] == "covers", "covers")
    return drill.with_example("covers", "hole (0,0)", "duplicate (0,0)", "duplicate (1,2)")
