"""Drill kind ``symbolic``: index formulas and views whose sizes or strides are symbols, e.g. the offset of (i, j) in a
row-major M x N matrix with leading dimension ld, or the stride of a transposed view in terms of N.

The layouts are the engine's symbolic layouts (``algebra.parse_symbolic``) and formula keys come from
``algebra.teach.formula``. Answers are graded by meaning: at sixteen admissible values of the symbols (a leading
dimension at least one row or column long, up to 2^26 past it, sizes from 1 to about 100, odd and even) the typed
formula or layout must agree with the engine at every coordinate. Where sympy is installed, the engine also proves a
formula over a concrete shape for every value of the symbols, and the verdict says so; without sympy the sampled check
alone decides.
"""

from __future__ import annotations

import ast
import random
import re
from typing import Any

import algebra as A
from algebra.teach.formula import evaluate, parse_formula
from app.drills.common import explain, lstr, mode_sizes, offsets_grid, pick, same_function, step
from app.drills.core import Drill, Grade, register
from app.drills.formula import Formula, normalise
from app.drills.parsing import AnswerError, layout_text

RULE = ("A symbol in a stride is a stride like any other: the offset is the inner product of the natural coordinate "
        "with the stride. A row-major matrix with leading dimension ld has stride (ld,1), a column-major one (1,ld).")
#: Leading dimension minus the row (or column) length, one per admissible binding.
PADS = [3, 0, 1, 2, 5, 8, 17, 31, 64, 100, 1000, 4093]
#: (M, N) per admissible binding when the sizes are symbols.
PAIRS = [(4, 6), (2, 3), (3, 2), (4, 4), (5, 7), (8, 3), (6, 10), (16, 9), (13, 16), (7, 32), (32, 8), (1, 1)]
EXAMPLE = {"M": 4, "N": 6, "B": 2}


#: Large admissible values, (M, N, B, ld - lead): a formula that only agrees with the layout below some size (``lda %
#: 5000``, ``N // 40``, ...) disagrees at one of them.
PROBES = [(3, 97, 1, 65539), (101, 2, 2, 1048583), (1, 3, 103, 16777259), (2, 2, 1, 67108879)]


def bindings(sym: Any, ld: str | None, lead: str | int | None) -> list[dict[str, int]]:
    """Sixteen admissible values of the symbols of ``sym``: twelve with M, N from PAIRS, B from 1..3, ``ld`` = lead +
    PADS[k], and the four large PROBES.

    Post-condition: every binding gives each symbol of ``sym`` an int, and ``ld >= lead``."""
    out = []
    rows = [(m, n, 1 + k % 3, pad) for k, ((m, n), pad) in enumerate(zip(PAIRS, PADS, strict=True))] + PROBES
    for m, n, b, pad in rows:
        vals = {"M": m, "N": n, "B": b}
        if ld:
            vals[ld] = (vals[lead] if isinstance(lead, str) else lead) + pad
        out.append({s: vals[s] for s in sym.symbols()})
    return out


def example(sym: Any, ld: str | None, lead: str | int | None) -> dict[str, int]:
    """One readable binding for the worked example: M = 4, N = 6, B = 2, ld two past the lead."""
    vals = dict(EXAMPLE)
    if ld:
        vals[ld] = (vals[lead] if isinstance(lead, str) else lead) + 2
    return {s: vals[s] for s in sym.symbols()}


def an(n: int) -> str:
    """The article before a number read aloud: an 8, an 11, an 18, a 16."""
    return "an" if str(n).startswith("8") or n in (11, 18) else "a"


def at(vals: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in vals.items())


def read_formula(answer: str, names: list[str], symbols: list[str]) -> str:
    """The typed formula in the engine's syntax. Post-condition: it parses and names only ``names`` and ``symbols``,
    else AnswerError."""
    text = normalise(answer, names + symbols)
    unknown = sorted(set(re.findall(r"[A-Za-z_]\w*", text)) - set(names) - set(symbols))
    if unknown:
        raise AnswerError(f"unknown name {unknown[0]!r}: the formula may use {', '.join(names + symbols)}")
    try:
        parse_formula(text)
    except A.LayoutError as err:
        raise AnswerError(f"cannot read the formula ({err})") from None
    try:  # one expression, as the index formulas read it: two formulas or two numbers side by side are not one
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise AnswerError("cannot read the formula: write one expression (two numbers or two formulas side by "
                          "side are not read as a product; write * between factors)") from None
    return text


