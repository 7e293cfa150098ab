"""Drill kind ``defined``: "Is A o B defined? If not, which condition fails, and what would CuTe print?"

CuTe composes mode by mode of B = n:d through the coalesced A: skip d elements, then take n. Two conditions make
that a layout: the *stride* condition (d divides the shape it steps through, or that shape divides d) and the
*shape* condition (the n taken split into whole counts per mode). CuTe refuses a failed shape condition at compile
time (a static_assert); where its checks cannot see a failed stride condition it compiles and prints a layout that
is not A o B. The verdict comes from the engine (which refuses both, naming the condition) and, for the key, from
an independent check R(i) = A(B(i)); a case the engine accepts but the check rejects is the stride case, with the
engine's output as what CuTe prints.
"""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from app.drills import algebra_cases as K
from app.drills.common import explain, pick, read_layout, static_spelling, step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import AnswerError, clean, parse_choice

CHOICES = {"defined": ["yes", "defined", "it is defined", "it's defined", "is defined", "yes it is", "ok", "fine",
                       "valid"],
           "shape": ["shape divisibility", "shape condition", "shape divisibility condition", "no shape", "shape fails",
                     "the shape condition fails", "no, shape"],
           "stride": ["stride divisibility", "stride condition", "stride divisibility condition", "no stride",
                      "stride fails", "the stride condition fails", "no, stride"]}
RULE = ("A o B walks each mode n:d of B through the coalesced A: skip d elements (d must divide the shape it steps "
        "through, or that shape must divide d: the stride condition), then take n (n must split into whole counts "
        "per mode: the shape condition). CuTe refuses a failed shape condition at compile time; a failed stride "
        "condition that its checks cannot see compiles and prints a layout that is not A o B.")
_PRINT = re.compile(r"CuTe would print (\S+?) here")


def classify(a: Any, b: Any) -> tuple[str, Any, str]:
    """(verdict, what CuTe prints or the result, the engine's reason): verdict is "defined", "shape" or "stride";
    "" as the second value when CuTe prints nothing (it refuses)."""
    try:
        r = A.composition(a, b)
    except A.LayoutError as err:
        msg = str(err)
        if msg.lower().startswith("shape divisibility"):
            return "shape", "", msg
        m = _PRINT.search(msg)
        if "stride divisibility" in msg and m:
            return "stride", A.parse(m.group(1)), msg
        return "", "", msg
    if K.check_composition(a, b, r):
        return "defined", r, ""
    bad = next(i for i in range(A.size(b)) if b(i) < A.size(a) and r(i) != a(b(i)))
    return "stride", r, (f"stride divisibility condition: R = {r} gives R({bad}) = {r(bad)}, but "
                         f"A(B({bad})) = A({b(bad)}) = {a(b(bad))}")


def _draw(rng: random.Random, target: str) -> tuple[Any, Any, str, Any, str]:
    for _ in range(400):
        a = K.rand_layout(rng, 2, 48)
        ca = A.coalesce(a)
        if A.rank(ca) < 2 and (not isinstance(ca.stride, int) or ca.stride in (0, 1)):
            continue
        if 0 in A.flatten(a.stride):
            continue
        n, d = pick(rng, [2, 3, 4, 6, 8]), pick(rng, [1, 2, 3, 4, 6])
        b = A.Layout(n, d) if rng.random() < 0.7 else A.Layout((n, pick(rng, [2, 3])), (d, pick(rng, [1, 4, 8])))
        verdict, printed, why = classify(a, b)
        if verdict == target and (verdict != "defined" or A.size(printed) <= 256):
            return a, b, verdict, printed, why
    raise LookupError(target)


