"""The index formula of a layout as text, and grading of a typed formula.

``formula(L)`` writes ``L(c)`` as a sum over the natural coordinate, e.g. ``"i*3 + j*12 + k"`` for
``(3,(2,3)):(3,(12,1))`` with the coordinate named ``(i,(j,k))``. Strides may be symbols: ``formula("(4,8):(N,1)")``
is ``"i*N + j"``. ``evaluate_formula(text, L)`` parses a typed formula with a small safe parser (no ``eval``) and
compares it with ``L`` on every natural coordinate. sympy is optional: with it, symbolic strides are checked
symbolically; without it, on several sampled values of the symbols.

Formula syntax: integers, names, ``+ - *``, ``//`` and ``%`` (integer division and remainder), ``^ & | << >>`` (bits,
``^`` is XOR as in C), parentheses; ``3i`` and ``2(j+1)`` are products.
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
from dataclasses import dataclass, field
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import coprofile
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, is_tuple
from algebra.core.layout import Layout
from algebra.core.notation import parse
from algebra.core.swizzle import Swizzle

LETTERS = "ijklmnpqrs"
MAX_TEXT = 2000
MAX_NODES = 400
MAX_PARENS = 40
MAX_COORDS = 1 << 16
LIMIT = 1 << 64

# --------------------------------------------------------------------------------------------- names


def natural_names(shape: Any, letters: str = LETTERS) -> Any:
    """Coordinate names congruent with ``shape``: ``(3,(2,3)) -> ("i", ("j", "k"))``; ``i0, i1, ...`` when the
    shape has more leaves than letters."""
    n = len(it.flatten(shape))
    flat = tuple(letters[:n]) if n <= len(letters) else tuple(f"i{k}" for k in range(n))
    return it.unflatten(flat, shape) if is_tuple(shape) else flat[0]


def _flat_names(shape: Any, names: Any) -> tuple[str, ...]:
    n = len(it.flatten(shape))
    if names is None:
        flat = it.flatten(natural_names(shape))
    elif isinstance(names, str):
        flat = tuple(names) if " " not in names and "," not in names else tuple(re.split(r"[\s,]+", names.strip()))
    else:
        flat = it.flatten(tuple(names)) if isinstance(names, list | tuple) else (names,)
    if len(flat) != n or any(not re.fullmatch(r"[A-Za-z_]\w*", x) for x in flat):
        raise LayoutError(f"need {n} coordinate names (identifiers) for shape {it.to_str(shape)}, got {names!r}")
    return tuple(flat)


# --------------------------------------------------------------------------------------------- symbolic layouts


@dataclass(frozen=True)
class SymLayout:
    """A layout whose shape or stride leaves may be symbolic expressions (text such as ``"N"`` or ``"2*M"``)."""

    shape: Any
    stride: Any

    def symbols(self) -> list[str]:
        leaves = [x for x in it.flatten(self.shape) + it.flatten(self.stride) if isinstance(x, str)]
        return list(dict.fromkeys(n for x in leaves for n in _names(parse_formula(x))))

    def bind(self, values: dict[str, int]) -> Any:
        """The concrete Layout with the symbols replaced by ``values``."""
        sub = [evaluate(parse_formula(x), values) if isinstance(x, str) else x for x in it.flatten(self.stride)]
        shp = [evaluate(parse_formula(x), values) if isinstance(x, str) else x for x in it.flatten(self.shape)]
        return Layout(it.unflatten(tuple(shp), self.shape), it.unflatten(tuple(sub), self.stride))

    def __str__(self) -> str:
        return f"{it.to_str(self.shape)}:{it.to_str(self.stride)}"


def parse_symbolic(text: str) -> SymLayout:
    """``"(4,8):(N,1)"`` -> SymLayout; leaves are ints or expressions without parentheses (``N``, ``2*M``, ``M+1``)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT or text.count(":") != 1:
        raise LayoutError(f"a symbolic layout is text like (4,8):(N,1), got {text!r}")
    sides = []
    for part in text.replace(" ", "").split(":"):
        depth = max(itertools.accumulate((c == "(") - (c == ")") for c in part), default=0)
        if depth > it.MAX_DEPTH or not re.fullmatch(r"[\w()*+,-]+", part):
            raise LayoutError(f"not a symbolic shape or stride: {part!r}")
        try:
            tree = ast.literal_eval(re.sub(r"[^(),]+", lambda m: repr(m.group()), part))
        except (ValueError, SyntaxError):
            raise LayoutError(f"not a symbolic shape or stride: {part!r}") from None
        sides.append(_sym_leaves(tree))
    if not it.congruent(*sides):
        raise LayoutError(f"shape and stride of {text!r} do not match")
    return SymLayout(*sides)


