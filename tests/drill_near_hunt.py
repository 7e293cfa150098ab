"""Fresh drills graded with other spellings and near misses: every accepted spelling of the key
(``drill_forms.accepted``) with whitespace, tabs and new lines between its tokens must grade right; near misses must
grade wrong -- every integer of a layout key one more or one less, two neighbouring modes swapped (shape and stride,
the shape only, the stride only), a number of a list one off or two neighbours swapped, a coordinate transposed --
unless this file's own evaluator of shape:stride finds the miss the same function with the same modes (a stride of a
size-1 mode), which must then grade right (not for ``vector``, whose key is CuTe's exact print).
``python tests/drill_near_hunt.py 10400 10600 1`` runs every kind once on each seed."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter

from drill_forms import accepted, is_layout_answer
from drill_hunt import at1, flat, lay, size

from app.drills.core import generate, kinds


def spaced(rng: random.Random, text: str) -> str:
    """``text`` with random spaces, tabs and new lines between its tokens (one space between two words)."""
    out, prev = "", ""
    for tok in re.findall(r"Int<\d+>\{\}|[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?%?|\S", text):
        sep = rng.choice(["", "", " ", "  ", "\t"]) if prev else ""
        if prev and re.match(r"\w", prev[-1]) and re.match(r"\w", tok[0]):
            sep = " "
        out, prev = out + sep + tok, tok
    return rng.choice(["", " ", "\n"]) + out + rng.choice(["", " ", "\n", "  "])


def values(text: str) -> tuple[list[int], list[int]]:
    """(offset at every 1-D coordinate, the flat shape) of a shape:stride."""
    s, d = lay(text)
    return [at1(s, d, i) for i in range(size(s))], flat(s)


def _modes(t: str) -> list[str] | None:
    if not t.startswith("("):
        return None
    parts, depth, cur = [], 0, ""
    for ch in t[1:-1]:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts, cur = [*parts, cur], ""
        else:
            cur += ch
    return [*parts, cur]


def layout_misses(d, key: str) -> tuple[list[str], list[str]]:
    """(misses that are the same function with the same modes, misses that are another function) of a layout key."""
    want, shape = values(key)
    same, wrong = [], []
    nums = list(re.finditer(r"\d+", key))
    for m in nums:
        for dv in (1, -1):
            if int(m.group()) + dv < 0:
                continue
            t = key[:m.start()] + str(int(m.group()) + dv) + key[m.end():]
            try:
                got, s2 = values(t)
            except (ValueError, SyntaxError, ZeroDivisionError):
                continue
            if got == want and s2 == shape and d.kind != "vector":
                same.append(t)
            elif got != want:
                wrong.append(t)
    depth, cut = 0, None
    for i, ch in enumerate(key):
        depth += (ch == "(") - (ch == ")")
        if ch == ":" and depth == 0:
            cut = i
    ms, md = _modes(key[:cut]), _modes(key[cut + 1:])
    if ms and md and len(ms) == len(md) >= 2:
        for i in range(len(ms) - 1):
            for sw_shape, sw_stride in ((True, True), (True, False), (False, True)):
                s2, d2 = list(ms), list(md)
                if sw_shape:
                    s2[i], s2[i + 1] = s2[i + 1], s2[i]
                if sw_stride:
                    d2[i], d2[i + 1] = d2[i + 1], d2[i]
                t = "(" + ",".join(s2) + "):(" + ",".join(d2) + ")"
                if values(t)[0] != want:
                    wrong.append(t)
    return same, wrong


def number_misses(key: str) -> list[str]:
    """A number of a list one off, two different neighbours swapped; a coordinate transposed or one off."""
    out = []
    if re.fullmatch(r"[\d, ]+", key):
        nums = key.split(", ")
        for k in range(len(nums)):
            for dv in (1, -1):
                if int(nums[k]) + dv >= 0:
                    out.append(", ".join(nums[:k] + [str(int(nums[k]) + dv)] + nums[k + 1:]))
            if k + 1 < len(nums) and nums[k] != nums[k + 1]:
                out.append(", ".join(nums[:k] + [nums[k + 1], nums[k]] + nums[k + 2:]))
    elif re.fullmatch(r"\(\d+,\d+\)", key):
        a, b = (int(x) for x in re.findall(r"\d+", key))
        out += [f"({a + 1},{b})", f"({a},{b + 1})"] + ([f"({b},{a})"] if a != b else [])
    return out


def hunt(seed: int, per: int) -> Counter:
    """Every kind ``per`` times on drill seeds drawn from ``random.Random(seed)``: counts, problems printed."""
    rng, cnt = random.Random(seed), Counter()
    for kind in kinds():
        for _ in range(per):
            d = generate(kind.kind, rng.randrange(1, 2**31 - 1))
            e = d.expected
            right = [spaced(rng, a) for a in accepted(d) for _ in range(2)]
            same, wrong = [], number_misses(e)
            if is_layout_answer(d) and re.fullmatch(r"[()\d,:]+", e):
                same, wrong = layout_misses(d, e)
            cnt["drills"] += 1
            for text, want in [(t, True) for t in right + same] + [(t, False) for t in wrong]:
                cnt["submissions"] += 1
                g = d.grade(text)
                if g.correct != want:
                    cnt[f"{'right refused' if want else 'wrong accepted'} {d.kind}"] += 1
                    print("PROBLEM", d.id, d.variant, repr(e), repr(text), want, g.reason[:150], flush=True)
    return cnt


if __name__ == "__main__":
    lo, hi, n = (int(a) for a in sys.argv[1:4])
    total: Counter = Counter()
    for s in range(lo, hi):
        total += hunt(s, n)
    print(dict(total))
