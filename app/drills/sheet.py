"""The whiteboard sheet's own numbers (the seven-part layout drill): the generators of the kinds the sheet uses give
them as one of their variants, in about ``SHARE`` of their seeds, so the sheet itself can be drilled and every
whiteboard session can meet it.
"""

from __future__ import annotations

import random
from contextvars import ContextVar
from typing import Any

#: The share of a kind's seeds that take the sheet's numbers.
SHARE = 0.1

#: Parts 1 and 2: a 4x2 column-major and row-major layout and the six 2-D coordinates asked of both.
L1, L2 = "(4,2):(1,4)", "(4,2):(2,1)"
COORDS_12: list[Any] = [(0, 0), (1, 0), (3, 0), (0, 1), (2, 1), (3, 1)]
#: Part 3: a hierarchical 2x4 layout and its five natural coordinates.
L3 = "(2,(2,2)):(4,(2,1))"
COORDS_3: list[Any] = [(0, (0, 0)), (1, (0, 0)), (0, (1, 0)), (0, (0, 1)), (1, (1, 1))]
#: Part 4: one element, three coordinates.
L4, X4, FLAT4 = "(3,(2,3)):(3,(12,1))", 16, (1, 5)
#: Part 5: the row-major 4x8 float matrix to transpose; part 6: the 8x8 one cut into 4x4 tiles and its spot checks
#: as ((element), (tile)).
L5, L6, TILE6 = "(4,8):(8,1)", "(8,8):(8,1)", (4, 4)
#: Part 5.2: the element (1,5) of the matrix against the view's (5,1).
PROVE5 = (1, 5)
SPOTS6: list[Any] = [((0, 0), (1, 1)), ((3, 3), (0, 1))]
#: Part 7: the float tile, column 5, padded to a pitch of 33, and the 128-word pitch of its last question.
COLS7, COL7, PITCH7 = (32, 128), 5, 33


#: Set by ``take`` when the drill being generated takes the sheet's numbers (``core.generate`` reads it).
_TOOK: ContextVar[bool] = ContextVar("sheet_took", default=False)


#: Set while ``probe`` runs a generator: ``take`` then stops it with its answer.
_PROBING: ContextVar[bool] = ContextVar("sheet_probing", default=False)


class Probed(BaseException):
    """Raised by ``take`` while probing: ``took`` is its answer (the generator goes no further; a BaseException, so
    no ``except Exception`` in a generator swallows it)."""

    def __init__(self, took: bool) -> None:
        super().__init__(took)
        self.took = took


def take(rng: random.Random) -> bool:
    """Whether this seed takes the sheet's numbers (one draw from ``rng``); a yes is noted for ``took``."""
    yes = rng.random() < SHARE
    if _PROBING.get():
        raise Probed(yes)
    if yes:
        _TOOK.set(True)
    return yes


def probe(make: Any, rng: random.Random, seed: int) -> bool:
    """Whether the generator ``make`` takes the sheet's numbers for this random source, found by running it only up
    to its first ``take`` (a fraction of a whole generation). False when it finishes without one."""
    token = _PROBING.set(True)
    try:
        make(rng, seed)
    except Probed as p:
        return p.took
    finally:
        _PROBING.reset(token)
    return False


def begin() -> None:
    """Start watching one generation: ``took`` is False until a ``take`` says yes."""
    _TOOK.set(False)


def took() -> bool:
    """Whether the generation since ``begin`` took the sheet's numbers."""
    return _TOOK.get()


def pick_formula(rng: random.Random) -> str:
    """A layout of the sheet whose index formula it asks for (parts 1 and 3)."""
    return L1 if rng.random() < 0.5 else L3


__all__ = ["COL7", "COLS7", "COORDS_12", "COORDS_3", "FLAT4", "L1", "L2", "L3", "L4", "L5", "L6", "PITCH7", "PROVE5",
           "SHARE", "SPOTS6", "TILE6", "X4", "Probed", "begin", "pick_formula", "probe", "take", "took"]
