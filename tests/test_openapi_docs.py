"""The published schema and its viewers (issue 20, item 8): every refusal is documented as ``HTTPError`` (a string
``detail``, as the API answers), the codes machinery outside the routes produces are listed where they apply, and
/docs and /redoc load only same-origin assets that the app serves."""

from __future__ import annotations

import re

import pytest

from app.openapi import REDOC_CDN_LOGO, REDOC_JS_SERVED, REDOC_LOGO, SWAGGER_CSS, SWAGGER_JS, build_schema

BIG = b"[" + b"1," * (600 << 10) + b"1]"  # 1.2 MB of JSON


@pytest.fixture(scope="module")
def schema(client):
    return client.get("/openapi.json").json()


def _operations(schema):
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            yield method.upper(), path, op


def test_every_refusal_is_documented_as_a_string_detail(schema):
    schemas = schema["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert schemas["HTTPError"]["properties"]["detail"]["type"] == "string"
    assert schemas["HTTPError"]["required"] == ["detail"]
    assert "HTTPValidationError" not in str(schema)
    for method, path, op in _operations(schema):
        for code, answer in op["responses"].items():
            if code[0] in "45":
                assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/HTTPError"}, \
                    (method, path, code)
                assert answer["description"], (method, path, code)


def test_cross_cutting_codes_are_listed_where_they_apply(schema):
    """422 wherever there is input, 413 wherever there is a body; /healthz (no input, on the event loop) has none."""
    for method, path, op in _operations(schema):
        codes = set(op["responses"])
        if op.get("parameters") or "requestBody" in op:
            assert "422" in codes, (method, path)
        assert ("413" in codes) == ("requestBody" in op), (method, path)
    assert set(schema["paths"]["/healthz"]["get"]["responses"]) == {"200"}


def test_route_specific_codes_are_documented(schema):
    def codes(method, path):
        return set(schema["paths"][path][method]["responses"])

    assert {"409", "413", "422", "429", "503"} <= codes("post", "/api/bench/jobs")
    assert {"403", "404"} <= codes("post", "/api/bench/jobs/{job_id}/cancel")
    assert "404" in codes("get", "/api/bench/jobs/{job_id}")
    assert {"404", "409", "422"} <= codes("post", "/api/drills/{drill_id}/answer")
    assert "404" in codes("post", "/api/drills/{drill_id}/reveal")
    assert "409" in codes("post", "/api/drills/profile")
    assert "404" in codes("get", "/api/drills/whiteboard/{sid}")


def test_real_refusals_match_the_documented_ones(client, schema):
    """A 422, 404 and 413 as the API answers them: each a documented status with a string detail."""
    for method, path, url, body, want in [
            ("post", "/api/layout", "/api/layout", {"layout": "(4,"}, 422),
            ("post", "/api/layout", "/api/layout", [1, 2], 422),
            ("get", "/api/drills/next", "/api/drills/next?seed=-1", None, 422),
            ("get", "/api/bench/jobs/{job_id}", "/api/bench/jobs/nope", None, 404),
            ("post", "/api/drills/{drill_id}/reveal", "/api/drills/nope/reveal", None, 404)]:
        r = client.request(method, url, json=body)
        assert r.status_code == want and str(want) in schema["paths"][path][method]["responses"], (url, r.status_code)
        assert isinstance(r.json()["detail"], str) and r.json()["detail"]
    bodies = [(m, p) for m, p, op in _operations(schema) if "requestBody" in op]
    assert len(bodies) >= 15
    for method, path in bodies:
        url = re.sub(r"\{[^}]+\}", "x1", path)
        r = client.request(method, url, content=BIG, headers={"content-type": "application/json"})
        assert r.status_code == 413 and isinstance(r.json()["detail"], str), (method, path, r.status_code)


def test_schema_is_built_once_and_is_the_served_one(app, client):
    assert app.openapi() is app.openapi()
    assert client.get("/openapi.json").json() == build_schema(app)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_reference_same_origin_assets_only(client, page):
    r = client.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert "http://" not in html and "https://" not in html and "//cdn" not in html, html
    refs = re.findall(r'(?:src|href|spec-url)="([^"]+)"', html) + re.findall(r"url: '([^']+)'", html)
    assert refs and all(ref.startswith("/") and not ref.startswith("//") for ref in refs), refs
    assert set(refs) >= ({SWAGGER_JS, SWAGGER_CSS, "/openapi.json"} if page == "/docs" else
                         {REDOC_JS_SERVED, "/openapi.json"})
    for ref in refs:
        asset = client.get(ref)
        assert asset.status_code in (200, 204), (ref, asset.status_code)
        if ref.endswith(".js"):
            assert "javascript" in asset.headers["content-type"] and len(asset.content) > 100_000, ref
        if ref.endswith(".css"):
            assert asset.headers["content-type"].startswith("text/css"), ref
    csp = r.headers["content-security-policy"]
    assert "http" not in csp and "cdn" not in csp, csp
    script_src = re.search(r"script-src ([^;]*)", csp).group(1).split()
    assert script_src[0] == "'self'" and all(s.startswith("'sha256-") for s in script_src[1:]), script_src
    inline = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(script_src) - 1 == len(inline)  # exactly the server's own inline script (Swagger UI's start)


def test_redoc_shows_its_logo_from_this_site(client):
    """ReDoc's bundle asks its CDN for a logo, which the CSP blocks: /redoc serves the bundle with that address
    turned into a mark of this site."""
    bundle = client.get(REDOC_JS_SERVED)
    assert bundle.status_code == 200 and REDOC_CDN_LOGO.encode() not in bundle.content
    assert REDOC_LOGO.encode() in bundle.content
    logo = client.get(REDOC_LOGO)
    assert logo.status_code == 200 and logo.headers["content-type"].startswith("image/svg")