#: The largest bound (a constant divisor, modulus, mask or shift) a formula may cut at: past it, a binding beyond the
#: bound would take the offsets past 2^64. Below it, the check samples past the bound (``checked_bindings``): the
#: bindings alone reach 2^26 past the lead, so ``ld % 100000000`` would agree with ``ld`` at every one of them.
MAX_BOUND = 1 << 40
#: A bound above this on a formula over size symbols (M, N, B) is refused: a binding with a size past it would be
#: checked at more coordinates than a grade may cost.
MAX_SIZE_BOUND = 1 << 12
_CUTS = (ast.Mod, ast.FloorDiv, ast.BitAnd, ast.BitOr, ast.BitXor, ast.RShift)
_SIZES = ("M", "N", "B")


def _constants_cut_by(text: str) -> list[int]:
    """The constant operands (folded: ``2**30``, ``1<<20``) of the operators that cut a value at a bound: ``% // & | ^
    >>``. A formula that agrees with the layout only below such a bound agrees with every sample below it."""
    tree, out = ast.parse(text, mode="eval"), []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _CUTS):
            for side in (node.left, node.right):
                if not any(isinstance(n, ast.Name) for n in ast.walk(side)):
                    out.append(abs(Formula(ast.unparse(side), [])({})))
    return out


def checked_bindings(text: str, binds: list[dict[str, int]]) -> list[dict[str, int]]:
    """The bindings a formula ``text`` (normalised) is checked at: ``binds``, and where the formula cuts at a constant
    bound K past some symbol's sampled values (``ld % 100000000``, ``N % 1000``), bindings past K: one with every
    other symbol (a leading dimension) moved K + 1 further, and one per size symbol with that size K + 1 (its leading
    dimension moved as far, so it stays at least its lead). AnswerError naming the bound where K is past MAX_BOUND,
    or past MAX_SIZE_BOUND in a formula over sizes: no binding past it can be checked."""
    cut = max(_constants_cut_by(text), default=0)
    if not binds or cut <= min(max(b[k] for b in binds) for k in binds[0]):
        return binds
    sizes = [k for k in _SIZES if k in binds[0]]
    limit = MAX_SIZE_BOUND if sizes else MAX_BOUND
    if cut > limit:
        raise AnswerError(f"the formula cuts at the bound {cut} (a constant divisor, modulus, mask or shift), above "
                          f"{limit}, past every value of {', '.join(sizes) or 'the symbols'} the check can try: write "
                          "the offset without it")
    base = min(binds, key=lambda b: sum(b[k] for k in sizes))
    past = {s: v if s in _SIZES else v + cut + 1 for s, v in base.items()}
    return binds + [past] + [{**past, k: cut + 1} for k in sizes]


def grade_formula(answer: str, sym: Any, names: list[str], binds: list[dict[str, int]]) -> Grade:
    """Correct iff the formula equals ``sym`` at every natural coordinate for every binding (engine-evaluated), and at
    bindings past any constant bound the formula cuts at (``checked_bindings``)."""
    text = read_formula(answer, names, sym.symbols())
    binds = checked_bindings(text, binds)
    for vals in binds:
        try:
            chk = A.evaluate_formula(text, sym, values=vals, names=names)
        except A.LayoutError as err:
            return Grade.wrong(f"with {at(vals)} the formula cannot be evaluated: {err}")
        if not chk.correct:
            bad = chk.mismatches[0]
            return Grade.wrong(f"with {at(vals)}, at {bad['coord']} your formula gives {bad['got']}, which is not the "
                               f"layout's offset there")
    where = f"at every coordinate for {len(binds)} admissible values of {', '.join(sym.symbols())}"
    if any(isinstance(s, str) for s in A.flatten(sym.shape)):
        return Grade.right(f"agrees with the layout {where}")
    try:
        proof = A.evaluate_formula(text, sym, names=names)
    except (A.LayoutError, ArithmeticError, TypeError, ValueError):
        return Grade.right(f"agrees with the layout {where}")
    if proof.method == "symbolic" and proof.correct:
        return Grade.right(f"agrees with the layout {where}, and symbolically for every value")
    return Grade.right(f"agrees with the layout {where} (sampled check)")


