"""Fresh drills graded with hostile and two-answer texts built around the key: the key beside one of its readable
wrong answers (``K or W``, ``W, K``, ``K; W``, one per line), a number of the key pushed past 2**32 / 2**64 or given
a minus sign, the key's digits in another script, the key with markup, SQL or a control character around it, and
the key with trailing words that contradict it. None of these may grade right (a hedged answer names two answers);
the key with harmless punctuation around it (``= K``, ``K.``, backticks) must grade right.
``python tests/drill_hostile_hunt.py 16100 16110 1`` runs every kind once on each seed."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter

from drill_forms import rejected

from app.drills.core import generate, kinds

FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def _bumped(key: str) -> list[str]:
    """Every number of the key pushed past 2**32 and 2**64 (one at a time), and given a minus sign."""
    out = []
    for m in list(re.finditer(r"(?<![\w@<])\d+", key))[:6]:
        v = int(m.group())
        for big in (v + 2**32, v + 2**64, 10**40 + v):
            out.append(key[:m.start()] + str(big) + key[m.end():])
        if v:
            out.append(key[:m.start()] + "-" + m.group() + key[m.end():])
    return out


def wrong_forms(d, wrong: list[str]) -> list[str]:
    k = d.expected
    out = [k.translate(FULLWIDTH), k.translate(ARABIC), k + "\x00", "\u202e" + k, k + "\u200b",
           f"<script>{k}</script>x", f"{k}'; DROP TABLE attempts; --",
           "", " ", "\n\t", "?", "idk", "0", "-1", str(2**64), "9" * 60, "(" * 50 + ")" * 50]
    for w in wrong[:3]:
        if w.strip() == k.strip():
            continue
        out += [f"{k} or {w}", f"{w} or {k}", f"{k}\n{w}", f"{w}\n{k}", f"{k}; {w}", f"{k} / {w}"]
        if "," not in k and "," not in w:
            out += [f"{k}, {w}", f"{w}, {k}"]
    if not (d.kind == "banks" and d.variant == "formula"):  # mod 32: a number 2**32 or 10**40 larger is the same
        out += [b for b in _bumped(k) if not _same_layout(k, b)]
    out += swizzle_forms(d)[1]
    out += [f"not {k}", f"{k} (or not)"] if d.kind in ("majorness", "defined", "explain") else []
    return out


def _same_layout(key: str, text: str) -> bool:
    """True when both read as layouts of one shape giving the same offsets (a size-1 mode's stride changed)."""
    import algebra as A

    try:
        a, b = A.parse(key.removeprefix("stride, ")), A.parse(text.removeprefix("stride, "))
        return a.shape == b.shape and all(a(i) == b(i) for i in range(min(A.size(a), 4096)))
    except Exception:  # noqa: BLE001 (not a layout: judged by the drill)
        return False


def swizzle_forms(d) -> tuple[list[str], list[str]]:
    """A swizzle fix in CuTe's other spellings (right), and the same swizzle on another tile (wrong)."""
    m = re.fullmatch(r"Sw<(\d+),(\d+),(\d+)>", d.expected)
    lay = re.search(r"\((\d+),(\d+)\):\((\d+),1\)", d.prompt)
    if not (d.kind == "banks" and m and lay):
        return [], []
    b, mm, sh = m.groups()
    r, c, p = lay.groups()
    tile = f"({r},{c}):({p},1)"
    right = [f"Swizzle<{b},{mm},{sh}>", f"cute::Swizzle<{b},{mm},{sh}>{{}}", f"Sw<{b}, {mm}, {sh}>",
             f"Sw<_{b},_{mm},_{sh}>", f"{d.expected} o 0 o {tile}", f"{d.expected} o {tile}",
             f"composition(Swizzle<{b},{mm},{sh}>{{}}, Layout<Shape<_{r},_{c}>,Stride<_{p},_1>>{{}})"]
    wrong = [f"{d.expected} o 0 o ({r},{c}):(1,{r})", f"{d.expected} o 8 o {tile}", f"Sw<{b},{mm},-{sh}>",
             f"{d.expected} or Sw<1,0,1>"] + ([f"{d.expected} o 0 o ({c},{r}):({r},1)"] if r != c else [])
    return right, wrong


def right_forms(d) -> list[str]:
    k = d.expected
    return ([f"`{k}`", f"= {k}", f"{k}.", f" {k} "] if "\n" not in k else [f"{k}\n"]) + swizzle_forms(d)[0]


def hunt(seed: int, per: int) -> Counter:
    rng, cnt = random.Random(seed), Counter()
    for kind in kinds():
        for _ in range(per):
            d = generate(kind.kind, rng.randrange(1, 2**31 - 1))
            cnt["drills"] += 1
            wrong = list(rejected(d))
            for text, want in [(t, True) for t in right_forms(d)] + [(t, False) for t in wrong_forms(d, wrong)]:
                cnt["submissions"] += 1
                try:
                    g = d.grade(text)
                except Exception as err:  # noqa: BLE001 (a grader that raises is a 500 on the route)
                    cnt["crash"] += 1
                    print("CRASH", d.id, repr(text)[:120], type(err).__name__, err, flush=True)
                    continue
                if g.correct != want and not (want is False and text.strip() == d.expected.strip()):
                    wrapped = not want and ("<script>" in text or "DROP TABLE" in text)
                    cnt["key wrapped in markup accepted" if wrapped else
                        f"{'right refused' if want else 'wrong accepted'}"] += 1
                    print("PROBLEM", d.id, d.variant, repr(d.expected), repr(text)[:120], want, g.reason[:120],
                          flush=True)
    return cnt


if __name__ == "__main__":
    lo, hi, n = (int(a) for a in sys.argv[1:4])
    total: Counter = Counter()
    for s in range(lo, hi):
        total += hunt(s, n)
    print(dict(total))
