"""Typed formulas such as ``i*3 + j*12 + k`` or ``(33r + 5) mod 32``, compiled to safe integer functions.

Grading a formula means evaluating it on every coordinate and comparing with the engine, so two formulas that agree
everywhere are the same answer however they are written. Only integer arithmetic on the named variables is allowed:
``+ - * // / % mod ^ & | << >> **`` and parentheses; ``/`` is integer division (coordinates are integers); ``^`` is
XOR as in C (write ``**`` for a power). Implicit products are read: ``3i``, ``2(j+1)``, ``(i)(j)``.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping, Sequence

from app.drills.parsing import AnswerError, check_length

MAX_FORMULA_CHARS = 500
#: Operations a formula may hold: a whiteboard answer needs a few dozen at most, and grading evaluates every one at
#: every coordinate (for symbolic strides, at a dozen bindings too), so this bounds what one answer costs.
MAX_OPERATIONS = 64
LIMIT = 1 << 64

_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow,
}


def normalise(text: str, variables: Sequence[str]) -> str:
    """Rewrite whiteboard notation into an expression over ``variables`` (also read by the engine's formula parser).

    Post-condition: ``mod``/``xor`` are ``%``/``^``, ``/`` is ``//``, typographic signs are ASCII, ``_8`` and ``08``
    are ``8``, implicit products
    are explicit and a leading ``offset =`` is gone; raises AnswerError for an empty or over-long text, or one with
    more than MAX_OPERATIONS operators."""
    s = check_length(text)
    if len(s) > MAX_FORMULA_CHARS:
        raise AnswerError(f"a formula is at most {MAX_FORMULA_CHARS} characters")
    s = s.translate(str.maketrans({"×": "*", "·": "*", "−": "-", "–": "-", "÷": "/", "⊕": "^", "[": "(", "]": ")"}))
    s = strip_lhs(s)
    s = re.sub(r"(?<![A-Za-z0-9_])_(?=\d)", "", s)  # CuTe's compile-time _8 is the number 8
    s = re.sub(r"(?<![\w.])0+(?=\d)", "", s)  # 08 is 8 (a decimal with a leading zero, not octal)
    s = re.sub(r"\bmod\b", "%", s, flags=re.IGNORECASE)
    s = re.sub(r"\bxor\b", "^", s, flags=re.IGNORECASE)
    s = re.sub(r"(?<![/])/(?![/])", "//", s)
    names = sorted(variables, key=len, reverse=True)
    if names:
        name_re = "|".join(re.escape(n) for n in names)
        # implicit products: 3i, 3(…), )(, )i, i(…), i j -- on one line (two lines are two formulas, not a product)
        s = re.sub(rf"(\d)[ \t]*(?=(?:{name_re})\b|\()", r"\1*", s)
        s = re.sub(rf"(\))[ \t]*(?=\(|\d|(?:{name_re})\b)", r"\1*", s)
        s = re.sub(rf"\b({name_re})[ \t]*(?=\(|\d|(?:{name_re})\b)", r"\1*", s)
    else:
        s = re.sub(r"(\d)[ \t]*(?=\()", r"\1*", s)
        s = re.sub(r"(\))[ \t]*(?=\(|\d)", r"\1*", s)
    s = re.sub(r"\s*\n\s*", " ", s)  # a formula broken over lines is one line (after the products above)
    if s.count("(") > 40:
        raise AnswerError("too many parentheses in the formula")
    ops = len(_OPERATOR.findall(s))
    if ops > MAX_OPERATIONS:
        raise AnswerError(f"the formula has {ops} operations; at most {MAX_OPERATIONS} are read")
    return s


_OPERATOR = re.compile(r"\*\*|//|<<|>>|[-+*%^&|]")


_LHS_NAMES = ("index", "offset", "idx", "bank", "f", "l", "r", "a", "t", "d")


def strip_lhs(text: str) -> str:
    """Drop a left-hand side such as ``index(i,(j,k)) =``, ``offset[i][j] =``, ``L(i,j) =`` or ``=``: a known name
    followed by any balanced brackets (nested coordinates included) and one ``=``. Post-condition: the right-hand
    side, or ``text`` unchanged when it has no such left-hand side (linear time, no pattern backtracking)."""
    lhs, eq, rhs = text.partition("=")
    if not eq or rhs.startswith("="):
        return text
    head = lhs.strip()
    low = head.lower()
    name = next((n for n in _LHS_NAMES if low.startswith(n) and not low[len(n):len(n) + 1].isalnum()
                 and low[len(n):len(n) + 1] != "_"), None)
    if name is None:
        return text if head else rhs.strip()
    rest = head[len(name):].strip()
    depth = 0
    for ch in rest:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                return text
        elif depth == 0 and not ch.isspace():
            return text
    return rhs.strip() if depth == 0 else text


class Formula:
    """A compiled integer formula. ``Formula(text, names)(values)`` evaluates it.

    Post-conditions: construction raises AnswerError for anything but integer arithmetic on ``names``; evaluation
    returns an int or raises AnswerError (division by zero, a value beyond 2**64, an unknown name).
    """

    def __init__(self, text: str, variables: Sequence[str]):
        self.text = text
        self.variables = tuple(variables)
        source = normalise(text, variables)
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError as err:
            raise AnswerError(f"cannot read the formula {text.strip()[:60]!r} ({err.msg})") from None
        self._check(tree.body)
        self._tree = tree.body

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINOPS:
                raise AnswerError(f"operator {type(node.op).__name__} is not allowed in a formula")
            self._check(node.left)
            self._check(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub | ast.UAdd):
                raise AnswerError("only unary + and - are allowed")
            self._check(node.operand)
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, int) or isinstance(node.value, bool):
                raise AnswerError(f"only integer constants are allowed, not {node.value!r}")
        elif isinstance(node, ast.Name):
            if node.id not in self.variables:
                allowed = ", ".join(self.variables) or "none"
                raise AnswerError(f"unknown name {node.id!r} (the variables are {allowed})")
        else:
            raise AnswerError(f"{type(node).__name__} is not allowed in a formula")

    def __call__(self, values: Mapping[str, int]) -> int:
        return self._eval(self._tree, values)

    def _eval(self, node: ast.AST, values: Mapping[str, int]) -> int:
        if isinstance(node, ast.Constant):
            return int(node.value)
        if isinstance(node, ast.Name):
            return int(values[node.id])
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, values)
            return -v if isinstance(node.op, ast.USub) else v
        assert isinstance(node, ast.BinOp)
        a = self._eval(node.left, values)
        b = self._eval(node.right, values)
        if isinstance(node.op, ast.Pow | ast.LShift) and not 0 <= b <= 64:
            raise AnswerError("exponents and shifts must lie in 0..64")
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise AnswerError("the formula divides by zero")
        out = _BINOPS[type(node.op)](a, b)
        if abs(out) >= LIMIT:
            raise AnswerError("the formula's value exceeds 2**64")
        return out


def agree(formula: Formula, cases: Sequence[tuple[Mapping[str, int], int]]) -> list[tuple[Mapping[str, int], int, int]]:
    """Evaluate ``formula`` on each (values, expected) case. Post-condition: returns the disagreements as
    (values, expected, got) in case order; empty means the formula is right on every case."""
    bad = []
    for values, want in cases:
        got = formula(values)
        if got != want:
            bad.append((values, want, got))
    return bad
