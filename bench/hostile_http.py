"""A hostile client against a running server: every route of the app, every method, odd bodies, queries and headers.

    python bench/hostile_http.py --seeds 9600-9609 --requests 6000      # ~60,000 requests, a server of its own
    python bench/hostile_http.py --url http://127.0.0.1:8000 --seeds 9600 --requests 500

The routes come from the app's own router (``app.budget.api_routes(create_app().routes)``, the docs and the static
mount), the JSON bodies from ``/openapi.json``'s schemas; nothing is a hand-made list of routes, so a route added
later is fuzzed too. Each seed draws its requests from families: a field of a good body replaced by a hostile value
(numbers past 2^63 and 10^400, NaN, lone surrogates, Unicode digits, 200 kB strings, deep nesting), malformed or
odd JSON bytes, odd content types and charsets, hostile query strings and path parameters, every method on every
route, header floods (many, long, duplicated, conflicting framing), htmx form posts, slow clients that send a byte
at a time, and concurrent bursts; and, in every query parameter, form field and JSON leaf of every route, numbers
as text (past 2^63 and 1e308, -0, NaN, full-width digits, U+2212) and layout notations past the caps (nested 1000
deep, 100,000 characters, lookalike characters), duplicated query keys, HEAD and OPTIONS on every route, the pages'
permalinks with garbage, Range headers, broken percent-encoding, and lab jobs of minutes (each must be refused by
the estimate before it is queued) beside quick ones (which must not be). Raw sockets, so that framing can be wrong
on purpose.

The promise checked on every answer: a 5xx, no answer, a hang (past ``--timeout``) or a JSON 4xx without a
``detail`` that says something is a failure; a known-good request sent on the same connection after a hostile one
must get the right answer (no desync), and valid layouts and ops sent with odd framing must match the algebra run
here. At the end, two probes: a chunked body that declares 2 MB (413 at once) and a Content-Length that promises 1000
bytes and sends 10 (408 after the body timeout, 10 s). ``--tree`` serves another checkout (a baseline) for a before /
after in one sitting. Writes bench/results/hostile_http_<time>.json: requests, seeds, statuses, failures with their
requests, the slowest answers and the distinct 4xx details.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote as _quote

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
_spec = importlib.util.spec_from_file_location("_server", ROOT / "bench" / "_server.py")
_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_server)

import algebra as A  # noqa: E402

HOST = "127.0.0.1"


def quote(text: str, safe: str = "/") -> str:
    return _quote(text, safe=safe, errors="surrogatepass")  # lone surrogates go out as their (invalid) UTF-8 bytes

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "get", "X" * 40]
ODD_STRINGS = ["", " ", "\x00", "\ud800", "\udfff\ud800", "４", "٣", "(٤,٨):(٨,١)", "（4,8）:(8,1)",
               "\u202e(4,8):(8,1)", "(4,8):(8,1)\x00", "a\r\nSet-Cookie: x=1", "<script>alert(1)</script>", "{{7*7}}",
               "{% raw %}", "%s%n",
               "../../etc/passwd", "x" * 5000, "(" * 5000, "(4,8):(8,1)" + " " * 4000, "😀" * 2000, "e\u0301" * 300,
               "\ufeff(4,8):(8,1)", "NaN", "-0", "1e400", "9" * 5000, "0x10", "1_000", "Sw<3,3,3> o " * 300,
               "(2,2):(1@0,1@1)", "16:F1", "(8,8):(F1,F9)", "<2:1, 4:2>", "SM80_16x8x16_F32F16F16F32_TN",
               "#ttg.blocked<{" * 200, "(" * 33 + "2" + ")" * 33, "(1048576,1048576):(1048576,1)", "x" * 200_000]
ODD_NUMBERS = [0, -1, 1, 3, 2**31, 2**63, 2**64 + 1, -(2**63) - 1, 10**30, 10**400, -(10**400), 1.5, 1e308, -0.0,
               float("nan"), float("inf"), 5e-324]
ODD_VALUES: list[Any] = [None, True, False, [], {}, [1] * 50_000, {"a": {"b": {"c": 1}}}, ["(4,8):(8,1)"] * 1000,
                         {str(i): i for i in range(5000)}, *ODD_NUMBERS, *ODD_STRINGS]
JSON_BYTES = [b"", b" ", b"null", b"[]", b"{", b'{"layout": "(4,8):(8,1)"', b'{"layout": "(4,8):(8,1)"}junk',
              b'\xef\xbb\xbf{"layout": "(4,8):(8,1)"}', b'{"layout": "\xff\xfe"}', b"\xff\xfe\x00{", b'{"a":1,"a":2}',
              b'{"layout": 1e999}', b'{"layout": NaN}', b'{"layout": Infinity}', b"[" * 400_000, b'{"x":' * 150_000,
              b"1" * 900_000, b'"' + b"\\u0000" * 100_000 + b'"', b'{"layout": "\\ud800"}', b"\x00" * 1000,
              b'{"layout": "(4,8):(8,1)"}\x00', b"{'layout': '(4,8):(8,1)'}", b'{"layout": "(4,8):(8,1)",}']
CONTENT_TYPES = ["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                 "multipart/form-data; boundary=x", "application/json; charset=utf-16",
                 "application/json; charset=latin-1", "application/json; charset=bogus", "application/merge-patch+json",
                 "application/xml", "", "*/*",
                 "application/json; " + "a=b; " * 500, "text/html", "application/octet-stream", "image/svg+xml"]
HTMX_TARGETS = ["", "result", "sectors", "tiled", "hopper", "copywalk", "mmawalk", "kernel", "tmac", "blackwell",
                "workbench", "x" * 300, "../", "\u202e", "#result"]
TV_PARAMS = ("atom", "operand", "bits", "cw_thr", "cw_src", "cw_dst", "cw_t", "mw_atom", "mw_layout", "mw_tile",
             "mw_t", "tthr", "tval", "tlayout", "ttensor", "tbox", "hspan")
PATH_VALUES = ["offsets-1", "banks-3", "1", "0", "-1", "x" * 3000, "ü", "%00", "%2e%2e", "..", "%2F", "a%20b",
               "99999999999999999999999", "SM80_16x8x16_F32F16F16F32_TN", "SM75_U32x4_LDSM_N", "%ff", "😀", "\u202e",
               "abc", "1e9", "layout_stats-1", "algebra_op-5"]
#: Paths served outside the router's API routes.
EXTRA_PATHS = ["/openapi.json", "/docs", "/redoc", "/redoc/redoc.standalone.js", "/static/vendor/htmx.min.js",
               "/static/../app/main.py", "/static/%2e%2e/app/main.py", "/static/", "/static/nope.css", "/nope",
               "//api//layout", "/api/layout/", "/api/layout/.", "/%00", "/" + "a" * 9000]
#: Numbers as text, for every form field and query parameter: past 2^63 and 10^308, signed zero, NaN and infinity
#: spelled several ways, other bases, full-width and Arabic-Indic digits, U+2212 MINUS SIGN, a 400-digit integer.
NUMBER_TEXTS = ["9223372036854775808", "18446744073709551617", "-9223372036854775809", "1e308", "-1e308", "1e309",
                "-0", "-0.0", "+0", "NaN", "nan", "-NaN", "Infinity", "-inf", "0x7fffffff", "0b101", "1_000", "1e-400",
                "５１２", "٣٢", "\u22124", "\u2212" + "1", "\u00bd", "4.0", " 4 ", "4\x00", "9" * 400]
#: Layout notations past the caps: nested 1000 deep (shape, stride, or both), 100,000 characters long, and lookalikes
#: of ASCII digits, minus, colon and parentheses.
DEEP_SHAPE = "(" * 1000 + "4" + ")" * 1000
NOTATIONS = [DEEP_SHAPE, DEEP_SHAPE + ":" + "(" * 1000 + "1" + ")" * 1000, "(4,8):" + DEEP_SHAPE,
             "Sw<3,3,3> o " + DEEP_SHAPE, "(" + ",".join(["2"] * 50_000) + ")", "(4,(2,4)):(2,(1,8))" * 5300,
             "(" * 100_000, "<2:1, " * 20_000 + ">", "(１６,８):(８,１)", "(16,8):(\u22128,1)", "(16,8)\uff1a(8,1)",
             "\uff0816,8\uff09:(8,1)", "(٤,٨):(١,٤)", "(16,8):(8,1)\u200b", "\u00a0(16,8):(8,1)",
             "Sw\u27e83,3,3\u27e9 o (8,64):(64,1)",
             "(16,8):(8,1)" + ")" * 1000, "Sw<" * 1000, "(2,2):(1@" + "9" * 30 + ",1@1)", "(2,2):(1@-1,1@1)"]
#: Range headers, well-formed and not.
RANGES = ["bytes=0-10", "bytes=0-10,5-1", "bytes=-0", "bytes=99999999999999999999999-", "bytes=5-1", "bytes=0-",
          "bytes=" + "0-0," * 400, "items=0-1", "bytes", "bytes=-", "bytes=a-b", "bytes=0-10;q=1", "bytes=-9" * 3]
#: Paths with broken percent-encoding (sent as is: no quoting on the way out).
BAD_PERCENT = ["/%", "/%zz", "/%c3%28", "/%ff%fe", "/api/atoms/%", "/api/atoms/%c3%28", "/api/atoms/SM80%ZZ",
               "/static/%ff", "/static/vendor/%", "/lab/jobs/%zz", "/api/bench/jobs/%e2%82", "/drills/whiteboard/%",
               "/api/drills/%25%/answer", "/%2e%2e/%2e%2e/etc/passwd", "/?layout=%", "/?layout=%zz",
               "/algebra?op=%c3%28&a=%ff", "/banks?access=column%3A%zz", "/tv?atom=%", "/drills?kind=%&seed=%ff",
               "/api/drills/next?seed=%", "/api/bench/jobs?limit=%2", "/doctor?tile=%E2%88%92"]
#: Permalinks of the pages (CONTRACT §2) with garbage for one of their values.
PERMALINKS = ["/?layout={}", "/algebra?op={}&a=(6,2):(8,2)&b=(4,3):(3,1)", "/algebra?op=composition&a={}&b=(4,3):(3,1)",
              "/algebra?op=composition&a=(6,2):(8,2)&b={}", "/banks?layout={}&element_bytes=2&access=column:0",
              "/banks?layout=(8,64):(64,1)&element_bytes={}&swizzle=Sw<3,3,3>&access=column:0",
              "/banks?layout=(8,64):(64,1)&element_bytes=2&swizzle={}&access=column:0",
              "/banks?layout=(8,64):(64,1)&element_bytes=2&access={}", "/tv?atom={}&operand=C",
              "/tv?atom=SM80_16x8x16_F32F16F16F32_TN&operand={}", "/drills?kind={}&seed=1",
              "/drills?kind=offsets&seed={}",
              "/doctor?tile={}&element_bytes=2", "/lab?gemm={}", "/api/drills/next?kind=offsets&seed={}",
              "/api/atoms/SM80_16x8x16_F32F16F16F32_TN?element_bits={}", "/api/bench/jobs?limit={}",
              "/api/solve/linear/atom?name=SM80_16x8x16_F32F16F16F32_TN&operand=A&element_bits={}"]
#: Lab jobs that take minutes of GPU time: the smem kernel (gpu_worker/kernels/smem.cu) runs runs + 4 launches, each
#: of 8-warp blocks filling every SM (64 warps for a 4 kB or 16 kB tile), every warp issuing iterations x nacc
#: accesses, here column reads of 4-byte words 32 rows apart (32-way: 32 wavefronts each), and the pipe serves one
#: wavefront per clock per SM: 204 x 64 x 65536 x 32 x 32 clocks = 7.4 min at 1.98 GHz (104 launches: 3.8 min);
#: the same kernel at nacc 16 and 1024 iterations took 16.97 ms a launch on an H200
#: (bench/results/smem_H200_2026-11-30.json).
#: Each must be refused by the lab's estimate (a 422 that names it), never queued (202) or refused only for want of
#: a GPU worker (409: validation passed).
SLOW_JOBS = [("smem", {"rows": 32, "cols": 32, "element_bytes": 4, "access": {"kind": "column", "index": 0},
                       "nacc": 32, "iterations": 65536, "runs": 200}),
             ("smem", {"rows": 64, "cols": 64, "element_bytes": 4, "access": {"kind": "column", "index": 0},
                       "nacc": 32, "iterations": 65536, "runs": 100})]
#: Jobs well under a minute that the estimate must let through: the defaults; conflict-free row reads at the same
#: iterations and runs (one wavefront each: 14 s at 1.98 GHz); GEMM rung 1 at the largest size with the default
#: timing knobs (24 runs of 8.8 TFLOP at about 46 TFLOP/s: 5 s).
QUICK_JOBS = [("smem", {}), ("gemm", {}), ("transpose", {"n": 4096}),
              ("smem", {"access": {"kind": "row", "index": 0}, "nacc": 32, "iterations": 65536, "runs": 200}),
              ("gemm", {"rung": 1, "m": 16384, "n": 16384, "k": 16384})]


# --------------------------------------------------------------------------- the wire

class Answer:
    __slots__ = ("status", "headers", "body", "error", "wall", "closed")

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[str, list[str]] = {}
        self.body = b""
        self.error: str | None = None
        self.wall = 0.0
        self.closed = False


async def read_answer(reader: asyncio.StreamReader, head_only: bool) -> Answer:
    ans = Answer()
    while True:
        line = await reader.readline()
        if not line:
            ans.error = "closed without an answer"
            return ans
        parts = line.split(b" ", 2)
        ans.status = int(parts[1])
        ans.headers = {}
        while (h := await reader.readline()) not in (b"\r\n", b""):
            k, _, v = h.decode("latin-1").partition(":")
            ans.headers.setdefault(k.strip().lower(), []).append(v.strip())
        if ans.status >= 200:
            break
    if head_only or ans.status in (204, 304):
        pass
    elif "chunked" in ",".join(ans.headers.get("transfer-encoding", [])).lower():
        chunks = []
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
                break
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        ans.body = b"".join(chunks)
    elif "content-length" in ans.headers:
        ans.body = await reader.readexactly(int(ans.headers["content-length"][0]))
    else:
        ans.body = await reader.read()
    ans.closed = "close" in ",".join(ans.headers.get("connection", [])).lower()
    return ans


class Conn:
    """One keep-alive connection; ``exchange`` sends raw bytes (or timed pieces) and reads one answer."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port, limit=1 << 24)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def exchange(self, pieces: list[tuple[bytes, float]], head_only: bool, timeout: float) -> Answer:
        if self.writer is None:
            await self.open()
        t0 = time.monotonic()
        try:
            async def go() -> Answer:
                for data, pause in pieces:
                    if pause:
                        await asyncio.sleep(pause)
                    self.writer.write(data)
                    try:
                        await self.writer.drain()
                    except (ConnectionError, OSError):
                        break  # the server stopped reading (a refusal): its answer may still be there
                return await read_answer(self.reader, head_only)
            ans = await asyncio.wait_for(go(), timeout)
        except TimeoutError:
            ans = Answer()
            ans.error = f"no answer within {timeout:g} s"
        except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError, IndexError) as exc:
            ans = Answer()
            ans.error = f"{type(exc).__name__}: {exc}"[:200]
        ans.wall = time.monotonic() - t0
        if ans.error or ans.closed:
            self.close()
        return ans


