"""Every page works under its Content-Security-Policy in chromium: no CSP violation reported, and the page's script
ran (htmx swapped a fragment in / the grid's hover card answers)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = ["/?layout=(8,8):(8,1)", "/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)",
         "/banks?layout=(8,64):(64,1)&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0",
         "/tv?atom=SM80_16x8x16_F32F16F16F32_TN&operand=C", "/drills", "/lab", "/doctor"]


@pytest.mark.parametrize("path", PAGES)
def test_page_runs_under_its_csp(page, live_server, path):
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.add_init_script("document.addEventListener('securitypolicyviolation', e => "
                         "console.error('Content Security Policy violation: ' + e.violatedDirective));")
    resp = page.goto(live_server.url + path)
    assert resp.status == 200
    assert "frame-ancestors 'none'" in resp.headers["content-security-policy"]
    page.wait_for_load_state("networkidle")
    assert page.evaluate("typeof window.htmx") == "object"  # the static scripts loaded
    assert not violations, violations


def test_explorer_swaps_under_the_csp(page, live_server):
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(live_server.url + "/?layout=(4,8):(8,1)")
    page.fill("#layout-input", "(8,4):(1,8)")
    page.wait_for_function("() => document.querySelector('#result') && "
                           "document.querySelector('#result').textContent.includes('(8,4):(1,8)')")
    assert not violations, violations
