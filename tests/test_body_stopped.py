"""A request body that stops arriving before its declared end is a 408 naming it, on every kind of route: a JSON
route (whose body FastAPI reads) as a form (whose body the route reads), not a 400 that calls the body malformed.
Driven over raw ASGI: the client sends part of the body, then the server's read timeout (or the client) ends it."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest


def call(app, path: str, kind: str, part: bytes) -> tuple[int, dict, bytes]:
    """POST ``part`` of a 1000-byte body, then a disconnect; the status, headers and body the app answers."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5555),
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", kind.encode()), (b"content-length", b"1000"),
                         (b"origin", b"http://127.0.0.1:8000")]}
    messages = [{"type": "http.request", "body": part, "more_body": True}, {"type": "http.disconnect"}]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    with ThreadPoolExecutor(1) as pool:  # a loop of its own: the thread running the tests may already have one
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


@pytest.mark.parametrize("path, kind, part", [
    ("/api/layout", "application/json", b'{"layout":'),
    ("/api/algebra", "application/json", b'{"op": "composition", '),
    ("/lab/jobs", "application/x-www-form-urlencoded", b"kind=smem&rows="),
])
def test_a_body_that_stops_arriving_is_a_408_naming_it(app, path, kind, part):
    status, headers, body = call(app, path, kind, part)
    assert status == 408 and headers.get("connection") == "close", (status, body[:200])
    assert "stopped arriving" in json.loads(body)["detail"]


def test_bytes_that_are_not_utf8_are_still_named_so(client):
    r = client.post("/api/layout", content=b'{"layout": "\xff\xfe"}', headers={"content-type": "application/json"})
    assert r.status_code in (400, 422) and "UTF-8" in r.json()["detail"], r.text


def test_every_operation_with_a_body_documents_the_408(client):
    paths = client.get("/openapi.json").json()["paths"]
    with_body = [(p, m) for p, ops in paths.items() for m, op in ops.items() if "requestBody" in op]
    assert with_body and all("408" in paths[p][m]["responses"] for p, m in with_body)
