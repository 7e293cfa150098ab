"""Answers written with words: whole-word choices (``stride``, ``both``; ``shapex`` is no word of them), labelled
numbers (``offset 7``, ``16 banks``, ``row 7, col 0``), fractions and percentages (``8, 1/8``), paddings with a unit
(``pad 8 bytes``, ``pad 1 word``) and swizzles in CuTe's spellings (``Sw<3,3,3>``, ``cute::Swizzle<3,3,3>{}``).

Every reader is a linear scan (a tokenizer, no backtracking pattern) and raises AnswerError saying what it expected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from app.drills.parse_base import AnswerError, _integer, clean

_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)?|[a-z]+|[^\sa-z0-9]")


def _isnum(tok: str) -> bool:
    return "0" <= tok[:1] <= "9"


def negated(toks: list[str], k: int) -> bool:
    """True when the number ``toks[k]`` carries a minus sign: a ``-`` right before it that joins no two items (not
    the ``-`` of a range ``8-15``, of ``4-way`` or of ``(1,2)-(3,4)``)."""
    return k > 0 and toks[k - 1] == "-" and (k == 1 or not (_isnum(toks[k - 2]) or toks[k - 2].isalpha()
                                                              or toks[k - 2] == ")"))


#: Words that turn what follows into its opposite: ``not (1,8)``, ``never a hole``, ``except (2,3)``.
NEGATIONS = frozenset(("not", "never", "except", "excluding", "without", "nor", "isn", "doesn", "don", "t"))


def negation(text: str) -> str | None:
    """The first negation word of ``text`` (NEGATIONS, ``isn't`` / ``doesn't`` by their stems), or None. A reader
    that skips the words around its values calls this, so ``not (1,8) (1,9)`` is never read as the pairs it
    negates. Linear time."""
    toks = tokens(text)
    for k, tok in enumerate(toks):
        if tok in NEGATIONS and (tok != "t" or (k > 0 and toks[k - 1] == "'")):
            return "n't" if tok in ("isn", "doesn", "don", "t") else tok
    return None


def minus_before_pair(text: str) -> bool:
    """True when a minus sign stands before a parenthesised pair (``-(14,5)``): the pair negated, not a range's
    ``(1,2)-(3,4)`` dash. Linear time."""
    return re.search(r"(?:^|[^\w)])-\(", re.sub(r"\s+", "", text)) is not None


def tokens(text: str) -> list[str]:
    """Lower-cased words, numbers (``12``, ``12.5``) and single signs of ``text``, in order (``16-way`` ->
    ``16``, ``-``, ``way``)."""
    return _TOKEN.findall(clean(text).lower()) if text and text.strip() else []


def find_words(text: str, vocabulary: Iterable[str]) -> list[tuple[int, str]]:
    """(token position, word) of every whole word of ``vocabulary`` in ``text``; a phrase of several words matches
    as consecutive tokens. Post-condition: ``shapex`` or ``reshape`` never matches ``shape``."""
    toks = tokens(text)
    phrases = sorted({tuple(tokens(v)) for v in vocabulary}, key=len, reverse=True)
    out = []
    for i in range(len(toks)):
        for p in phrases:
            if p and tuple(toks[i:i + len(p)]) == p:
                out.append((i, " ".join(p)))
                break
    return out


#: Words around a single number that do not change it: "offset 7", "16 banks", "it is 4-way", "= 12".
NUMBER_LABELS = frozenset(
    "the a an it its is are answer offset offsets bank banks distinct different value index result total way ways "
    "conflict conflicts wavefront wavefronts sector sectors lanes lane hit hits there of so l n x bank-conflict "
    "equals gives chunk chunks number no in all altogether".split())


#: The units a count is given in, each with its words: a number in one of them answers a question about that one.
UNITS = {"way": ("way", "ways", "conflict", "conflicts"), "wavefront": ("wavefront", "wavefronts"),
         "sector": ("sector", "sectors"), "bank": ("bank", "banks"), "lane": ("lane", "lanes"),
         "chunk": ("chunk", "chunks"), "percent": ("%", "percent")}
_UNIT_OF = {w: u for u, words in UNITS.items() for w in words}


def units_named(text: str) -> list[str]:
    """The units (keys of UNITS) ``text`` names: ``16 banks`` -> bank, ``4-way bank conflict`` and ``4x`` -> way
    (the bank of a bank conflict is no count of banks), ``25%`` -> percent. Linear time."""
    toks = tokens(text)
    out = []
    for k, tok in enumerate(toks):
        unit = _UNIT_OF.get(tok)
        if tok == "x" and k and _isnum(toks[k - 1]):
            unit = "way"
        if unit == "bank" and toks[k + 1:k + 2] and toks[k + 1] in ("conflict", "conflicts"):
            unit = "way"
        if unit and unit not in out:
            out.append(unit)
    return out


def labelled_int(text: str) -> int:
    """One integer among label words (NUMBER_LABELS), after the last ``=`` / ``:`` / ``->`` if any: ``offset 7``,
    ``16 banks``, ``4-way bank conflict``, ``L(16) = 25``. Post-condition: an int, else AnswerError (a word that is
    no label, or not exactly one number)."""
    s = clean(text).replace("→", "->")
    cut, depth, depths = -1, 0, []
    for k, ch in enumerate(s):  # the last label sign outside every parenthesis: "((1:2):(3:4))" has none
        depth += (ch == "(") - (ch == ")")
        depths.append(depth)
        if depth == 0 and (ch in "=:" or (ch == ">" and s[k - 1:k] == "-")):
            cut = k
    if cut >= 0 and re.search(r"[0-9]", s[cut + 1:]):
        if s[cut] == ":" and any(ch.isdigit() and d == 0 for ch, d in zip(s[:cut], depths, strict=False)):
            raise AnswerError("that reads as a layout n:d; give one integer")  # "16:1" is no labelled 1
        s = s[cut + 1:]
    nums: list[int] = []
    toks = tokens(s)
    for k, tok in enumerate(toks):
        if _isnum(tok):
            if "." in tok:
                raise AnswerError(f"expected one integer, got {tok}")
            nums.append(-int(tok) if negated(toks, k) else int(tok))
        elif tok.isalpha() and tok not in NUMBER_LABELS:
            raise AnswerError(f"expected one integer, got the word {tok!r}")
        elif not tok.isalpha() and tok not in "-.,()=:>#":
            raise AnswerError(f"expected one integer, got {tok!r}")
    if len(nums) != 1:
        raise AnswerError(f"expected one integer, got {len(nums)} numbers")
    return nums[0]


#: Words around a coordinate (or a few) that do not change it: "natural (1,(1,2))", "2-D (1,5), offset 16".
COORD_LABELS = frozenset(
    "the a it its is answer natural coordinate coordinates coord coords offset index flat top level and then gives "
    "maps to tuple value result 1d 2d".split())
_DIM = re.compile(r"(?<![0-9A-Za-z])[12] ?- ?[dD](?![A-Za-z0-9])")


def parse_coord(text: str) -> Any:
    """A nested coordinate (or several) among label words (COORD_LABELS), after the last ``=`` or ``->``:
    ``natural (1,(1,2))``, ``(i,(j,k)) = (1,(1,2))``, ``16 -> (1,(1,2))``, ``2-D (1,5), natural (1,(1,2)), offset
    16``. Post-condition: what ``parse_nested`` reads once the labels are gone; AnswerError for any other word."""
    from app.drills.parse_base import parse_nested

    s = clean(text).replace("→", "->")
    for sep in ("->", "="):
        if sep in s and re.search(r"[0-9]", s.rsplit(sep, 1)[1]):
            s = s.rsplit(sep, 1)[1]
    s = _DIM.sub(" ", s)
    out = []
    for m in re.finditer(r"[A-Za-z]+|[^A-Za-z]+", s):
        word = m.group(0)
        if word[0].isalpha():
            if word.lower() not in COORD_LABELS:
                raise AnswerError(f"unexpected word {word!r}: give the coordinate as a tuple of numbers")
            out.append(" ")
        else:
            out.append(word.replace(":", " "))
    return parse_nested("".join(out))


_ROW = ("row", "r", "rows")
_COL = ("col", "column", "c", "cols", "columns")


def parse_rc(text: str) -> tuple[int, int]:
    """A (row, col) pair: ``(7,0)``, ``7, 0``, ``row 7, col 0``, ``col 0 row 7``, ``r=7 c=0``, ``(row, col) = (7, 0)``.
    Post-condition: labels decide the order where both are given; else the order written is (row, col)."""
    s = clean(text)
    if minus_before_pair(s):
        raise AnswerError("a minus sign before (row,col) negates it: give the pair itself")
    if "=" in s and re.search(r"[0-9]", s.rsplit("=", 1)[1]) and not re.search(r"[rc]\w* ?=", s.lower()):
        s = s.rsplit("=", 1)[1]
    toks = tokens(s)
    found: dict[str, int] = {}
    for k, tok in enumerate(toks):
        if tok in _ROW or tok in _COL:
            j = k + 1
            while j < len(toks) and toks[j] in ("=", ":", "is"):
                j += 1
            if j + 1 < len(toks) and toks[j] == "-" and _isnum(toks[j + 1]):
                j += 1  # row -1
            if j < len(toks) and _isnum(toks[j]):
                key = "row" if tok in _ROW else "col"
                if key in found:
                    raise AnswerError(f"two values for the {key}")
                found[key] = -int(toks[j]) if toks[j - 1] == "-" else int(toks[j])
    if len(found) == 2:
        nums = [t for t in toks if _isnum(t)]
        if len(nums) != 2:
            raise AnswerError("expected two numbers: the row and the column")
        return found["row"], found["col"]
    words = [t for t in toks if t.isalpha()]
    if any(w not in _ROW + _COL + ("and", "is", "at") for w in words):
        raise AnswerError("expected (row,col), or row R, col C")
    nums = [(t, negated(toks, k)) for k, t in enumerate(toks) if _isnum(t)]
    if len(nums) != 2 or any("." in n for n, _ in nums):
        raise AnswerError("expected two integers: (row,col)")
    (r, r_neg), (c, c_neg) = nums
    return -int(r) if r_neg else int(r), -int(c) if c_neg else int(c)


def _number(tok: str) -> Fraction:
    if "/" in tok:
        a, b = tok.split("/")
        if int(b) == 0:
            raise AnswerError("a fraction with denominator 0")
        return Fraction(int(a), int(b))
    return Fraction(tok)


_UTIL_WORDS = ("utilization", "utilisation", "util", "efficiency", "used", "use", "usage")
_SECTOR_WORDS = ("sector", "sectors")
_FILLER = ("the", "and", "at", "of", "with", "is", "are", "bytes", "byte", "a", "it", "touches", "touched", "so")


def parse_sector_answer(text: str) -> tuple[int, Fraction, Fraction]:
    """``sectors, utilization``: ``8, 50%``, ``8 sectors, 0.5``, ``8, 1/8``, ``utilization 25%, 4 sectors``.
    Post-condition: (sectors, utilization as a fraction of 1, the rounding the typed digits allow: half a unit of the
    last digit; 0 for a fraction ``a/b``), else AnswerError."""
    s = re.sub(r"([0-9]) ?/ ?([0-9])", r"\1/\2", clean(text).lower())
    s = re.sub(r" ?\b(?:per ?cent|pct)\b", "%", s)  # "100 percent", "50 per cent", "50 pct"
    items = re.findall(r"[0-9]+(?:\.[0-9]+)?(?:/[0-9]+)?|%|[a-z]+|[^\sa-z0-9%]", s)
    nums: list[tuple[int, str]] = [(k, t) for k, t in enumerate(items) if _isnum(t)]
    if len(nums) != 2:
        raise AnswerError("expected two numbers: sectors and utilization")
    for t in items:
        if t.isalpha() and t not in _UTIL_WORDS + _SECTOR_WORDS + _FILLER:
            raise AnswerError(f"unexpected word {t!r}: give sectors and utilization")

    def role(k: int) -> str:
        after = items[k + 1] if k + 1 < len(items) else ""
        before = next((items[j] for j in range(k - 1, -1, -1) if items[j] not in ("=", ":", "is", "of")), "")
        if after in _SECTOR_WORDS:
            return "sectors"
        if after == "%" or after in _UTIL_WORDS or before in _UTIL_WORDS or "/" in items[k]:
            return "util"
        return ""

    (k0, a), (k1, b) = nums
    if role(k0) == "util" or role(k1) == "sectors":
        (k0, a), (k1, b) = (k1, b), (k0, a)
    if "." in a or "/" in a:
        raise AnswerError("the number of sectors is an integer")
    util = -_number(b) if negated(items, k1) else _number(b)
    decimals = len(b.split(".")[1]) if "." in b else 0
    tol = Fraction(0) if "/" in b else Fraction(1, 2 * 10 ** decimals)
    percent = k1 + 1 < len(items) and items[k1 + 1] == "%"
    if percent or (util > 1 and "/" not in b):
        util, tol = util / 100, tol / 100
    return -int(a) if negated(items, k0) else int(a), util, tol


_PAD_WORDS = ("padding", "pad")
_PITCH_WORDS = ("leading dimension", "row stride", "stride", "lda", "ld", "pitch")
#: Unit -> bytes (None: elements).
_PAD_UNITS = {"bytes": 1, "byte": 1, "b": 1, "words": 4, "word": 4, "elements": None, "element": None,
              "floats": None, "float": None, "halves": None, "half": None, "doubles": None, "double": None,
              "elems": None, "elem": None}


def parse_padding(text: str, element_bytes: int | None = None) -> int | None:
    """Read a padding answer: ``pad 1``, ``+1``, ``padding: 4``, ``pad 8 bytes``, ``pad 1 word``, ``ld=33`` /
    ``row stride 33`` (returned as -33 to mark "a row stride, not an increment"). A unit in bytes or 4-byte words is
    turned into elements of ``element_bytes`` (AnswerError when it is not a whole number of them, or the element size
    is unknown). Post-condition: None when the text is not a padding answer at all; linear time."""
    s = clean(text).lower().strip()
    if str(text).lstrip()[:1] == "+" and s[:1] != "+":
        s = "+" + s  # "+4": the plus marks an increment here (clean drops a number's sign)
    sign = 1
    for word in _PAD_WORDS + ("+",):
        if s.startswith(word):
            s = s[len(word):].strip()
            break
    else:
        for word in _PITCH_WORDS:
            if s.startswith(word):
                s, sign = s[len(word):].strip(), -1
                break
        else:
            return None
    for sep in ("of", "by", "=", ":"):
        if s.startswith(sep):
            s = s[len(sep):].strip()
            break
    unit = None
    for name in sorted(_PAD_UNITS, key=len, reverse=True):
        if s.endswith(name) and (len(s) == len(name) or not s[-len(name) - 1].isalpha()):
            s, unit = s[:-len(name)].strip(), name
            break
    value = _integer(s)
    if value is None or value < 0 or s[:1] in "+-":
        return None
    per = _PAD_UNITS.get(unit) if unit else None
    if per is not None:
        if element_bytes is None:
            raise AnswerError("give the padding in elements")
        if (value * per) % element_bytes:
            raise AnswerError(f"{value} {unit} is not a whole number of {element_bytes}-byte elements")
        value = value * per // element_bytes
    return sign * value


def parse_swizzle(text: str) -> tuple[int, int, int]:
    """Read ``Sw<B,M,S>``, ``Swizzle<B,M,S>``, ``cute::Swizzle<B,M,S>{}``, ``swizzle 3 4 3`` or ``B=3 M=4 S=3``.
    Post-condition: three ints (a tokenizer: linear time)."""
    s = clean(text).strip().strip("`").rstrip(";.").strip().lower().removeprefix("cute::").strip()
    for prefix in ("swizzle", "sw"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    nums: list[int] = []
    names = iter("bms")
    i = 0
    while i < len(s):
        ch = s[i]
        if "0" <= ch <= "9":
            j = i
            while j < len(s) and "0" <= s[j] <= "9":
                j += 1
            if j - i > 3:
                raise AnswerError("expected a swizzle Sw<B,M,S>")
            nums.append(int(s[i:j]))
            i = j
            continue
        if ch in "bms" and s[i + 1:i + 2] == "=" and ch == next(names, None):
            i += 2
            continue
        if ch not in " ,<>()=":
            raise AnswerError("expected a swizzle Sw<B,M,S>")
        i += 1
    if len(nums) != 3:
        raise AnswerError("expected a swizzle Sw<B,M,S>: three numbers B, M, S")
    return nums[0], nums[1], nums[2]


__all__ = ["COORD_LABELS", "NEGATIONS", "UNITS", "find_words", "labelled_int", "minus_before_pair", "negated",
           "negation", "parse_coord", "parse_padding", "parse_rc", "parse_sector_answer", "parse_swizzle", "tokens",
           "units_named"]
