"""Property-based fuzzing of the JSON API: whatever the body, the answer is never a 5xx.

Two layers: schemathesis over /openapi.json (schema-shaped bodies), and hypothesis with CuTe-ish text
(nested tuples, swizzles, tilers, huge and negative numbers) that schema-driven data rarely reaches."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ints = st.one_of(st.integers(-3, 70), st.sampled_from([0, 1, 2, 1 << 20, 1 << 40, -(1 << 31)]))


def _tuple(depth: int) -> st.SearchStrategy[str]:
    leaf = ints.map(str)
    if depth == 0:
        return leaf
    return st.one_of(leaf, st.lists(_tuple(depth - 1), min_size=1, max_size=3).map(lambda xs: f"({','.join(xs)})"))


layouts = st.one_of(
    st.tuples(_tuple(3), _tuple(3)).map(lambda p: f"{p[0]}:{p[1]}"),
    _tuple(3),
    st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(-6, 6), _tuple(2), _tuple(2)).map(
        lambda p: f"Sw<{p[0]},{p[1]},{p[2]}> o {p[3]}:{p[4]}"),
    st.text(alphabet="()<>,:0123456789 Swo@_-[]\"", max_size=40),
)
tilers = st.one_of(layouts, st.lists(layouts, min_size=1, max_size=3).map(lambda xs: "<" + ", ".join(xs) + ">"),
                   ints.map(str))
OPS = ["composition", "coalesce", "complement", "right_inverse", "left_inverse", "logical_divide", "zipped_divide",
       "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product", "blocked_product",
       "raked_product", "bogus"]
#: Examples per property: LAYOUTLAB_FUZZ_EXAMPLES (default 40) per schemathesis operation, 2.5x that per hypothesis
#: property here; CI runs the defaults, ``LAYOUTLAB_FUZZ_EXAMPLES=2000`` is a long local run.
EXAMPLES = int(os.environ.get("LAYOUTLAB_FUZZ_EXAMPLES", "40"))
FAST = settings(max_examples=max(1, int(EXAMPLES * 2.5)), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(text=layouts)
def test_layout_never_5xx(client, text):
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code in (200, 422), (text, r.status_code, r.text[:300])


@FAST
@given(op=st.sampled_from(OPS), a=layouts, b=tilers, n=st.integers(1, 2))
def test_algebra_never_5xx(client, op, a, b, n):
    r = client.post("/api/algebra", json={"op": op, "args": [a, b][:n]})
    assert r.status_code in (200, 422), (op, a, b, r.status_code, r.text[:300])


@FAST
@given(layout=layouts, swz=st.one_of(st.none(), layouts), eb=st.sampled_from([1, 2, 4, 8, 16]),
       kind=st.sampled_from(["column", "row", "offsets", "ldmatrix", "thread_layout"]),
       index=st.one_of(ints, st.lists(ints, max_size=33)), vec=st.integers(1, 16), tl=st.one_of(st.none(), layouts))
def test_banks_never_5xx(client, layout, swz, eb, kind, index, vec, tl):
    body = {"layout": layout, "swizzle": swz, "element_bytes": eb,
            "access": {"kind": kind, "index": index, "vector": vec, "layout": tl}}
    r = client.post("/api/banks", json=body)
    assert r.status_code in (200, 422), (body, r.status_code, r.text[:300])


TV_FIELDS = ["part", "tthr", "tval", "tlayout", "ttensor", "tbox", "dmn", "dstart"]


@FAST
@given(text=layouts, q=st.sampled_from(["/", "/algebra", "/banks", "/tv", "/local"]), field=st.sampled_from(TV_FIELDS))
def test_pages_never_5xx(client, text, q, field):
    params = {"/": {"layout": text}, "/algebra": {"op": "logical_divide", "a": text, "b": "2:1"},
              "/local": {"op": "local_tile", "a": "(8,8):(8,1)", "b": "<2:1, 4:1>", "c": text},
              "/banks": {"layout": text, "access": "column:0"}, "/tv": {field: text}}[q]
    path = "/algebra" if q == "/local" else q
    target = {"part": "sectors", "tthr": "tiled", "tval": "tiled", "tlayout": "tiled"}.get(field, "hopper")
    r = client.get(path, params=params, headers={"HX-Request": "true", "HX-Target": target if q == "/tv" else "result"})
    assert r.status_code == 200, (q, text, r.status_code)


def _refused_by_design(method: str, path: str, response) -> bool:
    """A 5xx the contract names: 503 (with Retry-After) when the lab's queue is full."""
    return (method, path, response.status_code) == ("POST", "/api/bench/jobs", 503) and "queue is full" in \
        response.text and "retry-after" in response.headers


