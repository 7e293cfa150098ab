"""The caps on enumeration and input, the same in the pages (``app.config`` re-exports them), the notebook and the
CLI: the algebra itself is symbolic and uncapped; what is bounded is how many cells are drawn and how deep input
nests."""

from __future__ import annotations

MAX_SIZE = 1 << 20          # size(layout) of a layout whose cells are enumerated
MAX_DEPTH = 6               # nesting depth of a shape
MAX_CELLS = 65_536          # cells rendered in one grid
MAX_TEXT = 4_000            # characters of one layout / op argument
MAX_NESTING = 32            # parentheses / brackets nested in one typed layout, coordinate or tiler
MAX_THREADS = 1024          # threads of a tiled copy / MMA drawn (each thread's partition is enumerated)

_OPEN, _CLOSE = frozenset("([{<"), frozenset(")]}>")


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``( [ { <`` in ``text`` (one linear scan; unbalanced text is the parser's business)."""
    depth = best = 0
    for ch in text:
        if ch in _OPEN:
            depth += 1
            best = max(best, depth)
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
    return best


#: characters of an error message (never echo more of the input than this)
MAX_ECHO = 400
#: characters of an op's refusal of well-formed arguments (the condition, the modes, a counterexample and what CuTe
#: prints, each naming layouts read within the caps): kept whole, as the workbench and the library state it
MAX_REFUSAL = 10 * MAX_ECHO


def clip(text: object, limit: int = MAX_ECHO) -> str:
    """``text`` cut to at most ``limit`` characters (plus a note of how many were left out): an error message never
    echoes more than a few hundred characters of what the client sent. The middle goes: a message names the field
    first and the reason last, and an echoed input sits between them."""
    text = str(text)
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters not shown) ... {text[-tail:]}"
