"""The base of the answer readers: the error they raise, the cleaning of a typed answer, integers and nested tuples.

``app.drills.parsing`` and its word and layout readers (``parse_words``, ``parse_layout``) stand on it, so none of
them imports another in a circle.
"""

from __future__ import annotations

import re
import unicodedata

from layoutlab.caps import MAX_NESTING as MAX_ANSWER_NESTING
from layoutlab.caps import nesting_depth

MAX_ANSWER_CHARS = 4000
MAX_NESTING = 12

IntTuple = int | tuple["IntTuple", ...]


class AnswerError(ValueError):
    """The answer could not be read; ``str(err)`` says what was expected."""


def check_length(text: str) -> str:
    """Return ``text`` stripped. Post-condition: raises AnswerError if it is empty, over MAX_ANSWER_CHARS, nested
    deeper than MAX_ANSWER_NESTING, or holds a character no answer is written with (see :func:`_odd_character`)."""
    if text is None or not str(text).strip():
        raise AnswerError("the answer is empty")
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError(f"the answer is {len(text)} characters long; at most {MAX_ANSWER_CHARS} are read")
    text = str(text)
    odd = _odd_character(text)
    if odd:
        raise AnswerError(odd)
    deep = max(nesting_depth(text.replace("<", "").replace(">", "")),
               nesting_depth("".join(ch for ch in text if ch in "<>")))
    if deep > MAX_ANSWER_NESTING:
        raise AnswerError(f"brackets nested {deep} deep; at most {MAX_ANSWER_NESTING} are read")
    return text.strip()


_WRAPPED = re.compile(r"^(`{1,3})([^`]*)\1$")


#: A bound or an estimate in front of an answer: ``<= 4``, ``>2``, ``~16, 25%``, ``≈ 8``; a ``<`` no ``>`` closes
#: (``<4, 50%``; a tiler ``<2:2, 8:1>`` is closed).
_BOUND = re.compile(r"(?:<=|>=|=<|=>|[≤≥~≈>])|<[^>]*$")

#: The same in words, in front of the answer (``at least 4``, ``approximately 16``, ``maybe (1,2)``) or after it
#: (``4 or more``, ``32, roughly``, ``25%+``): a range or a guess, not the value.
_BOUND_WORDS = re.compile(
    r"(?:at least|at most|up to|no more than|no less than|more than|less than|fewer than|about|around|"
    r"approximately|approx\.?|roughly|circa|maybe|perhaps|possibly|probably)(?![\w-])", re.IGNORECASE)
_BOUND_AFTER = re.compile(
    r"(?<![\w-])(?:or (?:more|less|fewer|so|above|below|higher|lower)|at (?:least|most)|roughly|approximately|"
    r"approx\.?|or thereabouts|ish)\s*\.?$|(?<=[\d)%])\s?\+$", re.IGNORECASE)

#: Markup or a statement around an answer (``<script>K</script>``, ``K'; DROP TABLE t; --``): what it wraps is not
#: what the learner answered. CuTe's ``Sw<B,M,S>``, ``Int<4>`` and ``Shape<_4>`` are no tags (a tag name is
#: lower-case and ends at a space, ``/`` or ``>``).
_FOREIGN = re.compile(r"</?(?:script|style|iframe|img|svg|a|b|i|u|em|strong|code|pre|span|div|p|br|sub|sup|tt|kbd|"
                      r"font|object|embed|link|meta)(?:[\s/][^<>]*)?>|\b(?:drop|delete|truncate|alter)\s+table\b|"
                      r"\binsert\s+into\b|\bunion\s+select\b", re.IGNORECASE)

#: A second answer offered in case the first is wrong: ``shape, if not then defined``, ``4, otherwise 8``.
_FALLBACK = re.compile(r"\b(?:if not|otherwise|or else|alternatively|failing that)\b", re.IGNORECASE)

#: Math delimiters around an answer typed as LaTeX: ``$K$``, ``$$K$$``, ``\(K\)``, ``\[K\]``.
_LATEX = re.compile(r"^(?:\$\$([^$]+)\$\$|\$([^$]+)\$|\\\((.+)\\\)|\\\[(.+)\\\])$", re.DOTALL)
#: A label naming what follows as the answer: ``answer: K``, ``Answer = K``, ``the answer is K``.
_LABEL = re.compile(r"^(?:(?:the|my) )?(?:final )?answer\b(?: is)? ?[:=]? ?(?=\S)", re.IGNORECASE)


