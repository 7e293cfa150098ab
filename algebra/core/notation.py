"""Parse and print CuTe notation.

Accepted (spaces anywhere, ``_`` static markers ignored):

- layouts ``(4,(2,4)):(2,(1,8))``, ``8:1``, ``(8):(1)``; a bare shape ``(4,8)`` means its column-major layout;
- basis strides ``1@0``, ``(1@0,1@1)`` (ArithTuple / E() coordinate strides); a tuple where the shape has a leaf is
  an arithmetic-tuple stride, a sum of bases as CuTe prints it: ``(4,8):((1,1),(1,1))`` (``layout_add`` of bases);
- swizzles ``Sw<3,4,3>`` (the CuTe DSL's ``S<3,4,3>``, pycute's ``SW_3_4_3``); composed layouts
  ``Sw<3,4,3> o 0 o (8,64):(64,1)``, ``Sw<3,4,3> o (8,64):(64,1)`` (``o``, ``_o_`` or ``∘`` between the parts), either
  part a swizzle or a layout: ``(16,4):(4,1) o -8 o Sw<1,2,4>`` (CuTe's inverse of a swizzled layout with an offset,
  a layout applied after a swizzle);
- coordinate tensors ``ArithTuple(2,3) o (4,4):(_1@0,_1@1)`` and ``(2,3) o (4,4):(1@0,1@1)`` (a CoordTensor);
- CuTe's print of a shared-memory layout, ``Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)``: the swizzle acts on
  byte addresses there, so it is read as the same permutation of element offsets (``Sw<3,3,3>`` for 16-bit elements);
- tilers ``<2:1, 4:2>`` (entries: layouts, ints, ``_`` for "keep this mode", nested ``<...>``), and plain integers;
- pycute's print of a rank-1 tuple, ``(8,):(2,)``;
- CuTe's printed and C++ spellings: ``_4``, ``Int<4>{}``, ``C<4>{}``, ``E<1>{}`` (the basis ``1@1``),
  ``Layout<Shape<_4,_8>,Stride<_8,_1>>``, type spellings with ``cute::`` prefixes, and the calls
  ``make_layout(make_shape(4,8), make_stride(8,1))`` / ``make_layout(make_shape(4,8))``.

Post-condition: ``parse(str(x)) == x`` for every Layout, Swizzle, ComposedLayout and tiler tuple.

>>> print(parse("(4,(2,4)):(2,(1,8))"), parse("Layout<Shape<_4,_8>,Stride<_8,_1>>{}"), parse("Sw<3,4,3> o 8:1"))
(4,(2,4)):(2,(1,8)) (4,8):(8,1) Sw<3,4,3> o 0 o 8:1
>>> print(parse("Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)"), parse("ArithTuple(2,3) o (4,4):(_1@0,_1@1)"))
Sw<3,3,3> o 0 o (8,64):(64,1) ArithTuple(2,3) o (4,4):(1@0,1@1)
>>> to_str(parse("<2:1, _, 4>")), show((4, (2, 4))), parse_htuple("(1,(0,_4))"), parse_htuple("(1,_)", keep=True)
('<2:1, _, 4>', '(4,(2,4))', (1, (0, 4)), (1, None))
"""

from __future__ import annotations

import re
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, ArithTuple, ScaledBasis
from algebra.core.coord_tensor import CoordTensor
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout
from algebra.core.swizzle import ComposedLayout, Swizzle

MAX_TEXT = 20_000
#: the tokens, after any whitespace (``str.isspace``); group 7 is a character no token starts with
_TOKEN = re.compile(r"(?u:\s)*(?:(-?\d+)|(Sw)|(@)|([(),:<>_])|(∘|o\b)|F(\d+)\b|((?u:\S)))", re.ASCII)


