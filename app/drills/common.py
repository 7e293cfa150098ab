"""Helpers shared by the generators: reading layouts, comparing by function, tables, explain steps, random shapes.

All layout arithmetic goes through the ``algebra`` package; this module only enumerates coordinates, compares the
values the engine returns, and formats text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import algebra as A
from app.drills.core import Grade, Grid
from app.drills.parsing import AnswerError, layout_text, parse_nested, parse_table

MAX_CHECK = 1 << 14  # coordinates enumerated when comparing two layouts by function
#: Layouts the answer formats show as examples of CuTe notation; a drill shows the first (from a place its seed picks)
#: that is a wrong answer to it (Drill.with_example), so an example is never the key.
LAYOUT_EXAMPLES = ("((2,2),3):((24,2),8)", "(3,(2,4)):(8,(1,24))", "((4,2),2):((2,1),16)", "(2,(3,2)):(12,(1,6))",
                   "(5,2):(2,20)")


def unwrap(x: Any) -> Any:
    """An int tuple with every 1-tuple replaced by its element: ``((12,),)`` -> ``12`` (the same layout)."""
    if isinstance(x, tuple):
        items = tuple(unwrap(v) for v in x)
        return items[0] if len(items) == 1 else items
    return x


def plain(layout: Any) -> Any:
    """``layout`` with rank-1 parentheses dropped, ``(12):(1)`` -> ``12:1`` (a Layout; other objects unchanged)."""
    if isinstance(layout, A.Layout):
        shape, stride = unwrap(layout.shape), unwrap(layout.stride)
        if shape != layout.shape or stride != layout.stride:
            return A.Layout(shape, stride)
    return layout


def read_layout(text: str, tiler: bool = False) -> Any:
    """Parse a typed layout in any of CuTe's spellings (``_N``, ``Int<N>{}``, ``Layout<Shape<..>,Stride<..>>``,
    ``make_layout(.., LayoutRight{})``, rank-1 parentheses). With ``tiler`` a tiler (``<2:2, 8:1>`` or CuTe's printed
    ``(_2:_2,_8:_1)``) is read as a tuple of layouts. Post-condition: an engine Layout / ComposedLayout (or tuple),
    or AnswerError carrying the engine's reason."""
    src = layout_text(text)
    try:
        if src.startswith("R("):
            got: Any = A.make_layout_row_major(unwrap(parse_nested(src[1:])))
        else:
            got = A.parse(src)
    except (A.LayoutError, ValueError, TypeError, RecursionError) as err:
        raise AnswerError(f"not a layout in CuTe notation ({str(err)[:160]})") from None
    if isinstance(got, tuple):
        if not tiler:
            raise AnswerError("that is a tiler (one layout per mode); the question asks for one layout")
        return tuple(plain(x) if not isinstance(x, int) else A.Layout(x) for x in got)
    return plain(got)


def static_spelling(x: Any) -> str:
    """CuTe notation of a layout (or text) as CuTe prints a compile-time one: every integer as ``_N``,
    ``(4,(2,2)):(2,(1,8))`` -> ``(_4,(_2,_2)):(_2,(_1,_8))``."""
    return re.sub(r"(?<![\w@])(\d+)", r"_\1", lstr(x) if not isinstance(x, str) else x)


def lstr(x: Any) -> str:
    """CuTe notation of a layout or int tuple."""
    if isinstance(x, int):
        return str(x)
    if isinstance(x, tuple):
        return "(" + ",".join(lstr(v) for v in x) + ")"
    return str(x)


def mode_sizes(layout: Any, depth: int) -> Any:
    """The sizes of a layout's modes down to ``depth`` levels (depth 0: the total size)."""
    if depth == 0 or isinstance(layout.shape, int):
        return A.size(layout)
    return unwrap(tuple(mode_sizes(layout[i], depth - 1) for i in range(A.rank(layout))))


def table(layout: Any) -> list[list[int]]:
    """Rank-2 view of a layout: ``rows[i][j] = L((i, j))`` with i over mode 0 and j over mode 1 (1-D into each)."""
    if A.rank(layout) == 1:
        return [[layout(j) for j in range(A.size(layout))]]
    m, n = A.size(layout[0]), A.size(layout[1])
    return [[layout((i, j)) for j in range(n)] for i in range(m)]