def _conformance_checks() -> list:
    """The published schema is what the API answers: the status code is one the operation documents, the body
    matches that status's schema (every refusal: ``HTTPError``, a string ``detail``), the Content-Type is the
    documented one."""
    from schemathesis.checks import content_type_conformance, response_schema_conformance, status_code_conformance

    return [status_code_conformance, response_schema_conformance, content_type_conformance]


def _fuzz_operation(operation, failures: list, examples: int) -> None:
    checks = _conformance_checks()

    @settings(max_examples=examples, deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy())
    def check(case):
        response = case.call()
        where = (operation.method, operation.path, response.status_code)
        if response.status_code >= 500 and not _refused_by_design(operation.method.upper(), operation.path, response):
            failures.append((*where, response.text[:200]))
        try:
            case.validate_response(response, checks=checks)
        except (Exception, BaseExceptionGroup) as exc:  # schemathesis' Failure / FailureGroup: what did not conform
            failures.append((*where, f"{type(exc).__name__}: {str(exc)[:400]}", response.text[:200]))

    check()


#: Schema operations that only read a fixed list or a status (no input to speak of): a few examples each.
FIXED = {"/healthz", "/api/algebra/ops", "/api/atoms", "/api/drills/kinds", "/api/bench/device", "/api/bench/kinds",
         "/api/drills/progress"}


def _schema_operations() -> list[tuple[str, str]]:
    """(method, path) of every operation /openapi.json lists: the routers' routes in the schema, and /healthz."""
    import importlib

    from app.main import ROUTERS

    ops = [("GET", "/healthz")]
    for name in ROUTERS:
        for r in importlib.import_module(name).router.routes:
            if getattr(r, "include_in_schema", False):
                ops += [(m, r.path) for m in sorted(r.methods - {"HEAD"})]
    return ops


SCHEMA_OPS = _schema_operations()


@pytest.fixture(scope="module")
def openapi_schema(app):
    schemathesis = pytest.importorskip("schemathesis")
    return schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.mark.parametrize(("method", "path"), SCHEMA_OPS, ids=[f"{m} {p}" for m, p in SCHEMA_OPS])
def test_schemathesis_openapi_conforms(openapi_schema, method, path):
    """Every operation of /openapi.json (one test each): schema-shaped bodies, path parameters and query strings
    never get a 5xx (but the queue-full 503), and every answer conforms to the published schema (status code,
    body schema, Content-Type)."""
    failures: list = []
    _fuzz_operation(openapi_schema[path][method], failures, min(EXAMPLES, 5) if path in FIXED else EXAMPLES)
    assert not failures, failures[:5]


# --------------------------------------------------------------------------- limits: nesting, length, any JSON

def _nested(depth: int) -> st.SearchStrategy[str]:
    return st.tuples(st.sampled_from("([<{"), st.integers(1, depth), st.sampled_from(["1", "2:1", "4,8", ""])).map(
        lambda p: p[0] * p[1] + p[2] + {"(": ")", "[": "]", "<": ">", "{": "}"}[p[0]] * p[1])


deep_text = st.one_of(_nested(120), st.text(alphabet="()[]<>{},:0123456789", min_size=0, max_size=400),
                      st.integers(1, 6000).map(lambda n: "(" + "1," * n + "1)"))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30))
json_values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=5),
                                                           st.dictionaries(st.text(max_size=10), kids, max_size=5)),
                           max_leaves=30)
ROUTES = ["/api/layout", "/api/algebra", "/api/banks", "/api/sectors", "/api/tiled", "/api/tma", "/api/gmma",
          "/api/svg"]