def grade_point(answer: str, sym: Any, coord: Any, binds: list[dict[str, int]]) -> Grade:
    """Correct iff the formula in the symbols equals ``sym(coord)`` for every binding (``checked_bindings``)."""
    text = read_formula(answer, [], sym.symbols())
    tree, binds = parse_formula(text), checked_bindings(text, binds)
    for vals in binds:
        want = sym.bind(vals)(coord)
        try:
            got = evaluate(tree, vals)
        except A.LayoutError as err:
            return Grade.wrong(f"with {at(vals)} the formula cannot be evaluated: {err}")
        if got != want:
            return Grade.wrong(f"with {at(vals)} your formula gives {got}, which is not where the element is")
    return Grade.right(f"right for {len(binds)} admissible values of {', '.join(sym.symbols())}")


def grade_view(answer: str, want: Any, depth: int, binds: list[dict[str, int]], what: str) -> Grade:
    """A typed symbolic layout (or just its stride, the shape taken from ``want``), correct iff for every binding it
    has ``want``'s mode sizes down to ``depth`` and the same offset at every 1-D coordinate."""
    text = layout_text(answer)
    if ":" not in text:
        text = f"{lstr(want.shape)}:{text}"
    try:
        got = A.parse_symbolic(text)
    except A.LayoutError as err:
        raise AnswerError(f"not a layout written as shape:stride in the names of the question ({err})") from None
    extra = sorted(set(got.symbols()) - set(want.symbols()))
    if extra:
        raise AnswerError(f"unknown name {extra[0]!r}: the layout may use {', '.join(want.symbols())}")
    for vals in binds:
        w = want.bind(vals)
        try:
            g = got.bind(vals)
        except A.LayoutError as err:
            return Grade.wrong(f"with {at(vals)} your {what} is not a layout: {err}")
        if A.size(g) != A.size(w) or mode_sizes(g, depth) != mode_sizes(w, depth):
            return Grade.wrong(f"with {at(vals)} your {what} has modes of sizes {lstr(mode_sizes(g, depth))}; the "
                               f"question fixes them as {lstr(mode_sizes(w, depth))}")
        if str(A.coalesce(g)) == str(A.coalesce(w)):  # coalesce keeps the function: equal forms, equal offsets
            continue
        bad = same_function(g, w, range(A.size(w)))
        if bad:
            c, wv, gv = bad[0]
            return Grade.wrong(f"with {at(vals)}, at coordinate {lstr(c)} your {what} gives {gv}, which is not the "
                               f"offset there")
    return Grade.right(f"same shape and offsets for {len(binds)} admissible values of {', '.join(want.symbols())}")


def matrix(rng: random.Random, ld: str, symbolic_size: bool) -> tuple[str, str, str | int, str]:
    """A matrix in words and as a symbolic layout: (layout text, words, what ld must reach, major)."""
    major = pick(rng, ["row", "row", "column"])
    sizes = [3, 4, 5, 6, 8, 12, 16]
    if symbolic_size:
        if rng.random() < 0.3:  # one size a symbol, the other a number
            if major == "row":
                n = pick(rng, sizes)
                return (f"(M,{n}):({ld},1)", f"an M x {n} row-major matrix with leading dimension {ld} ({ld} >= {n})",
                        n, major)
            m = pick(rng, sizes)
            return (f"({m},N):(1,{ld})", f"{an(m)} {m} x N column-major matrix with leading dimension {ld} ({ld} >= "
                    f"{m})", m, major)
        if rng.random() < 0.4:
            return ("(M,N):(N,1)", "an M x N matrix stored row-major with no padding", "N", "row") if major == "row" \
                else ("(M,N):(1,M)", "an M x N matrix stored column-major with no padding", "M", "column")
        if major == "row":
            return f"(M,N):({ld},1)", f"an M x N row-major matrix with leading dimension {ld} ({ld} >= N)", "N", major
        return f"(M,N):(1,{ld})", f"an M x N column-major matrix with leading dimension {ld} ({ld} >= M)", "M", major
    m, n = pick(rng, sizes), pick(rng, sizes)
    if major == "row":
        return (f"({m},{n}):({ld},1)", f"{an(m)} {m}x{n} tile of a larger row-major matrix with leading dimension {ld} "
                f"(rows {ld} elements apart, {ld} >= {n})", n, major)
    return (f"({m},{n}):(1,{ld})", f"{an(m)} {m}x{n} tile of a larger column-major matrix with leading dimension {ld} "
            f"(columns {ld} elements apart, {ld} >= {m})", m, major)


