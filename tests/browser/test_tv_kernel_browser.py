"""The TV atlas's kernel path (atom -> tiled MMA -> tiled copies -> one thread's registers -> its partitions), a tiled
copy that names its duplicates and holes, and the TMA cluster section, in a real chromium."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser


def test_kernel_path_walks_one_thread(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?kp_t=5#kernel-h")
    for k in range(1, 6):
        assert page.locator(f"#kp-step-{k}").count() == 1
    assert "get_layoutC_TV()" in page.text_content("#kp-step-2")
    assert "partition_fragment_C" in page.text_content("#kp-step-4")
    page.locator("#fig-kp-part-c").scroll_into_view_if_needed()  # grids off screen are drawn as they come near
    page.wait_for_function("() => document.querySelectorAll('#fig-kp-part-c .acc').length === 16")  # thread 5's C
    page.locator("#kernel-h").scroll_into_view_if_needed()
    screenshot(page, "tv-kernel-path", full_page=False)
    page.fill("#kp-t", "6")
    page.press("#kp-t", "Enter")
    page.wait_for_function("() => document.querySelector('#kp-summary')?.textContent.includes('thread 6')")
    assert parse_qs(urlparse(page.url).query)["kp_t"] == ["6"]
    page.fill("#kp-perm", "")  # without the N permutation, ldmatrix x4 has too few B values per thread
    page.press("#kp-perm", "Enter")
    page.wait_for_function("() => document.querySelector('#kp-step-3 .kp-problem')?.textContent"
                           ".includes('does not fit')")
    assert not page.console_errors


def test_a_tiled_copy_names_its_duplicates_and_holes(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?tatom=SM80_CP_ASYNC_CACHEALWAYS_16B&tthr=(16,8):(8,0)&tval=(1,8):(8,1)#tiled-h")
    text = page.text_content("#tiled-coverage")
    assert "claimed more than once" in text and "holes" in text and "T0V1" in text
    page.locator("#tiled-h").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('#grid-tiled .bad').length > 0")
    screenshot(page, "tv-tiled-copy-duplicates", full_page=False)
    page.fill("#tthr-input", "(16,8):(8,1)")
    page.wait_for_function("() => !document.querySelector('#tiled-coverage')")
    assert page.locator("#grid-tiled .bad").count() == 0


def test_tma_cluster_section(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?tm_cluster=4#tmac-h")
    assert page.text_content("#tmac-box") == "(64, 32)"
    assert page.text_content("#tmac-tensor") == "ArithTuple(0,0) o (4096,4096):(1@1,1@0)"
    assert page.locator("#tmac-parts tbody tr").count() == 4
    page.locator("#tmac-h").scroll_into_view_if_needed()
    screenshot(page, "tv-tma-cluster", full_page=False)
    assert not page.console_errors