@FAST
@given(text=deep_text, op=st.sampled_from(OPS), where=st.integers(0, 3))
def test_deep_or_long_text_is_4xx_never_5xx(client, text, op, where):
    """Nested or long text anywhere a layout goes: a 200 or a 4xx with a short message, never a 5xx."""
    body = [{"layout": text}, {"op": op, "args": ["(8,8):(8,1)", text]},
            {"layout": "(8,8):(8,1)", "access": {"kind": "thread_layout", "layout": text}},
            {"tv": text, "element_bytes": 4}][where]
    path = ["/api/layout", "/api/algebra", "/api/banks", "/api/sectors"][where]
    r = client.post(path, json=body)
    assert r.status_code < 500, (path, text[:80], r.status_code)
    if r.status_code >= 400:
        assert len(r.text) < 1000, (path, len(r.text))


@FAST
@given(route=st.sampled_from(ROUTES), body=json_values)
def test_any_json_body_never_5xx(client, route, body):
    r = client.post(route, json=body)
    assert r.status_code < 500, (route, body, r.status_code, r.text[:200])
    assert r.headers.get("x-content-type-options") == "nosniff"


@FAST
@given(tv=layouts, eb=st.sampled_from([1, 2, 4, 8, 16]), vec=st.one_of(st.none(), st.integers(1, 16)))
def test_sectors_never_5xx(client, tv, eb, vec):
    r = client.post("/api/sectors", json={"tv": tv, "element_bytes": eb, "vector": vec})
    assert r.status_code in (200, 422), (tv, r.status_code, r.text[:300])


# --------------------------------------------------------------------------- pages and htmx fragments

#: Every route outside /openapi.json (the HTML pages, their htmx fragments and forms): its query parameters (GET) or
#: form fields (POST). test_every_route_is_fuzzed keeps this in step with app.routes.
PAGES: dict[tuple[str, str], list[str]] = {
    ("GET", "/"): ["layout", "colour"],
    ("GET", "/algebra"): ["op", "a", "b", "c", "shown"],
    ("GET", "/banks"): ["layout", "element_bytes", "swizzle", "access", "vector", "num", "trans", "compare"],
    ("GET", "/tv"): [],  # filled from app.routes.pages_tv.DEFAULTS
    ("GET", "/doctor"): ["preset", "tile", "element_bytes", "accesses"],
    ("GET", "/drills"): ["kind", "seed", "hint", "numbers"],
    ("GET", "/drills/progress"): [],
    ("GET", "/drills/whiteboard"): [],
    ("GET", "/drills/whiteboard/{sid}"): ["last"],
    ("POST", "/drills/answer"): ["id", "answer"],
    ("POST", "/drills/reveal"): ["id"],
    ("POST", "/drills/hint"): ["id", "level"],
    ("POST", "/drills/profile"): ["name", "class_code"],
    ("POST", "/drills/whiteboard"): ["numbers"],
    ("POST", "/drills/whiteboard/{sid}/answer"): ["id", "answer"],
    ("GET", "/lab"): ["gemm", "mine", "gpu"],
    ("GET", "/lab/class"): ["code"],
    ("POST", "/lab/class/join"): ["code"],
    ("POST", "/lab/class/instructor"): ["token"],
    ("POST", "/lab/jobs"): ["kind", "variant", "element_bytes", "rows", "cols", "pad", "swizzle", "layout", "access",
                            "index", "num", "thread_layout", "n", "tile", "dtype", "rung", "m", "k", "template"],
    ("GET", "/lab/jobs/{job_id}"): [],
    ("POST", "/lab/jobs/{job_id}/cancel"): [],
    ("GET", "/lab/history"): [],
    ("GET", "/lab/rungs/{rung}"): [],
    ("GET", "/favicon.ico"): [],
}
#: htmx fragment targets the pages answer (HX-Target); "" is the whole page.
TARGETS = ["", "result", "sectors", "tiled", "hopper", "copywalk", "mmawalk", "kernel", "tmac", "blackwell",
           "workbench"]
NOT_FUZZED = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/redoc/redoc.standalone.js", "/static"}