def offsets_grid(layout: Any, title: str, highlight: Iterable[tuple[int, int]] = (), caption: str = "") -> Grid:
    """The offset table of a rank-1/2 layout as a Grid, ``highlight`` cells marked."""
    rows = table(layout)
    hl = set(highlight)
    marks = [["hl" if (i, j) in hl else "" for j in range(len(rows[0]))] for i in range(len(rows))]
    return Grid(title, rows, marks=marks, caption=caption or lstr(layout))


def same_function(got: Any, want: Any, coords: Sequence[Any]) -> list[tuple[Any, int, int]]:
    """Coordinates where two layouts differ, as (coord, want, got); empty when they agree on every coordinate."""
    bad = []
    for c in coords:
        try:
            g = got(c)
        except (A.LayoutError, ValueError, TypeError, IndexError):
            g = None
        w = want(c)
        if g != w:
            bad.append((c, w, g))
            if len(bad) >= 8:
                break
    return bad


def grade_layout(answer: str, want: Any, depth: int, coords: Callable[[Any], Sequence[Any]] | None = None,
                 what: str = "layout") -> Grade:
    """Grade a typed layout against ``want`` by function and by mode sizes down to ``depth``.

    Post-condition: correct iff the answer parses, its mode sizes to ``depth`` equal ``want``'s, and it gives the
    same offset as ``want`` at every 1-D coordinate (or every coordinate of ``coords(want)``). The reason names the
    modes or coordinates that are wrong, never the key's values.
    """
    got = read_layout(answer)
    if A.size(got) != A.size(want):
        return Grade.wrong(f"your {what} has {A.size(got)} elements; that is not the size of the answer")
    if mode_sizes(got, depth) != mode_sizes(want, depth):
        gs, ws = mode_sizes(got, depth), mode_sizes(want, depth)
        bad = [k for k in range(min(len(gs), len(ws)))] if isinstance(gs, tuple) and isinstance(ws, tuple) else []
        bad = [k for k in bad if gs[k] != ws[k]]
        where = (f" (mode{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))} "
                 f"{'have' if len(bad) > 1 else 'has'} the wrong size)") if bad and len(gs) == len(ws) else \
            (f" (it has {len(gs) if isinstance(gs, tuple) else 1} modes where the answer has "
             f"{len(ws) if isinstance(ws, tuple) else 1})")
        return Grade.wrong(f"your {what} has modes of sizes {lstr(gs)}, which the question does not allow{where}")
    pts = list(coords(want) if coords else range(min(A.size(want), MAX_CHECK)))
    bad = same_function(got, want, pts)
    if bad:
        shown = ", ".join(f"{lstr(c)} -> {g}" for c, _, g in bad[:3])
        more = "8 or more" if len(bad) >= 8 else str(len(bad))
        return Grade.wrong(f"your {what} has the right shape but gives the wrong offset at {more} coordinate"
                           f"{'s' if len(bad) > 1 else ''}, e.g. {shown}")
    return Grade.right("same shape and the same offset at every coordinate")


def grade_table(answer: str, want: list[list[int]]) -> Grade:
    """Grade a typed table cell by cell. Post-condition: ``cells`` marks every cell; correct iff all are right;
    the reason names wrong cells, not their right values."""
    rows, cols = len(want), len(want[0])
    got = parse_table(answer, rows, cols)
    cells = [[got[i][j] == want[i][j] for j in range(cols)] for i in range(rows)]
    wrong = [(i, j) for i in range(rows) for j in range(cols) if not cells[i][j]]
    if wrong:
        listed = "; ".join(f"row {i}, column {j}" for i, j in wrong[:6]) + (" ..." if len(wrong) > 6 else "")
        return Grade.wrong(f"{len(wrong)} of {rows * cols} cells are wrong: {listed}", cells=cells,
                           table=got)
    return Grade(True, "every cell is right", cells=cells, table=got)


def grade_list(got: Sequence[Any], want: Sequence[Any], labels: Sequence[str]) -> Grade:
    """Grade a list item by item. Post-condition: ``items`` marks each entry; correct iff all are right; the reason
    names the wrong items, not their right values."""
    if len(got) != len(want):
        raise AnswerError(f"expected {len(want)} answers, got {len(got)}")
    items = [g == w for g, w in zip(got, want, strict=True)]
    if all(items):
        return Grade(True, "all right", items=items)
    bad = [labels[k] for k, ok in enumerate(items) if not ok]
    return Grade.wrong(f"{len(bad)} of {len(items)} wrong: {'; '.join(bad[:6])}", items=items)