def _sym_leaves(t: Any) -> Any:
    if is_tuple(t) and t:
        return tuple(_sym_leaves(x) for x in t)
    if not isinstance(t, str):
        raise LayoutError("empty entry in a symbolic layout")
    leaf = t.lstrip("_")
    if re.fullmatch(r"-?\d+", leaf):
        return int(leaf)
    parse_formula(leaf)
    return leaf


def _as_layoutish(x: Any) -> Any:
    if isinstance(x, str):
        try:
            return parse(x)
        except LayoutError:
            return parse_symbolic(x)
    return x


# --------------------------------------------------------------------------------------------- formula text


def _term(name: str, d: Any) -> tuple[bool, str]:
    """(negative, text) of ``name * d``."""
    if is_int(d):
        return d < 0, name if abs(d) == 1 else f"{name}*{abs(d)}"
    d = str(d)
    if re.fullmatch(r"-?\w+(\*\w+)*", d):
        return d.startswith("-"), f"{name}*{d.lstrip('-')}"
    return False, f"{name}*({d})"


def _join(terms: list[tuple[bool, str]]) -> str:
    if not terms:
        return "0"
    out = ("-" if terms[0][0] else "") + terms[0][1]
    for neg, t in terms[1:]:
        out += (" - " if neg else " + ") + t
    return out


def formula(layout: Any, names: Any = None) -> str:
    """The index formula of ``layout`` over its natural coordinate.

    ``layout``: a Layout (int or basis strides), a ComposedLayout, a SymLayout or notation text (symbols allowed).
    ``names``: coordinate names, flat or congruent with the shape (default ``natural_names``).
    Post: zero strides are dropped, ``*1`` is omitted, terms follow the leaf order; evaluating the text at a natural
    coordinate gives ``layout(c)``. Basis strides give one formula per codomain mode, e.g. ``"(i, j)"``.
    """
    layout = _as_layoutish(layout)
    if hasattr(layout, "layout_b"):
        inner = formula(layout.layout_b, names)
        x = f"({inner} + {layout.offset})" if layout.offset else inner if _atom(inner) else f"({inner})"
        sw = layout.layout_a
        if isinstance(sw, Swizzle):  # Sw<B,M,S>(x) = x ^ ((x & yyy_mask) >> S), as the swizzle computes it
            if not sw.bits:
                return inner if not layout.offset else f"{inner} + {layout.offset}"
            move = f">> {sw.shift}" if sw.shift >= 0 else f"<< {-sw.shift}"
            return f"{x} ^ (({x} & {sw.yyy_mask}) {move})"
        return f"{sw}({inner}{f' + {layout.offset}' if layout.offset else ''})"
    shape, stride = layout.shape, layout.stride
    flat = _flat_names(shape, names)
    ds = it.flatten(stride)
    if any(getattr(d, "is_basis", False) for d in ds):
        return _basis_formula(layout, flat, ds)
    if any(getattr(d, "is_f2", False) for d in ds):
        return _f2_formula(shape, stride, iter(flat))[0]
    terms = [_term(n, d) for n, d in zip(flat, ds, strict=True) if not (is_int(d) and d == 0)]
    return _join(terms)


def _atom(text: str) -> bool:
    """True when ``text`` needs no parentheses as an operand (a name, a number or a product of them)."""
    return re.fullmatch(r"[\w*]+", text) is not None


def _f2_formula(shape: Any, stride: Any, names: Any) -> tuple[str, bool]:
    """(text, is_f2) of a mode whose strides include F2 elements, as ``Layout.__call__`` sums it: each mode's own
    sum first, then the modes in order; two int terms add, a sum with an F2 term XORs (``F2.__add__``). A leaf with
    the F2 stride ``v`` is the carry-less product ``c * v``: the XOR of ``c << b`` over the set bits b of v."""
    if not is_tuple(shape):
        name = next(names)
        if getattr(stride, "is_f2", False):
            v = stride.value
            parts = [name if b == 0 else f"({name} << {b})" for b in range(v.bit_length()) if v >> b & 1]
            return (" ^ ".join(parts) if parts else "0"), True
        return _join([_term(name, stride)] if stride != 0 else []), False
    text, f2 = "0", False
    for sub_s, sub_d in zip(shape, stride, strict=True):
        t, g = _f2_formula(sub_s, sub_d, names)
        if t == "0":
            f2 = f2 or g
        elif text == "0":
            text, f2 = t, g
        elif f2 or g:
            text, f2 = f"{text if _atom(text) else f'({text})'} ^ {t if _atom(t) else f'({t})'}", True
        else:
            text = f"{text} + {t}"
    return text, f2


