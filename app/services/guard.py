"""Turn anything unexpected raised while evaluating user input into a LayoutError (-> 422), never a 500."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from algebra import LayoutError

log = logging.getLogger("layoutlab.services")


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Re-raise LayoutError as is; any other exception becomes ``LayoutError("<what>: cannot evaluate ...")`` and
    is logged with its traceback (it marks a gap in the algebra worth fixing, not bad input)."""
    try:
        yield
    except LayoutError:
        raise
    except RecursionError:
        raise LayoutError(f"{what}: nested too deeply to evaluate") from None
    except ValueError as exc:
        if not str(exc).startswith("Exceeds the limit"):  # Python's cap on digits read by int(str) (4,300)
            log.exception("unexpected error in %s", what)
            raise LayoutError(f"{what}: cannot evaluate this input (ValueError: {exc})") from None
        raise LayoutError(f"{what}: an integer of more than {sys.get_int_max_str_digits():,} digits, over every "
                          "cap of the input") from None
    except Exception as exc:  # noqa: BLE001 - the boundary between user input and the engine
        log.exception("unexpected error in %s", what)
        raise LayoutError(f"{what}: cannot evaluate this input ({type(exc).__name__}: {exc})") from None
