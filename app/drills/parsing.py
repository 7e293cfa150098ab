"""Lenient reading of typed answers: integers, lists, nested coordinates, tables, pairs, choices and layouts.

Every reader either returns a value or raises :class:`AnswerError` whose message says what was expected, so a grader
can turn an unreadable answer into "incorrect, because ..." instead of a server error. Readers accept the forms people
write on a whiteboard: spaces anywhere, CuTe's ``_4`` compile-time markers, ``Int<4>{}``, square brackets for parens,
commas / spaces / semicolons / new lines as separators.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from algebra.core.inttuple import flatten
from app.drills.parse_base import (  # noqa: F401 (re-exported: the readers' base)
    _BIN,
    _HEX,
    _INT_SUFFIXES,
    _TRANSLATE,
    MAX_ANSWER_CHARS,
    MAX_NESTING,
    AnswerError,
    IntTuple,
    _integer,
    _tokens,
    check_length,
    clean,
    parse_nested,
    squeeze,
    unwrap_answer,
)


def parse_int(text: str, unit: str | tuple[str, ...] | None = None) -> int:
    """Read one integer (``"32"``, ``" _32 "``, ``"32-way"``, ``"= 32"``, ``"8 wavefronts."``, ``"offset 7"``,
    ``"16 banks"``, ``"0x1c"``). ``unit`` is what the question counts (a key of ``parse_words.UNITS``, or ``""``
    for a number with no unit, such as an offset; a tuple of units that count the same thing, such as the ways and
    the wavefronts of one phase); None reads any unit.

    Post-condition: an int, or AnswerError; AnswerError when the answer names another unit than ``unit``
    (``256 sectors`` where wavefronts are asked: the right number of the wrong thing); linear time (a tokenizer,
    no backtracking pattern)."""
    if unit is not None:
        from app.drills.parse_words import units_named

        units = (unit,) if isinstance(unit, str) else unit
        other = [u for u in units_named(text) if u not in units]
        if other:
            asked = f"{units[0]}s" if units[0] else "a number with no unit"
            raise AnswerError(f"the question asks for {asked}; this answer counts {other[0]}s")
    s = clean(text).strip().removesuffix(".").strip()
    s = s.removeprefix("=").strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1].strip()
    low = s.lower()
    for suffix in _INT_SUFFIXES:
        if low.endswith(suffix) and _integer(low[:-len(suffix)].strip().removesuffix("-").strip()) is not None:
            low = low[:-len(suffix)].strip().removesuffix("-").strip()
            break
    value = _integer(low)
    if value is None:
        from app.drills.parse_words import labelled_int

        try:
            return labelled_int(s)  # "offset 7", "16 banks", "L(16) = 25"
        except AnswerError:
            raise AnswerError(f"expected one integer, got {s[:40]!r}") from None
    return value


_AND = re.compile(r"(?<=[0-9)]) and (?=[0-9(_+-])", re.IGNORECASE)


def parse_int_list(text: str, expected_len: int | None = None) -> list[int]:
    """Read a flat list of integers in any of ``[0, 4, 8]``, ``0 4 8``, ``0;4;8`` or one per line, or labelled:
    ``(0,0) -> 0, (1,0) -> 4``, ``L(1,5) = 19; L(2,0) = 8``, ``bank 5, bank 6`` (the value after the last ``=``,
    ``->`` or ``:`` of each item, words before it dropped); ``and`` between two items separates them.

    Post-condition: when ``expected_len`` is given the list has exactly that length (else AnswerError).
    """
    text = _AND.sub(", ", squeeze(check_length(text)))
    try:
        value = parse_nested(text)
    except AnswerError as err:
        labelled = _labelled_values(text)
        if labelled is None:
            raise err from None
        value = tuple(labelled)
    items = list(value) if isinstance(value, tuple) else [value]
    if len(items) == 1 and isinstance(items[0], tuple):
        items = list(items[0])
    if any(isinstance(v, tuple) for v in items):
        labelled = _labelled_values(text)
        if labelled is None:
            raise AnswerError("expected a flat list of integers, found nested parentheses")
        items = list(labelled)
    if expected_len is not None and len(items) != expected_len:
        raise AnswerError(f"expected {expected_len} numbers, got {len(items)}")
    return [int(v) for v in items]  # type: ignore[arg-type]


def _labelled_values(text: str) -> list[int] | None:
    """The values of a labelled list (see :func:`parse_int_list`), or None when an item has no readable value."""
    s = clean(text).replace("→", "->")
    items, depth, cur = [], 0, []
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in ",;\n":
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    out = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        cut = max(item.rfind("="), item.rfind("->") + 1 if "->" in item else -1, item.rfind(":"))
        rhs = item[cut + 1:].strip() if cut >= 0 else item
        k = 0
        while k < len(rhs) and (rhs[k].isalpha() or rhs[k] in " _"):
            k += 1
        value = _integer(rhs[k:].strip().rstrip("."))
        if value is None or (cut < 0 and k == 0):
            return None
        out.append(value)
    return out or None


def parse_labelled_ints(text: str, labels: Sequence[str], units: Sequence[str] = ()) -> list[int]:
    """Read ``len(labels)`` integers, each optionally named (``size = 32, cosize: 40``) or followed by a unit
    (``8 elements, 128 bits``). Post-condition: the integers in order, else AnswerError (a tokenizer: linear)."""
    words = sorted({w.lower() for w in (*labels, *units)}, key=len, reverse=True)
    s = clean(text).lower()
    out: list[str] = []
    i = 0
    while i < len(s):
        for w in words:
            if s.startswith(w, i) and not (i + len(w) < len(s) and s[i + len(w)].isalpha()):
                i += len(w)
                out.append(" ")
                break
        else:
            out.append(" " if s[i] in "=:" else s[i])
            i += 1
    return parse_int_list("".join(out), len(labels))


def parse_table(text: str, rows: int, cols: int) -> list[list[int | None]]:
    """Read a rows x cols table of integers: one row per line (or rows separated by ``;``, ``|`` or parens),
    or all rows*cols numbers in reading order. ``?`` or ``.`` marks a cell left blank (read as None).

    Post-condition: the result has ``rows`` lists of ``cols`` entries, else AnswerError naming the mismatch.
    """
    s = clean(text)
    s = re.sub(r"(?<![\d)])[?.](?![\d(])", " -999999999 ", s)  # blanks, kept as a sentinel
    if s.count("(") >= rows and s.strip().startswith("(") and "\n" not in s.strip():
        value = parse_nested(s)
        parts = [list(flatten(r)) for r in value] if isinstance(value, tuple) else [[value]]
        if len(parts) == 1 and isinstance(value, tuple) and len(value) == 1:
            parts = [list(flatten(r)) for r in value[0]]  # type: ignore[index]
    else:
        lines = [ln for ln in re.split(r"[\n;]|\|\s*\|", s) if re.search(r"\d", ln)]
        parts = [list(flatten(parse_nested(ln.replace("|", " ")))) for ln in lines]
    flat = [v for row in parts for v in row]
    if len(parts) != rows and len(flat) == rows * cols:
        parts = [flat[r * cols:(r + 1) * cols] for r in range(rows)]
    if len(parts) != rows:
        raise AnswerError(f"expected {rows} rows of {cols} numbers, got {len(parts)} rows")
    for r, row in enumerate(parts):
        if len(row) != cols:
            raise AnswerError(f"row {r} has {len(row)} numbers, expected {cols}")
    return [[None if v == -999999999 else v for v in row] for row in parts]


MAX_PAIRS = 4096


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """Read coordinate pairs such as ``(1,8) (1,9)``; a range inside a pair expands: ``(1, 8..15)`` or ``(1,8-15)``
    is the eight pairs (1,8) ... (1,15). Post-condition: pairs in the order written, ranges expanded in order, at most
    MAX_PAIRS of them in all (else AnswerError); AnswerError when a word around them negates them (``not (1,8)``)."""
    s = re.sub(r"\s+", "", clean(text))
    s = re.sub(r"(?<=\d)(?:-|to|\.\.\.?)(?=\d)", "..", s)
    pairs: list[tuple[int, int]] = []
    rest = s
    for m in re.finditer(r"\((\d+)(?:\.\.(\d+))?,(\d+)(?:\.\.(\d+))?\)", s):
        r0, r1, c0, c1 = m.group(1), m.group(2), m.group(3), m.group(4)
        rows = range(int(r0), int(r1 or r0) + 1)
        cols = range(int(c0), int(c1 or c0) + 1)
        if len(pairs) + len(rows) * len(cols) > MAX_PAIRS:
            raise AnswerError(f"the answer names more than {MAX_PAIRS} cells")
        pairs.extend((r, c) for r in rows for c in cols)
        rest = rest.replace(m.group(0), "", 1)
    if re.search(r"\d", rest):
        raise AnswerError("expected pairs written as (row,col); found numbers outside parentheses")
    from app.drills.parse_words import minus_before_pair, negation

    if minus_before_pair(clean(text)):
        raise AnswerError("a minus sign before (row,col) negates it: give the pairs themselves")
    if (word := negation(re.sub(r"\([^()]*\)", " ", clean(text)))) is not None:
        raise AnswerError(f"'{word}' negates the pairs: list the pairs that are the answer")
    if not pairs:
        raise AnswerError("no (row,col) pairs found")
    return pairs


def parse_choice(text: str, choices: dict[str, Iterable[str]]) -> str:
    """Map free text onto one of ``choices`` (canonical -> synonyms). Matching ignores case, spaces, '-', '_' and
    a trailing 'major'. Post-condition: returns a key of ``choices`` or raises AnswerError listing them."""
    def norm(s: str) -> str:
        return "".join(ch for ch in s.lower() if ch not in " \t\n-_.!{}()<>:")

    def match(s: str) -> str | None:
        want = norm(s)
        for filler in _FILLERS:
            want = want.removeprefix(filler)
        for key, synonyms in choices.items():
            forms = {norm(key), *(norm(x) for x in synonyms)}
            if want in forms or want.removesuffix("major") in forms:
                return key
        return None

    text = check_length(text)
    got = match(text)
    if got is None and "(" in text:  # "row-major (the columns are adjacent)": the choice, then a reason
        head, _, aside = text.partition("(")
        if re.match(r"\s*(?:or|maybe|perhaps|possibly|unless)\b", aside, re.IGNORECASE):
            raise AnswerError("give one answer: the aside in parentheses offers another (\"row (or column)\")")
        got, other = match(head), match(aside.rstrip(" .)"))
        if got is not None and other not in (None, got):
            raise AnswerError(f"two different answers: {got} and {other}")
    if got is None:
        raise AnswerError("expected one of: " + ", ".join(choices))
    return got


#: Leading words of a spoken answer, dropped before matching a choice ("it's row-major", "L is neither").
_FILLERS = ("answer", "itis", "it's", "its", "lis", "thisis", "thelayoutis", "layoutis")


def parse_swizzle(text: str) -> tuple[int, int, int]:
    """Read a swizzle in any of CuTe's spellings (app.drills.parse_words.parse_swizzle)."""
    from app.drills.parse_words import parse_swizzle as read

    return read(text)


def parse_padding(text: str, element_bytes: int | None = None) -> int | None:
    """Read a padding answer, a unit in bytes or words turned into elements (app.drills.parse_words.parse_padding)."""
    from app.drills.parse_words import parse_padding as read

    return read(text, element_bytes)


from app.drills.parse_layout import layout_text  # noqa: E402  (re-exported: it reads with clean() above)

__all__ = ["AnswerError", "check_length", "clean", "layout_text", "parse_choice", "parse_int", "parse_int_list",
           "parse_labelled_ints", "parse_nested", "parse_padding", "parse_pairs", "parse_swizzle", "parse_table",
           "unwrap_answer"]