def grade_cells(got: Sequence[tuple[int, int]], want: Sequence[tuple[int, int]], who: str, verb: str) -> Grade:
    """Grade a set of (row, col) cells typed in any order. Post-condition: correct iff every cell of ``want`` is
    listed exactly once and nothing else; the reason names a duplicate, or counts the missing cells and names the
    extra ones (never the missing ones)."""
    seen: set[tuple[int, int]] = set()
    dups = [c for c in got if c in seen or seen.add(c)]
    missing = len(set(want) - seen)
    extra = sorted(seen - set(want))
    if not dups and not missing and not extra:
        return Grade.right()
    parts = []
    if dups:
        parts.append(f"{lstr(dups[0])} is listed {sum(c == dups[0] for c in got)} times"
                     + (f" (and {len(set(dups)) - 1} more cell(s) twice)" if len(set(dups)) > 1 else ""))
    if missing:
        parts.append(f"{missing} of {who}'s elements missing")
    if extra:
        parts.append(f"not {verb} {who}: {' '.join(lstr(e) for e in extra[:4])}")
    return Grade.wrong("; ".join(parts))


def layout_matches(want: Any, depth: int) -> Callable[[str], bool]:
    """A mistake test: the answer is a layout equal to ``want`` by function and mode sizes to ``depth``."""
    return lambda ans: grade_layout(ans, want, depth).correct


def step(text: str, layout: Any = None) -> dict[str, Any]:
    """One derivation step in the explain() format."""
    return {"text": text, "layout": None if layout is None else lstr(layout)}


def explain(op: str, *args: Any) -> list[dict[str, Any]]:
    """The engine's derivation of ``op(*args)`` as a list of ``{"text", "layout"}`` steps (empty if it has none)."""
    fn = getattr(A, "explain", None)
    if fn is None:
        try:
            from algebra.teach.explain import explain as fn
        except ImportError:
            return []
    try:
        raw = fn(op, *args)
    except (A.LayoutError, ValueError, KeyError, TypeError, AttributeError):
        return []
    return [{"text": str(s.get("text", "")), "layout": s.get("layout")} for s in raw]


def ordered_layout(shape: Any, order: Any) -> Any:
    """The compact layout of ``shape`` whose modes are laid out in ``order`` (CuTe's make_ordered_layout)."""
    return A.make_ordered_layout(shape, order)


def row_major(shape: Any) -> Any:
    """The compact row-major layout of ``shape`` (CuTe's LayoutRight)."""
    return A.make_layout_row_major(shape)


def pick(rng: random.Random, options: Sequence[Any]) -> Any:
    return options[rng.randrange(len(options))]


def split(rng: random.Random, n: int) -> Any:
    """A random hierarchical split of ``n`` into two factors (a, b) with a, b >= 2, or n when none exists."""
    pairs = [(a, n // a) for a in range(2, n) if n % a == 0 and n // a >= 2]
    return pick(rng, pairs) if pairs else n


def natural_names(shape: Any, letters: str = "ijklmnpqrs") -> Any:
    """Variable names shaped like ``shape``: (3,(2,3)) -> ("i",("j","k"))."""
    it = iter(letters)

    def walk(s: Any) -> Any:
        return tuple(walk(x) for x in s) if isinstance(s, tuple) else next(it)

    return walk(shape)


def names_str(names: Any) -> str:
    return "(" + ",".join(names_str(x) for x in names) + ")" if isinstance(names, tuple) else str(names)


def idx2crd_row_major(x: int, shape: Any) -> Any:
    """The usual mistake: split a 1-D index with the LAST mode fastest (row-major, C order) instead of CuTe's
    colexicographic order (mode 0 fastest), recursively through nested modes."""
    if not isinstance(shape, tuple):
        return x
    out = []
    for s in reversed(shape):
        n = A.size(s)
        out.append(idx2crd_row_major(x % n, s))
        x //= n
    return tuple(reversed(out))


def natural(coord: Any, shape: Any) -> Any:
    """The natural coordinate of a 1-D, flat or natural ``coord`` in ``shape`` (engine idx2crd per nested mode;
    an integer on an integer mode is already natural)."""
    if isinstance(coord, tuple):
        return tuple(natural(c, s) for c, s in zip(coord, shape, strict=True))
    if isinstance(shape, tuple):
        return A.idx2crd(coord, shape)
    return coord