def term_steps(sym: Any, names: list[str]) -> list[dict[str, Any]]:
    return [step(f"{v} runs over 0..{s if isinstance(s, str) else s - 1}{' - 1' if isinstance(s, str) else ''} "
                 f"with stride {d}: term {v}*{d}.")
            for v, s, d in zip(names, A.flatten(sym.shape), A.flatten(sym.stride), strict=True)]


@register("symbolic", "Symbolic strides", "Offsets, formulas and views with symbols: element (i, j) of a row-major "
          "M x N matrix with leading dimension ld, the stride of a transposed or tiled view in terms of N or ld.", 3)
def make_symbolic(rng: random.Random, seed: int) -> Drill:
    ld = pick(rng, ["ld", "ld", "lda", "ldb"])
    variant = pick(rng, ["formula", "formula", "element", "transpose", "tiled"])
    if variant == "formula":
        return _formula(rng, seed, ld)
    if variant == "element":
        return _element(rng, seed, ld)
    if variant == "transpose":
        return _transpose(rng, seed, ld)
    return _tiled(rng, seed, ld)


def _formula(rng: random.Random, seed: int, ld: str) -> Drill:
    family = pick(rng, ["matrix", "matrix", "hier", "batched"])
    shown = False
    if family == "matrix":
        text, words, lead, _ = matrix(rng, ld, rng.random() < 0.4)
        names, coord = ["i", "j"], "(i,j)"
    elif family == "hier":
        m, (a, b) = pick(rng, [4, 8, 3]), pick(rng, [(2, 4), (4, 2), (2, 2), (2, 3)])
        text, lead, names, shown, coord = f"({m},({a},{b})):({ld},(1,{a}))", a * b, ["i", "j", "k"], True, "(i,(j,k))"
        words = (f"{an(m)} {m}x{a * b} tile of a row-major matrix with leading dimension {ld}, its columns split "
                 f"as ({a},{b})")
        if rng.random() < 0.5:
            text, coord = f"(({a},{b}),{m}):((1,{a}),{ld})", "((i,j),k)"
            words = (f"{an(a * b)} {a * b}x{m} tile of a column-major matrix with leading dimension {ld}, its rows "
                     f"split as ({a},{b})")
    else:
        text, words, lead, names, ld, coord = _batched(rng, ld)
    sym = A.parse_symbolic(text)
    key = A.formula(sym, names)
    binds, ex = bindings(sym, ld, lead), example(sym, ld, lead)
    bound = sym.bind(ex)
    last = A.idx2crd(A.size(bound) - 1, bound.shape)
    steps = [step(RULE), step(f"{words[0].upper()}{words[1:]}: the layout is {sym}.", str(sym)),
             *term_steps(sym, names), step(f"offset{coord} = {key}"),
             step(f"Check with {at(ex)}: the layout is {bound} and the last coordinate {lstr(last)} is at "
                  f"{bound(last)}.", bound)]
    sizes = ", ".join(sym.symbols())
    given = f"L = {sym} is {words}." if shown else f"Take {words}."
    return _ld(Drill("symbolic", seed,
                 f"{given} Write the offset of the natural coordinate {coord} as a formula in {', '.join(names)} and "
                 f"{sizes}.", "a formula such as {ex} (3i, mod, / and () are read)", key,
                 lambda ans: grade_formula(ans, sym, names, binds), steps,
                 [RULE, steps[2]["text"]], variant=f"formula/{family}",
                 grids=[_grid(bound, f"Offsets with {at(ex)} (an example)")]).with_data(
                     layout=text, names=names, ld=ld, lead=lead),
               lambda ans, bb: grade_formula(ans, sym, names, bb), binds, ld, lead).with_example(
        *formula_examples(names, sym.symbols()))


