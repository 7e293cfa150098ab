"""Worst case of every route: inputs derived from the work caps and from the routes themselves, server CPU per route.

    python bench/worst_case.py [--quick]

The inputs are not a hand-made list. For every operation of ``/openapi.json`` and every page route of the app (its
query parameters read from the route table), each string field in turn takes each layout of ``variants()``, which
are built from ``app.budget.cap_of`` and ``app.config``: integer, coordinate and swizzled layouts at their cell caps
and just past them, a grid at the render cap, 64 and 65 modes, the nesting and text caps; each integer field takes
its declared maximum and 10^12. A route added later is covered without a change here. The server runs in a
subprocess (bench/_server.py); its CPU is read from /proc around each request, one request at a time.

Prints the worst request of each route and writes bench/results/worst_case_<time>.json, with the server's peak RSS
(VmHWM) and how long it takes to exit on SIGTERM with heavy requests in flight. Target: every request under 1 s of
server CPU or refused with a 4xx, no 5xx.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
# this folder holds bench/algebra.py, which must not shadow the algebra package: the repo root comes first
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
_spec = importlib.util.spec_from_file_location("_server", ROOT / "bench" / "_server.py")
_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_server)
Server, machine, write_result = _server.Server, _server.machine, _server.write_result

from app.budget import api_routes, cap_of  # noqa: E402
from app.config import MAX_CELLS, MAX_MODES, MAX_NESTING, MAX_SIZE, MAX_TEXT  # noqa: E402

#: Query parameters that the TV atlas reads from the query string itself (not declared on its route).
TV_PARAMS = ("atom", "operand", "bits", "cw_thr", "cw_src", "cw_dst", "cw_t", "mw_atom", "mw_layout", "mw_tile",
             "mw_t", "tthr", "tval", "tlayout", "ttensor", "tbox", "hspan")


def _square(n: int, stride: str = "int") -> str:
    """A rank-2 layout of about ``n`` cells (rows a power of two)."""
    rows = 1 << max(0, (n.bit_length() - 1) // 2)
    cols = max(1, n // rows)
    if stride == "coord":
        return f"({rows},{cols}):(1@0,1@1)"
    base = f"({rows},{cols}):({cols},1)"
    return f"Sw<3,3,3> o {base}" if stride == "swizzle" else base


def variants() -> dict[str, str]:
    """Label -> layout text, each at a cap or just past it."""
    out: dict[str, str] = {}
    for kind, stride in (("integer cell", "int"), ("coordinate cell", "coord"), ("swizzled cell", "swizzle")):
        cap = min(MAX_SIZE, cap_of(kind))
        out[f"{kind}s at cap ({cap:,})"] = _square(cap, stride)
        out[f"{kind}s past cap ({2 * cap:,})"] = _square(2 * cap, stride)
    out[f"grid at render cap ({MAX_CELLS:,})"] = _square(MAX_CELLS)
    for m in (MAX_MODES, MAX_MODES + 1):
        twos = 16
        shape = ",".join(["2"] * twos + ["1"] * (m - twos))
        out[f"{m} modes"] = f"({shape}):({','.join(['1'] * m)})"
    out[f"nesting {MAX_NESTING}"] = "(" * MAX_NESTING + "2" + ")" * MAX_NESTING
    out[f"text {MAX_TEXT} chars"] = "(" + ",".join(["2"] * (MAX_TEXT // 2 - 1)) + ")"
    out["2^40 cells"] = "(1048576,1048576):(1048576,1)"
    return out


def _resolve(schema: dict, spec: dict) -> dict:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema:
        schema = next((s for s in schema["anyOf"] if s.get("type") != "null"), schema["anyOf"][0])
    return schema


def _example(schema: dict, spec: dict) -> Any:
    schema = _resolve(schema, spec)
    if schema.get("examples"):
        return schema["examples"][0]
    if "default" in schema:
        return schema["default"]
    t = schema.get("type")
    if t == "object":
        return {k: _example(v, spec) for k, v in schema.get("properties", {}).items()}
    if t == "array":
        return [_example(schema.get("items", {}), spec)] * max(1, schema.get("minItems", 1))
    if t == "integer":
        return schema.get("minimum", 1)
    if t == "boolean":
        return False
    return schema.get("enum", ["(8,8):(8,1)"])[0]


def api_requests(spec: dict, ids: dict[str, str]) -> list[tuple[str, str, str, Any, dict]]:
    """(route, label, method, body, query) for every operation and every variant of each of its fields."""
    out = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            route = f"{method.upper()} {path}"
            url = path
            for name, value in ids.items():
                url = url.replace("{" + name + "}", value)
            query = {p["name"]: _example(p.get("schema", {}), spec) for p in op.get("parameters", [])
                     if p["in"] == "query"}
            body_schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            body = _example(body_schema, spec) if body_schema else None
            out.append((route, "example", method.upper(), url, body, query))
            props = _resolve(body_schema, spec).get("properties", {}) if body_schema else {}
            fields = [("body", k, _resolve(v, spec)) for k, v in props.items()]
            fields += [("query", p["name"], _resolve(p.get("schema", {}), spec)) for p in op.get("parameters", [])
                       if p["in"] == "query"]
            for where, name, schema in fields:
                for label, value in _field_values(schema):
                    b = dict(body) if isinstance(body, dict) else body
                    q = dict(query)
                    (b if where == "body" else q)[name] = value
                    out.append((route, f"{name}={label}", method.upper(), url, b, q))
    return out


def _field_values(schema: dict) -> list[tuple[str, Any]]:
    t = schema.get("type")
    if t == "string" or "anyOf" in schema:
        return list(variants().items())
    if t == "array" and schema.get("items", {}).get("type") == "string":
        return [(k, [v, v]) for k, v in variants().items()]
    if t == "integer":
        return [("maximum", schema.get("maximum", 1 << 20)), ("10^12", 10 ** 12)]
    return []


def page_requests(app: Any, ops: list[str]) -> list[tuple[str, str, str, str, Any, dict]]:
    out = []
    for r in api_routes(app.routes):
        if "GET" not in (r.methods or ()) or r.include_in_schema or "{" in r.path:
            continue
        names = [p.name for p in r.dependant.query_params] + (list(TV_PARAMS) if r.path == "/tv" else [])
        names = [n for n in names if n not in ("op", "shown")]
        for n in names:
            for label, value in variants().items():
                if r.path == "/algebra":
                    for op in ops:
                        q = {"op": op, "a": value, "b": value} if n == "a" else {"op": op, n: value}
                        out.append((f"GET {r.path}", f"op={op} {n}={label}", "GET", r.path, None, q))
                else:
                    out.append((f"GET {r.path}", f"{n}={label}", "GET", r.path, None, {n: value}))
    return out


def measure(server: Server, client: httpx.Client, reqs: list) -> list[dict]:
    rows = []
    for route, label, method, url, body, query in reqs:
        cpu0 = server.cpu_seconds()
        t0 = time.perf_counter()
        try:
            r = client.request(method, url, json=body, params=query)
            status, size = r.status_code, len(r.content)
        except httpx.HTTPError as exc:
            status, size = f"error {type(exc).__name__}", 0
        wall = time.perf_counter() - t0
        time.sleep(0.02)
        rows.append({"route": route, "input": label[:100], "status": status, "wall_ms": round(wall * 1000, 1),
                     "server_cpu_ms": round((server.cpu_seconds() - cpu0) * 1000, 1), "bytes": size})
    return rows


def sigterm_exit_s(heavy: list[tuple[str, dict]]) -> float:
    """Seconds from SIGTERM to exit for a fresh server with ``heavy`` requests in flight."""
    server = Server()
    threads = [threading.Thread(target=lambda p=p, q=q: _quiet_get(server.url + p, q)) for p, q in heavy]
    for t in threads:
        t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    os.kill(server.proc.pid, signal.SIGTERM)
    server.proc.wait(timeout=60)
    took = time.monotonic() - t0
    for t in threads:
        t.join(timeout=10)
    return took


def _quiet_get(url: str, params: dict) -> None:
    try:
        httpx.get(url, params=params, timeout=60)
    except httpx.HTTPError:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the workbench with 4 ops instead of every op")
    args = ap.parse_args()
    from algebra import registry
    from app.main import create_app

    ops = list(registry.OPS)[: 4 if args.quick else None]
    server = Server()
    try:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            spec = c.get("/openapi.json").json()
            drill = c.get("/api/drills/next", params={"kind": "banks", "seed": 3}).json()
            ids = {"drill_id": drill.get("id", "x"), "sid": "x", "job_id": "x", "name": "SM80_16x8x16_F32F16F16F32_TN"}
            reqs = api_requests(spec, ids) + page_requests(create_app(), ops)
            rows = measure(server, c, reqs)
        hwm = _hwm_mb(server)
    finally:
        server.stop()
    heavy = [("/", {"layout": v}) for v in list(variants().values())[:6]] * 2
    exit_s = sigterm_exit_s(heavy)
    by_route: dict[str, dict] = {}
    for r in rows:
        agg = by_route.setdefault(r["route"], {"requests": 0, "max_cpu_ms": 0.0, "worst_input": "", "statuses": {}})
        agg["requests"] += 1
        agg["statuses"][str(r["status"])] = agg["statuses"].get(str(r["status"]), 0) + 1
        if r["server_cpu_ms"] >= agg["max_cpu_ms"]:
            agg["max_cpu_ms"], agg["worst_input"] = r["server_cpu_ms"], r["input"]
    print(f"{'route':40} {'reqs':>5} {'max cpu ms':>10}  statuses / worst input")
    for route, a in sorted(by_route.items(), key=lambda kv: -kv[1]["max_cpu_ms"]):
        print(f"{route[:40]:40} {a['requests']:>5} {a['max_cpu_ms']:>10}  {a['statuses']} {a['worst_input'][:50]}")
    over = [r for r in rows if r["server_cpu_ms"] >= 1000 and not (isinstance(r["status"], int) and
                                                                     400 <= r["status"] < 500)]
    fivexx = [r for r in rows if not isinstance(r["status"], int) or r["status"] >= 500]
    worst = max(rows, key=lambda r: r["server_cpu_ms"])
    print(f"{len(rows)} requests; worst {worst['server_cpu_ms']} ms CPU ({worst['route']} {worst['input']}); "
          f"over 1 s and not 4xx: {len(over)}; 5xx or errors: {len(fivexx)}; peak RSS {hwm:.0f} MB; "
          f"exit on SIGTERM with {len(heavy)} heavy requests in flight: {exit_s:.2f} s")
    path = write_result("worst_case", {
        "command": "python bench/worst_case.py " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine(), "requests": len(rows), "worst_cpu_ms": worst["server_cpu_ms"],
        "over_1s_not_4xx": over, "5xx": fivexx, "peak_rss_mb": round(hwm, 1), "sigterm_exit_s": round(exit_s, 2),
        "variants": variants(), "by_route": by_route, "rows": rows})
    print(f"wrote {path}")


def _hwm_mb(server: Server) -> float:
    total = 0
    for pid in server.pids():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


if __name__ == "__main__":
    main()
