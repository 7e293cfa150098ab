"""JSON request bodies that hold Unicode text only, decoded and validated off the event loop: the request class of
every route (``app.budget.BudgetedRoute``).

Imports nothing of the app, so the route class can use it without an import circle."""

from __future__ import annotations

import email.message
import json
import re
from collections.abc import Callable
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


def parse(body: bytes) -> Any:
    """``body`` decoded as JSON text of Unicode characters. Raises what ``json.loads`` raises (JSONDecodeError,
    UnicodeDecodeError, RecursionError, ValueError for a number past its digits), and JSONDecodeError for a lone
    surrogate, which ``json.loads`` accepts (``"\\ud800"``, or its bytes, which are not UTF-8) but no response can then
    encode: a service that echoed the text (a field name, a layout in a message) failed with a 500 while writing its
    answer."""
    value = json.loads(body)
    bad = lone_surrogate(value)
    if bad is not None:
        code = ord(_SURROGATE.search(bad).group())
        pos = body.lower().find(b"\\u%04x" % code)
        if pos < 0:  # its bytes (ED A0 80 ...: not UTF-8)
            pos = max(0, body.find(chr(code).encode("utf-8", "surrogatepass")))
        raise json.JSONDecodeError(f"lone UTF-16 surrogate \\u{code:04x} in a string (not a Unicode character)",
                                   body.decode("utf-8", "replace"), pos)
    return value


def decodes_json(content_type: str | None, strict: bool = True) -> bool:
    """Whether FastAPI decodes a body sent with this Content-Type as JSON (``application/json`` or
    ``application/*+json``; with none, only when the route's ``strict_content_type`` is off); otherwise the model is
    given the bytes."""
    if not content_type:
        return not strict
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


class StrictJSONRequest(Request):
    """A request whose JSON body holds Unicode text only (:func:`parse`; 422 "body: not valid JSON ... lone UTF-16
    surrogate" before any handler sees it). :meth:`prepare` reads the body on the event loop and runs the decoding
    and whatever ``check`` does with the value in a worker thread; ``json()`` then hands out that value, or raises
    what decoding raised, where FastAPI reads the body, so each is answered as before."""

    async def prepare(self, run: Callable[[Callable[[], Any]], Any], check: Callable[[Any], None]) -> None:
        """Read the body (I/O), then ``await run(work)``: ``work`` decodes it and calls ``check(value)``, whose
        exceptions propagate. A body that does not decode is kept as the error ``json()`` raises."""
        body = await self.body()

        def work() -> None:
            try:
                value = parse(body)
            except Exception as exc:  # answered where FastAPI decodes the body, as before
                self._json_error = exc
                return
            check(value)
            self._json = value

        await run(work)

    async def json(self) -> Any:
        error = getattr(self, "_json_error", None)
        if error is not None:
            raise error
        if not hasattr(self, "_json"):
            self._json = parse(await self.body())
        return self._json


__all__ = ["StrictJSONRequest", "decodes_json", "lone_surrogate", "parse"]
