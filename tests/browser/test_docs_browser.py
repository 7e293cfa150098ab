"""/docs and /redoc work offline: in chromium with every request to another host refused, Swagger UI lists the
API's operations and ReDoc renders them, under the docs pages' CSP and with no console error."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def _offline(page, live_server) -> list[str]:
    """Abort every request whose host is not the live server's; returns the list of those refused."""
    refused: list[str] = []
    host = urlsplit(live_server.url).hostname

    def route(r):
        if urlsplit(r.request.url).hostname in (host, "localhost") or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def _csp_watch(page) -> list[str]:
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.add_init_script("document.addEventListener('securitypolicyviolation', e => "
                         "console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + "
                         "e.blockedURI));")
    return violations


def test_swagger_ui_lists_the_operations_offline(page, live_server, client):
    refused = _offline(page, live_server)
    violations = _csp_watch(page)
    resp = page.goto(live_server.url + "/docs")
    assert resp.status == 200
    page.wait_for_selector(".opblock", timeout=20_000)
    ops = [(m, p) for p, methods in client.get("/openapi.json").json()["paths"].items() for m in methods]
    page.wait_for_function(f"() => document.querySelectorAll('.opblock').length >= {len(ops)}", timeout=20_000)
    assert page.locator(".opblock").count() == len(ops)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/layout" in p for p in paths) and any("/api/bench/jobs" in p for p in paths)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "docs-swagger-offline.png"))
    page.locator("#operations-layout-post_layout_api_layout_post .opblock-summary").click()
    page.wait_for_selector("#operations-layout-post_layout_api_layout_post .responses-table")
    codes = page.locator("#operations-layout-post_layout_api_layout_post .response-col_status").all_inner_texts()
    assert {"200", "413", "422"} <= {c.strip().split()[0] for c in codes if c.strip()}
    assert not refused, refused
    assert not violations, violations
    assert not page.console_errors, page.console_errors


#: ReDoc 2 draws Redocly's logo in its sidebar credit from Redocly's CDN, unconditionally; the page's CSP refuses it
#: (img-src 'self') before any request leaves, and ReDoc hides the image when it fails.
REDOC_CREDIT = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def test_redoc_renders_offline(page, live_server):
    refused = _offline(page, live_server)
    violations = _csp_watch(page)
    resp = page.goto(live_server.url + "/redoc")
    assert resp.status == 200
    page.wait_for_selector("[data-section-id^='tag/']", timeout=20_000)
    page.wait_for_function("() => document.body.innerText.includes('/api/layout')", timeout=20_000)
    assert "HTTPError" in page.inner_text("body") or page.locator("text=detail").count() > 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "docs-redoc-offline.png"))
    assert not refused, refused
    assert all(REDOC_CREDIT in v and "img-src" in v for v in violations), violations
    assert not [e for e in page.console_errors if REDOC_CREDIT not in e], page.console_errors