def _read(answer: str) -> tuple[str, Any]:
    """("defined"/"shape"/"stride", the layout typed after the condition, or None). The condition is read from its
    keyword anywhere ("no, the stride condition fails: CuTe prints (2,2):(32,2)"); the layout is the first
    parenthesis or number after it that reads as a whole layout."""
    s = clean(answer).strip()
    low = s.lower()
    hits = [(low.find(word), key) for word, key in (("stride", "stride"), ("shape", "shape")) if word in low]
    if hits:
        pos, choice = min(hits)
        rest = s[pos:]
    else:
        head = s
        for sep in (",", ";", ":", "(", " - ", "="):
            head = head.split(sep)[0]
        choice, rest = parse_choice(head.strip().rstrip(".!") or s, CHOICES), s[len(head):]
    layout = None
    for k, ch in enumerate(rest):
        if ch == "(" or (ch.isdigit() and ":" in rest[k:]):
            try:
                layout = read_layout(rest[k:].strip().rstrip(".!"))
                break
            except AnswerError:
                continue
    return choice, layout


def _same_print(got: Any, want: Any) -> bool:
    """What CuTe prints is a string: compare the layouts structurally (underscores and 1-tuples aside)."""
    return isinstance(got, A.Layout) and str(got) == str(want)


COMPLEMENT_RULE = ("complement(A, M) sorts A's modes by stride and fills the gaps between them; that only works when "
                   "the modes do not overlap (A is injective: no two coordinates share an offset). CuTe refuses an "
                   "overlapping A (\"Non-injective Layout detected in complement\").")
OVERLAP = {"defined": ["yes", "defined", "it is defined", "it's defined", "is defined", "ok", "valid", "injective"],
           "overlap": ["overlap", "overlapping", "overlapping modes", "no", "not injective", "non-injective",
                       "refused", "not defined", "no, overlap", "no, the modes overlap", "the modes overlap"]}


def _complement_drill(rng: random.Random, seed: int) -> Drill:
    """Is complement(A, M) defined (A injective), and if so, what is it?"""
    target = pick(rng, ["defined", "overlap"])
    for _ in range(400):
        a = K.rand_layout(rng, pick(rng, [2, 3]), 24)
        if 0 in A.flatten(a.stride) or 1 in A.flatten(a.shape):
            continue
        m = A.cosize(a) * pick(rng, [1, 2])
        try:
            r = A.complement(a, m)
            verdict = "defined" if K.check("complement", [a, m], r) else ""
        except A.LayoutError as err:
            r, verdict = None, "overlap" if "overlap" in str(err) or "injective" in str(err).lower() else ""
        offsets = sorted(a(i) for i in range(A.size(a)))
        dup = next((o for o, p in zip(offsets, offsets[1:], strict=False) if o == p), None)
        if verdict == "overlap" and dup is None:
            verdict = ""  # refused although injective (interleaved modes): not this drill's lesson
        if verdict == "defined" and A.size(r) == 1:
            verdict = ""  # nothing to fill: a trivial complement
        if verdict == target:
            break
    else:  # pragma: no cover - both families are common among random layouts
        raise RuntimeError("no complement instance found")
    expected = f"defined, {r}" if verdict == "defined" else "overlap"

    def grade(ans: str) -> Grade:
        s = clean(ans).strip()
        head = s
        for sep in (",", ";", ":", "(", " - ", "="):
            head = head.split(sep)[0]
        choice = parse_choice(head.strip().rstrip(".!") or s, OVERLAP)
        if choice != verdict:
            return Grade.wrong("A's modes do overlap: look for two coordinates with the same offset"
                               if verdict == "overlap" else "A is injective: no two coordinates share an offset")
        if verdict == "overlap":
            return Grade.right("right: CuTe refuses an overlapping A")
        rest = s[len(head):].lstrip(" ,;:=-")
        if not rest:
            raise AnswerError("also give complement(A, M), e.g. defined, (2,3):(1,8)")
        got = read_layout(rest)
        want = r
        if A.size(got) != A.size(want) or any(got(i) != want(i) for i in range(A.size(want))):
            return Grade.wrong("A is injective, so it is defined, but that is not its complement",
                               items=[True, False])
        return Grade(True, "defined, and that is the complement", items=[True, True])

    steps = [step(COMPLEMENT_RULE, a), step(f"A's offsets: {offsets}.")]
    if verdict == "overlap":
        steps.append(step(f"Offset {dup} is reached twice: the modes overlap, so complement is refused."))
    else:
        steps.append(step(f"Every offset once: A is injective. complement(A, {m}) = {r}; (A, A*) covers "
                          f"0..{A.size(a) * A.size(r) - 1} exactly once.", r))
        steps += explain("complement", a, m)
    return Drill("defined", seed,
                 f"A = {static_spelling(a)}, M = _{m} (compile-time _N values, as CuTe prints them). Is "
                 f"complement(A, M) defined? If it is, give it; if not, say why.",
                 "overlap, or: defined, <the complement in CuTe notation>", expected, grade, steps,
                 [COMPLEMENT_RULE, steps[1]["text"]], variant="complement").with_data(
                     op="complement", args=[str(a), m])


