"""Drill kind ``defined``: "Is A o B defined? Which of its two conditions fail, and what would CuTe print?"

CuTe composes mode by mode of B = n:d through the coalesced A: skip d elements, then take n. Two conditions make
that a layout, the *stride* and the *shape* condition (app.drills.defined_conditions), and both can fail at once:
the learner judges each, and each is graded. CuTe refuses a failed shape condition at compile time (a static_assert);
where its checks cannot see a failed stride condition it compiles and prints a layout that is not A o B. The verdict
is the condition-by-condition walk, and it must agree with the engine (which refuses a failed condition, naming it)
and with an independent check R(i) = A(B(i)); the engine's output is what CuTe prints.
"""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from app.drills import algebra_cases as K
from app.drills.common import explain, pick, read_layout, static_spelling, step
from app.drills.core import Drill, Grade, register
from app.drills.defined_conditions import CONDITIONS_TEXT, Walk, read_claims, walk
from app.drills.parsing import AnswerError, clean, parse_choice

RULE = ("A o B walks each mode n:d of B through the coalesced A: at each mode of A it skips d elements, then takes "
        "what it can of n. Two conditions make that a layout, and each can fail on its own: " + CONDITIONS_TEXT + ". "
        "CuTe refuses a failed shape condition at compile time, and a stride d that is neither a multiple of s nor "
        "below it; a step below s that does not divide it passes its checks, so it compiles and prints a layout that "
        "is not A o B.")
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


def _draw(rng: random.Random, target: str) -> tuple[Any, Any, str, Any, Walk]:
    """(A, B, verdict, what CuTe prints or "", the walk) for ``target`` in defined / shape / stride / both. The
    engine's verdict and the condition-by-condition walk must agree; a verdict with a failed shape condition has a
    one-mode B (the walk of one mode cannot hide a carry between modes)."""
    for _ in range(600):
        a = K.rand_layout(rng, 2, 48)
        ca = A.coalesce(a)
        if A.rank(ca) < 2 and (not isinstance(ca.stride, int) or ca.stride in (0, 1)):
            continue
        if 0 in A.flatten(a.stride) or A.flatten(a.shape)[-1] == 1:
            continue
        n, d = pick(rng, [2, 3, 4, 6, 8]), pick(rng, [1, 2, 3, 4, 6])
        b = A.Layout(n, d) if rng.random() < 0.7 else A.Layout((n, pick(rng, [2, 3])), (d, pick(rng, [1, 4, 8])))
        w = walk(a, b)
        if w.ambiguous or w.cute_check or w.verdict != target:
            continue
        engine, printed, _ = classify(a, b)
        agrees = {"defined": engine == "defined", "stride": engine == "stride",
                  "shape": engine == "shape" and A.rank(b) == 1 and isinstance(b.shape, int),
                  "both": engine == "shape" and isinstance(b.shape, int)}[target]
        if agrees and (target != "defined" or A.size(printed) <= 256):
            return a, b, target, printed if target in ("defined", "stride") else "", w
    raise LookupError(target)


def _layout_in(answer: str) -> Any:
    """The first parenthesis or number in the answer that reads as a whole layout (None when none does)."""
    s = clean(answer).strip()
    tries = 0
    for k, ch in enumerate(s):
        if ch == "(" or (ch.isdigit() and (k == 0 or not s[k - 1].isalnum()) and ":" in s[k:]):
            tries += 1
            depth, end = 0, len(s)
            for j in range(k, len(s)):  # up to a ')' that closes nothing: "(stride fails (2,2):(8,1))"
                depth += (s[j] == "(") - (s[j] == ")")
                if depth < 0:
                    end = j
                    break
            try:
                return read_layout(s[k:end].strip().rstrip(".!,;"))
            except AnswerError:
                if tries >= 8:
                    return None
    return None


def _same_print(got: Any, want: Any) -> bool:
    """What CuTe prints is a string: compare the layouts structurally (underscores and 1-tuples aside)."""
    return isinstance(got, A.Layout) and str(got) == str(want)


COMPLEMENT_RULE = ("complement(A, M) sorts A's modes by stride and fills the gaps between them; that only works when "
                   "the modes do not overlap (A is injective: no two coordinates share an offset). CuTe refuses an "
                   "overlapping A (\"Non-injective Layout detected in complement\").")
OVERLAP = {"defined": ["yes", "defined", "it is defined", "it's defined", "is defined", "ok", "valid", "injective"],
           "overlap": ["overlap", "overlapping", "overlapping modes", "no", "not injective", "non-injective",
                       "refused", "not defined", "no, overlap", "no, the modes overlap", "the modes overlap"]}


