"""Typed layouts to CuTe notation: CuTe's C++ spellings (``Layout<Shape<..>,Stride<..>>``, ``make_layout(...)``,
``LayoutRight``), a leading ``L =``, and tilers as CuTe prints them (``(_2:_2,_8:_1)``). Linear scans only."""

from __future__ import annotations

from app.drills.parse_base import AnswerError, clean


def _split_top(text: str) -> list[str]:
    """Split at the commas outside every (), <> pair."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (-1 when unbalanced)."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] in "(<":
            depth += 1
        elif text[k] in ")>":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _cpp_tuple(text: str) -> str:
    """``Shape<4,Shape<2,2>>`` / ``make_shape(4,make_shape(2,2))`` / ``Stride<...>`` -> ``(4,(2,2))``."""
    for word in ("make_shape(", "make_stride(", "Shape<", "Stride<"):
        text = text.replace(word, "(")
    return text.replace(">", ")")


def _cpp_layout(s: str) -> str | None:
    """CuTe C++ spellings of a layout in CuTe notation: ``Layout<Shape<..>,Stride<..>>``,
    ``make_layout(make_shape(..), make_stride(..) | LayoutRight{} | LayoutLeft{})``, and the Python ones: the CuTe
    DSL's ``make_layout((4,8), stride=(8,1))`` and pycute's ``Layout((4,8), (8,1))``; None when ``s`` is none of
    them."""
    for head, close in (("Layout<", ">"), ("make_layout(", ")"), ("Layout(", ")")):
        if s.startswith(head) and s.endswith(close) and _closing(s, len(head) - 1) == len(s) - 1:
            parts = _split_top(s[len(head):-1])
            if not 1 <= len(parts) <= 2:
                raise AnswerError("a layout has a shape and at most one stride")
            parts = [parts[0].removeprefix("shape="), *(p.removeprefix("stride=") for p in parts[1:])]
            shape = _cpp_tuple(parts[0])
            if len(parts) == 1 or parts[1].rstrip("()") == "LayoutLeft":
                return shape
            if parts[1].rstrip("()") == "LayoutRight":
                return "R" + shape
            return f"{shape}:{_cpp_tuple(parts[1])}"
    return None


def layout_text(text: str) -> str:
    """CuTe notation of a typed layout: spaces and ``_`` markers removed, a leading ``Layout``/``L =`` (or C++'s
    ``auto L =``) dropped, a closing ``.`` or ``;`` and wrapping backticks dropped,
    CuTe's C++ and Python spellings (``Layout<Shape<..>,Stride<..>>``, ``make_layout(...)``, the DSL's
    ``cute.make_layout(shape, stride=...)``, pycute's ``Layout(shape, stride)``) rewritten, and a tiler written as
    CuTe prints it, ``(2:2,8:1)``, turned into ``<2:2, 8:1>``; ``cute::`` dropped, ``composition(Swizzle<..>{}, L)``
    read as ``Sw<..> o L``; pycute's 1-tuples ``(24,):(1,)`` lose their trailing comma. A row-major shape from
    ``LayoutRight`` comes back as ``R(shape)``. Post-condition: the text is ready for ``algebra.parse`` (after
    :func:`resolve_right`)."""
    s = clean(text).replace("\n", " ").strip().strip("`").strip()
    s = s.rstrip(";.").rstrip()  # the end of a sentence or of a C++ statement: "(4,8):(8,1)." or "... = L;"
    if s[:5].lower() == "auto ":
        s = s[5:].lstrip()
    low = s[:12].lower()
    for word in ("layout", "l", "r", "b", "t", "v"):
        if low.startswith(word) and s[len(word):].lstrip()[:1] in (":", "="):
            s = s[len(word):].lstrip().lstrip(":=").strip()
            break
    s = "".join(s.split()).replace("cute::", "").replace(",)", ")")  # pycute prints a 1-tuple (24,):(1,)
    s = s.removeprefix("cute.")  # the CuTe DSL's cute.make_layout(...)
    for head in ("composition(", "make_composed_layout("):  # composition(Swizzle<3,3,3>{}, L) is Sw<3,3,3> o L
        if s.startswith(head) and _closing(s, len(head) - 1) == len(s) - 1:
            parts = _split_top(s[len(head):-1])
            if len(parts) == 2 and parts[0].lower().startswith(("sw<", "swizzle<")):
                inner = _cpp_layout(parts[1].removesuffix("()")) or parts[1]
                if inner.startswith("R("):
                    raise AnswerError("write the swizzled tile with its stride: Sw<B,M,S> o shape:stride")
                s = f"{parts[0]}o{inner}"
            break
    if s.startswith("Layout<"):
        s = s.removesuffix("()")
    cpp = _cpp_layout(s)
    if cpp is not None:
        return cpp
    if s.startswith("Sw<") or s.lower().startswith("swizzle<"):
        s = ("Sw<" + s[len("swizzle<"):]) if s.lower().startswith("swizzle<") else s
        s = s.replace("o", " o ")
    if s.startswith("<") and s.endswith(">"):
        s = "<" + ", ".join(_split_top(s[1:-1])) + ">"
    elif s.startswith("(") and _closing(s, 0) == len(s) - 1:
        parts = _split_top(s[1:-1])
        if len(parts) >= 1 and all(":" in p for p in parts):
            s = "<" + ", ".join(parts) + ">"
    return s