@register("defined", "Is this composition defined?", "Decide whether A o B (or a complement) is a layout; if not, "
          "which condition fails and, where CuTe compiles it anyway, what it prints.", 9)
def make_defined(rng: random.Random, seed: int) -> Drill:
    if rng.random() < 0.25:
        return _complement_drill(rng, seed)
    target = pick(rng, ["defined", "shape", "stride", "stride"])
    try:
        a, b, verdict, printed, why = _draw(rng, target)
    except LookupError:
        a, b, verdict, printed, why = _draw(rng, "defined")
    expected = {"defined": "defined", "shape": "shape", "stride": f"stride, {printed}"}[verdict]

    def grade(ans: str) -> Grade:
        choice, layout = _read(ans)
        if choice != verdict:
            if choice == "defined":
                return Grade.wrong("it is not defined: one of the two divisibility conditions fails")
            if verdict == "defined":
                return Grade.wrong(f"the {choice} condition holds here; walk each mode of B through A again")
            return Grade.wrong(f"the {choice} condition holds here")
        if verdict == "stride":
            if layout is None:
                raise AnswerError("also give the layout CuTe prints, e.g. stride, (2,2):(32,2)")
            if not _same_print(layout, printed):
                return Grade.wrong("the condition is right, but that is not the layout CuTe prints; apply its "
                                   "skip-then-take rule without the check", items=[True, False])
            return Grade(True, "the stride condition fails, and that is what CuTe prints", items=[True, True])
        if verdict == "defined" and layout is not None:
            same = A.size(layout) == A.size(printed) and all(layout(i) == printed(i) for i in range(A.size(printed)))
            if not same:
                return Grade.wrong("it is defined, but the layout you give is not A o B", items=[True, False])
        return Grade.right("right")

    steps = [step(RULE), step(f"A = {a} coalesces to {A.coalesce(a)}.", A.coalesce(a))]
    if verdict == "defined":
        steps.append(step(f"Both conditions hold: A o B = {printed}, and R(i) = A(B(i)) at every i.", printed))
    elif verdict == "shape":
        steps.append(step(f"The engine refuses it: {why}. CuTe stops at compile time (static_assert)."))
    else:
        steps.append(step(f"The stride condition fails: {why}."))
        steps.append(step(f"CuTe's checks do not catch it: it compiles and prints {printed}, which is not A o B.",
                          printed))
    return Drill("defined", seed,
                 f"A = {static_spelling(a)}, B = {static_spelling(b)} (compile-time _N shapes and strides, as CuTe "
                 f"prints them; with run-time ints CuTe checks neither condition). Is A o B defined? If not, which "
                 f"condition fails (shape or stride divisibility), and where CuTe compiles it anyway, what does it "
                 f"print?",
                 "defined / shape / stride, then for stride the layout CuTe prints: stride, (2,2):(32,2)", expected,
                 grade, steps, [RULE, steps[1]["text"]], variant="composition").with_data(
                     op="composition", args=[str(a), str(b)])