def unwrap_answer(text: str) -> str:
    """The answer inside what a person writes around it: a pair of backticks around it, LaTeX math delimiters
    (``$K$``, ``\\(K\\)``), an ``answer:`` label, a leading ``=`` (the right-hand side of an equation whose left
    side was left out) and a full stop ending it as a sentence (after a letter, digit, ``)``, ``>`` or ``%``).
    Post-condition: ``text`` stripped when none applies; AnswerError when markup or a database statement wraps it,
    when it offers a second answer in case it is wrong (``if not``, ``otherwise``), or when a bound or an estimate
    stands in front of it or after it (``> 2``, ``<= 4``, ``~16``, ``at least 4``, ``4 or more``, ``25%+``): that
    states a range or a guess, not the value; linear time."""
    s = text.strip()
    m = _WRAPPED.match(s)
    if m and m.group(2).strip():
        s = m.group(2).strip()
    m = _LATEX.match(s)
    if m and "".join(g for g in m.groups() if g).strip():
        s = "".join(g for g in m.groups() if g).strip()
    m = _LABEL.match(s)
    if m and s[m.end():].strip():
        s = s[m.end():].strip()
    if _FOREIGN.search(s):
        raise AnswerError("markup or a database statement is not an answer: type the answer alone")
    if _FALLBACK.search(s):
        raise AnswerError("give one answer: this one offers another in case it is wrong (\"if not\", \"otherwise\")")
    if _BOUND.match(s) or _BOUND_WORDS.match(s) or _BOUND_AFTER.search(s):
        raise AnswerError("a bound or an estimate (<, >, <=, ~, at least, or more, about) is not an answer: give "
                          "the value itself")
    if s.startswith("=") and not s.startswith("=="):
        s = s[1:].lstrip()
    if len(s) > 1 and s.endswith(".") and (s[-2].isalnum() or s[-2] in ")>%") and not s.endswith(".."):
        s = s[:-1].rstrip()
    return s


def _odd_character(text: str) -> str:
    """Why ``text`` cannot be an answer, or "": a control or invisible formatting character (tabs and new lines
    aside), a lone surrogate, a combining mark (``K`` + U+0338 is K struck through), or a digit other than ASCII
    0-9 (a look-alike such as a full-width or Arabic-Indic digit is refused, never read as the number it
    resembles). Linear time."""
    for ch in text:
        if ch in "\t\n\r" or " " <= ch <= "~":
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn"):
            return f"the answer holds an invisible or control character (U+{ord(ch):04X})"
        if cat[0] == "M":
            return f"the answer holds a combining mark (U+{ord(ch):04X}), which changes the character before it"
        if cat[0] == "N":
            return f"the answer holds {ch!r} (U+{ord(ch):04X}): write numbers with the digits 0-9"
    return ""


_TRANSLATE = str.maketrans({"[": "(", "]": ")", "{": "(", "}": ")", "×": "*", "·": "*", "−": "-", "–": "-",
                            "—": "-", "＝": "=", "，": ",", "（": "(", "）": ")", "：": ":"})


def squeeze(text: str) -> str:
    """Collapse every run of whitespace to one character (a new line if the run holds one, else a space).

    Post-condition: no two whitespace characters are adjacent, so no pattern applied afterwards can backtrack over a
    long run of spaces (linear time in the length of the answer)."""
    out: list[str] = []
    run = ""
    for ch in text:
        if ch.isspace():
            run = "\n" if ch == "\n" or run == "\n" else " "
            continue
        if run:
            out.append(run)
            run = ""
        out.append(ch)
    if run:
        out.append(run)
    return "".join(out)


_HEX = re.compile(r"(?<![\w.])0[xX]([0-9a-fA-F]{1,16})(?![\w.])")
_BIN = re.compile(r"(?<![\w.])0[bB]([01](?:[01_']{0,70}[01])?)(?![\w.])")


