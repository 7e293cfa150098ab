"""The browser tests poll the page with functions, never with bare expressions: Playwright evaluates a bare
expression string through eval on each poll, which the app's Content-Security-Policy (script-src 'self') refuses
as soon as the first check is false, so such a wait passes on a fast machine and fails on a loaded one."""

from __future__ import annotations

import re
from pathlib import Path

BROWSER = Path(__file__).resolve().parent / "browser"
#: wait_for_function( followed by a string that does not start with an arrow function's parameters
BARE = re.compile(r"wait_for_function\(\s*f?[\"'](?!\s*(\(|[A-Za-z_$][\w$]*\s*=>))")


def test_every_wait_for_function_polls_a_function():
    bare = [f"{p.name}:{text[:m.start()].count(chr(10)) + 1}" for p in sorted(BROWSER.glob("*.py"))
            for text in [p.read_text()] for m in BARE.finditer(text)]
    assert not bare, f"wait_for_function with a bare expression (use '() => ...' or wait_js): {bare}"


def test_the_check_sees_a_bare_expression():
    assert BARE.search('page.wait_for_function("document.title")')
    assert not BARE.search('page.wait_for_function("() => document.title")')
    assert not BARE.search('page.wait_for_function("(t) => t", arg=1)')