def formula_examples(names: list[str], symbols: list[str]) -> list[str]:
    """Example formulas over the drill's names, from layouts unlike the question's: a stride symbol (a leading
    dimension, else a size; never the batch count B) scales one name, and numbers the others."""
    x = next((s for s in symbols if s.startswith("ld")), next((s for s in symbols if s in ("N", "M")), ""))
    i, j, *rest = names
    if not x:  # only the batch count: numbers only
        tail = "".join(f" + {k}*{30 + 10 * n}" for n, k in enumerate(rest))
        return [f"2*{i} + 5*{j}{tail}", f"{i} + 7*{j}{tail}", f"3*{i} + {j}{tail}", f"9*{i} + 2*{j}{tail}"]
    tail = "".join(f" + {k}*{5 + 2 * n}*{x}" for n, k in enumerate(rest))
    return [f"2*{i} + {j}*{x}{tail}", f"{i}*({x} + 1) + 3*{j}{tail}", f"{j} + 3*{i}*{x}{tail}",
            f"5*{i} + 2*{j}*{x}{tail}"]


def _batched(rng: random.Random, ld: str) -> tuple[str, str, str | int | None, list[str], str, str]:
    """B matrices stored one after another: (layout text, words, lead, names, ld or "", coordinate). The matrices
    are M x N (unpadded or with a leading dimension) or a fixed m x n; the batch mode comes last or first."""
    major = pick(rng, ["row", "column"])
    style = pick(rng, ["plain", "ld", "tile"])
    if style == "plain":
        shape, stride = "M,N", "N,1" if major == "row" else "1,M"
        batch, lead, ld, words = "M*N", None, "", f"B matrices of M x N, each {major}-major with no padding"
    elif style == "ld":
        shape, stride = "M,N", f"{ld},1" if major == "row" else f"1,{ld}"
        batch, lead = (f"{ld}*M", "N") if major == "row" else (f"{ld}*N", "M")
        words = f"B matrices of M x N, each {major}-major with leading dimension {ld} ({ld} >= {lead})"
    else:
        m, n = pick(rng, [2, 3, 4, 6, 8]), pick(rng, [2, 3, 4, 6, 8])
        shape, stride = f"{m},{n}", f"{n},1" if major == "row" else f"1,{m}"
        batch, lead, ld, words = str(m * n), None, "", f"B tiles of {m}x{n}, each {major}-major with no padding"
    words += ", stored one after another" + (f", matrix b starting at b*{batch}" if style == "ld" else "")
    if rng.random() < 0.5:
        return f"({shape},B):({stride},{batch})", words, lead, ["i", "j", "b"], ld, "(i,j,b)"
    return f"(B,{shape}):({batch},{stride})", words, lead, ["b", "i", "j"], ld, "(b,i,j)"


def _grid(bound: Any, title: str) -> Any:
    """The offset table of a rank-2 layout (of matrix b = 0 for a batch), captioned with the example's values."""
    if A.rank(bound) > 2:
        bound, title = A.make_layout(bound[0], bound[1]), title + ", matrix b = 0"
    return offsets_grid(bound, title, caption=f"{title}: {bound}")


