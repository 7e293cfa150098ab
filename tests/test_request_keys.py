"""Every JSON request body refuses a key it does not take, by construction (``app.schemas.RequestBody`` forbids
extra keys, and every body model derives from it): a misspelled key (``{"access": {"kind": "column", "idnex": 5}}``)
was read as its default, so /api/banks answered column 0 for a question about column 5. The test walks the OpenAPI
document, so a route added later with a body that forgets is caught here."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.main import create_app

_app = create_app()


def _json_bodies() -> list[str]:
    out = []
    for path, ops in _app.openapi()["paths"].items():
        post = ops.get("post") or {}
        if "application/json" in (post.get("requestBody") or {}).get("content", {}) and "{" not in path:
            out.append(path)
    return sorted(out)


def test_the_walk_finds_the_json_routes():
    assert {"/api/layout", "/api/algebra", "/api/banks", "/api/svg"} <= set(_json_bodies())


@pytest.mark.parametrize("path", _json_bodies())
def test_a_key_the_body_does_not_take_is_refused_by_name(path):
    with TestClient(_app, base_url="http://127.0.0.1") as client:
        r = client.post(path, json={"layuot": "(4,8):(8,1)"})
    assert r.status_code == 422, (path, r.status_code, r.text[:300])
    assert "layuot" in r.text, (path, r.text[:300])


def test_a_misspelled_key_inside_a_bank_access_is_refused_not_read_as_its_default():
    with TestClient(_app, base_url="http://127.0.0.1") as client:
        r = client.post("/api/banks", json={"layout": "(32,32):(32,1)", "element_bytes": 4,
                                            "access": {"kind": "column", "idnex": 5}})
        assert r.status_code == 422 and "idnex" in r.text, r.text[:300]
        good = client.post("/api/banks", json={"layout": "(32,32):(32,1)", "element_bytes": 4,
                                               "access": {"kind": "column", "index": 5}})
        assert good.status_code == 200 and good.json()["coords"][0] == [0, 5], good.text[:300]
