"""The web app's caps on every request (the data folder and the Redis URL live in ``storage.config``)."""

from __future__ import annotations

#: Caps applied to every request (the algebra itself is symbolic and uncapped); those a notebook and the CLI share live
#: in layoutlab.caps: MAX_SIZE, MAX_DEPTH, MAX_CELLS (cells rendered in one grid), MAX_TEXT, MAX_NESTING.
from layoutlab.caps import MAX_CELLS, MAX_DEPTH, MAX_NESTING, MAX_SIZE, MAX_TEXT, nesting_depth  # noqa: E402, F401

MAX_MODES = 64              # leaves (modes, counted leaf by leaf) of one op argument: an op explains itself mode by
                            # mode, and 900 modes were 13,500 steps (1.3 MB, a second) for one divide
MAX_ECHO = 400              # characters of an error message (never echo more of the input than this)


def clip(text: object, limit: int = MAX_ECHO) -> str:
    """``text`` cut to at most ``limit`` characters (plus a note of how many were left out): an error message never
    echoes more than a few hundred characters of what the client sent. The middle goes: a message names the field
    first and the reason last, and an echoed input sits between them."""
    text = str(text)
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters not shown) ... {text[-tail:]}"