def _element(rng: random.Random, seed: int, ld: str) -> Drill:
    major = pick(rng, ["row", "row", "column"])
    m, n = pick(rng, [(64, 64), (64, 128), (128, 64), (32, 96), (128, 128)])
    tm, tn = pick(rng, [(8, 8), (16, 8), (8, 16), (16, 16)])
    ti, tj, i, j = rng.randrange(1, m // tm), rng.randrange(1, n // tn), rng.randrange(tm), rng.randrange(tn)
    r, c = ti * tm + i, tj * tn + j
    text, lead = (f"({m},{n}):({ld},1)", n) if major == "row" else (f"({m},{n}):(1,{ld})", m)
    sym = A.parse_symbolic(text)
    coord = (r, c)
    key = f"{r}*{ld} + {c}" if major == "row" else f"{r} + {c}*{ld}"
    binds, ex = bindings(sym, ld, lead), example(sym, ld, lead)
    tiled = rng.random() < 0.5
    where = (f"element ({i},{j}) of tile ({ti},{tj}) when it is cut into {tm}x{tn} tiles" if tiled
             else f"element ({r},{c})")
    steps = [step(RULE), step(f"The matrix is {sym}.", text)]
    if tiled:
        steps.append(step(f"Element ({i},{j}) of tile ({ti},{tj}) is row {tm}*{ti} + {i} = {r}, column "
                          f"{tn}*{tj} + {j} = {c}."))
    steps += [step(f"Offset of ({r},{c}): {key}."),
              step(f"Check with {at(ex)}: {sym.bind(ex)} gives {sym.bind(ex)(coord)} at ({r},{c}).")]
    return _ld(Drill("symbolic", seed,
                 f"{an(m).title()} {m}x{n} {major}-major matrix has leading dimension {ld} ({ld} >= {lead}): "
                 f"A = {sym}. What is the offset of {where}? Write it in terms of {ld}.",
                 f"a formula in {ld}, e.g. {{ex}}", key,
                 lambda ans: grade_point(ans, sym, coord, binds), steps,
                 [RULE, steps[2]["text"] if tiled else f"The offset of (r, c) is r times A's row stride plus c "
                  f"times its column stride; the stride is {text.split(':')[1]}."],
                 variant=f"element/{'tile' if tiled else 'rc'}").with_data(layout=text, coord=[r, c], ld=ld, lead=lead),
               lambda ans, bb: grade_point(ans, sym, coord, bb), binds, ld, lead).with_example(
        f"3*{ld} + 5", f"7*{ld} + 2", f"{ld} + 11", f"5*{ld} + 9")


def _transpose(rng: random.Random, seed: int, ld: str) -> Drill:
    text, words, lead, major = matrix(rng, ld, rng.random() < 0.6)
    sym = A.parse_symbolic(text)
    (s0, s1), (d0, d1) = sym.shape, sym.stride
    want = A.parse_symbolic(f"({s1},{s0}):({d1},{d0})")
    binds, ex = bindings(sym, ld, lead), example(sym, ld, lead)
    mat = sym.bind(ex)
    m, n = A.size(mat[0]), A.size(mat[1])
    names = ", ".join(sym.symbols())
    rule = "A transposed view swaps the two modes, shape and stride together: T(j, i) = A(i, j); no data moves."
    steps = [step(rule, str(sym)),
             step(f"A's rows have stride {d0} and its columns stride {d1}; T's mode 0 walks A's columns, mode 1 "
                  f"A's rows."),
             step(f"T = {want}.", str(want)),
             step(f"Check with {at(ex)}: A(1,{n - 1}) = {mat((1, n - 1))} and T({n - 1},1) = "
                  f"{want.bind(ex)((n - 1, 1))}."),
             *([step(f"The engine's derivation at {at(ex)}, A o ({n},{m}):({m},1):")]
               + explain("composition", mat, A.Layout((n, m), (m, 1))))]
    return _ld(Drill("symbolic", seed,
                 f"A is {words}: A = {sym}. Write the layout of the transposed view T, so that T(j, i) is A(i, j), in "
                 f"terms of {names}.", f"the layout ({s1},{s0}):(?,?) or just its stride (?,?)", str(want),
                 lambda ans: grade_view(ans, want, 1, binds, "view"), steps, [rule, steps[1]["text"]],
                 variant=f"transpose/{major}",
                 grids=[_grid(mat, f"A with {at(ex)} (an example)"),
                        _grid(want.bind(ex), f"T with {at(ex)}")]).with_data(layout=text, ld=ld, lead=lead),
               lambda ans, bb: grade_view(ans, want, 1, bb, "view"), binds, ld, lead)


def _tiled(rng: random.Random, seed: int, ld: str) -> Drill:
    major = pick(rng, ["row", "row", "column"])
    m, n = pick(rng, [(16, 16), (8, 32), (32, 8), (8, 16), (16, 8), (8, 8), (32, 32), (16, 32), (32, 16),
                      (12, 16), (16, 12), (24, 8), (8, 24)])
    tm, tn = pick(rng, [(t, u) for t in (2, 3, 4, 8) for u in (2, 3, 4, 8)
                        if m % t == 0 and n % u == 0 and m // t >= 2 and n // u >= 2])
    gm, gn = m // tm, n // tn
    if major == "row":
        text, lead, stride = f"({m},{n}):({ld},1)", n, f"(({ld},1),({tm}*{ld},{tn}))"
    else:
        text, lead, stride = f"({m},{n}):(1,{ld})", m, f"((1,{ld}),({tm},{tn}*{ld}))"
    sym, shape = A.parse_symbolic(text), f"(({tm},{tn}),({gm},{gn}))"
    want = A.parse_symbolic(f"{shape}:{stride}")
    binds, ex = bindings(sym, ld, lead), example(sym, ld, lead)
    d_r, d_c = sym.stride
    rule = (f"Element (i, j) of tile (ti, tj) is row {tm}*ti + i, column {tn}*tj + j: substitute into A's formula "
            f"and read off one stride per variable.")
    tiler = (A.Layout(tm), A.Layout(tn))
    steps = [step(rule, text),
             step(f"A(r, c) = r*{d_r} + c*{d_c}, so the offset is ({tm}*ti + i)*{d_r} + ({tn}*tj + j)*{d_c}."),
             step(f"Strides: i -> {d_r}, j -> {d_c}, ti -> {tm}*{d_r}, tj -> {tn}*{d_c}.", str(want)),
             step(f"Check with {at(ex)}: zipped_divide({sym.bind(ex)}, ({tm},{tn})) = "
                  f"{A.zipped_divide(sym.bind(ex), tiler)}.", want.bind(ex))]
    return _ld(Drill("symbolic", seed,
                 f"A is {an(m)} {m}x{n} {major}-major matrix with leading dimension {ld} ({ld} >= {lead}): "
                 f"A = {sym}. View it as a {gm}x{gn} grid of {tm}x{tn} tiles indexed ((i,j),(ti,tj)), mode 0 inside "
                 f"the tile, mode 1 the tile. Fill in {shape}:((?,?),(?,?)) in terms of {ld}.",
                 f"the layout {shape}:((?,?),(?,?)), or just the strides", str(want),
                 lambda ans: grade_view(ans, want, 2, binds, "tiled view"), steps, [rule, steps[1]["text"]],
                 variant=f"tiled/{major}",
                 grids=[_grid(want.bind(ex), f"The tiled view with {at(ex)} (rows: in the tile, columns: "
                                                    "tile)")]).with_data(layout=text, tile=[tm, tn], ld=ld, lead=lead),
               lambda ans, bb: grade_view(ans, want, 2, bb, "tiled view"), binds, ld, lead)


def _ld(drill: Drill, grade: Any, binds: list[dict[str, int]], ld: str, lead: str | int | None) -> Drill:
    """Name the forgotten leading dimension: an answer without ``ld`` that is right exactly when there is no padding
    (ld = the row or column length) but wrong otherwise."""
    if not ld or lead is None:
        return drill
    unpadded = []
    for b in binds:
        b2 = dict(b)
        if ld in b2:
            b2[ld] = b2[lead] if isinstance(lead, str) else lead
        unpadded.append(b2)

    def forgot(ans: str) -> bool:
        return ld not in re.findall(r"[A-Za-z_]\w*", ans) and grade(ans, unpadded).correct

    return drill.mistake(f"a forgotten leading dimension: rows (or columns) are {ld} apart, not the matrix width",
                         forgot)
