"""Every page, with every lazy section of the TV atlas opened and its grids drawn, uses each element id once: the
pages' scripts, labels and htmx targets find elements by id, and a second element with the same id is silently
skipped (the kernel path's atom picture once shared ``kp-atom`` with the form's menu)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = ["/", "/?layout=Sw<3,4,3> o 0 o (8,64):(64,1)", "/algebra?op=composition&a=(8,8):(8,1)&b=(4,4):(1,4)",
         "/banks", "/doctor", "/drills", "/drills/progress", "/drills/whiteboard", "/lab", "/lab/history",
         "/lab/class", "/tv"]

DUPLICATES = """() => { const seen = new Set(), dup = [];
  for (const e of document.querySelectorAll('[id]')) { if (seen.has(e.id)) dup.push(e.id); seen.add(e.id); }
  return dup; }"""


@pytest.mark.parametrize("path", PAGES)
def test_no_id_is_used_twice(page, live_server, path):
    page.goto(live_server.url + path)
    page.wait_for_load_state("networkidle")
    if path == "/tv":  # open every lazy section: each fetches its panel and draws its grids
        opened = page.evaluate("() => { const d = [...document.querySelectorAll('details.section')];"
                               " d.forEach(x => { x.open = true; }); return d.length; }")
        assert opened >= 6
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
    assert page.evaluate(DUPLICATES) == []
    assert not page.console_errors