odd_text = st.sampled_from(["", " ", "²", "４", "-1", "0", "NaN", "inf", "1.5", "true", str(1 << 63), "9" * 400,
                            "(1048576,1048576):(1048576,1)", "Sw<3,3,3>", "(4,8):(1@1,1@0)", "<2:1, 4:1>", "none",
                            "column:0", "thread_layout:(32,1):(1,0)", "ldmatrix:0,8", "[[0,0]]", '[{"kind":"row"}]',
                            "SM80_16x8x16_F32F16F16F32_TN", "SM80_CP_ASYNC_CACHEALWAYS_16B", "composition", "gemm",
                            "smem", "transpose", "(" * 40 + ")" * 40, "\u202e", "<script>", "%00"])
field_values = st.one_of(layouts, ints.map(str), odd_text, st.text(max_size=30))


def _routes(routes) -> list:
    """Every route object of the app, through included routers."""
    out = []
    for r in routes:
        inner = getattr(r, "original_router", None)
        if inner is not None:
            out += _routes(inner.routes)
        elif hasattr(r, "path"):
            out.append(r)
    return out


def test_every_route_is_fuzzed(app):
    """Each route of app.routes is fuzzed: through /openapi.json (schemathesis) or PAGES here."""
    in_schema = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    assert in_schema == set(SCHEMA_OPS)
    routes = {(m, r.path) for r in _routes(app.router.routes) if r.path not in NOT_FUZZED
              for m in (getattr(r, "methods", None) or set()) - {"HEAD"}}
    assert len(routes) >= 50 and set(PAGES) <= routes
    assert not routes - in_schema - set(PAGES), sorted(routes - in_schema - set(PAGES))


def test_every_method_allow_lists_is_answered_and_head_is_get_without_a_body(app, client):
    """OPTIONS's ``Allow`` never lists a method the path then refuses with 405, a 405's ``Allow`` is the same list
    (it said ``GET`` where HEAD and OPTIONS were answered too), and HEAD answers every path that takes
    GET (pages, API, static files, docs) with GET's status and Content-Type and no body (RFC 9110 §9.3.2)."""
    import re

    paths = {re.sub(r"\{[^}]+\}", "x1", r.path) for r in _routes(app.router.routes)} - {"/static"}
    for path in sorted(paths | {"/static/app.css", "/api/drills/x-1/answer"}):
        allow = client.options(path).headers.get("allow", "")
        methods = [m.strip() for m in allow.split(",") if m.strip()]
        assert "OPTIONS" in methods, (path, allow)
        odd = client.request("PROPFIND", path)  # a 405 lists what OPTIONS lists (RFC 9110 15.5.6: every method taken)
        assert odd.status_code == 405 and odd.headers.get("allow") == allow, (path, allow, odd.headers.get("allow"))
        assert odd.json()["detail"].endswith(f"it takes {allow}"), (path, odd.text[:200])
        if "GET" not in methods:
            r = client.head(path)
            assert r.status_code == 405 and r.content == b"" and "HEAD" not in r.headers.get("allow", ""), path
            continue
        assert "HEAD" in methods, (path, allow)
        get, head = client.get(path, follow_redirects=False), client.head(path, follow_redirects=False)
        assert head.status_code == get.status_code and head.status_code != 405, (path, head.status_code)
        assert head.content == b"", path
        assert head.headers.get("content-type") == get.headers.get("content-type"), path
        for method in set(methods) - {"GET", "HEAD", "OPTIONS"}:
            assert client.request(method, path).status_code != 405, (method, path)


@FAST
@given(route=st.sampled_from(sorted(PAGES)), data=st.data(), target=st.sampled_from(TARGETS),
       path_arg=st.one_of(st.sampled_from(["1", "x", "algebra_op-1", "..", "%2e", "0" * 80]), st.text(max_size=20)))
