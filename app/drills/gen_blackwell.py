"""Drill kinds on Blackwell (SM100): decode a UMMA shared-memory descriptor, and which TMEM lanes a warp's tcgen05.ld
reaches. Keys come from ``algebra.hw.sm100`` (checked against CuTe C++ and the PTX ISA, not measured on hardware)."""

from __future__ import annotations

import random
import re

from algebra.hw import sm100, sm100_tmem
from app.drills.common import pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import _isnum, negated, tokens
from app.drills.parsing import AnswerError, clean

_TYPE_WORDS = {"SWIZZLE_NONE": ("none", "interleave", "inter", "no swizzle", "swizzle_none", "0"),
               "SWIZZLE_32B": ("32b", "sw32", "swizzle_32b", "6"),
               "SWIZZLE_64B": ("64b", "sw64", "swizzle_64b", "4"),
               "SWIZZLE_128B": ("128b", "sw128", "swizzle_128b", "2"),
               "SWIZZLE_128B_BASE32B": ("128b_base32b", "base32b", "sw128_32b", "swizzle_128b_base32b", "1")}


#: Words around the layout type that say nothing ("layout type: 128B swizzle").
_DESC_FILLERS = ("layout_type", "layout", "type", "mode", "is", "the", "swizzle", "swizzled", "swizzling")


def _layout_type(word: str) -> str | None:
    """One word as a layout type: a name or short name of ``_TYPE_WORDS``, its 3-bit code, or ``swizzle_<n>b``
    (``_base32b``) for any n and base (a wrong size is a readable wrong answer); None when it is none of these."""
    for name, spellings in _TYPE_WORDS.items():
        if word in spellings or word == name.lower():
            return name
    m = re.fullmatch(r"(?:swizzle_?|sw)?(\d+)b?(?:_(?:base)?(\d+)b)?", word)
    if m and not word.isdigit():
        return f"SWIZZLE_{int(m.group(1))}B" + (f"_BASE{int(m.group(2))}B" if m.group(2) else "")
    return None


def parse_desc_answer(ans: str) -> tuple[str, int, int]:
    """"SWIZZLE_128B, LBO=16, SBO=1024" (any order; "B" / "bytes" after numbers; the layout type by name, short
    name or code) -> (layout type name, LBO bytes, SBO bytes). Post-condition: LBO and SBO are each given once and
    exactly one layout type is named, with nothing else but filler words ("layout type", "swizzle"); anything more
    (a second value, a hedge such as "SWIZZLE_128B or SWIZZLE_64B", a stray word) is an AnswerError naming it."""
    text = clean(ans).strip().lower().replace("bytes", "").replace("byte", "")
    nums = {}
    for key in ("lbo", "sbo"):
        found = list(re.finditer(rf"{key}\s*[=:]?\s*(\d+)\s*b?\b", text))
        if not found:
            raise AnswerError(f"no {key.upper()} = <bytes> found")
        if len(found) > 1 or re.search(rf"\b{key}\b", text[:found[0].start()] + text[found[0].end():]):
            raise AnswerError(f"{key.upper()} is given more than once: give one value")
        nums[key] = int(found[0].group(1))
        text = text[:found[0].start()] + " " + text[found[0].end():]
    words = re.sub(r"[,;=:()]", " ", text).replace("layout type", " ").replace("no swizzle", "none")
    words = re.sub(r"(?<=b) base32b\b", "_base32b", re.sub(r"\s+", " ", words).strip())
    toks = [w for w in words.split() if w not in _DESC_FILLERS and w != "."]
    if not toks:
        raise AnswerError("no layout type found (SWIZZLE_NONE, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_128B or "
                          "SWIZZLE_128B_BASE32B)")
    kinds = [_layout_type(w) for w in toks]
    stray = next((w for w, k in zip(toks, kinds, strict=True) if k is None), None)
    if stray is not None:
        raise AnswerError(f"unexpected {stray[:30]!r}: write the layout type, LBO=<bytes>, SBO=<bytes>")
    if len(toks) > 1:
        raise AnswerError(f"{len(toks)} layout types given ({', '.join(toks[:3])}): give one")
    return str(kinds[0]), nums["lbo"], nums["sbo"]


@register("umma_desc", "Blackwell UMMA descriptors", "Decode a tcgen05 (UMMA) shared-memory descriptor: its layout "
          "type, leading and stride byte offsets, as CuTe's make_umma_desc writes them for a canonical smem layout.",
          17)