def clean(text: str) -> str:
    """Normalise notation. Post-condition: whitespace runs are one character, C++ value braces are gone, ``Int<N>``,
    ``_N`` and a number's explicit sign ``+N`` become ``N``, hexadecimal ``0x1c`` becomes ``28`` and binary
    ``0b1111`` (a bit mask) ``15``, brackets become parens, typographic signs become ASCII; the text is otherwise
    unchanged."""
    text = squeeze(check_length(text))
    text = _HEX.sub(lambda m: str(int(m.group(1), 16)), text)  # 0x1c -> 28
    text = _BIN.sub(lambda m: str(int(re.sub(r"[_']", "", m.group(1)), 2)), text)  # 0b1111 (a bit mask) -> 15
    text = re.sub(r"(?<=[\w>]) ?\{ ?\}", "", text)  # C++ value braces: _4{}, Int<4>{}, LayoutRight{}
    text = re.sub(r"Int ?< ?(-?\d+) ?>", r"\1", text)
    text = re.sub(r"(?<![A-Za-z0-9])_(?=\d)", "", text)
    return _PLUS.sub(r"\1\2", text.translate(_TRANSLATE))


#: An explicit plus sign on a number that starts an item (``(+4,+8):(+1,+4)``, ``LBO=+1024``, ``16, +100%``); a
#: plus between two terms (``i + 2``) is an operator and stays.
_PLUS = re.compile(r"(^|[(,:;<=*/%\n])( ?)\+ ?(?=\d)")


def _tokens(text: str) -> list[str]:
    """Split into '(' ')' and integers; commas, spaces, semicolons and new lines separate. Raises on anything else."""
    out: list[str] = []
    for m in re.finditer(r"\s+|[,;]|\(|\)|[+-]?\d+|.", text):
        tok = m.group(0)
        if tok.isspace() or tok in (",", ";"):
            continue
        if tok in "()" or re.fullmatch(r"[+-]?\d+", tok):
            out.append(tok)
            continue
        raise AnswerError(f"unexpected {tok!r}: only integers, commas and parentheses are read here")
    return out


#: A full stop closing the answer as a sentence, after its last number or parenthesis: "0, 4, 8." reads "0, 4, 8".
_SENTENCE_END = re.compile(r"(?<=[\d)])\s?\.\s?$")


def parse_nested(text: str) -> IntTuple:
    """Read an integer or a nested tuple of integers, e.g. ``(1,(1,2))`` or ``1, (1, 2)``.

    Post-condition: a top-level sequence of several items becomes a tuple; ``(x)`` with one item stays a 1-tuple
    only when nested, so ``"(5)"`` reads as ``5``.
    """
    toks = _tokens(_SENTENCE_END.sub("", clean(text)))
    if not toks:
        raise AnswerError("no numbers found")
    pos = 0

    def item(depth: int) -> IntTuple:
        nonlocal pos
        if depth > MAX_NESTING:
            raise AnswerError(f"more than {MAX_NESTING} levels of parentheses")
        tok = toks[pos]
        if tok == "(":
            pos += 1
            items: list[IntTuple] = []
            while pos < len(toks) and toks[pos] != ")":
                items.append(item(depth + 1))
            if pos >= len(toks):
                raise AnswerError("a '(' is never closed")
            pos += 1
            if not items:
                raise AnswerError("empty parentheses '()'")
            return tuple(items)
        if tok == ")":
            raise AnswerError("a ')' closes nothing")
        pos += 1
        return int(tok)

    top: list[IntTuple] = []
    while pos < len(toks):
        top.append(item(0))
    if len(top) == 1:
        only = top[0]
        if isinstance(only, tuple) and len(only) == 1:
            return only[0]
        return only
    return tuple(top)


_INT_SUFFIXES = ("wavefronts", "wavefront", "sectors", "sector", "ways", "way", "x", "%")


def _integer(tok: str) -> int | None:
    """``tok`` as an int when it is an optionally signed run of ASCII digits, else None."""
    body = tok[1:] if tok[:1] in "+-" else tok
    if not body or len(body) > 40 or not all("0" <= ch <= "9" for ch in body):
        return None
    return int(tok)
