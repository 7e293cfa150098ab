"""Profile names: what a name may be, and the form under which two names are the same name.

A name is shown on the class board and in the lab's history beside the jobs it submitted, so two names a reader
cannot tell apart must not be held by two browsers. The rule, as the refusals state it:

- a name is 1-40 letters (with their combining marks), digits 0-9, spaces, ``.``, ``'``, ``_`` or ``-`` after Unicode
  NFKC normalisation (so a full-width ``Ａｄａ`` is ``Ada``, a ligature ``ﬁ`` is ``fi``); runs of spaces count as one;
- its letters are all of one script (kana and kanji count as one): ``Adа`` with a Cyrillic ``а`` is refused;
- two names are the same name when their keys are equal: :func:`name_key` is NFKC + casefold, with the Greek and
  Cyrillic letters that look like Latin ones read as those (so ``Ada``, ``ada`` and ``ADA`` are one name, and so
  are the Cyrillic ``Рома`` and the Latin ``Poma``).

Post-conditions: ``name_key(check(x)) == name_key(x)`` for every name ``check`` accepts; ``name_key`` never raises
(rows stored before these rules get a key too).
"""

from __future__ import annotations

import unicodedata

__all__ = ["RULE", "check", "name_key"]

RULE = ("a profile name is 1-40 letters of one script, digits 0-9, spaces, . ' _ or -; names that differ only in "
        "case, width or letters that look alike are one name")
_OTHERS = frozenset("0123456789 .'_-")
_EAST_ASIAN = {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC"}

#: Greek and Cyrillic letters (casefolded) that look like a Latin letter, read as that letter in a name's key.
_LOOKALIKE = str.maketrans({
    **dict(zip("авсеһіјкмнорѕтухԁԛԝӏү", "abcehijkmhopstyxdqwly", strict=True)), "ё": "ë", "ї": "ï",
    **dict(zip("αβεζηικμνορτυχϲϳ", "abezhikmnoptyxcj", strict=True)),
})


def _nfkc(name: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", name or "").split())


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC, casefold, look-alike Greek and Cyrillic letters as Latin ones,
    runs of spaces as one. ``name_key("Ada") == name_key("ADA") == name_key("Ａｄａ") == name_key("Аdа")``."""
    folded = unicodedata.normalize("NFKC", _nfkc(name).casefold())
    return folded.translate(_LOOKALIKE)


def _script(ch: str) -> str:
    word = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
    return "EAST ASIAN" if word in _EAST_ASIAN else word


def _allowed(name: str, k: int) -> bool:
    """A letter, one of the others, or a combining mark on a letter (Devanagari's vowel signs, say)."""
    ch = name[k]
    if ch.isalpha() or ch in _OTHERS:
        return True
    return unicodedata.category(ch).startswith("M") and k > 0 and _allowed(name, k - 1) and name[k - 1] not in _OTHERS


def check(name: str) -> str:
    """The name as stored: NFKC, trimmed, runs of spaces as one. Raises ValueError (stating :data:`RULE`) for a
    name of other characters or of letters from more than one script."""
    norm = _nfkc(name)
    if not 1 <= len(norm) <= 40 or not all(_allowed(norm, k) for k in range(len(norm))):
        raise ValueError(RULE)
    scripts = sorted({_script(ch) for ch in norm if ch.isalpha()})
    if len(scripts) > 1:
        raise ValueError(f"{name.strip()!r} mixes {' and '.join(s.title() for s in scripts)} letters, which can look "
                         f"alike; {RULE}")
    return norm