def build(method: str, target: str, headers: list[tuple[str, str]] | list[tuple[bytes, bytes]],
          body: bytes | None = None, host: str | None = None, chunked: bool = False) -> bytes:
    out = [f"{method} {target} HTTP/1.1\r\n".encode("utf-8", "surrogateescape")]
    names = {(k.decode("latin-1") if isinstance(k, bytes) else k).lower() for k, _ in headers}
    if host is not None and "host" not in names:
        out.append(f"Host: {host}\r\n".encode())
    for k, v in headers:
        k = k if isinstance(k, bytes) else k.encode("latin-1", "replace")
        v = v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass")
        out.append(k + b": " + v + b"\r\n")
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        if chunked:
            out.append(b"Transfer-Encoding: chunked\r\n")
        else:
            out.append(f"Content-Length: {len(body)}\r\n".encode())
    out.append(b"\r\n")
    if body is not None:
        if chunked:
            out.append(b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 4096]), body[i:i + 4096])
                                for i in range(0, len(body), 4096)) + b"0\r\n\r\n")
        else:
            out.append(body)
    return b"".join(out)


# --------------------------------------------------------------------------- the routes and good bodies

def routes() -> tuple[list[dict], dict]:
    """Every route of the app: method, path, query names, form fields, JSON body schema (from the router and
    /openapi.json)."""
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp(prefix="hostile-routes-"))
    from app.budget import api_routes
    from app.main import create_app

    app = create_app(embedded_worker=False)
    spec = app.openapi()
    out = []
    for r in api_routes(app.routes):
        for m in sorted(r.methods or ()):
            body = spec["paths"].get(r.path, {}).get(m.lower(), {}).get("requestBody", {})
            schema = body.get("content", {}).get("application/json", {}).get("schema")
            form = [p.name for p in r.dependant.body_params if type(p.field_info).__name__ == "Form"]
            if r.path == "/lab/jobs":
                form = ["kind", "variant", "element_bytes", "rows", "cols", "pad", "swizzle", "layout", "access",
                        "index", "num", "thread_layout", "n", "tile", "dtype", "rung", "m", "k", "template"]
            query = [p.name for p in r.dependant.query_params] + (list(TV_PARAMS) if r.path == "/tv" else [])
            out.append({"method": m, "path": r.path, "query": query, "form": form, "schema": schema})
    return out, spec