def _no_second_answer(rest: str) -> None:
    """AnswerError when what follows an "overlap" verdict gives another answer: a layout, or "defined"
    ("overlap; defined, 1:0"); a reason ("overlap (not injective)") passes."""
    rest = rest.strip(" ,;:=-.!")
    if not rest:
        return
    if re.search(r"\bor\b", rest, re.IGNORECASE) or _layout_in(rest) is not None:
        raise AnswerError("two answers: the modes overlap, and another; if A overlaps there is no complement")
    try:
        other = parse_choice(rest, OVERLAP)
    except AnswerError:
        return
    if other == "defined":
        raise AnswerError("two answers: the modes overlap, and it is defined; give one")


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
            _no_second_answer(s[len(head):])
            return Grade.right("right: CuTe refuses an overlapping A")
        rest = s[len(head):]
        rest = rest[3:] if rest.startswith(" - ") else rest.lstrip(" ,;:=")  # a minus sign stays with its number
        if not rest:
            raise AnswerError("also give complement(A, M): defined, then the complement in CuTe notation")
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
    target = pick(rng, ["defined", "shape", "stride", "stride", "both"])
    try:
        a, b, verdict, printed, w = _draw(rng, target)
    except LookupError:
        a, b, verdict, printed, w = _draw(rng, "defined")
    fails = {"shape": bool(w.shape), "stride": bool(w.stride)}
    expected = {"defined": "defined", "shape": "shape", "stride": f"stride, {printed}",
                "both": "shape and stride"}[verdict]

    def grade(ans: str) -> Grade:
        said_shape, said_stride = read_claims(ans)
        items = [said_shape == fails["shape"], said_stride == fails["stride"]]
        layout = _layout_in(ans)
        notes = []
        for name, ok, hint in (("shape", items[0], "take the counts mode by mode again"),
                               ("stride", items[1], "check each step against the shape it steps through")):
            notes.append(f"right about the {name} condition" if ok else f"not so for the {name} condition: {hint}")
        if verdict == "stride" and all(items):
            if layout is None:
                raise AnswerError("also give the layout CuTe prints, e.g. stride, " + _other_layout(printed))
            if not _same_print(layout, printed):
                return Grade.wrong("both conditions right, but that is not the layout CuTe prints; apply its "
                                   "skip-then-take rule without the check", items=items + [False])
            return Grade(True, "the stride condition fails, the shape condition holds, and that is what CuTe prints",
                         items=items + [True])
        if not all(items):
            return Grade.wrong("; ".join(notes), items=items)
        if layout is None and re.search(r"[0-9]", clean(ans)):  # "shape 999": a number that is no layout
            raise AnswerError("a number here is read only as part of the layout CuTe prints (shape:stride)")
        if verdict in ("shape", "both") and layout is not None:
            return Grade.wrong("right about both conditions, but a failed shape condition stops CuTe at compile time "
                               "(a static_assert): it prints no layout", items=items + [False])
        if verdict == "defined" and layout is not None:
            same = A.size(layout) == A.size(printed) and all(layout(i) == printed(i) for i in range(A.size(printed)))
            if not same:
                return Grade.wrong("both conditions hold, so it is defined, but the layout you give is not A o B",
                                   items=items + [False])
        return Grade(True, "; ".join(notes), items=items)

    steps = [step(RULE), step(f"A = {a} coalesces to {A.coalesce(a)}.", A.coalesce(a))]
    steps += [step(f"The shape condition fails: {why}.") for why in w.shape]
    steps += [step(f"The stride condition fails: {why}.") for why in w.stride]
    if verdict == "defined":
        steps.append(step(f"Both conditions hold: A o B = {printed}, and R(i) = A(B(i)) at every i.", printed))
    elif verdict == "stride":
        steps.append(step(f"The shape condition holds and CuTe's checks do not catch the stride: it compiles and "
                          f"prints {printed}, which is not A o B.", printed))
    else:
        steps.append(step(("The stride condition holds; the " if verdict == "shape" else "Both fail; the ")
                          + "failed shape condition stops CuTe at compile time (a static_assert), so it prints "
                          "nothing."))
    return Drill("defined", seed,
                 f"A = {static_spelling(a)}, B = {static_spelling(b)} (compile-time _N shapes and strides, as CuTe "
                 f"prints them; with run-time ints CuTe checks neither condition). Is A o B defined? Judge both "
                 f"conditions, walking each mode n:d of B through the coalesced A ({CONDITIONS_TEXT}): which fail? "
                 f"Where CuTe compiles it anyway, what does it print?",
                 "the conditions that fail: defined (none), shape, stride, or shape and stride; where CuTe compiles "
                 "a failed stride condition, then the layout it prints, e.g. {ex}", expected,
                 grade, steps, [RULE, steps[1]["text"]], variant="composition").with_data(
                     op="composition", args=[str(a), str(b)]).with_example(
        *(f"stride, {x}" for x in EXAMPLE_LAYOUTS if x != str(printed)))


#: Layouts the answer formats show as examples (each drill takes one that is not its key).
EXAMPLE_LAYOUTS = ("(2,2):(32,2)", "(3,2):(8,1)", "(2,4):(1,6)", "(4,2):(3,16)")


def _other_layout(printed: Any) -> str:
    return next(x for x in EXAMPLE_LAYOUTS if x != str(printed))