def _basis_formula(layout: Any, flat: tuple, ds: tuple) -> str:
    by_path: dict[tuple, list] = {}
    for n, d in zip(flat, ds, strict=True):
        if is_int(d) and d == 0:  # a broadcast mode beside basis strides, as (4,8):(1@0,0): no term
            continue
        if not getattr(d, "is_basis", False):
            raise LayoutError("a layout mixing integer and basis strides has no formula")
        if d.value:
            by_path.setdefault(d.mode_path, []).append(_term(n, d.value))

    def build(profile: Any, path: tuple) -> str:
        if is_tuple(profile):
            return "(" + ", ".join(build(p, path + (k,)) for k, p in enumerate(profile)) + ")"
        return _join(by_path.get(path, []))

    return build(coprofile(layout), ())


# --------------------------------------------------------------------------------------------- safe parser

_TOK = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(//|<<|>>|[-+*%^&|()]))")
_LEVELS = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "//", "%")]


def parse_formula(text: str) -> Any:
    """Parse a formula into a small tree: ``("num", v)``, ``("var", name)``, ``("neg", x)``, ``("bin", op, a, b)``.

    Raises ``LayoutError`` naming the position of anything that is not integer arithmetic."""
    if not isinstance(text, str):
        raise LayoutError("a formula is text")
    s = text.translate(str.maketrans({"×": "*", "·": "*", "−": "-", "–": "-", "⊕": "^"})).strip()
    s = re.sub(r"^\s*(?:index|offset|idx|L)\s*(?:\([^)]*\))?\s*=", "", s)
    if not s or len(s) > MAX_TEXT:
        raise LayoutError("a formula must be 1 to 2000 characters")
    if max(itertools.accumulate((c == "(") - (c == ")") for c in s), default=0) > MAX_PARENS:
        raise LayoutError(f"parentheses nested deeper than {MAX_PARENS}")
    toks: list[tuple[str, Any, int]] = []
    pos = 0
    while pos < len(s):
        m = _TOK.match(s, pos)
        if not m:
            raise LayoutError(f"unexpected {s[pos:].strip()[:1]!r} at position {pos} in {text!r}")
        kind = ("num", "var", "op")[m.lastindex - 1]
        val = int(m.group(1)) if kind == "num" else m.group(m.lastindex)
        toks.append((kind, val, m.start(m.lastindex)))
        pos = m.end()
    p = _P(toks, text)
    tree = p.expr(0)
    if p.i != len(toks):
        raise LayoutError(f"unexpected {toks[p.i][1]!r} at position {toks[p.i][2]} in {text!r}")
    return tree


class _P:
    def __init__(self, toks: list, text: str) -> None:
        self.toks, self.text, self.i, self.nodes = toks, text, 0, 0

    def peek(self) -> Any:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def node(self, *n: Any) -> tuple:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise LayoutError("formula too long")
        return n

    def expr(self, level: int) -> Any:
        if level == len(_LEVELS):
            return self.unary()
        left = self.expr(level + 1)
        while True:
            t = self.peek()
            implicit = level == len(_LEVELS) - 1 and t is not None and (t[0] != "op" or t[1] == "(")
            if t is not None and t[0] == "op" and t[1] in _LEVELS[level]:
                self.i += 1
                left = self.node("bin", t[1], left, self.expr(level + 1))
            elif implicit:
                left = self.node("bin", "*", left, self.expr(level + 1))
            else:
                return left

    def unary(self) -> Any:
        neg = False
        while (t := self.peek()) is not None and t[0] == "op" and t[1] in "+-":
            self.i += 1
            neg ^= t[1] == "-"
        if t is None:
            raise LayoutError(f"unexpected end of {self.text!r}")
        self.i += 1
        if t[0] in ("num", "var"):
            x = self.node(t[0], t[1])
        elif t[1] == "(":
            x = self.expr(0)
            if self.peek() is None or self.peek()[1] != ")":
                raise LayoutError(f"missing ')' in {self.text!r}")
            self.i += 1
        else:
            raise LayoutError(f"unexpected {t[1]!r} at position {t[2]} in {self.text!r}")
        return self.node("neg", x) if neg else x


def _names(tree: Any) -> list[str]:
    """The names a parsed formula uses, in order of first use."""
    if tree[0] == "var":
        return [tree[1]]
    return list(dict.fromkeys(n for sub in tree[1:] if isinstance(sub, tuple) for n in _names(sub)))


def evaluate(tree: Any, env: dict[str, Any]) -> Any:
    """Value of a parsed formula with ``env`` giving every name (ints, or sympy expressions)."""
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "var":
        if tree[1] not in env:
            raise LayoutError(f"unknown name {tree[1]!r} in the formula (known: {', '.join(sorted(env))})")
        return env[tree[1]]
    if kind == "neg":
        return -evaluate(tree[1], env)
    op, a, b = tree[1], evaluate(tree[2], env), evaluate(tree[3], env)
    if op in ("//", "%") and is_int(b) and b == 0:
        raise LayoutError("division by zero in the formula")
    if op in ("<<", ">>") and is_int(b) and not 0 <= b < 64:
        raise LayoutError("shift out of range in the formula")
    v = _BIN[op](a, b)
    if is_int(v) and abs(v) > LIMIT:
        raise LayoutError("a value in the formula exceeds 2^64")
    return v


