"""Request limits and headers: 413 over 1 MB (streamed, not buffered), string and nesting caps (422), error messages
that never echo the input, security headers on every response, out-of-tile bank accesses refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.config import MAX_ECHO, MAX_NESTING
from app.middleware import MAX_BODY_BYTES

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path,body", [
    ("/api/banks", b"x" * (8 << 20)),
    ("/api/algebra", b'{"op": "local_tile", "args": ["(8,8):(8,1)", "<2:1, 4:1>", "(' + b"1," * (4 << 20) + b'1)"]}'),
])
def test_8mb_body_is_413_naming_the_cap(client, path, body):
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "1,048,576" in r.json()["detail"] and len(r.text) < 200


def test_chunked_body_is_cut_off_while_streaming(live_server):
    """Over real HTTP: a chunked 8 MB upload gets its 413 after about 1 MB, before the client has sent it all."""
    import select
    import socket

    port = int(live_server.url.rsplit(":", 1)[1])
    chunk = b" " * (128 << 10)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        sent = 0
        for _ in range(64):
            if select.select([s], [], [], 0.05)[0]:
                break
            try:
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
        head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 413"), head[:200]
    assert sent < 32, sent


def test_body_just_under_the_cap_is_read(client):
    body = b'{"layout": "(4,8):(8,1)"' + b" " * (MAX_BODY_BYTES - 40) + b"}"
    assert len(body) <= MAX_BODY_BYTES
    r = client.post("/api/layout", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200


@pytest.mark.parametrize("body", [
    {"op": "local_tile", "args": ["(8,8):(8,1)", "<2:1, 4:1>", "(" * 1999 + "1" + ")" * 1999]},
    {"op": "logical_divide", "args": ["(8,8):(8,1)", "[" * 1999 + "]" * 1999]},
    {"op": "logical_divide", "args": ["(8,8):(8,1)", ["<" * 100 + "2:1" + ">" * 100]]},
])
def test_deep_nesting_is_422_not_recursion_500(client, body):
    r = client.post("/api/algebra", json=body)
    assert r.status_code == 422, r.text[:300]
    assert f"nesting cap of {MAX_NESTING}" in r.json()["detail"]
    assert "Value error" not in r.json()["detail"]  # pydantic's prefix for a validator's own message is dropped


def test_deep_layout_and_tv_text_are_422(client):
    deep = "(" * 100 + "4" + ")" * 100 + ":1"
    assert client.post("/api/layout", json={"layout": deep}).status_code == 422
    assert client.post("/api/banks", json={"layout": deep, "access": {"kind": "column"}}).status_code == 422


def test_deep_coordinate_on_the_workbench_page_is_not_a_500(client):
    r = client.get("/algebra", params={"op": "local_tile", "a": "(8,8):(8,1)", "b": "<2:1, 4:1>",
                                       "c": "(" * 1500 + "1" + ")" * 1500})
    assert r.status_code in (200, 422)


def test_algebra_args_are_capped(client):
    r = client.post("/api/algebra", json={"op": "composition", "args": ["4:1"] * 50})
    assert r.status_code == 422
    r = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(8,1)", ["2:1"] * 100]})
    assert r.status_code == 422
    r = client.post("/api/algebra", json={"op": "local_tile", "args": ["(8,8):(8,1)", "<2:1>", "1" * 900_000]})
    assert r.status_code == 422
    assert len(r.text) < 2 * MAX_ECHO


def test_errors_never_echo_much_input(client):
    junk = "(" + "7," * 1900 + "7"
    for path, body in [("/api/layout", {"layout": junk}), ("/api/banks", {"layout": junk}),
                       ("/api/algebra", {"op": "coalesce", "args": [junk]}),
                       ("/api/algebra", {"op": "x" * 5000, "args": ["1"]}),
                       ("/api/banks", {"layout": "(8,8):(8,1)", "access": {"kind": "thread_layout",
                                                                             "layout": junk}})]:
        r = client.post(path, json=body)
        assert r.status_code == 422, (path, r.status_code)
        assert len(r.json()["detail"]) <= MAX_ECHO + 60, (path, len(r.text))
        assert "7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7," * 5 not in r.text


@pytest.mark.parametrize("path", ["/", "/algebra", "/banks", "/tv", "/drills", "/lab", "/healthz",
                                  "/static/app.js", "/api/atoms", "/docs", "/doctor"])
def test_security_headers_on_every_response(client, path):
    r = client.get(path)
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    script_src = re.search(r"script-src ([^;]*)", csp).group(1)
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"]


def test_error_responses_carry_the_headers_too(client):
    r = client.post("/api/layout", json={"layout": "(4,"})
    assert r.status_code == 422 and r.headers["x-content-type-options"] == "nosniff"
    r = client.post("/api/banks", content=b"x" * (2 << 20), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "frame-ancestors" in r.headers["content-security-policy"]


def test_templates_have_no_inline_script():
    """Under ``script-src 'self'`` an inline <script> or on* handler would not run: none may exist."""
    for path in sorted((ROOT / "templates").glob("*.html")):
        text = path.read_text()
        for m in re.finditer(r"<script\b([^>]*)>", text):
            attrs = m.group(1)
            assert "src=" in attrs or 'type="application/json"' in attrs, (path.name, m.group(0))
        assert not re.search(r"\son[a-z]+\s*=", text), path.name
        assert "javascript:" not in text, path.name


@pytest.mark.parametrize("index", [[1 << 70, 1], [5000], [[1 << 70, 1]], [[-1, 0]], [[0, 32]]])
def test_out_of_tile_bank_accesses_are_422(client, index):
    body = {"layout": "(32,32):(32,1)", "element_bytes": 4, "access": {"kind": "offsets", "index": index}}
    r = client.post("/api/banks", json=body)
    assert r.status_code == 422, r.text
    assert "outside" in r.json()["detail"]


@pytest.mark.parametrize("thr", ["32:1000", "(8,4):(64,1)", "32:65"])
def test_thread_layouts_reaching_outside_the_tile_are_422(client, thr):
    body = {"layout": "(8,8):(8,1)", "element_bytes": 4, "access": {"kind": "thread_layout", "layout": thr}}
    r = client.post("/api/banks", json=body)
    assert r.status_code == 422 and "outside the tile" in r.json()["detail"], r.text


def test_in_tile_bank_accesses_still_work(client):
    body = {"layout": "(32,32):(32,1)", "element_bytes": 4, "access": {"kind": "offsets", "index": [0, 1023]}}
    r = client.post("/api/banks", json=body)
    assert r.status_code == 200 and r.json()["banks"] == [0, 31]
    body["access"]["index"] = [[31, 31], [0, 0]]
    assert client.post("/api/banks", json=body).json()["offsets"] == [1023, 0]


def test_page_errors_are_clipped(client):
    import html

    r = client.get("/banks", params={"layout": "(8,8):(8,1)", "access": "column:" + "9" * 20_000})
    assert r.status_code == 200
    errors = re.findall(r'<p class="msg error" role="alert">(.*?)</p>', r.text, re.S)
    assert errors and all(len(html.unescape(e)) <= MAX_ECHO + 60 for e in errors)


@pytest.mark.parametrize("path,param", [("/", "layout"), ("/banks", "layout"), ("/tv", "part")])
def test_deep_text_on_pages_is_refused_at_parse_time(client, path, param):
    r = client.get(path, params={param: "(" * 200 + "4" + ")" * 200 + ":1"})
    assert r.status_code == 200 and f"nesting cap of {MAX_NESTING}" in r.text


@pytest.mark.parametrize("field,target", [("mw_tile", "mmawalk"), ("vector", "sectors"), ("dmn", "hopper"),
                                          ("dk", "hopper"), ("cw_t", "copywalk"), ("mw_t", "mmawalk")])
@pytest.mark.parametrize("value", ["²", "²,8,16"])
def test_superscript_digits_are_not_numbers(client, field, target, value):
    """``"²".isdigit()`` is True but ``int("²")`` raises: integer fields checked with isdigit answered 500."""
    for headers in ({}, {"HX-Request": "true", "HX-Target": target}):
        r = client.get("/tv", params={field: value}, headers=headers)
        assert r.status_code == 200
        assert 'role="alert"' in r.text and "²" in r.text
    api = client.post("/api/partition", json={"atom": "SM80_16x8x16_F32F16F16F32_TN", "tile": "²,8,16"})
    assert api.status_code == 422 and "is not M,N,K" in api.json()["detail"]


@pytest.mark.parametrize("url,field", [("/drills?seed=abc", "seed"), ("/drills?hint=9", "hint"),
                                       ("/drills/whiteboard/x?last=-1", "last")])
def test_a_refused_page_query_answers_a_readable_page(client, url, field):
    """FastAPI's validation of a page's query (or form) answered JSON to the browser: now the page, as every page
    answers a query value it does not take (app/page_query.py: 200, each refused field named inline), and for htmx
    the same message first; a form post that misses a field, 422 with the page; the JSON routes keep their
    {"detail"}."""
    r = client.get(url)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert f'<li data-field="{field}">{field}:' in r.text and 'id="query-problems"' in r.text and "<nav>" in r.text
    frag = client.get(url, headers={"HX-Request": "true"})
    assert frag.status_code == 200 and frag.text.startswith('<div class="msg error query-problems" role="alert"')
    assert f'<li data-field="{field}">{field}:' in frag.text
    form = client.post("/drills/answer", data={"answer": "1"})
    assert form.status_code == 422 and "id: Field required" in form.text
    api = client.get("/api/drills/next?seed=abc")
    assert api.status_code == 422 and api.json()["detail"].startswith("seed:")


@pytest.mark.parametrize("path,body,field", [
    ("/api/banks", {"layout": "(32,32):(32,1)", "element_bytes": True}, "element_bytes"),
    ("/api/banks", {"layout": "(32,32):(32,1)", "element_bytes": 4.0}, "element_bytes"),
    ("/api/banks", {"layout": "(32,32):(32,1)", "access": {"kind": "column", "index": True}}, "access.index"),
    ("/api/banks", {"layout": "(32,32):(32,1)", "access": {"kind": "ldmatrix", "num": 4.0}}, "access.num"),
    ("/api/algebra", {"op": "upcast", "args": ["(8,8):(1,8)", True]}, "args.1"),
    ("/api/sectors", {"tv": "(32,4):(1,32)", "element_bytes": True}, "element_bytes"),
    ("/api/partition", {"atom": "SM80_16x8x16_F32F16F16F32_TN", "thread": 1.0}, "thread"),
    ("/api/solve/descriptor/encode", {"tile": "(64,64):(64,1)", "element_bytes": 2.0}, "element_bytes"),
    ("/api/drills/offsets-1/answer", {"answer": "1", "elapsed_ms": 3.5}, "elapsed_ms"),
])
def test_bools_and_floats_are_not_ints(client, path, body, field):
    """``true`` was read as 1 and ``4.0`` as 4 (a bank map of 1-byte elements for element_bytes: true): request
    bodies are strict."""
    r = client.post(path, json=body)
    assert r.status_code == 422 and r.json()["detail"].startswith(f"{field}: Input should be a valid"), r.text


@pytest.mark.parametrize("kwargs,kind", [
    ({"content": b'{"layout": "(4,8):(8,1)"}'}, "JSON without that Content-Type"),
    ({"data": {"layout": "(4,8):(8,1)"}}, "a form or text body"),
    ({"json": [1, 2]}, "got a JSON array"),
    ({"json": "x"}, "got a JSON string"),
    ({}, "no body"),
])
@pytest.mark.parametrize("path", ["/api/layout", "/api/solve/tma"])
def test_a_body_that_is_not_a_json_object_is_named(client, path, kwargs, kind):
    """These answered "Input should be a valid dictionary or object to extract fields from" (or "Field required")."""
    r = client.post(path, **kwargs)
    assert r.status_code == 422
    assert r.json()["detail"] == f"body: expected a JSON object sent with Content-Type: application/json ({kind})"


def test_invalid_json_names_where(client):
    r = client.post("/api/layout", content=b'{"layout": ', headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"] == "body: not valid JSON (at character 11: Expecting value)"


def test_op_arguments_are_capped_in_modes(client):
    """An op explains itself mode by mode: a 900-mode tiler gave 13,500 steps (1.3 MB, a second of CPU). Arguments
    have at most MAX_MODES leaves, named in the refusal; the workbench shows it."""
    from app.config import MAX_MODES

    wide = "<" + ",".join(["1:0"] * (MAX_MODES + 1)) + ">"
    r = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(8,1)", wide]})
    assert r.status_code == 422
    assert r.json()["detail"] == f"tiler: {MAX_MODES + 1} modes (counted leaf by leaf) exceeds the cap of {MAX_MODES}"
    ok = "(" + ",".join(["2"] * 20 + ["1"] * (MAX_MODES - 20)) + ")"
    assert client.post("/api/algebra", json={"op": "coalesce", "args": [ok]}).status_code == 200
    page = client.get("/algebra", params={"op": "logical_divide", "a": "(8,8):(8,1)", "b": wide})
    assert page.status_code == 200 and f"exceeds the cap of {MAX_MODES}" in page.text
