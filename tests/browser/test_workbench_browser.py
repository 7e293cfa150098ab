"""The algebra workbench in a real chromium: every example chip produces its result, switching the op loads the new
op's arguments (none left over from the old op), and a refusal is shown as a lesson with its counterexample."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from algebra import registry

pytestmark = pytest.mark.browser


def _expected(name: str, args: tuple[str, ...]) -> str:
    op = registry.get(name)
    res = op.fn(*registry.parse_args(op, list(args)))
    if op.result == "tile":
        return str(res[0])
    from algebra.core.inttuple import to_str

    return to_str(res) if isinstance(res, tuple) else str(res)


def test_every_chip_produces_its_result(page, live_server, screenshot):
    page.goto(f"{live_server.url}/algebra")
    chips = page.eval_on_selector_all("#chips a.chip", "els => els.map(e => [e.dataset.op, e.textContent.trim()])")
    want = [(op.name, ex.label) for op in registry.OPS.values() for ex in op.examples]
    assert [tuple(c) for c in chips] == want
    for k, (name, label) in enumerate(want):
        page.locator("#chips a.chip").nth(k).click()
        page.wait_for_selector("#op-result")
        args = registry.get(name).examples[[ex.label for ex in registry.get(name).examples].index(label)].args
        assert page.inner_text("#op-result") == _expected(name, args), (name, label)
        assert page.locator("#result [role=alert]").count() == 0, (name, label)
        assert page.input_value("#op-select") == name
        for p, v in zip("abc", args, strict=False):
            assert page.input_value(f"#{p}-input") == v, (name, label, p)
        if name in ("right_inverse", "coalesce", "local_partition", "max_common_vector"):
            screenshot(page, f"workbench-chip-{name}")
    assert not page.console_errors


@pytest.mark.parametrize(("start", "new_op"), [("composition", "blocked_product"), ("composition", "complement"),
                                               ("composition", "right_inverse"), ("blocked_product", "coalesce")])
def test_switching_the_op_loads_its_arguments(page, live_server, start, new_op):
    page.goto(f"{live_server.url}/algebra?op={start}")
    page.select_option("#op-select", new_op)
    ex = registry.get(new_op).example.args
    page.wait_for_function("(v) => document.querySelector('#a-input')?.value === v", arg=ex[0])
    page.wait_for_selector("#op-result")
    assert page.inner_text("#op-result") == _expected(new_op, ex)
    assert page.locator("#result [role=alert]").count() == 0
    assert page.locator("#b-input").count() == (1 if len(registry.get(new_op).args) > 1 else 0)
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "op-select"
    q = parse_qs(urlparse(page.url).query)
    assert q["op"] == [new_op] and q["a"] == [ex[0]] and "shown" not in q  # the address bar is the permalink
    page.fill("#a-input", "(4,8):(1,4)")  # typing after the switch updates the result in place
    page.wait_for_function("() => new URL(location.href).searchParams.get('a') === '(4,8):(1,4)'")
    assert not page.console_errors


def test_right_inverse_permalink(page, live_server):
    page.goto(f"{live_server.url}/algebra?op=right_inverse&a=(4,8):(8,1)")
    assert page.inner_text("#op-result") == "(8,4):(4,1)"
    assert page.locator("#result [role=alert]").count() == 0


def test_refusal_is_a_lesson(page, live_server, screenshot):
    page.goto(f"{live_server.url}/algebra?op=composition&a=(6,2):(8,2)&b=4:4")
    panel = page.locator("#refusal")
    assert panel.is_visible()
    assert page.inner_text("#refusal-layout") == "(2,2):(32,2)"
    text = panel.inner_text()
    assert "CuTe would print (2,2):(32,2)" in text
    assert "at i = 2 that gives 2, but A(B(2)) = A(8) = 18" in text
    assert "divisibility" in page.inner_text("#refusal-why")
    assert page.locator("#op-result").count() == 0  # no wrong layout shown as the answer
    assert page.locator("#steps li").count() >= 2  # the derivation up to the refusal
    screenshot(page, "workbench-refusal")
    page.fill("#b-input", "4:3")  # a composition CuTe answers correctly: the lesson goes, the result comes
    page.wait_for_selector("#op-result")
    assert page.locator("#refusal").count() == 0
    assert not page.console_errors