#: CuTe's printed smem pointer between a swizzle and its layout (``o smem_ptr[16b](unset) o``), or any pointer in
#: front of a layout (a tensor's print: ``gmem_ptr[16b](0x7f8a00000000) o (4,8):(8,1)``)
_SMEM_PTR_LEAD = re.compile(r"^\s*(?:[gsr]mem_)?ptr\[(\d+)b\]\s*\([^()]*\)\s*(?:o\b|∘)")
_SMEM_PTR_MID = re.compile(r"(?:o|∘)\s*smem_ptr\[(\d+)b\]\s*\([^()]*\)\s*(?=o\b|∘)")
#: other printers' swizzles: the CuTe DSL's ``S<3,4,3>`` and pycute's ``SW_3_4_3`` (a shift may be negative)
_DSL_SW, _PYCUTE_SW = re.compile(r"(?<!\w)S(?=\s*<)"), re.compile(r"(?<!\w)SW_(\d+)_(\d+)_(-?\d+)(?!\w)")
_INT_TYPE = re.compile(r"\b(?:Int|C)<\s*(-?\d+)\s*>(?:\s*\{\s*\})?")
_BASIS_TYPE = re.compile(r"\bE<\s*(\d+(?:\s*,\s*\d+)*)\s*>(?:\s*\{\s*\})?")
_TYPE_PART = re.compile(r"(?<!\w)(Layout|Shape|Stride|tuple)\s*<|[<>,{}]")  # a type opening or a bracket, comma, brace


def _basis(m: re.Match) -> str:
    path = [p.strip() for p in m.group(1).split(",")]
    return "1@" + "@".join(reversed(path))  # E<i,j> selects mode j of mode i; printed innermost first


_MAKE_PART = re.compile(r"(?<!\w)(?:cute::)?make_(layout|shape|stride)\s*\(|[(),]|\{\s*\}")


def _types_rewritten(text: str, part: re.Pattern, close: str, layout_word: str) -> tuple[str, list[str]]:
    """One left-to-right scan of C++ type or call spellings, ``part`` matching an opening (group 1: its word) or a
    bracket, comma or brace: a layout's opening (``layout_word``) goes, and its first top-level comma becomes ``:``;
    a tuple's (``Shape<``, ``make_shape(``, ...) becomes ``(``; each closes on ``close`` as ``)`` (a tuple) or nothing
    (a layout); any other bracket is kept as it is; braces go. Returns the text and the brackets left open ("keep"
    for a kept one)."""
    stack: list[str] = []  # per open bracket: "tuple", "layout" ("layout-stride" after its comma) or "keep"

    def rewrite(m: re.Match) -> str:
        ch, kind = m.group(), m.group(1)
        if kind:
            stack.append("layout" if kind == layout_word else "tuple")
            return "" if kind == layout_word else "("
        if ch == close and stack:
            kind = stack.pop()
            return ")" if kind == "tuple" else "" if kind.startswith("layout") else close
        if ch in "(<":
            stack.append("keep")
        elif ch == "," and stack and stack[-1] == "layout":
            stack[-1] = "layout-stride"
            return ":"
        return "" if ch[0] in "{}" else ch

    return part.sub(rewrite, text), stack


def _normalize(text: str) -> str:
    """Rewrite C++ spellings into plain notation: ``Int<4>{}`` -> ``4``, ``E<1>{}`` -> ``1@1``,
    ``Layout<Shape<A..>,Stride<B..>>`` -> ``(A..):(B..)``, ``Shape<..>``/``tuple<..>`` -> ``(..)``,
    CuTe's C++ calls ``make_layout(S, D)`` -> ``S:D``, ``make_layout(S)`` -> ``S`` (its column-major layout),
    ``make_shape(..)`` / ``make_stride(..)`` -> ``(..)``, ``{}`` after a static integer dropped.
    Every pass is a single left-to-right scan (linear time)."""
    if "make_" in text:
        source = _INT_TYPE.sub(r"\1", text)
        text, left = _types_rewritten(source, _MAKE_PART, ")", "layout")
        if left:
            raise LayoutError(f"unclosed '(' in {source[:200]!r}")
    if "<" not in text:
        return text
    text = _BASIS_TYPE.sub(_basis, _INT_TYPE.sub(r"\1", text.replace("cute::", "")))
    out, left = _types_rewritten(text, _TYPE_PART, ">", "Layout")
    if any(k != "keep" for k in left):
        raise LayoutError(f"unclosed '<' in {text[:200]!r}")
    return out


