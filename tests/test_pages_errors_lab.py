"""Unknown paths and other HTTP errors: a page of the site for a browser, JSON for the API; GPU-lab fragments opened
on their own are pages; a job's result is a table with its chart, and the history's result column says what each job
measured; the lab's refusal without a worker is true for every kind; the workbench's derivation numbers its steps
without running through the sub-steps."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.services import lab_results

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture()
def client(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    return TestClient(create_app(), raise_server_exceptions=False)


@pytest.mark.parametrize("path", ["/nope", "/algebra/nope", "/lab/nope/deeper", "/static-nope.css"])
def test_an_unknown_path_is_a_page_for_a_browser_and_json_for_a_script(client: TestClient, path: str) -> None:
    page = client.get(path, headers=HTML)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Page not found" in page.text and 'href="/lab"' in page.text and "/static/app.css" in page.text
    assert f"<code>{path}</code>" in page.text
    for headers in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
        r = client.get(path, headers=headers)
        assert r.status_code == 404 and r.json() == {"detail": f"no page or API route at {path!r}"}, headers
    frag = client.get(path, headers={**HTML, "HX-Request": "true"})
    assert frag.status_code == 404 and frag.text.startswith('<p class="msg error"')


def test_api_paths_and_api_errors_stay_json(client: TestClient) -> None:
    r = client.get("/api/nope", headers=HTML)
    assert r.status_code == 404 and r.json() == {"detail": "no page or API route at '/api/nope'"}
    r = client.get("/api/bench/jobs/nope", headers=HTML)
    assert r.status_code == 404 and "detail" in r.json()
    r = client.post("/healthz", headers=HTML)
    assert r.status_code == 405 and r.headers.get("allow") == "GET, HEAD, OPTIONS"
    assert "<h1>Method not allowed" in r.text
    assert client.post("/healthz").json() == {
        "detail": "method POST is not allowed on '/healthz'; it takes GET, HEAD, OPTIONS"}


def test_the_lab_history_and_a_job_opened_on_their_own_are_pages(client: TestClient) -> None:
    frag = client.get("/lab/history", headers={"HX-Request": "true"})
    assert frag.status_code == 200 and "<html" not in frag.text and "<h2>History</h2>" in frag.text
    page = client.get("/lab/history", headers=HTML)
    assert page.status_code == 200 and "<html" in page.text and "/static/lab.css" in page.text
    assert "<h1>GPU lab: history</h1>" in page.text and 'href="/lab"' in page.text and "<h2>History</h2>" in page.text
    missing = client.get("/lab/jobs/0123456789abcdef", headers=HTML)
    assert missing.status_code == 404 and "<html" in missing.text and "no job 0123456789abcdef" in missing.text


def _store_job(kind: str, params: dict, result: dict) -> str:
    from gpu_worker.store import get_store

    store = get_store()
    job = store.create(kind, params)
    store.update(job["id"], status="done", result=result, finished=time.time())
    return job["id"]


COMPILED = {"kind": "compile_only", "template": "noop", "worker": "w-cpu", "compiled": True,
            "toolkit": {"version": "13.0", "source": "PATH"}, "tag": None, "key": "a4367684f0e3", "cached": False}
TRANSPOSE = {"kind": "transpose", "config": {"n": 8192}, "copy_gbps": 4000.0,
             "variants": {"memcpy": {"gbps": 4000.0, "pct_of_copy": 100.0, "check": {"passed": True}},
                          "naive": {"gbps": 500.0, "pct_of_copy": 12.5, "check": {"passed": True}},
                          "swizzled": {"gbps": 3600.0, "pct_of_copy": 90.0, "check": {"passed": True}}},
             "prediction": {}}


def test_a_job_result_is_a_table_with_its_chart_never_raw_json(client: TestClient) -> None:
    cid = _store_job("compile_only", {"template": "noop"}, COMPILED)
    card = client.get(f"/lab/jobs/{cid}", headers={"HX-Request": "true"}).text
    rows = dict(re.findall(r"<tr><th>([^<]+)</th><td class=\"mono\">([^<]+)</td></tr>", card))
    assert rows["template"] == "noop" and rows["result"] == "built by nvcc" and rows["nvcc"] == "13.0 (PATH)"
    assert rows["worker"] == "w-cpu" and "<details class=\"raw\">" in card and 'id="job-chart"' not in card
    tid = _store_job("transpose", {"dtype": "fp32", "n": 8192}, TRANSPOSE)
    card = client.get(f"/lab/jobs/{tid}", headers={"HX-Request": "true"}).text
    assert 'id="job-chart"' in card and card.count('class="bar-g') == 3 and "copy 4000" in card
    hist = client.get("/lab/history", headers={"HX-Request": "true"}).text
    cells = re.findall(r'<td class="result">(.*?)</td>', hist)
    assert "built by nvcc" in cells and "best of 2: swizzled 3600 GB/s (90 % of copy)" in cells, cells


@pytest.mark.parametrize("job, line", [
    ({"kind": "compile_only", "status": "done", "result": {**COMPILED, "compiled": False,
                                                           "toolkit": {"version": None}}},
     "rendered only: no nvcc on the worker"),
    ({"kind": "gemm", "status": "done", "result": {"tflops": 612.34, "pct_of_cublas": 81.6}},
     "612.3 TFLOP/s (82 % of cuBLAS)"),
    ({"kind": "smem", "status": "done", "result": {"derived": {"cycles_per_warp_access": 32.04},
                                                   "prediction": {"wavefronts_per_access": 32.0}}},
     "32.04 cyc per warp access (model 32.0 wavefronts)"),
    ({"kind": "smem", "status": "queued", "result": None}, "waiting for a worker"),
    ({"kind": "smem", "status": "failed", "result": None, "error": "x"}, ""),
])
def test_the_history_result_line(job: dict, line: str) -> None:
    assert lab_results.summary(job) == line


def test_a_kind_without_its_own_table_is_flattened_into_rows() -> None:
    rows = lab_results.result_rows({"kind": "future", "result": {"a": {"b": 1}, "xs": list(range(20)), "s": "t"}})
    assert ("a.b", "1") in rows and ("s", "t") in rows and rows[1][1].startswith("20 values: 0, 1, 2")
    assert lab_results.result_chart({"kind": "future", "status": "done", "result": {"a": 1}}) is None


def test_no_worker_refusal_is_true_for_the_kind(client: TestClient) -> None:
    from gpu_worker.store import get_store

    store = get_store()
    for w in store.workers():
        store.remove_worker(w["id"])
    r = client.post("/api/bench/jobs", json={"kind": "compile_only", "params": {"template": "noop"}})
    assert r.status_code == 409 and "on any host" in r.json()["detail"] and "GPU worker" not in r.json()["detail"]
    r = client.post("/api/bench/jobs", json={"kind": "smem", "params": {}})
    assert r.status_code == 409 and "on a GPU host" in r.json()["detail"]
    page = client.get("/lab", headers=HTML).text
    banner = re.search(r'id="queue-reason"[^>]*>(.*?)</span>', page, re.S).group(1)
    assert "compile only" in banner and "any host" in banner and "needs a GPU worker" not in banner, banner


class _Lists(HTMLParser):
    """The derivation's list structure: per top-level item, its nesting; and whether every ol/li pairs up."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.bad = 0
        self.items: list[int] = []  # depth of each <li>

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("ol", "li"):
            parent = self.stack[-1] if self.stack else None
            self.bad += (tag == "li" and parent != "ol") or (tag == "ol" and parent not in (None, "li"))
            if tag == "li":
                self.items.append(sum(t == "ol" for t in self.stack))
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("ol", "li"):
            self.bad += not self.stack or self.stack.pop() != tag


def test_derivation_numbers_top_level_steps_and_nests_sub_steps(client: TestClient) -> None:
    r = client.get("/algebra", params={"op": "logical_divide", "a": "(4,8):(1,4)", "b": "4:3"})
    steps = json.loads(client.post("/api/algebra", json={"op": "logical_divide",
                                                         "args": ["(4,8):(1,4)", "4:3"]}).text)["steps"]
    html = r.text[r.text.index('<ol class="steps" id="steps">'):]
    html = html[:html.index("</details>")]
    p = _Lists()
    p.feed(html)
    assert p.bad == 0 and not p.stack, html[:400]
    # B* = complement(...), B* = ..., concatenate (B, B*), compose: four steps, their walks nested under them
    assert len(p.items) == len(steps) and p.items.count(1) == 4 and p.items[0] == 1
    assert max(p.items) >= 3  # the sub-steps sit in lists of their own, so their numbers start again
    top = p.items.count(1)
    assert f"({top} steps, {len(steps) - top} sub-steps)" in r.text
