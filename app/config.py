"""The web app's caps on every request (the data folder and the Redis URL live in ``storage.config``)."""

from __future__ import annotations

#: Caps applied to every request (the algebra itself is symbolic and uncapped); those a notebook and the CLI share live
#: in layoutlab.caps: MAX_SIZE, MAX_DEPTH, MAX_CELLS (cells rendered in one grid), MAX_TEXT, MAX_NESTING, MAX_THREADS
#: (threads of a tiled copy / MMA), and MAX_ECHO
#: with clip (an error message's length, the CLI's too; MAX_REFUSAL for an op's refusal of well-formed arguments).
from layoutlab.caps import (  # noqa: E402, F401
    MAX_CELLS,
    MAX_DEPTH,
    MAX_ECHO,
    MAX_NESTING,
    MAX_REFUSAL,
    MAX_SIZE,
    MAX_TEXT,
    MAX_THREADS,
    clip,
    nesting_depth,
)

MAX_MODES = 64              # leaves (modes, counted leaf by leaf) of one op argument: an op explains itself mode by
                            # mode, and 900 modes were 13,500 steps (1.3 MB, a second) for one divide
