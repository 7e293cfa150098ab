"""JSON request bodies that hold Unicode text only: the request class of every route (``app.budget.BudgetedRoute``).

Imports nothing of the app, so the route class can use it without an import circle."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> str | None:
    """The first string (a key or a value) of a parsed JSON value that holds a lone UTF-16 surrogate, or None.
    ``json.loads`` joins an escaped pair (``\\ud83d\\ude00``) into one character, so any surrogate left is lone."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return v
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


class StrictJSONRequest(Request):
    """A request whose JSON body holds Unicode text only. ``json.loads`` accepts a lone surrogate (``"\\ud800"``, or
    its bytes, which are not UTF-8), which no response can then encode: a service that echoes the text (a field
    name, a layout in a message) failed with a 500 while writing its answer. Refused here as the JSON error it is
    (422, "body: not valid JSON ... lone UTF-16 surrogate"), before any handler sees it."""

    async def json(self) -> Any:
        value = await super().json()
        bad = lone_surrogate(value)
        if bad is not None:
            del self._json
            code = ord(_SURROGATE.search(bad).group())
            body = await self.body()
            pos = body.lower().find(b"\\u%04x" % code)
            if pos < 0:  # its bytes (ED A0 80 ...: not UTF-8), which json.loads lets through too
                pos = max(0, body.find(chr(code).encode("utf-8", "surrogatepass")))
            raise json.JSONDecodeError(f"lone UTF-16 surrogate \\u{code:04x} in a string (not a Unicode character)",
                                       body.decode("utf-8", "replace"), pos)
        return value


__all__ = ["StrictJSONRequest", "lone_surrogate"]