def make_umma_desc(rng: random.Random, seed: int) -> Drill:
    name = pick(rng, ["Layout_K_SW128_Atom", "Layout_K_SW64_Atom", "Layout_K_SW32_Atom", "Layout_K_INTER_Atom",
                      "Layout_MN_SW128_Atom", "Layout_MN_SW64_Atom", "Layout_MN_INTER_Atom",
                      "Layout_MN_SW128_32B_Atom"])
    bits = pick(rng, [16, 8, 32])
    atom = sm100.umma_smem_atom(name, bits)
    fm, fk = pick(rng, [(2, 2), (4, 2), (8, 2), (16, 4), (4, 4)])
    mn, k = atom.shape[0] * fm, atom.shape[1] * fk
    if atom.major == "K":  # one swizzle atom of K, at least the 32 bytes of one MMA
        k = max(atom.shape[1], 256 // bits)
    lay = sm100.tile_atom(atom, mn, k)
    start = 1024 * rng.randrange(200)  # a tile in shared memory, aligned to the swizzle's repeat
    value = sm100.umma_desc(lay, bits, atom.major, start)
    d = sm100.decode_umma_desc(value)
    want = (d["layout_type_name"], d["leading_byte_offset"], d["stride_byte_offset"])
    expected = f"{want[0]}, LBO={want[1]}, SBO={want[2]}"
    steps = [step(f"The descriptor {d['value']}: layout type = bits [61,64) = {d['layout_type']} ({want[0]}); "
                  f"version bits [46,48) = {d['version']} (Blackwell)."),
             step(f"LBO = bits [16,30) = {d['encoded']['leading_byte_offset']} x 16 = {want[1]} bytes; SBO = bits "
                  f"[32,46) = {d['encoded']['stride_byte_offset']} x 16 = {want[2]} bytes."),
             step(f"It is make_umma_desc<Major::{atom.major}> of UMMA::{name}<{bits}-bit> tiled to {mn}x{k}:", lay)]

    def grade(ans: str) -> Grade:
        got = parse_desc_answer(ans)
        ok = [got[0] == want[0], got[1] == want[1], got[2] == want[2]]
        wrong = [w for w, good in zip(("layout type", "LBO", "SBO"), ok, strict=True) if not good]
        return Grade(all(ok), "" if all(ok) else f"{', '.join(wrong)} wrong", items=ok)

    return Drill("umma_desc", seed,
                 f"A Blackwell tcgen05.mma reads a {atom.major}-major operand of {bits}-bit elements through the UMMA "
                 f"shared-memory descriptor {d['value']}. What are its layout type, LBO and SBO (in bytes)?",
                 "layout type, LBO=<bytes>, SBO=<bytes>, e.g. {ex}", expected, grade, steps,
                 ["LBO and SBO are stored >> 4: multiply the 14-bit fields by 16.", steps[0]["text"]],
                 atom.major).with_data(descriptor=d["value"], element_bits=bits, major=atom.major).with_example(
                     "SWIZZLE_64B, LBO=32, SBO=2048", "SWIZZLE_NONE, LBO=256, SBO=512")


_LANE_WORDS = ("lanes", "lane", "to", "through", "thru", "and", "from", "tmem")


def parse_lanes(ans: str) -> tuple[int, int]:
    """"64-95", "64..95", "64 to 95", "lanes [64, 95]" or a list of consecutive lanes -> (first, last)."""
    toks = tokens(ans)
    nums = []
    for k, tok in enumerate(toks):
        if _isnum(tok):
            if "." in tok or negated(toks, k):
                raise AnswerError(f"a lane is a whole number 0-127, not {'-' if '.' not in tok else ''}{tok}")
            nums.append(int(tok))
        elif tok not in _LANE_WORDS and tok not in "-+.,():":
            raise AnswerError(f"unexpected {tok!r}: write the first and last lane, e.g. 32-63")
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) > 2 and nums == list(range(nums[0], nums[0] + len(nums))):
        return nums[0], nums[-1]
    raise AnswerError("write the first and last lane, e.g. 32-63")


@register("tmem_lanes", "TMEM lanes of a warp", "Which tensor-memory lanes a warp's tcgen05.ld / tcgen05.st reaches: "
          "warp w only touches its own 32-lane quarter, lanes 32 (w % 4) to 32 (w % 4) + 31; the 16dp shapes take 16 "
          "of them.", 18)
def make_tmem_lanes(rng: random.Random, seed: int) -> Drill:
    shape = pick(rng, list(sm100_tmem.SHAPES))
    reps = sm100_tmem.SHAPES[shape][2]
    r = pick(rng, list(reps))
    packed = rng.random() < 0.3
    name = f"SM100_TMEM_LOAD_{shape}{r}x{'_16b' if packed else ''}"
    warp = rng.randrange(4, 16)
    d = sm100_tmem.SHAPES[shape][0]
    half = pick(rng, [0, 16]) if d == 16 else 0
    q = 32 * (warp % 4)
    first, last = sm100_tmem.warp_lanes(warp, shape, q + half)
    where = ("" if d == 32 else f" The address's lane field names the {'second' if half else 'first'} half of the "
             "warp's own quarter.")
    steps = [step(f"Warp {warp}: warp % 4 = {warp % 4}, so it reaches lanes {q} to "
                  f"{q + 31} only (tcgen05 lane quarters)."),
             step(f"{shape}: one access covers {d} lanes" + (f", from lane {q + half}." if d == 16 else "."))]

    def grade(ans: str) -> Grade:
        a, b = parse_lanes(ans)
        ok = (a, b) == (first, last)
        why = "" if ok else ("a warp only reaches its own quarter: lanes 32 (w % 4) .. 32 (w % 4) + 31"
                             if not q <= a <= q + 31 else f"the access covers {d} lanes")
        return Grade(ok, why, items=[a == first, b == last])

    ptx = f"tcgen05.ld.sync.aligned.{sm100_tmem._PTX_SHAPE[shape]}.x{r}"
    return Drill("tmem_lanes", seed,
                 f"Warp {warp} of a CTA executes {name} ({ptx}).{where} Which TMEM lanes (data paths) does it read? "
                 "Give the first and the last.",
                 "first-last, e.g. {ex}", f"{first}-{last}", grade, steps,
                 ["Tensor memory has 128 lanes in four 32-lane quarters; warp w owns quarter w % 4.",
                  steps[0]["text"]],
                 shape).with_data(atom=name, warp=warp, lane_offset=half).with_example("0-31", "96-127", "32-47")
