"""TTGIR layout attributes as Triton 3.x prints them, read into plain data, and written back.

``parse(text)`` reads one attribute, e.g. ``#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8],
warpsPerCTA = [4, 1], order = [1, 0]}>``, into an ``Attr(name, fields)``: ``name`` is the attribute's mnemonic
(``blocked``, ``nvidia_mma``, ``dot_op``, ``slice``, ``linear``, ``generic_linear``, ``swizzled_shared``,
``nvmma_shared``, ``padded_shared``, ``shared_linear``, or the older ``shared``), ``fields`` its ``key = value`` pairs
(ints, bools, nested lists, nested ``Attr`` for ``parent``). The text may hold alias definitions first, as a TTGIR
dump does::

    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
    #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>

``padded_shared`` keeps its interval-padding pairs under ``fields["paddings"]`` (``[32:+4, 64:+8]`` ->
``[[32, 4], [64, 8]]``); ``shared_linear``'s trailing ``alignment = 16`` goes into its fields. The dialect prefix may
be ``ttg`` or ``triton_gpu``. Bad text raises ``TTGIRError`` (a LayoutError) naming the field or the position.

``format_attr(attr)`` prints an ``Attr`` the way Triton does (``parse(format_attr(a)) == a``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from algebra.core.errors import LayoutError

MAX_TEXT = 8000
DIALECTS = ("ttg", "triton_gpu")
NAMES = ("blocked", "nvidia_mma", "dot_op", "slice", "linear", "generic_linear", "swizzled_shared", "nvmma_shared",
         "padded_shared", "shared_linear", "shared", "amd_mfma", "amd_wmma")
_TOKEN = re.compile(r"\s*(?:(#[A-Za-z_][\w.$-]*)|([A-Za-z_][\w.]*)|(-?[0-9]+)|([<>{}\[\],=:+]))")
_KINDS = ("alias", "ident", "int", "punct")


class TTGIRError(LayoutError):
    """Bad TTGIR text; the message names the field (``sizePerThread: ...``) or the position it stopped at."""


@dataclass(frozen=True, eq=True)
class Attr:
    """One layout attribute: its mnemonic and its fields (ints, bools, lists, nested Attrs)."""

    name: str
    fields: dict[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(format_attr(self))


def _around(text: str, pos: int) -> str:
    return repr(text[max(0, pos - 20):pos + 20])


class _Reader:
    """A recursive-descent reader over the tokens of one attribute."""

    def __init__(self, text: str, aliases: dict[str, Attr]) -> None:
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while text[pos:].strip():
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                at = len(text) - len(text[pos:].lstrip())
                raise TTGIRError(f"unexpected character {text[at]!r} at {at}: {_around(text, at)}")
            k = m.lastindex or 1
            self.toks.append((_KINDS[k - 1], m.group(k), m.start(k)))
            pos = m.end()
        self.i = 0
        self.text = text
        self.aliases = aliases

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "", len(self.text))

    def _where(self, tok: tuple[str, str, int]) -> str:
        found = "the end of the text" if tok[0] == "end" else repr(tok[1])
        return f"found {found} at {tok[2]}: {_around(self.text, tok[2])}"

    def take(self, want: str | None = None, what: str = "") -> tuple[str, str, int]:
        tok = self.peek()
        if want is not None and tok[1] != want:
            raise TTGIRError(f"{what + ': ' if what else ''}expected {want!r}, {self._where(tok)}")
        self.i += 1
        return tok

    def sep(self, close: str, msg: str) -> None:
        """Past the ',' after an item; TTGIRError (``msg``, where) unless ',' or ``close`` follows it."""
        if self.peek()[1] == ",":
            self.take(",")
        elif self.peek()[1] != close:
            raise TTGIRError(f"{msg}, {self._where(self.peek())}")

    def attr(self, what: str = "layout") -> Attr:
        tok = self.take()
        if tok[0] != "alias":
            raise TTGIRError(f"{what}: expected an attribute such as #ttg.blocked<{{...}}>, {self._where(tok)}")
        name = tok[1][1:]
        dialect, _, mnemonic = name.partition(".")
        if not mnemonic:
            if name in self.aliases:
                return self.aliases[name]
            raise TTGIRError(f"{what}: #{name} is not defined (define it first: #{name} = #ttg.blocked<...>)")
        if dialect not in DIALECTS:
            raise TTGIRError(f"{what}: #{name}: the dialect is {dialect!r}, not ttg (TritonGPU)")
        if mnemonic not in NAMES:
            known = ", ".join(n for n in NAMES if not n.startswith("amd"))
            raise TTGIRError(f"{what}: #{name} is not a layout attribute LayoutLab reads (known: {known})")
        self.take("<", f"#{name}")
        fields: dict[str, Any] = {}
        if mnemonic == "padded_shared":
            fields["paddings"] = self.paddings()
        if self.peek()[1] == "{":
            fields.update(self.dict_(mnemonic))
        if mnemonic == "shared_linear" and self.peek()[1] == ",":
            self.take(",")
            key = self.take(what=mnemonic)[1]
            self.take("=", f"{mnemonic}.{key}")
            fields[key] = self.value(f"{mnemonic}.{key}")
        self.take(">", f"#{name}")
        _known(mnemonic, fields)
        return Attr(mnemonic, fields)

    def paddings(self) -> list[list[int]]:
        self.take("[", "padded_shared")
        out: list[list[int]] = []
        while self.peek()[1] != "]":
            interval = self.int_("padded_shared.interval")
            self.take(":", "padded_shared")
            self.take("+", "padded_shared")
            out.append([interval, self.int_("padded_shared.padding")])
            self.sep("]", "padded_shared: expected ',' or ']'")
        self.take("]", "padded_shared")
        return out

    def dict_(self, owner: str) -> dict[str, Any]:
        self.take("{", owner)
        out: dict[str, Any] = {}
        while self.peek()[1] != "}":
            tok = self.take()
            if tok[0] != "ident":
                raise TTGIRError(f"{owner}: expected a field name, {self._where(tok)}")
            key = tok[1]
            if key in out:
                raise TTGIRError(f"{owner}.{key}: given twice")
            self.take("=", f"{owner}.{key}")
            out[key] = self.value(f"{owner}.{key}")
            self.sep("}", f"{owner}.{key}: expected ',' or '}}' after the value")
        self.take("}", owner)
        return out

    def value(self, what: str) -> Any:
        tok = self.peek()
        if tok[0] == "int":
            return self.int_(what)
        if tok[0] == "ident" and tok[1] in ("true", "false"):
            self.take()
            return tok[1] == "true"
        if tok[0] == "alias":
            return self.attr(what)
        if tok[1] == "[":
            self.take("[")
            items = []
            while self.peek()[1] != "]":
                items.append(self.value(what))
                self.sep("]", f"{what}: expected ',' or ']' in the list")
            self.take("]", what)
            return items
        raise TTGIRError(f"{what}: expected an integer, true/false, a list or an attribute, {self._where(tok)}")

    def int_(self, what: str) -> int:
        tok = self.take()
        if tok[0] != "int":
            raise TTGIRError(f"{what}: expected an integer, {self._where(tok)}")
        v = int(tok[1])
        if abs(v) > 1 << 31:
            raise TTGIRError(f"{what}: {v} is out of range")
        return v


_CTA = ("CGALayout", "CTAsPerCGA", "CTASplitNum", "CTAOrder")
#: the fields each attribute has in some Triton 3.x (the CTA fields of a cluster in both spellings)
FIELDS = {
    "blocked": ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", *_CTA),
    "nvidia_mma": ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape", *_CTA),
    "dot_op": ("opIdx", "parent", "kWidth"),
    "slice": ("dim", "parent"),
    "linear": ("register", "lane", "warp", "block"),
    "generic_linear": ("register", "lane", "warp", "block"),
    "swizzled_shared": ("vec", "perPhase", "maxPhase", "order", *_CTA),
    "shared": ("vec", "perPhase", "maxPhase", "order", "hasLeadingOffset", *_CTA),
    "nvmma_shared": ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded", "rank", *_CTA),
    "padded_shared": ("paddings", "order", "shape", "offset", "block", *_CTA),
    "shared_linear": ("offset", "block", "alignment"),
}


def _known(mnemonic: str, fields: dict[str, Any]) -> None:
    """TTGIRError naming the first field ``mnemonic`` does not have: Triton's parser refuses an unknown key (or,
    for some attributes, drops it), and a misspelt optional field read as absent would describe another layout."""
    allowed = FIELDS.get(mnemonic)
    bad = [k for k in fields if allowed is not None and k not in allowed]
    if bad:
        names = ", ".join(k for k in allowed if k != "paddings")
        raise TTGIRError(f"{mnemonic}.{bad[0]}: not a field of #ttg.{mnemonic} (its fields: {names})")


def _statements(text: str) -> list[tuple[int, str]]:
    """(number of its first line, text) of each statement of ``text``: a line that is not blank or a ``//`` comment,
    a line whose brackets are still open joined with the lines that close them (an attribute pretty-printed over
    several lines is one statement)."""
    out, buf, depth, first = [], "", 0, 0
    for n, line in enumerate((x.strip() for x in text.splitlines()), 1):
        if not buf and (not line or line.startswith("//")):
            continue
        buf, first = (f"{buf} {line}", first) if buf else (line, n)
        depth += sum(map(line.count, "<{[(")) - sum(map(line.count, ">}])"))
        if depth <= 0:
            out.append((first, buf))
            buf, depth = "", 0
    return [*out, (first, buf)] if buf else out


def parse(text: Any) -> Attr:
    """The last attribute of ``text`` (after its alias definitions ``#name = #ttg....``, one per line or each wrapped
    over lines). Post: an ``Attr`` whose nested aliases are resolved; TTGIRError otherwise. Alias definitions of
    attributes that are not layouts (a dump's ``#smem = #ttg.shared_memory``) are skipped."""
    if not isinstance(text, str) or not text.strip():
        raise TTGIRError("expected TTGIR text such as #ttg.blocked<{sizePerThread = [1, 8], ...}>")
    if len(text) > MAX_TEXT:
        raise TTGIRError(f"the text is {len(text):,} characters, over the cap of {MAX_TEXT:,}")
    aliases: dict[str, Attr] = {}
    last: Attr | None = None
    bare = 0  # the line of a layout that is no alias definition: only the last line may be one
    for n, line in _statements(text):
        if bare:
            raise TTGIRError(f"line {bare}: a layout that is not the last line; give one layout, after the alias "
                             "definitions (#name = #ttg....) it uses")
        m = re.match(r"#([A-Za-z_][\w$-]*)\s*=\s*(#.*)$", line)
        body = m.group(2) if m else line
        head = re.match(r"#(\w+)\.(\w+)", body)
        if m and head and head.group(2) not in NAMES:
            continue  # a dump's other aliases (#smem = #ttg.shared_memory, ...): not layouts
        r = _Reader(body, aliases)
        a = r.attr(f"#{m.group(1)}" if m else "layout")
        if r.peek()[0] != "end":
            raise TTGIRError(f"unexpected text after the attribute: {r._where(r.peek())}")
        if m and m.group(1) in aliases and aliases[m.group(1)] != a:
            raise TTGIRError(f"line {n}: #{m.group(1)} is defined twice, with different layouts")
        if m:
            aliases[m.group(1)] = a
        else:
            bare = n
        last = a
    if last is None:
        raise TTGIRError("expected TTGIR text such as #ttg.blocked<{sizePerThread = [1, 8], ...}>")
    return last


# --------------------------------------------------------------------------- writing

_ORDER = {
    "blocked": ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"),
    "nvidia_mma": ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape"),
    "dot_op": ("opIdx", "parent", "kWidth"),
    "slice": ("dim", "parent"),
    "linear": ("register", "lane", "warp", "block"),
    "generic_linear": ("register", "lane", "warp", "block"),
    "swizzled_shared": ("vec", "perPhase", "maxPhase", "order"),
    "nvmma_shared": ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded"),
    "padded_shared": ("order", "shape", "offset", "block"),
    "shared_linear": ("offset", "block"),
}


def value_text(v: Any) -> str:
    """A field value as TTGIR prints it."""
    if isinstance(v, Attr):
        return format_attr(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    return str(v)


def format_attr(a: Attr) -> str:
    """Triton's printed form: ``#ttg.<name><{k = v, ...}>``, fields in Triton's order, then the rest."""
    keys = [k for k in _ORDER.get(a.name, ()) if k in a.fields]
    keys += [k for k in a.fields if k not in keys and k not in ("paddings", "alignment") and not k.startswith("_")]
    body = "{" + ", ".join(f"{k} = {value_text(a.fields[k])}" for k in keys) + "}"
    if a.name == "padded_shared":
        pairs = ", ".join(f"{i}:+{p}" for i, p in a.fields.get("paddings", []))
        return f"#ttg.padded_shared<[{pairs}] {body}>"
    if a.name == "shared_linear" and "alignment" in a.fields:
        return f"#ttg.shared_linear<{body}, alignment = {a.fields['alignment']}>"
    return f"#ttg.{a.name}<{body}>"