def _int(digits: str) -> int:
    """``int(digits)``, refused past 2^62 before Python's 4,300-digit limit on ``int(str)`` could be reached."""
    if len(digits.lstrip("0")) > 19 or int(digits) > it.MAX_MAGNITUDE:
        raise LayoutError(f"the integer {digits.lstrip('0')[:12]}... ({len(digits):,} digits) exceeds the "
                          "magnitude cap 2^62")
    return int(digits)


def _coord_strides(shape: Any, stride: Any) -> Any:
    """``stride`` with each tuple that stands where ``shape`` has a leaf read as an arithmetic tuple: a sum of basis
    elements, which CuTe prints as a tuple (``1@0 + 1@1`` is ``(1,1)``, as ``layout_add`` gives). Its entries are
    integers. Other structure is left for ``Layout`` to check (congruence)."""
    if it.is_tuple(stride) and not it.is_tuple(shape):
        bad = [x for x in it.flatten(stride) if not it.is_int(x)]
        if bad:
            raise LayoutError(f"stride {it.to_str(stride)} stands where the shape has the leaf {shape}: an arithmetic "
                              f"tuple (a coordinate stride such as (1,1)) holds integers, not {bad[0]}")
        return ArithTuple.of(stride)
    if it.is_tuple(stride) and len(stride) == len(shape):
        return tuple(_coord_strides(s, d) for s, d in zip(shape, stride, strict=True))
    return stride


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise LayoutError(f"expected text, got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise LayoutError(f"notation longer than {MAX_TEXT} characters")
        text = _PYCUTE_SW.sub(r"Sw<\1,\2,\3>", _DSL_SW.sub("Sw", text.replace("_o_", " o ")))
        self.ptr_bits = 0
        m = _SMEM_PTR_LEAD.search(text) or _SMEM_PTR_MID.search(text)
        if m:
            self.ptr_bits = _int(m.group(1))
            if self.ptr_bits <= 0 or self.ptr_bits & (self.ptr_bits - 1):
                raise LayoutError(f"{m.group().strip()[:40]}: the element size must be a power of two bits")
            text = text[:m.start()] + " " + text[m.end():]
        self.text = _normalize(text)
        self.toks: list[tuple[str, str, int]] = []
        for m in _TOKEN.finditer(self.text):
            kind, pos = ("int", "sw", "@", "p", "o", "f2", None)[m.lastindex - 1], m.start(m.lastindex)
            if kind is None:
                why = " (a value the CuTe DSL prints as ? is known only at run time: give its number)" * (
                    m.group(7) == "?")
                raise LayoutError(f"unexpected character {m.group(7)!r} at position {pos} in {text!r}{why}", pos=pos)
            self.toks.append((kind, m.group(m.lastindex), pos))
        self.i = 0

    # ------------------------------------------------------------------ token helpers
    def peek(self, k: int = 0) -> tuple[str, str, int] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self, value: str | None = None, kind: str | None = None) -> tuple[str, str, int]:
        t = self.peek()
        if t is None:
            raise LayoutError(f"unexpected end of {self.text!r}" + (f": expected {value!r}" if value else ""),
                              pos=len(self.text))
        if (value is not None and t[1] != value) or (kind is not None and t[0] != kind):
            raise LayoutError(f"expected {value or kind!r} at position {t[2]} in {self.text!r}, found {t[1]!r}",
                              pos=t[2])
        self.i += 1
        return t

    def accept(self, value: str) -> bool:
        """Take the next token when it is ``value``."""
        t = self.peek()
        if t is None or t[1] != value:
            return False
        self.i += 1
        return True

    def done(self, value: Any = None) -> Any:
        t = self.peek()
        if t is not None:
            raise LayoutError(f"unexpected {t[1]!r} at position {t[2]} in {self.text!r}", pos=t[2])
        return value

    # ------------------------------------------------------------------ grammar
    def int_(self) -> int:
        while self.accept("_"):
            pass
        return _int(self.take(kind="int")[1])

    def htuple(self, level: int = 0, allow_basis: bool = False, keep: bool = False, empty: bool = False) -> Any:
        if level > it.MAX_DEPTH:
            raise LayoutError(f"nested deeper than {it.MAX_DEPTH} levels")
        if self.accept("("):
            if empty and not level and self.accept(")"):
                return ()  # a layout's empty shape or stride, as CuTe prints a rank-0 layout: ():()
            items = [self.htuple(level + 1, allow_basis, keep, empty)]
            while self.accept(","):
                if len(items) == 1 and (t := self.peek()) is not None and t[1] == ")":
                    break  # Python's print of a 1-tuple, as pycute prints a rank-1 layout: (8,):(2,)
                items.append(self.htuple(level + 1, allow_basis, keep, empty))
            self.take(")")
            return tuple(items)
        if allow_basis and (t := self.peek()) is not None and t[0] == "f2":
            self.i += 1
            return F2(_int(t[1]))  # an F2 stride leaf, ``F9``
        if keep and self.accept("_") and (self.peek() is None or self.peek()[1] in (",", ")")):
            return None  # CuTe's ``_`` in a coordinate: the whole mode (a ``_`` before an integer is a static marker)
        v, path = self.int_(), []
        while allow_basis and self.accept("@"):
            path.append(self.int_())
        return ScaledBasis(v, tuple(reversed(path))) if path else v  # a basis path is printed innermost first

    def layout(self) -> Layout:
        shape = self.htuple(empty=True)
        if self.accept(":"):
            return Layout(shape, _coord_strides(shape, self.htuple(allow_basis=True, empty=True)))
        return Layout(shape)

    def swizzle(self) -> Swizzle:
        self.take("Sw")
        bms = []
        for sep in "<,,":  # Sw<B,M,S>
            self.take(sep)
            bms.append(self.int_())
        self.take(">")
        return Swizzle(*bms)

    def any(self) -> Any:
        t = self.peek()
        if t is None:
            raise LayoutError("empty notation")
        if self.accept("<"):
            return self.tiler()
        return self.chain()

    def chain(self) -> Any:
        """``A [o O] o B``, B itself such a chain: CuTe prints ``A o O o (B o O2 o C)`` as ``A o O o B o O2 o C``."""
        t = self.peek()
        first = self.swizzle() if t is not None and t[0] == "sw" else self.layout()  # each a swizzle or a layout
        if (u := self.peek()) is None or u[0] != "o":
            return first
        self.take(kind="o")
        offset, k = 0, 0
        while (u := self.peek(k)) is not None and u[1] == "_":
            k += 1
        nxt, after = self.peek(k), self.peek(k + 1)
        if nxt and nxt[0] == "int" and after and after[0] == "o":
            offset = self.int_()
            self.take(kind="o")
        second = self.chain()
        if self.ptr_bits and isinstance(first, Swizzle):  # a byte-address swizzle, as the same permutation of elements
            shift = self.ptr_bits.bit_length() - 1 - 3
            if first.base - shift < 0:
                raise LayoutError(f"{first} on byte addresses moves bits inside one {self.ptr_bits}-bit element")
            first = Swizzle(first.bits, first.base - shift, first.shift)
        return ComposedLayout(first, offset, second)

    def tiler(self, level: int = 0) -> tuple:
        if level > it.MAX_DEPTH:
            raise LayoutError(f"tiler nested deeper than {it.MAX_DEPTH} levels")
        items = [self.tiler_item(level)]  # its ``<`` taken
        while self.accept(","):
            items.append(self.tiler_item(level))
        self.take(">")
        return tuple(items)

    def tiler_item(self, level: int) -> Any:
        if self.accept("<"):
            return self.tiler(level + 1)
        t, nxt = self.peek(), self.peek(1)
        if t and t[1] == "_" and (nxt is None or nxt[1] in (",", ">")):
            self.i += 1
            return None
        j = self.i
        while j < len(self.toks) and self.toks[j][1] == "_":
            j += 1
        after = self.toks[j + 1] if j + 1 < len(self.toks) else None
        if j < len(self.toks) and self.toks[j][0] == "int" and (after is None or after[1] in (",", ">")):
            return self.int_()
        return self.layout()


