"""Cookie headers are read in linear time.

FastAPI reads ``request.cookies`` on the event loop for every route it dispatches (its dependency solver passes them
to the cookie parameters, whether a route has any or not), and Starlette's parser unquotes each value with
``http.cookies._unquote``. On Python before 3.11.10 / 3.12.6 that function is quadratic in the backslashes of a
quoted value (CVE-2024-7592): one 8 kB cookie, within the front door's header limits, cost 0.35 s of event-loop time
a request, and 40 such requests held ``/healthz`` for 10 s. :func:`install` puts CPython's own fix in its place (one
regular-expression substitution: the same result for every input), where the running Python still has the old one.
"""

from __future__ import annotations

import http.cookies
import re

_UNQUOTE_SUB = re.compile(r"\\(?:([0-3][0-7][0-7])|(.))").sub


def _replace(m: re.Match) -> str:
    return chr(int(m[1], 8)) if m[1] else m[2]


def unquote(value: str | None) -> str | None:
    """``http.cookies._unquote`` in linear time (CPython's fix of CVE-2024-7592): a value in double quotes loses them,
    and inside it ``\\ooo`` (octal, first digit 0-3) becomes that character and a backslash before any other
    character is dropped; any other value is returned as it is."""
    if value is None or len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return value
    return _UNQUOTE_SUB(_replace, value[1:-1])


def install() -> None:
    """Post-condition: ``http.cookies._unquote`` (which Starlette's cookie parser and SimpleCookie call) runs in
    linear time. A Python that has the fix keeps its own."""
    if getattr(http.cookies, "_unquote_sub", None) is None:  # the fixed module defines it; the quadratic one not
        http.cookies._unquote = unquote