_BIN = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
        "^": operator.xor, "&": operator.and_, "|": operator.or_, "<<": operator.lshift, ">>": operator.rshift}


# --------------------------------------------------------------------------------------------- grading


@dataclass
class FormulaCheck:
    """Outcome of ``evaluate_formula``: ``correct`` when the formula equals the layout at every checked point."""

    correct: bool
    checked: int
    mismatches: list[dict[str, str]] = field(default_factory=list)
    method: str = "enumeration"


def _points(shape: Any, names: Any):
    """(natural coordinate, {name: value}) for every coordinate of ``shape`` (at most 2^16)."""
    flat = _flat_names(shape, names)
    n = it.product(shape)
    if n > MAX_COORDS:
        raise LayoutError(f"grading enumerates at most 2^16 coordinates, this layout has {n}")
    for crd in it.coordinates(shape):
        yield crd, dict(zip(flat, it.flatten(crd), strict=True))


def _tally(check: FormulaCheck, crd: Any, want: Any, got: Any, same: bool, **extra: str) -> None:
    check.checked += 1
    if not same:
        check.correct = False
        if len(check.mismatches) < 3:
            check.mismatches.append({"coord": it.to_str(crd), "expected": str(want), "got": str(got), **extra})


def evaluate_formula(text: str, layout: Any, values: dict[str, int] | None = None, names: Any = None) -> FormulaCheck:
    """Grade the typed formula ``text`` against ``layout`` on every natural coordinate.

    ``layout``: a Layout, ComposedLayout, SymLayout or notation text; ``values`` binds symbols of a symbolic layout;
    ``names``: the coordinate names the formula uses (default ``natural_names``). Without ``values``, a symbolic
    stride is checked with sympy when installed (``method == "symbolic"``), otherwise at several random values
    (``method == "sampled"``). Raises ``LayoutError`` for an unparseable formula, unknown names, or more than 2^16
    coordinates. Post: ``correct`` iff no mismatch was found; ``mismatches`` lists up to 3 of them.
    """
    tree, layout = parse_formula(text), _as_layoutish(layout)
    if isinstance(layout, SymLayout):
        syms = layout.symbols()
        if values is None and syms:
            if any(isinstance(x, str) for x in it.flatten(layout.shape)):
                raise LayoutError(f"give values for the symbols {', '.join(syms)} to enumerate the coordinates")
            return _grade_symbolic(tree, layout, syms, names)
        layout = layout.bind(values or {})
    return _enumerate(FormulaCheck(True, 0), tree, layout, values or {}, names)


def _enumerate(check: FormulaCheck, tree: Any, layout: Any, symbols: dict[str, int], names: Any,
               **extra: str) -> FormulaCheck:
    """``check`` with ``tree`` tallied against ``layout`` at every natural coordinate, ``symbols`` bound."""
    for crd, env in _points(layout.shape, names):
        want, got = layout(crd), evaluate(tree, {**env, **symbols})
        want = want.value if getattr(want, "is_f2", False) else want  # an F2 offset is its bits
        if not is_int(want):
            raise LayoutError("only integer-valued layouts have a formula to grade")
        _tally(check, crd, want, got, want == got, **extra)
    return check


_SAMPLES = (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 64, 97, 128)


def _grade_symbolic(tree: Any, layout: SymLayout, syms: list[str], names: Any) -> FormulaCheck:
    try:
        import sympy
    except ImportError:
        check = FormulaCheck(True, 0, method="sampled")
        for k in range(len(_SAMPLES)):
            # each symbol walks the sample list at its own offset: odd and even, small and large, unequal values
            vals = {s: _SAMPLES[(k + 5 * j) % len(_SAMPLES)] for j, s in enumerate(syms)}
            shown = ", ".join(f"{s}={v}" for s, v in vals.items())
            _enumerate(check, tree, layout.bind(vals), vals, names, values=shown)
        return check
    env0 = {s: sympy.Symbol(s, integer=True) for s in syms}
    dvals = [evaluate(parse_formula(d), env0) if isinstance(d, str) else d for d in it.flatten(layout.stride)]
    check = FormulaCheck(True, 0, method="symbolic")
    for crd, env in _points(layout.shape, names):
        want = sympy.expand(sum((c * d for c, d in zip(it.flatten(crd), dvals, strict=True)), sympy.Integer(0)))
        got = sympy.expand(evaluate(tree, {**env0, **env}))
        _tally(check, crd, want, got, sympy.expand(want - got) == 0)
    return check
