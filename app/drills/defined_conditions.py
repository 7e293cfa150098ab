"""The two divisibility conditions of A o B, each judged on its own, and answers that speak of them.

CuTe composes mode by mode of B = n:d through the coalesced A: at each mode of A (shape s, all but the last) it steps
by d and takes what it can. Two conditions make that a layout, and both can fail at once:

- the *stride* condition: at every mode of A the walk steps into, d divides s or s divides d, unless all the
  elements still to take fit inside that mode ((n - 1) * d < s). CuTe checks only "d % s == 0 or d < s" (a
  static_assert); a step below s that does not divide it passes its check and gives a layout that is not A o B;
- the *shape* condition: each count taken divides the count still to take (a static_assert).

``walk(a, b)`` judges both on the engine's coalesced A, continuing after a failure as CuTe's fold does.
``read_claims(answer)`` reads what an answer says of each condition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import algebra as A
from app.drills.parse_words import find_words, tokens
from app.drills.parsing import AnswerError

CONDITIONS_TEXT = ("the stride condition: at each mode of A (shape s) that a mode n:d of B steps into, d divides s "
                   "or s divides d, unless all the elements still to take fit in it ((n-1)*d < s); the shape "
                   "condition: each count taken from a mode of A divides the count still to take")


@dataclass
class Walk:
    """Where each condition fails (one sentence each; empty lists: it holds), whether CuTe's own stride check fires,
    and whether the verdict depends on how a failed count is carried on (then the case is not a drill)."""

    shape: list[str] = field(default_factory=list)
    stride: list[str] = field(default_factory=list)
    cute_check: bool = False
    ambiguous: bool = False

    @property
    def verdict(self) -> str:
        """``defined``, ``shape``, ``stride`` or ``both``: the conditions that fail."""
        return {(False, False): "defined", (True, False): "shape", (False, True): "stride",
                (True, True): "both"}[(bool(self.shape), bool(self.stride))]


def _walk_mode(ls: tuple, k: int, n: int, d: int, ceil: bool) -> Walk:
    w = Walk()
    rest_s, rest_d = n, d
    for i, cs in enumerate(ls[:-1]):
        if not (rest_d % cs == 0 or rest_d < cs):
            w.stride.append(f"mode {k} of B steps by {rest_d} through mode {i} of the coalesced A (shape {cs}): "
                            f"{rest_d} is neither a multiple of {cs} nor below it (CuTe's own check refuses it)")
            w.cute_check = True
        next_s, next_d = -(-cs // rest_d), -(-rest_d // cs)
        if next_s == 1 or rest_s == 1:
            rest_d = next_d
            continue
        new_s = min(next_s, rest_s)
        if cs % rest_d and rest_s > next_s:
            w.stride.append(f"mode {k} of B steps by {rest_d} through mode {i} of the coalesced A (shape {cs}): "
                            f"{rest_d} does not divide {cs} and its {rest_s} elements do not fit in it")
        if rest_s % new_s:
            w.shape.append(f"mode {k} of B takes {new_s} from mode {i} of the coalesced A (shape {cs}) with "
                           f"{rest_s} still to take: {new_s} does not divide {rest_s}")
            rest_s = -(-rest_s // new_s) if ceil else rest_s // new_s
        else:
            rest_s //= new_s
        rest_d = next_d
    return w


def walk(a: Any, b: Any) -> Walk:
    """Both conditions of A o B (int layouts, strides of B > 0). Post-condition: ``ambiguous`` when A ends in a
    size-1 mode (CuTe then composes with a coalesced A that keeps it) or when carrying a failed count on by floor or
    by ceiling would change the stride verdict."""
    out = Walk()
    if A.flatten(a.shape)[-1] == 1 if isinstance(a.shape, tuple) else a.shape == 1:
        out.ambiguous = True
    ca = A.coalesce(a)
    if not isinstance(ca.shape, tuple):
        return out
    ls = tuple(ca.shape)
    bs, bd = A.flatten(b.shape), A.flatten(b.stride)
    bs, bd = (bs, bd) if isinstance(bs, tuple) else ((bs,), (bd,))
    for k, (n, d) in enumerate(zip(bs, bd, strict=True)):
        if n == 1 or d == 0:
            continue
        lo, hi = _walk_mode(ls, k, n, d, False), _walk_mode(ls, k, n, d, True)
        out.ambiguous |= bool(lo.stride) != bool(hi.stride)
        out.shape += lo.shape
        out.stride += lo.stride
        out.cute_check |= lo.cute_check
    return out


_COND = ("shape", "stride")
_FAIL = ("fails", "fail", "failed", "failing", "violated", "broken", "breaks", "no", "false", "wrong")
_HOLD = ("holds", "hold", "held", "ok", "okay", "fine", "passes", "pass", "passed", "satisfied", "yes", "true",
         "good", "met")
_DEFINED = ("defined", "yes", "valid", "it is defined", "both hold", "neither fails", "no condition fails", "none",
            "none fails", "none fail", "nothing fails", "neither condition fails", "no conditions fail")
_BOTH = ("both", "both fail", "neither holds", "both conditions fail")
_NEGATION = ("not", "doesn", "isn", "don", "nor")


def _outside(answer: str, phrases: list[tuple[int, str]], words: tuple[str, ...]) -> bool:
    """True when one of ``words`` stands in ``answer`` outside the matched ``phrases`` (position, phrase): the "no"
    of "no condition fails" or the "fails" of "none fails" says it is defined, not that it is not."""
    covered = {pos + k for pos, w in phrases for k in range(len(w.split()))}
    return any(p not in covered for p, _ in find_words(answer, words))


def read_claims(answer: str) -> tuple[bool, bool]:
    """(the shape condition fails, the stride condition fails) as the answer says it, by whole words: ``stride``,
    ``shape and stride``, ``both``, ``shape fails, stride holds``, ``defined``. A condition named without a verdict
    fails; one not named holds when the other is said to fail. Post-condition: AnswerError for an answer that names
    no condition and no verdict, contradicts itself, or offers alternatives ("shape or stride")."""
    toks = tokens(answer)
    if "or" in toks or "/" in toks:  # "shape or stride", "defined / both": alternatives, not an answer
        raise AnswerError("give one answer, not alternatives: say which conditions fail, e.g. shape and stride")
    named = find_words(answer, _COND)
    if any(p > 0 and toks[p - 1] in _NEGATION or p > 1 and toks[p - 2] in _NEGATION for p, _ in named):
        raise AnswerError("say for each condition whether it holds or fails, e.g. shape holds, stride fails")
    words = [w for _, w in named]
    if any(words.count(w) > 1 for w in _COND) and not find_words(answer, _FAIL + _HOLD):
        raise AnswerError("a condition is named twice without a verdict (two answers?); say once which conditions "
                          "fail, e.g. shape and stride")
    said: dict[str, bool] = {}
    for j, (pos, word) in enumerate(named):
        end = named[j + 1][0] if j + 1 < len(named) else len(toks)
        seg = " ".join(toks[pos + 1:end])
        fails, holds = find_words(seg, _FAIL), find_words(seg, _HOLD)
        if fails and holds:
            raise AnswerError(f"the {word} condition is said both to hold and to fail")
        verdict = not holds
        if said.get(word, verdict) != verdict:
            raise AnswerError(f"two verdicts on the {word} condition")
        said[word] = verdict
    both = [w for _, w in find_words(answer, _BOTH)]
    defined = find_words(answer, _DEFINED)
    if both and not said:
        if "both" in both and find_words(answer, ("hold", "holds", "ok", "okay", "fine", "pass", "passes",
                                                  "satisfied", "met")):
            return False, False  # "both hold", "both are ok"
        if defined and not _outside(answer, defined, ("not", "no", "undefined")):
            raise AnswerError("two answers: both conditions fail, and it is defined; give one")
        return True, True
    if not said:
        if defined and not _outside(answer, defined, ("not", "no", "undefined", "fails")):
            return False, False
        raise AnswerError("name the condition that fails (shape, stride or both), or say it is defined")
    if len(said) == 1:
        (word, verdict), = said.items()
        if not verdict:
            raise AnswerError(f"the {word} condition holds, and the other? say both, e.g. shape holds, stride fails")
        other = "stride" if word == "shape" else "shape"
        said[other] = bool(both)
    if defined and any(said.values()) and not _outside(answer, defined, ("not", "no", "undefined")):
        raise AnswerError("it is said to be defined and a condition is said to fail")
    return said["shape"], said["stride"]


__all__ = ["CONDITIONS_TEXT", "Walk", "read_claims", "walk"]