def test_every_page_and_fragment_never_5xx(client, route, data, target, path_arg):
    """Any subset of a page's parameters set to anything, as a whole page or as any htmx fragment: never a 5xx
    (a refused form or query answers 4xx; an htmx fragment shows its error in the page)."""
    from app.routes.pages_tv import DEFAULTS

    method, path = route
    names = PAGES[route] or (list(DEFAULTS) if path == "/tv" else [])
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=4)) if names else []
    params = {k: data.draw(field_values, label=k) for k in chosen}
    arg = quote(path_arg, safe="")
    url = path.replace("{sid}", arg).replace("{job_id}", arg).replace("{rung}", arg)
    headers = {"HX-Request": "true", "HX-Target": target} if target else {}
    if method == "GET":
        r = client.get(url, params=params, headers=headers)
    else:
        r = client.post(url, data=params, headers=headers)
    queue_full = path == "/lab/jobs" and r.status_code == 503 and "queue is full" in r.text
    assert r.status_code < 500 or queue_full, (method, url, params, target, r.status_code, r.text[:300])
    if r.status_code >= 400 and r.headers.get("content-type", "").startswith("application/json"):
        assert isinstance(r.json().get("detail"), str) and r.json()["detail"]


@FAST
@given(rows=st.integers(-2, 300), cols=st.integers(-2, 300), n=st.integers(0, 40), colour=st.integers(-3, 70),
       mark=st.tuples(st.integers(-1, 50), st.integers(-1, 50), st.sampled_from(["acc", "dim bad", "x", ""])),
       label=st.text(max_size=70))
def test_svg_grids_that_do_not_fit_together_are_4xx(client, rows, cols, n, colour, mark, label):
    """The SVG route with parts of every size: a picture or a named 422, never a 5xx."""
    body = {"rows": rows, "cols": cols, "text": [label] * n, "palette": ["#fff", "rgb(1, 2, 3)"],
            "colour": [colour] * n, "marks": [list(mark)]}
    r = client.post("/api/svg", json=body)
    assert r.status_code in (200, 422), (body, r.status_code, r.text[:200])
    if r.status_code == 200:
        assert r.text.startswith("<svg") and rows * cols == n


# --------------------------------------------------------------------------- stride kinds and printed forms

#: The stride kinds and printed forms CONTRACT §5 / §7 name where a layout is typed (F2 elements, coordinate tensors
#: with an origin): the explorer draws them.
DRAWN = ["(8,8):(F1,F9)", "(8,(2,4)):(F1,(F8,F16))", "Sw<3,3,3> o (8,8):(F1,F9)", "ArithTuple(2,3) o (4,4):(1@0,1@1)",
         "(2,3) o (4,4):(_1@0,_1@1)", "ArithTuple(1) o (4,4):(1@0,1@1)", "ArithTuple(1,2,3) o (4,4):(1@0,1@1)",
         "ArithTuple(2,3) o ((2,2),4):((1@0,2@0),1@1)"]
HUGE = "1" + "0" * 3900  # under the 4,000-character cap of a layout field
LONG = "1" + "0" * 5000  # past Python's 4,300-digit limit on int(str): a field without the text cap (a swizzle)
#: Their hostile neighbours, each refused by a named condition (the text the 422 must hold).
NAMED = {"(4,4):(1@0,F1)": "mixes a scaled basis", "Sw<" + HUGE + ",3,3> o 8:1": "magnitude cap",
         "ArithTuple(" + HUGE + ",3) o (4,4):(1@0,1@1)": "magnitude cap", "(8,8):(F" + HUGE + ",F1)": "magnitude cap",
         "(4,4):(1@" + HUGE + ",1@0)": "magnitude cap", HUGE + ":1": "magnitude cap"}
#: Where layout text goes (a body, and the field that takes the text).
TEXT_ROUTES = [("/api/layout", {}, "layout"), ("/api/solve/linear", {}, "layout"),
               ("/api/banks", {"layout": "(32,32):(32,1)", "element_bytes": 4, "access": {"kind": "row", "index": 0}},
                "swizzle"),
               ("/api/banks", {"element_bytes": 4, "access": {"kind": "row", "index": 0}}, "layout"),
               ("/api/sectors", {"element_bytes": 2}, "tv"),
               ("/api/triton/layout", {"shape": [64, 64], "element_bits": 16}, "layout"),
               *[("/api/algebra", {"op": op, "args": ["?", *rest]}, "args.0")
                 for op, rest in [("coalesce", []), ("composition", ["(2,2):(1,2)"]), ("complement", ["64"]),
                                  ("left_inverse", []), ("right_inverse", []), ("logical_divide", ["<2:1, 2:1>"]),
                                  ("nullspace", [])]],
               ("/api/algebra", {"op": "composition", "args": ["(8,8):(8,1)", "?"]}, "args.1")]


