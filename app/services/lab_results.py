"""A finished GPU-lab job read by a person: its result as a table of named rows, its chart where the kind has one
(app.services.bench_charts.bar_chart, as the history draws), and a one-line summary for the history's result column.

Nothing here invents a number: every value is read from the stored result; a field the result lacks is left out.
"""

from __future__ import annotations

from typing import Any

from app.services.bench_charts import bar_chart

#: The transpose's reference copies (not transposes): left out of its best variant.
COPIES = ("memcpy", "copy_kernel")


def _num(v: Any, fmt: str) -> str:
    return fmt.format(v) if isinstance(v, int | float) and not isinstance(v, bool) else "—"


def _compile_rows(r: dict) -> list[tuple[str, str]]:
    tk = r.get("toolkit") or {}
    if r.get("compiled"):
        built = "built by nvcc" + (" (from the build cache)" if r.get("cached") else "")
    else:
        built = "rendered only: no nvcc on the worker" if not tk.get("version") else "rendered only (nvcc skipped)"
    rows = [("template", str(r.get("template") or "—")), ("result", built),
            ("nvcc", f"{tk.get('version') or 'not found'}" + (f" ({tk['source']})" if tk.get("source") else "")),
            ("worker", str(r.get("worker") or "—"))]
    if r.get("key"):
        rows.append(("build key", str(r["key"])))
    if r.get("tag"):
        rows.append(("tag", str(r["tag"])))
    return rows


def _flat_rows(r: Any, prefix: str = "", out: list | None = None) -> list[tuple[str, str]]:
    """Any other result, flattened to ``a.b.c: value`` rows (lists of numbers shortened), at most 40."""
    out = [] if out is None else out
    if isinstance(r, dict):
        for k, v in r.items():
            _flat_rows(v, f"{prefix}{k}." if prefix or k else "", out)
    elif isinstance(r, list) and len(r) > 8:
        out.append((prefix.rstrip("."), f"{len(r)} values: {', '.join(map(str, r[:6]))}, ..."))
    else:
        out.append((prefix.rstrip("."), str(r)))
    return out[:40]


def result_chart(job: dict) -> dict | None:
    """The chart of one finished job: a transpose's GB/s per variant (the copy's as the reference line), a GEMM
    rung's TFLOP/s beside cuBLAS; an smem read's cycles per warp access with the model's wavefronts as its tick.
    None for a kind without one (compile_only) or a job without its numbers."""
    r = job.get("result") or {}
    if job.get("status") != "done" or not r:
        return None
    if job.get("kind") == "transpose" and r.get("variants"):
        bars = [{"label": name, "value": v.get("gbps"), "cls": "good" if v.get("check", {}).get("passed") else "bad"}
                for name, v in r["variants"].items() if isinstance(v.get("gbps"), int | float)]
        ref = {"value": r["copy_gbps"], "label": "copy"} if isinstance(r.get("copy_gbps"), int | float) else None
        return bar_chart(f"This transpose: GB/s per variant (n = {(r.get('config') or {}).get('n')})", "GB/s", bars,
                         ref) if bars else None
    if job.get("kind") == "gemm" and isinstance(r.get("tflops"), int | float):
        bars = [{"label": f"rung {(r.get('rung') or {}).get('id', '?')}", "value": r["tflops"]}]
        if isinstance(r.get("cublas_tflops"), int | float):
            bars.append({"label": "cuBLAS", "value": r["cublas_tflops"]})
        return bar_chart("This GEMM: TFLOP/s beside cuBLAS (higher is better)", "TFLOP/s", bars)
    if job.get("kind") == "smem" and "derived" in r:
        model = (r.get("prediction") or {}).get("wavefronts_per_access")
        bars = [{"label": "measured", "value": r["derived"].get("cycles_per_warp_access"), "model": model}]
        return bar_chart("This read: cycles per warp access (tick: the model's wavefronts)", "cycles", bars)
    return None


def result_rows(job: dict) -> list[tuple[str, str]]:
    """The table of a finished job whose kind has no table of its own in the page (compile_only, or a kind added
    later): named rows, never raw JSON. Empty when the job has no result."""
    r = job.get("result") or {}
    if not r:
        return []
    if job.get("kind") == "compile_only":
        return _compile_rows(r)
    return _flat_rows(r)


def summary(job: dict) -> str:
    """One line for the history's result column: what the job measured, or why it has no result yet."""
    r = job.get("result") or {}
    status = job.get("status")
    if status == "failed":
        return ""  # the page shows the error instead
    if status != "done":
        return "waiting for a worker" if status == "queued" else "running"
    kind = job.get("kind")
    if kind == "smem" and "derived" in r:
        return (f"{_num(r['derived'].get('cycles_per_warp_access'), '{:.2f}')} cyc per warp access (model "
                f"{(r.get('prediction') or {}).get('wavefronts_per_access')} wavefronts)")
    if kind == "transpose" and r.get("variants"):
        kernels = {k: v for k, v in r["variants"].items() if k not in COPIES} or r["variants"]
        name, best = max(kernels.items(), key=lambda kv: kv[1].get("gbps") or 0)
        ok = all(v.get("check", {}).get("passed") for v in r["variants"].values())
        of_copy = f" ({best['pct_of_copy']:.0f} % of copy)" if isinstance(best.get("pct_of_copy"), int | float) else ""
        return (f"best of {len(kernels)}: {name} {_num(best.get('gbps'), '{:.0f}')} GB/s{of_copy}"
                + ("" if ok else "; a check FAILED"))
    if kind == "gemm" and isinstance(r.get("tflops"), int | float):
        return f"{r['tflops']:.1f} TFLOP/s ({_num(r.get('pct_of_cublas') or 0, '{:.0f}')} % of cuBLAS)"
    if kind == "compile_only":
        return dict(_compile_rows(r))["result"]
    return "done"


__all__ = ["result_chart", "result_rows", "summary"]