def example(schema: Any, spec: dict) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    if not isinstance(schema, dict):
        return None
    if "anyOf" in schema:
        schema = next((s for s in schema["anyOf"] if s.get("type") != "null"), schema["anyOf"][0])
        return example(schema, spec)
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    t = schema.get("type")
    if t == "object":
        return {k: example(v, spec) for k, v in schema.get("properties", {}).items()}
    if t == "array":
        return [example(schema.get("items", {}), spec)] * max(1, schema.get("minItems", 1))
    if t in ("integer", "number"):
        return int(schema.get("minimum", 1))
    if t == "boolean":
        return False
    return schema.get("enum", ["(8,8):(8,1)"])[0]


#: Better starting points than the schema's own for a few routes (so a mutation reaches past validation).
GOOD = {
    "/api/banks": {"layout": "(32,32):(32,1)", "swizzle": None, "element_bytes": 4,
                   "access": {"kind": "column", "index": 5}},
    "/api/sectors": {"tv": "((16,2),4):((1,16),32)", "element_bytes": 4, "vector": 1},
    "/api/svg": {"rows": 4, "cols": 8, "text": ["0"] * 32},
    "/api/solve/smem": {"element_bytes": 2, "tile": "(64,64):(64,1)",
                        "accesses": [{"name": "ldmatrix.x4", "kind": "ldmatrix", "index": [0, 0], "num": 4}]},
    "/api/solve/access": {"element_bytes": 2, "tile": "(64,64):(64,1)",
                          "access": {"kind": "row", "index": 0}, "index": 0},
    "/api/solve/descriptor": {"descriptor": "0x4000004000010000", "element_bytes": 2, "major": "K"},
    "/api/solve/tma": {"global_dim": [4096, 4096], "box_dim": [64, 64], "element_bytes": 2},
    "/api/drills/whiteboard": {},
    "/api/bench/jobs": {"kind": "compile_only", "params": {}},
    "/api/drills/{drill_id}/answer": {"answer": "3"},
    "/api/drills/profile": {"name": "ann"},
}


# --------------------------------------------------------------------------- the oracle: valid inputs, known answers