def test_the_explorer_draws_f2_strides_and_coordinate_tensors(client):
    for text in DRAWN:
        r = client.post("/api/layout", json={"layout": text})
        assert r.status_code == 200 and r.json()["table"]["rows"] > 0, (text, r.status_code, r.text[:300])
        page = client.get("/", params={"layout": text})
        assert page.status_code == 200 and 'class="msg error"' not in page.text, text
    table = client.post("/api/layout", json={"layout": "ArithTuple(2,3) o (4,4):(1@0,1@1)"}).json()["table"]
    assert table["offsets"][1][2] == "(3,5)"  # origin + L(1, 2)
    assert client.post("/api/layout", json={"layout": "(8,8):(F1,F9)"}).json()["table"]["offsets"][1][1] == 1 ^ 9


@pytest.mark.parametrize(("route", "body", "field"), TEXT_ROUTES, ids=[f"{r} {f}" for r, _, f in TEXT_ROUTES])
def test_every_stride_kind_and_huge_integer_is_drawn_or_refused_by_name(client, route, body, field):
    """Each input of DRAWN and NAMED (and a tiler where a layout goes) in each field that takes layout text: a 200 or
    a 422 naming its condition, never the guard's "cannot evaluate this input" (an engine error reaching the
    boundary: app.services.guard logs those as gaps)."""
    for text in [*DRAWN, *NAMED, "<2:1, 4:1>", "Sw<3,3,3>", f"Sw<{LONG},3,3>",
                 f"ArithTuple({LONG},3) o (4,4):(1@0,1@1)",
                 f"Sw<3,3,3> o (2,3) o (4,4):(1@0,1@{LONG})",
                 f"#ttg.blocked<{{sizePerThread = [{LONG}, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                 "order = [1, 0]}>"]:
        b = json.loads(json.dumps(body))
        if field.startswith("args."):
            b["args"][int(field[-1])] = text
        else:
            b[field] = text
        r = client.post(route, json=b)
        assert r.status_code in (200, 422), (route, field, text[:60], r.status_code, r.text[:300])
        detail = r.json().get("detail", "") if r.status_code == 422 else ""
        assert "cannot evaluate this input" not in detail, (route, field, text[:60], detail)
        if text in NAMED and route == "/api/layout":
            assert NAMED[text] in detail, (text[:60], detail)


F2_BIG = ["(1048576):(F1)", "(1048576,2):(1,F1)", "(1024,1024):(F1,F1024)", "Sw<3,3,3> o (1048576):(F1)"]


@pytest.mark.parametrize("text", F2_BIG)
def test_big_f2_layouts_are_estimated_before_the_work(client, text):
    """F2-strided layouts of 2^20 cells (their cosize took 12 s enumerated, a composition's never-wrong check as
    long) in the explorer, the linear-layout doctor and every op: a 200 or a 422 naming a cap, never the CPU budget's
    interruption, which would mean the work started before its estimate."""
    from app.services.algebra_ops import COMPOSING

    bodies = [("/api/layout", {"layout": text}), ("/api/solve/linear", {"layout": text})]
    bodies += [("/api/algebra", {"op": op, "args": args}) for op in sorted(COMPOSING | {"coalesce", "complement",
                                                                                         "logical_product"})
               for args in (["(4,8):(1,4)", text], [text, "2"], [text, text])]
    for path, body in bodies:
        r = client.post(path, json=body)
        assert r.status_code in (200, 422), (path, body, r.status_code)
        assert "work budget" not in r.text, (path, body, r.text[:200])
    r = client.post("/api/layout", json={"layout": text})
    if "(1,F1)" in text:  # an int stride beside F2 ones past 2^20 cells: no cosize without enumerating, named
        assert r.status_code == 422 and "over the 2^20" in r.json()["detail"], r.text[:300]
    else:
        assert r.json()["cosize"] == 1 << 20, r.text[:300]