_COORD_HEAD = re.compile(r"\s*(ArithTuple)?\s*\(")
_COORD_O = re.compile(r"\s*(?:o\b|∘|_o_)")


def _coord_tensor(text: str) -> Any:
    """``ArithTuple(2,3) o (4,4):(1@0,1@1)`` or ``(2,3) o ...`` -> CoordTensor; None when ``text`` is not one."""
    m = _COORD_HEAD.match(text)
    if not m:
        return None
    depth, end = 0, -1
    for j in range(m.end() - 1, min(len(text), MAX_TEXT)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            end = j
            break
    mo = _COORD_O.match(text, end + 1) if end >= 0 else None
    if mo is None:
        if m.group(1):
            raise LayoutError(f"{text[:200]!r}: ArithTuple(...) must be followed by ' o ' and a layout")
        return None
    return CoordTensor(parse_htuple(text[m.end() - 1:end + 1]), parse_layout(text[mo.end():]))


def parse(text: str) -> Any:
    """Parse CuTe notation into a Layout, Swizzle, ComposedLayout, tiler tuple or coordinate tensor (see the
    module doc and ``algebra.core.coord_tensor``)."""
    if isinstance(text, str) and ("ArithTuple" in text or " o " in text.replace("∘", " o ").replace("_o_", " o ")) and (
            ct := _coord_tensor(text)) is not None:
        return ct
    p = _Parser(text)
    return p.done(p.any())


def parse_htuple(text: str, keep: bool = False) -> Any:
    """An integer tuple, ``(1,(0,_4))``; with ``keep``, ``_`` alone is None (CuTe's ``_``: the whole mode)."""
    p = _Parser(text)
    return p.done(p.htuple(keep=keep))


def parse_layout(text: str) -> Layout:
    """Parse text that must be a plain Layout."""
    out = parse(text)
    if not isinstance(out, Layout):
        raise LayoutError(f"{text!r} is not a layout")
    return out


def parse_arg(text: Any) -> Any:
    """Parse one operation argument: a layout / composed layout / swizzle, a tiler ``<...>``, an int, or a list
    (a JSON list of layouts or ints is a tiler)."""
    if isinstance(text, bool):
        raise LayoutError("expected a layout, tiler or integer")
    if isinstance(text, int):
        return text
    if isinstance(text, list | tuple):
        return tuple(parse_tiler_entry(x) for x in text)
    if not isinstance(text, str):
        raise LayoutError(f"expected a layout, tiler or integer, got {type(text).__name__}")
    t = _normalize(text.strip()) if len(text) <= MAX_TEXT else text
    if re.fullmatch(r"\s*_?\d+\s*", t):
        return _int(t.strip().lstrip("_"))
    return parse(t)


def parse_tiler_entry(x: Any) -> Any:
    if x is None or x == "_":
        return None
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, list | tuple):
        return tuple(parse_tiler_entry(e) for e in x)
    if isinstance(x, str):
        return parse_arg(x)
    raise LayoutError(f"not a tiler entry: {x!r}")


def to_str(x: Any) -> str:
    """CuTe notation of a Layout, Swizzle, ComposedLayout, tiler tuple, HTuple or int."""
    if isinstance(x, tuple):
        return "<" + ", ".join("_" if e is None else to_str(e) for e in x) + ">"
    return "_" if x is None else str(x)


def show(x: Any) -> str:
    """CuTe notation of a Layout, ComposedLayout, Swizzle, tiler tuple, HTuple or int (an HTuple as ``(4,(2,4))``,
    a tuple holding a Layout or ``_`` as a tiler ``<...>``); text is returned as it is."""
    if isinstance(x, tuple) and not any(isinstance(e, Layout) or e is None for e in it.flatten(x)):
        return it.to_str(x)
    return to_str(x)