def random_layout(rng: random.Random) -> str:
    def shape(d: int) -> Any:
        if d == 0 or rng.random() < 0.6:
            return rng.choice([1, 2, 3, 4, 8])
        return tuple(shape(d - 1) for _ in range(rng.randint(1, 3)))
    s = tuple(shape(2) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.5:
        return str(A.Layout(s))
    def stride(x: Any) -> Any:
        return tuple(stride(y) for y in x) if isinstance(x, tuple) else rng.choice([0, 1, 2, 4, 8, 16, -1])
    return str(A.Layout(s, stride(s)))


def oracle_layout(text: str) -> dict:
    L = A.parse(text)
    return {"size": A.size(L), "cosize": A.cosize(L), "rank": A.rank(L), "depth": A.depth(L)}


ORACLE_OPS = ["composition", "coalesce", "complement", "logical_divide", "logical_product", "right_inverse"]


def oracle_algebra(op: str, args: list[str]) -> tuple[int, str | None]:
    layouts = [A.parse(a) for a in args]
    try:
        return 200, str(getattr(A, op)(*layouts))
    except A.LayoutError:
        return 422, None


# --------------------------------------------------------------------------- the families

class Fuzzer:
    def __init__(self, seed: int, port: int, table: list[dict], spec: dict, timeout: float) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.port = port
        self.host = f"{HOST}:{port}"
        self.origin = f"http://{HOST}:{port}"
        self.table = table
        self.spec = spec
        self.timeout = timeout
        self.json_routes = [r for r in table if r["schema"] is not None]
        self.form_routes = [r for r in table if r["form"] or r["path"] == "/lab/jobs"]
        self.get_routes = [r for r in table if r["method"] == "GET"]

    # ----- pieces
    def fill(self, path: str, hostile: bool = False) -> str:
        out = path
        while "{" in out:
            a, _, rest = out.partition("{")
            name, _, b = rest.partition("}")
            value = self.rng.choice(PATH_VALUES) if hostile else {
                "drill_id": "offsets-1", "name": "SM80_16x8x16_F32F16F16F32_TN", "job_id": "1", "code": "abc",
                "sid": "x", "rung": "3"}.get(name, "1")
            out = a + (value if value.startswith("%") else quote(value, safe="")) + b
        return out

    def odd_value(self) -> Any:
        return self.rng.choice(ODD_VALUES)

    def odd_text(self) -> str:
        v = self.rng.choice(ODD_STRINGS + [str(n) for n in ODD_NUMBERS] + [random_layout(self.rng)])
        return v if len(v) < 6000 else v[:6000]

    def good_body(self, route: dict) -> Any:
        path = route["path"]
        return json.loads(json.dumps(GOOD[path])) if path in GOOD else example(route["schema"], self.spec)

    def mutate(self, value: Any, depth: int = 0) -> Any:
        """Replace one leaf or field of ``value`` by a hostile value."""
        if isinstance(value, dict) and value and depth < 4 and self.rng.random() < 0.85:
            key = self.rng.choice(list(value))
            out = dict(value)
            if self.rng.random() < 0.1:
                out.pop(key)
            elif self.rng.random() < 0.1:
                out[self.rng.choice(["extra", "__proto__", "", "\ud800", key.upper()])] = self.odd_value()
            else:
                out[key] = self.mutate(value[key], depth + 1)
            return out
        if isinstance(value, list) and value and depth < 4 and self.rng.random() < 0.7:
            out = list(value)
            i = self.rng.randrange(len(out))
            out[i] = self.mutate(out[i], depth + 1)
            return out
        return self.odd_value()

    def dumps(self, value: Any) -> bytes:
        text = json.dumps(value, allow_nan=True)
        return text.encode("utf-8", "surrogatepass")

    def deep(self, n: int) -> bytes:
        """A layout nested ``n`` levels deep in lists and objects (written out: json.dumps recurses)."""
        opens = [self.rng.random() < 0.5 for _ in range(n)]
        return ("".join("[" if o else '{"a":' for o in opens) + '"(4,8):(8,1)"'
                + "".join("]" if o else "}" for o in reversed(opens))).encode()

    def headers(self, extra: list | None = None) -> list:
        h: list = [("Accept", self.rng.choice(["*/*", "application/json", "text/html", "text/html;q=bogus", ""]))]
        if self.rng.random() < 0.3:
            h.append(("Origin", self.origin))
        return h + (extra or [])

    # ----- families: each returns (label, pieces, head_only, checks)
    def fam_json_field(self) -> tuple:
        r = self.rng.choice(self.json_routes)
        body = self.mutate(self.good_body(r))
        return (f"json field {r['path']}", [(build(r["method"], self.fill(r["path"]), self.headers(
            [("Content-Type", "application/json")]), self.dumps(body), self.host), 0)], False, {"api": True})

    def fam_json_whole(self) -> tuple:
        r = self.rng.choice(self.json_routes)
        pick = self.rng.random()
        if pick < 0.4:
            raw = self.rng.choice(JSON_BYTES)
        elif pick < 0.6:
            raw = self.deep(self.rng.choice([50, 500, 5000, 50_000]))
        else:
            raw = self.dumps(self.odd_value())
        if len(raw) > 1_100_000:
            raw = raw[:1_100_000]
        return (f"json whole {r['path']}", [(build(r["method"], self.fill(r["path"]), self.headers(
            [("Content-Type", "application/json")]), raw, self.host, chunked=self.rng.random() < 0.2), 0)], False,
            {"api": True})

    def fam_content_type(self) -> tuple:
        r = self.rng.choice(self.json_routes)
        ct = self.rng.choice(CONTENT_TYPES)
        body = self.dumps(self.good_body(r))
        if "utf-16" in ct and self.rng.random() < 0.5:
            body = body.decode().encode("utf-16")
        h = [("Content-Type", ct)] if ct else []
        if self.rng.random() < 0.2:
            h.append(("Content-Encoding", self.rng.choice(["gzip", "br", "identity", "x"])))
        return (f"content-type {r['path']} {ct[:40]!r}", [(build(r["method"], self.fill(r["path"]),
                self.headers(h), body, self.host), 0)], False, {"api": True})

    def fam_query(self) -> tuple:
        r = self.rng.choice(self.get_routes)
        names = r["query"] or ["x"]
        parts = []
        for _ in range(self.rng.randint(1, 6)):
            name = self.rng.choice(names + ["", "x", "layout", "\u00fc"])
            pick = self.rng.random()
            if pick < 0.15:
                parts.append(quote(name) + "=" + self.rng.choice(["%", "%zz", "%c3%28", "%ff", "%00", "%%", "%u0041"]))
            elif pick < 0.25:
                parts.append(quote(name))
            else:
                parts.append(quote(name) + "=" + quote(self.odd_text(), safe=""))
        sep = self.rng.choice(["&", "&", "&", ";", "&&"])
        target = self.fill(r["path"], hostile=self.rng.random() < 0.3) + "?" + sep.join(parts)
        h = self.headers()
        if self.rng.random() < 0.3:
            h += [("HX-Request", "true"), ("HX-Target", self.rng.choice(HTMX_TARGETS))]
        return (f"query {r['path']}", [(build("GET", target, h, None, self.host), 0)], False, {})

    def fam_form(self) -> tuple:
        r = self.rng.choice(self.form_routes)
        fields = r["form"] or ["x"]
        pairs = []
        for name in fields:
            if self.rng.random() < 0.7:
                pairs.append((name, self.odd_text() if self.rng.random() < 0.5 else random_layout(self.rng)))
        if self.rng.random() < 0.2:
            pairs += [(self.rng.choice(fields), self.odd_text()) for _ in range(self.rng.randint(1, 50))]
        body = "&".join(quote(k, safe="") + "=" + quote(v, safe="") for k, v in pairs).encode()
        ct = self.rng.choice(["application/x-www-form-urlencoded"] * 4 + ["multipart/form-data; boundary=zz",
                                                                             "application/json", "text/plain"])
        if ct.startswith("multipart") and self.rng.random() < 0.7:
            body = b"".join(b"--zz\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                            % (k.encode("utf-8", "surrogatepass"), v.encode("utf-8", "surrogatepass"))
                            for k, v in pairs) + b"--zz--\r\n"
        h = [("Content-Type", ct), ("HX-Request", "true"), ("HX-Target", self.rng.choice(HTMX_TARGETS))]
        if self.rng.random() < 0.8:
            h.append(("Origin", self.rng.choice([self.origin] * 5 + ["null", "http://evil.example", ""])))
        return (f"form {r['path']}", [(build("POST", self.fill(r["path"], hostile=self.rng.random() < 0.3),
                h, body, self.host), 0)], False, {})

    def fam_method(self) -> tuple:
        path = self.rng.choice([r["path"] for r in self.table] + EXTRA_PATHS)
        m = self.rng.choice(METHODS)
        body = None
        if m in ("POST", "PUT", "PATCH", "DELETE") and self.rng.random() < 0.5:
            body = b'{"layout": "(4,8):(8,1)"}'
        h = self.headers([("Content-Type", "application/json")] if body else [])
        return (f"method {m[:10]} {path[:60]}", [(build(m, self.fill(path, hostile=self.rng.random() < 0.3), h,
                body, self.host), 0)], m.upper() == "HEAD", {})

    def fam_headers(self) -> tuple:
        r = self.rng.choice(self.table)
        target = self.fill(r["path"])
        body = self.dumps(self.good_body(r)) if r["schema"] else None
        h: list = [("Content-Type", "application/json")] if body is not None else []
        kind = self.rng.choice(["many", "long", "dup-host", "no-host", "bad-host", "cl", "te", "cookie", "odd",
                                "expect", "xff"])
        host: str | None = self.host
        if kind == "many":
            h += [(f"X-H{i}", "v" * self.rng.randint(0, 80)) for i in range(self.rng.choice([50, 95, 99, 101, 150]))]
        elif kind == "long":
            h.append(("X-Long", "a" * self.rng.choice([1000, 8000, 8180, 8191, 9000, 60_000])))
        elif kind == "dup-host":
            h += [("Host", self.host), ("Host", self.rng.choice([self.host, "evil.example", "localhost"]))]
            host = None
        elif kind == "no-host":
            host = None
        elif kind == "bad-host":
            host = self.rng.choice(["evil.example", "", "127.0.0.1:1", "[::1]", "a" * 300, "127.0.0.1\u00a0",
                                    "127.0.0.1.", "LOCALHOST", "localhost:99999", "user@127.0.0.1"])
        elif kind == "cl" and body is not None:
            n = len(body)
            h += self.rng.choice([[("Content-Length", "-1")], [("Content-Length", f"{n}, {n}")],
                                  [("Content-Length", str(n)), ("Content-Length", str(n + 1))],
                                  [("Content-Length", f" {n}")], [("Content-Length", "1e3")],
                                  [("Content-Length", "9" * 30)], [("Content-Length", str(n)),
                                                                   ("Transfer-Encoding", "chunked")],
                                  [("Content-Length", "0x10")], [("Content-Length", "+" + str(n))]])
        elif kind == "te" and body is not None:
            h.append(("Transfer-Encoding", self.rng.choice(["gzip, chunked", "chunked, chunked", "identity", "x",
                                                             "chunked, gzip", "CHUNKED", " chunked"])))
        elif kind == "cookie":
            h.append(("Cookie", self.rng.choice(["layoutlab_client=" + "a" * 4000, "layoutlab_client=\u00fc",
                                                 "; ".join(f"c{i}=v" for i in range(300)),
                                                 "layoutlab_client=1; layoutlab_client=2", "=;=;", "a",
                                                 "layoutlab_learner=../../x", "layoutlab_learner=" + "%" * 100])))
        elif kind == "odd":
            h.append(self.rng.choice([(b"X Y", b"1"), (b"X-A", b"a\x00b"), (b"X-A", b"\xff\xfe"), (b"X-A", b"a\rb"),
                                      (b":authority", b"x"), (b"X-A", b" folded\r\n continued"), (b"", b"x"),
                                      (b"Range", b"bytes=0-10,5-1"), (b"If-None-Match", b'"' + b"x" * 500),
                                      (b"Authorization", b"Bearer " + b"\xff" * 100),
                                      (b"Accept-Encoding", b"gzip;q=NaN"), (b"HX-Current-URL", b"javascript:1")]))
        elif kind == "expect":
            h.append(("Expect", self.rng.choice(["100-continue", "nope", "100-continue, x"])))
        elif kind == "xff":
            h += [("X-Forwarded-For", self.rng.choice(["1.2.3.4", "junk", "::1, 10.0.0.1", "a" * 500])),
                  ("X-Forwarded-Proto", self.rng.choice(["https", "gopher", ""])), ("Forwarded", "for=\"[::1]\"")]
        method = r["method"] if body is not None or r["method"] == "GET" else "GET"
        raw = build(method, target, h, body if method != "GET" else None, host)
        return (f"headers {kind} {r['path']}", [(raw, 0)], False, {})

    def fam_slow(self) -> tuple:
        r = self.rng.choice(self.json_routes)
        raw = build("POST", self.fill(r["path"]), self.headers([("Content-Type", "application/json")]),
                    self.dumps(self.good_body(r)), self.host)
        step = self.rng.choice([1, 7, 64])
        pieces = [(raw[i:i + step], 0.02 if i else 0) for i in range(0, min(len(raw), 40 * step), step)]
        pieces.append((raw[40 * step:], 0.02))
        return (f"slow {r['path']}", [p for p in pieces if p[0]], False, {})

    def fam_oracle(self) -> tuple:
        """A valid request with odd framing: the answer must be the algebra's."""
        chunked = self.rng.random() < 0.4
        ct = self.rng.choice(["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
                              "Application/JSON"])
        pad = self.rng.choice(["", " ", "\n\t "])
        if self.rng.random() < 0.5:
            text = random_layout(self.rng)
            body = (pad + json.dumps({"layout": text}) + pad).encode()
            want = ("layout", text, oracle_layout(text))
            path = "/api/layout"
        else:
            op = self.rng.choice(ORACLE_OPS)
            args = [random_layout(self.rng)] + ([random_layout(self.rng)] if op in ("composition", "logical_divide",
                                                                                    "logical_product") else [])
            body = (pad + json.dumps({"op": op, "args": args}) + pad).encode()
            want = ("algebra", (op, args), oracle_algebra(op, args))
            path = "/api/algebra"
        return (f"oracle {path}", [(build("POST", path, self.headers([("Content-Type", ct)]), body, self.host,
                chunked=chunked), 0)], False, {"api": True, "oracle": want})

    # ----- families added for the caps: numbers, notations, duplicated keys, HEAD / OPTIONS, permalinks, Range,
    # broken percent-encoding, and lab jobs that take minutes
    def leaves(self, value: Any, path: tuple = ()) -> list[tuple]:
        """The paths of every leaf (str, number, bool, None) of a JSON value, lists by their first two items."""
        if isinstance(value, dict):
            return [p for k, v in value.items() for p in self.leaves(v, path + (k,))]
        if isinstance(value, list):
            return [p for i, v in enumerate(value[:2]) for p in self.leaves(v, path + (i,))]
        return [path]

    def replaced(self, value: Any, path: tuple, new: Any) -> Any:
        if not path:
            return new
        out = dict(value) if isinstance(value, dict) else list(value)
        out[path[0]] = self.replaced(value[path[0]], path[1:], new)
        return out

    def one_field(self, label: str, pick: Callable[[], Any], json_pick: Callable[[], Any]) -> tuple:
        """A query parameter, a form field or a JSON leaf of a random route set to ``pick()`` (``json_pick()`` for
        JSON, which may give a JSON number)."""
        where = self.rng.random()
        if where < 0.35:
            r = self.rng.choice([r for r in self.get_routes if r["query"]])
            target = self.fill(r["path"]) + "?" + quote(self.rng.choice(r["query"]), safe="") + "=" + quote(
                str(pick()), safe="")
            h = self.headers([("HX-Request", "true")] if self.rng.random() < 0.3 else [])
            return (f"{label} query {r['path']}", [(build("GET", target, h, None, self.host), 0)], False, {})
        if where < 0.6:
            r = self.rng.choice(self.form_routes)
            body = (quote(self.rng.choice(r["form"] or ["x"]), safe="") + "=" + quote(str(pick()), safe="")).encode()
            h = [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", self.origin)]
            if self.rng.random() < 0.5:
                h += [("HX-Request", "true"), ("HX-Target", self.rng.choice(HTMX_TARGETS))]
            return (f"{label} form {r['path']}", [(build("POST", self.fill(r["path"]), h, body, self.host), 0)],
                    False, {})
        r = self.rng.choice(self.json_routes)
        good = self.good_body(r)
        paths = self.leaves(good) if isinstance(good, (dict, list)) and good else [()]
        body = self.replaced(good, self.rng.choice(paths), json_pick()) if paths != [()] else {"layout": json_pick()}
        return (f"{label} json {r['path']}", [(build(r["method"], self.fill(r["path"]), self.headers(
            [("Content-Type", "application/json")]), self.dumps(body), self.host), 0)], False, {"api": True})

    def fam_numbers(self) -> tuple:
        return self.one_field("numbers", lambda: self.rng.choice(NUMBER_TEXTS),
                              lambda: self.rng.choice(NUMBER_TEXTS + ODD_NUMBERS))

    def fam_notation(self) -> tuple:
        return self.one_field("notation", lambda: self.rng.choice(NOTATIONS), lambda: self.rng.choice(NOTATIONS))

    def fam_dup_query(self) -> tuple:
        r = self.rng.choice([r for r in self.get_routes if r["query"]])
        parts = []
        for name in self.rng.sample(r["query"], min(len(r["query"]), self.rng.randint(1, 3))):
            for _ in range(self.rng.randint(2, 5)):
                value = self.rng.choice([random_layout(self.rng), self.odd_text(), self.rng.choice(NUMBER_TEXTS), ""])
                parts.append(quote(name, safe="") + "=" + quote(value[:3000], safe=""))
        self.rng.shuffle(parts)
        return (f"dup-query {r['path']}", [(build("GET", self.fill(r["path"]) + "?" + "&".join(parts),
                                                  self.headers(), None, self.host), 0)], False, {})

    def fam_head_options(self) -> tuple:
        r = self.rng.choice(self.table)
        m = self.rng.choice(["HEAD", "OPTIONS"])
        h = self.headers([("Access-Control-Request-Method", "POST")] if m == "OPTIONS" and self.rng.random() < 0.3
                         else [])
        return (f"{m.lower()} {r['path']}", [(build(m, self.fill(r["path"], hostile=self.rng.random() < 0.2), h, None,
                                                  self.host), 0)], m == "HEAD",
                {"allowed": m == "OPTIONS" or r["method"] == "GET"})

    def fam_permalink(self) -> tuple:
        link = self.rng.choice(PERMALINKS)
        value = self.rng.choice([self.rng.choice(NUMBER_TEXTS), self.odd_text(),
                                 self.rng.choice([n for n in NOTATIONS if len(n) < 3000])])
        base, _, query = link.partition("?")
        query = "&".join(k + "=" + (quote(value[:3000], safe="") if v == "{}" else quote(v, safe="(),:<>"))
                         for k, _, v in (p.partition("=") for p in query.split("&")))
        h = self.headers()
        if self.rng.random() < 0.4:
            h += [("HX-Request", "true"), ("HX-Target", self.rng.choice(HTMX_TARGETS)),
                  ("HX-Current-URL", self.origin + base + "?" + query[:2000])]
        return (f"permalink {base}", [(build("GET", base + "?" + query, h, None, self.host), 0)], False, {})

    def fam_range(self) -> tuple:
        path = self.rng.choice([self.fill(r["path"]) for r in self.get_routes] + EXTRA_PATHS[:5] + [
            "/static/vendor/htmx.min.js", "/static/app.css"])
        h = self.headers([("Range", self.rng.choice(RANGES))])
        if self.rng.random() < 0.3:
            h.append(("If-Range", self.rng.choice(['"x"', "Mon, 01 Jan 2024 00:00:00 GMT", "junk"])))
        m = self.rng.choice(["GET", "GET", "HEAD"])
        return (f"range {path[:60]}", [(build(m, path, h, None, self.host), 0)], m == "HEAD", {})

    def fam_percent(self) -> tuple:
        path = self.rng.choice(BAD_PERCENT)
        m = self.rng.choice(["GET", "HEAD", "POST"])
        body = b"kind=smem&rows=%zz&cols=%" if m == "POST" else None
        h = self.headers([("Content-Type", "application/x-www-form-urlencoded"), ("Origin", self.origin)]
                         if body else [])
        return (f"percent {m} {path[:50]}", [(build(m, path, h, body, self.host), 0)], m == "HEAD", {})

    def fam_lab_job(self) -> tuple:
        """A lab job as JSON (``/api/bench/jobs``) or as the lab's form (``/lab/jobs``): one that takes minutes must
        be refused by the estimate; the defaults must not be."""
        slow = self.rng.random() < 0.75
        kind, params = self.rng.choice(SLOW_JOBS if slow else QUICK_JOBS)
        if self.rng.random() < 0.5:
            body = self.dumps({"kind": kind, "params": params})
            raw = build("POST", "/api/bench/jobs", self.headers([("Content-Type", "application/json")]), body,
                        self.host)
            where = "json"
        else:
            flat = {"kind": kind, **{k: v for k, v in params.items() if k != "access"}}
            if "access" in params:
                flat.update(access=params["access"]["kind"], index=params["access"]["index"])
            body = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in flat.items()).encode()
            raw = build("POST", "/lab/jobs", [("Content-Type", "application/x-www-form-urlencoded"),
                                               ("Origin", self.origin), ("HX-Request", "true")], body, self.host)
            where = "form"
        return (f"lab-job {where} {kind}{' slow' if slow else ''}", [(raw, 0)], False,
                {"job": "refuse" if slow else "accept"})

    FAMILIES = [("json_field", 22), ("json_whole", 10), ("content_type", 6), ("query", 16), ("form", 12),
                ("method", 12), ("headers", 12), ("slow", 1), ("oracle", 9), ("numbers", 10), ("notation", 10),
                ("dup_query", 5), ("head_options", 6), ("permalink", 8), ("range", 4), ("percent", 4),
                ("lab_job", 4)]

    def draw(self) -> tuple:
        names = [n for n, _ in self.FAMILIES]
        weights = [w for _, w in self.FAMILIES]
        return getattr(self, "fam_" + self.rng.choices(names, weights)[0])()


# --------------------------------------------------------------------------- checking

#: Details that say only the status, not the problem.
GENERIC = {"Not Found", "Method Not Allowed", "Bad Request", "Unprocessable Entity", "body: could not be read",
           "There was an error parsing the body", "Error", "invalid request"}


def problems(label: str, ans: Answer, checks: dict, head_only: bool) -> list[str]:
    out = []
    if ans.status is None:
        return [ans.error or "no answer"]
    if ans.status >= 500:
        out.append(f"{ans.status}")
    if 400 <= ans.status < 500 and not head_only:
        ctype = ",".join(ans.headers.get("content-type", []))
        if "json" in ctype:
            try:
                detail = json.loads(ans.body).get("detail")
            except (ValueError, AttributeError):
                detail = None
            if not isinstance(detail, str) or len(detail.strip()) < 3:
                out.append(f"{ans.status} without a readable detail")
            elif detail.strip().rstrip(".") in GENERIC:
                out.append(f"{ans.status} with a bare phrase: {detail!r}")
            elif "s of server CPU per request" in detail:  # the watchdog's cut: the work was not estimated first
                out.append(f"{ans.status} cut by the watchdog, not refused by an estimate: {detail[:80]!r}")
        elif not ans.body.strip():
            out.append(f"{ans.status} with an empty body")
    if checks.get("allowed") and ans.status == 405:
        out.append("405 for HEAD on a GET route or for OPTIONS")
    job = checks.get("job")
    if job == "refuse" and ans.status in (202, 409):
        out.append(f"{ans.status}: a job that takes minutes of GPU time passed validation (no estimated cap)")
    elif job == "refuse" and ans.status not in (422, 429):
        out.append(f"{ans.status}: a job over the time cap refused as something else")
    elif job == "refuse" and ans.status == 422 and b"estimate" not in ans.body:
        out.append("422 that does not name the estimate and the cap")
    elif job == "accept" and ans.status not in (202, 409, 429, 503):
        out.append(f"{ans.status}: a job with the default parameters was refused: {ans.body[:160]!r}")
    want = checks.get("oracle")
    if want and not out:
        kind, arg, expect = want
        try:
            got = json.loads(ans.body)
        except ValueError:
            got = None
        if kind == "layout":
            if ans.status != 200 or got is None or any(got.get(k) != v for k, v in expect.items()):
                out.append(f"wrong answer: {arg} -> {ans.status} {str(got)[:200]}, want {expect}")
        else:
            status, result = expect
            if ans.status != status or (status == 200 and (got or {}).get("result") != result):
                out.append(f"wrong answer: {arg} -> {ans.status} {str(got)[:200]}, want {status} {result}")
    return out


def detail_of(ans: Answer) -> str:
    try:
        d = json.loads(ans.body).get("detail")
        return str(d)[:90]
    except (ValueError, AttributeError):
        return ans.body[:60].decode("utf-8", "replace")


async def worker(fz: Fuzzer, count: int, stats: dict, failures: list, slowest: list, details: collections.Counter,
                 control: tuple) -> None:
    conn = Conn(fz.port)
    for _ in range(count):
        label, pieces, head_only, checks = fz.draw()
        reuse = conn.writer is not None
        ans = await conn.exchange(pieces, head_only, fz.timeout)
        stats["requests"] += 1
        stats["status"][str(ans.status or ans.error.split(":")[0][:40])] += 1
        if ans.status and 400 <= ans.status < 500:
            details[f"{ans.status} {label.split(' ')[0]} {detail_of(ans)}"] += 1
        found = problems(label, ans, checks, head_only)
        if ans.error and "closed without an answer" in ans.error and reuse:
            found = []  # a kept-alive connection the server closed (keep-alive timeout): retry on a fresh one
            ans = await conn.exchange(pieces, head_only, fz.timeout)
            found = problems(label, ans, checks, head_only)
        if found:
            failures.append({"seed": fz.seed, "label": label, "problems": found, "status": ans.status,
                             "wall_s": round(ans.wall, 2), "request": b"".join(p for p, _ in pieces)[:600].decode(
                                 "latin-1"), "answer": ans.body[:300].decode("utf-8", "replace")})
        slowest.append((round(ans.wall, 3), label, ans.status))
        if len(slowest) > 400:
            slowest.sort(reverse=True)
            del slowest[40:]
        if conn.writer is not None and fz.rng.random() < 0.25:  # the same connection after it: a known answer
            ctl_raw, ctl_want = control
            ctl = await conn.exchange([(ctl_raw, 0)], False, fz.timeout)
            stats["requests"] += 1
            stats["control"] += 1
            if ctl.status != 200 or json.loads(ctl.body or b"{}").get("size") != ctl_want:
                failures.append({"seed": fz.seed, "label": "control after " + label, "status": ctl.status,
                                 "problems": [f"desync: control answered {ctl.status} {ctl.error or ''}"],
                                 "request": b"".join(p for p, _ in pieces)[:600].decode("latin-1"),
                                 "answer": ctl.body[:300].decode("utf-8", "replace")})
    conn.close()


async def burst(fz: Fuzzer, n: int, stats: dict, failures: list) -> None:
    """``n`` connections at once, each one request (cheap and heavy mixed)."""
    conns = [Conn(fz.port) for _ in range(n)]
    reqs = [fz.draw() for _ in range(n)]
    answers = await asyncio.gather(*(c.exchange(p, h, fz.timeout) for c, (_, p, h, _) in zip(conns, reqs, strict=True)))
    for c, (label, pieces, head_only, checks), ans in zip(conns, reqs, answers, strict=True):
        c.close()
        stats["requests"] += 1
        stats["burst"] += 1
        stats["status"][str(ans.status or ans.error.split(":")[0][:40])] += 1
        found = problems(label, ans, checks, head_only)
        if found:
            failures.append({"seed": fz.seed, "label": "burst " + label, "problems": found, "status": ans.status,
                             "wall_s": round(ans.wall, 2),
                             "request": b"".join(p for p, _ in pieces)[:600].decode("latin-1"),
                             "answer": ans.body[:300].decode("utf-8", "replace")})


async def pipelined(fz: Fuzzer, n: int, control: tuple, stats: dict, failures: list) -> None:
    """``n`` times: a known request, a hostile one and the known one again, written in one piece on one connection.
    The first answer must be right; after the hostile one's answer, the third must be right too unless the server
    closed the connection (it may, after a refusal): a request must never be read as part of another."""
    ctl_raw, ctl_want = control
    for _ in range(n):
        label, pieces, head_only, checks = fz.draw()
        if len(pieces) != 1:
            continue
        conn = Conn(fz.port)
        try:
            await conn.open()
            conn.writer.write(ctl_raw + pieces[0][0] + ctl_raw)
            answers = []
            for expect_head in (False, head_only, False):
                try:
                    answers.append(await asyncio.wait_for(read_answer(conn.reader, expect_head), fz.timeout))
                except (TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
                    a = Answer()
                    a.error = f"{type(exc).__name__}"
                    answers.append(a)
                    break
                if answers[-1].error or answers[-1].closed:
                    break
        finally:
            conn.close()
        stats["requests"] += 3
        stats["pipelined"] += 3
        found = []
        first = answers[0]
        if first.status != 200 or json.loads(first.body or b"{}").get("size") != ctl_want:
            found.append(f"desync: the first control answered {first.status} {first.error or ''}")
        if len(answers) > 1:
            found += problems(label, answers[1], checks, head_only)
            if len(answers) == 3 and not answers[1].closed and answers[2].status is not None and (
                    answers[2].status != 200 or json.loads(answers[2].body or b"{}").get("size") != ctl_want):
                found.append(f"desync: the control after it answered {answers[2].status}")
        if found:
            failures.append({"seed": fz.seed, "label": "pipelined " + label, "problems": found,
                             "status": answers[1].status if len(answers) > 1 else None,
                             "request": pieces[0][0][:600].decode("latin-1"),
                             "answer": (answers[1].body if len(answers) > 1 else b"")[:300].decode("utf-8", "replace")})


async def run_seed(seed: int, port: int, table: list, spec: dict, requests: int, parallel: int, timeout: float,
                   stats: dict, failures: list, slowest: list, details: collections.Counter) -> None:
    fz = Fuzzer(seed, port, table, spec, timeout)
    host = f"{HOST}:{port}"
    control = (build("POST", "/api/layout", [("Content-Type", "application/json")],
                     b'{"layout": "(4,(2,4)):(2,(1,8))"}', host), 32)
    fuzzers = [Fuzzer(seed * 1000 + i, port, table, spec, timeout) for i in range(parallel)]
    for f in fuzzers:
        f.seed = seed
    per = max(1, (requests - 200) // parallel)
    await asyncio.gather(*(worker(f, per, stats, failures, slowest, details, control) for f in fuzzers))
    for n in (50, 150):
        await burst(fz, n, stats, failures)
    await pipelined(fz, 30, control, stats, failures)


async def declared_chunk_probe(port: int) -> dict:
    """A chunked POST whose first chunk declares 2 MB (over the 1 MB cap) and sends 1 byte of it: status and seconds
    to the answer (413 at once; was 408 after the 30 s read timeout)."""
    conn = Conn(port)
    raw = (f"POST /api/layout HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\n\r\n200000\r\n{").encode()
    ans = await conn.exchange([(raw, 0)], False, 60)
    conn.close()
    return {"status": ans.status, "seconds": round(ans.wall, 3), "error": ans.error}


async def stalled_body_probe(port: int) -> dict:
    """A POST whose Content-Length promises 1000 bytes and sends 10: status and seconds to the answer (408 after the
    body timeout, LAYOUTLAB_BODY_TIMEOUT_S, 10 s; was 408 after gunicorn's 30 s timeout)."""
    conn = Conn(port)
    raw = (f"POST /api/layout HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
           'Content-Length: 1000\r\n\r\n{"layout":').encode()
    ans = await conn.exchange([(raw, 0)], False, 60)
    conn.close()
    return {"status": ans.status, "seconds": round(ans.wall, 3), "error": ans.error}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="9600", help="one seed, or a range a-b (inclusive)")
    ap.add_argument("--requests", type=int, default=2000, help="requests per seed (about)")
    ap.add_argument("--parallel", type=int, default=6, help="connections each seed keeps busy")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds an answer may take before it is a hang")
    ap.add_argument("--url", help="a running server (default: start `layoutlab serve` on a free port)")
    ap.add_argument("--tree", help="serve this checkout's app instead (a git worktree of a baseline revision with "
                                    "static/vendor copied in), for a before / after in one sitting")
    args = ap.parse_args()
    a, _, b = args.seeds.partition("-")
    seeds = list(range(int(a), int(b or a) + 1))
    table, spec = routes()
    server = None
    if args.url:
        port = int(args.url.rsplit(":", 1)[1].strip("/"))
    else:
        os.environ["LAYOUTLAB_ALLOWED_HOSTS"] = "127.0.0.1,localhost"
        # the lab's rate limits high enough that a job reaches validation (lab_job checks the estimate there)
        os.environ.setdefault("LAYOUTLAB_LAB_RATE", "100000/60")
        os.environ.setdefault("LAYOUTLAB_LAB_ADDRESS_RATE", "100000/60")
        os.environ.setdefault("LAYOUTLAB_EMBEDDED_WORKER", "0")
        os.environ["LAYOUTLAB_DATA"] = tempfile.mkdtemp(prefix="hostile-http-")
        server = _server.Server(tree=args.tree)
        port = server.port
    stats: dict = {"requests": 0, "control": 0, "burst": 0, "pipelined": 0, "status": collections.Counter()}
    failures: list = []
    slowest: list = []
    details: collections.Counter = collections.Counter()
    t0 = time.monotonic()
    cpu0 = server.cpu_seconds() if server else 0.0
    try:
        for seed in seeds:
            before = stats["requests"]
            asyncio.run(run_seed(seed, port, table, spec, args.requests, args.parallel, args.timeout, stats, failures,
                                 slowest, details))
            print(f"seed {seed}: {stats['requests'] - before} requests, {len(failures)} failures so far, "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
        probe = asyncio.run(declared_chunk_probe(port))
        print(f"chunked body declaring 2 MB, 1 byte sent: {probe}")
        stalled = asyncio.run(stalled_body_probe(port))
        print(f"Content-Length 1000, 10 bytes sent: {stalled}")
        rss = server.rss_mb() if server else None
        cpu = server.cpu_seconds() - cpu0 if server else None
    finally:
        if server:
            server.stop()
    fivexx = sum(n for s, n in stats["status"].items() if s.isdigit() and int(s) >= 500)
    slowest.sort(reverse=True)
    print(f"\n{stats['requests']:,} requests ({stats['control']:,} control, {stats['burst']:,} in bursts, "
          f"{stats['pipelined']:,} pipelined) over "
          f"{len(table)} route methods, seeds {args.seeds}, {time.monotonic() - t0:.0f} s")
    print("status  count")
    for s, n in sorted(stats["status"].items()):
        print(f"{s:>6}  {n:,}")
    print(f"5xx: {fivexx}; failures: {len(failures)}")
    by_kind = collections.Counter(f"{f['label'].split(' ')[0]} {f['problems'][0][:60]}" for f in failures)
    for k, n in by_kind.most_common(30):
        print(f"  {n:6,}  {k}")
    print("slowest:", slowest[:8])
    path = _server.write_result("hostile_http", {
        "command": "python bench/hostile_http.py " + " ".join(sys.argv[1:]), "machine": _server.machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "served_revision": _server.revision(Path(args.tree).resolve() if args.tree else ROOT),
        "seeds": args.seeds, "requests": stats["requests"], "control_requests": stats["control"],
        "burst_requests": stats["burst"], "pipelined_requests": stats["pipelined"], "route_methods": len(table),
        "status": dict(stats["status"]),
        "five_xx": fivexx, "failures": failures[:300], "failure_kinds": dict(by_kind),
        "slowest": slowest[:40], "declared_chunk_over_cap": probe, "stalled_body": stalled, "server_cpu_s": cpu,
        "server_rss_mb": rss,
        "details_4xx": dict(details.most_common(200)), "wall_s": round(time.monotonic() - t0, 1)})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
