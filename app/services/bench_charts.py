"""Charts of the GPU lab: bar and line chart geometry (SVG coordinates computed here, drawn by
``templates/lab_charts.html``), parameter sweeps found in the job history, the committed measurements under
``bench/results/`` and the GEMM ladder with each rung's shared-memory layout drawn by the explorer's grid renderer.

Every chart is a plain dict; ``bar_chart`` and ``line_chart`` state their post-conditions. Nothing here invents a
number: every value comes from a stored job result or a committed results file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parents[2] / "bench" / "results"
PLOT_H = 150  # plot area height in px; the chart adds margins for labels
BAR_W, BAR_GAP, LEFT = 40, 16, 44
LINE_W = 360
#: Parameters a history sweep may vary, per job kind; the others must be equal for two jobs to share a line.
SWEEP_PARAMS = {"smem": ("pad", "rows", "cols", "element_bytes", "nacc"),
                "transpose": ("n", "pad", "block_rows", "tile")}
IGNORED_PARAMS = ("runs", "iterations", "profile", "variants")


def _nice_top(v: float) -> float:
    """The smallest 1/2/2.5/5 x 10^k that is >= v (an axis top)."""
    if v <= 0:
        return 1.0
    k = 1.0
    while k * 10 < v:
        k *= 10
    while k > v:
        k /= 10
    for m in (1, 2, 2.5, 5, 10):
        if k * m >= v:
            return k * m
    return k * 10


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def wrap_label(label: str, width: int = 11) -> list[str]:
    """At most two lines of at most ``width`` characters, broken after ``_``, space or ``/`` where possible."""
    if len(label) <= width:
        return [label]
    cut = max((label.rfind(ch, 0, width + 1) for ch in "_ /"), default=-1)
    cut = cut + 1 if cut > 0 else width
    return [label[:cut], label[cut:cut + width]]


def bar_chart(title: str, unit: str, bars: list[dict], ref: dict | None = None) -> dict:
    """Bars ``[{"label", "value", "model"?, "note"?, "cls"?}]`` and an optional reference line ``{"value", "label"}``.

    Post-condition: each bar gets ``x``, ``h`` (px) and ``y = PLOT_H - h``, with ``h == value / top * PLOT_H`` for the
    axis top ``top`` >= every value and the reference; a model value gets ``my``, its y in px; ``lines`` is the
    label wrapped to two lines. Slots widen so that labels and notes do not overlap."""
    values = [b["value"] for b in bars if b.get("value") is not None]
    extra = [ref["value"]] if ref and ref.get("value") else []
    top = _nice_top(max(values + extra, default=1.0))
    lines = [wrap_label(str(b["label"])) for b in bars]
    chars = max([len(x) for ls in lines for x in ls] + [len(str(b.get("note") or "")) for b in bars] + [0])
    slot = max(BAR_W + BAR_GAP, round(5.6 * chars) + 8)
    out = []
    for i, b in enumerate(bars):
        v = b.get("value") or 0.0
        h = round(v / top * PLOT_H, 1)
        item = {**b, "x": LEFT + i * slot + (slot - BAR_W) // 2, "h": h, "y": round(PLOT_H - h, 1), "text": _fmt(v),
                "lines": lines[i]}
        if b.get("model") is not None:
            item["my"] = round(PLOT_H - b["model"] / top * PLOT_H, 1)
        out.append(item)
    right = LEFT + max(len(bars), 1) * slot
    chart = {"type": "bar", "title": title, "unit": unit, "bars": out, "top": top, "plot_h": PLOT_H,
             "right": right, "width": right + (110 if extra else 10), "bar_w": BAR_W,
             "yticks": [{"y": round(PLOT_H - f * PLOT_H, 1), "label": _fmt(top * f)} for f in (0, 0.5, 1)]}
    if extra:
        chart["ref"] = {**ref, "y": round(PLOT_H - ref["value"] / top * PLOT_H, 1), "text": _fmt(ref["value"])}
    return chart


def line_chart(title: str, xlabel: str, unit: str, series: list[dict]) -> dict:
    """Lines ``[{"name", "points": [(x, y), ...]}]`` over a shared categorical x axis (the distinct x values, sorted).

    Post-condition: every point becomes ``{"px", "py", "x", "y"}`` with ``py == PLOT_H - y / top * PLOT_H`` and
    ``px`` the position of its x value; ``path`` joins a series' points in x order."""
    xs = sorted({p[0] for s in series for p in s["points"]})
    step = LINE_W / max(len(xs) - 1, 1)
    pos = {x: LEFT + 10 + round(i * step, 1) for i, x in enumerate(xs)}
    top = _nice_top(max((p[1] for s in series for p in s["points"]), default=1.0))
    lines = []
    for k, s in enumerate(series):
        pts = [{"x": x, "y": y, "px": pos[x], "py": round(PLOT_H - y / top * PLOT_H, 1), "text": _fmt(y)}
               for x, y in sorted(s["points"])]
        lines.append({"name": s["name"], "cls": f"s{k % 8}", "points": pts,
                      "path": " ".join(f"{p['px']},{p['py']}" for p in pts)})
    return {"type": "line", "title": title, "xlabel": xlabel, "unit": unit, "series": lines, "top": top,
            "plot_h": PLOT_H, "width": LEFT + LINE_W + 150,
            "xticks": [{"x": pos[x], "label": str(x)} for x in xs],
            "yticks": [{"y": round(PLOT_H - f * PLOT_H, 1), "label": _fmt(top * f)} for f in (0, 0.5, 1)]}


# ----------------------------------------------------------------------------------------------- history sweeps
def _flat(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if k in IGNORED_PARAMS:
            continue
        out[k] = json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else v
    return out


def _smem_name(p: dict) -> str:
    acc = (p.get("access") or {}).get("kind", "column")
    var = {"padded": "padded", "swizzle": p.get("swizzle"), "custom": p.get("layout")}.get(p.get("variant"), "naive")
    return f"{p.get('element_bytes')}B {acc} {var}"


def sweeps(jobs: list[dict], limit: int = 6) -> list[dict]:
    """Line charts of the parameter sweeps in ``jobs``: finished jobs of one kind whose parameters differ in exactly
    one sweepable parameter (SWEEP_PARAMS) form one chart, x = that parameter. smem: measured cycles per warp access
    and the model's wavefronts; transpose: GB/s per variant. Post-condition: every chart has >= 2 x values."""
    done = [j for j in jobs if j.get("status") == "done" and j.get("result") and j.get("params")]
    charts: list[dict] = []
    for kind, params in SWEEP_PARAMS.items():
        mine = [j for j in done if j["kind"] == kind]
        for var in params:
            groups: dict[str, list[dict]] = {}
            for j in mine:
                rest = {k: v for k, v in _flat(j["params"]).items() if k != var}
                groups.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(j)
            for members in groups.values():
                xs = {j["params"].get(var) for j in members}
                if len(xs) < 2 or None in xs:
                    continue
                charts.append(_sweep_chart(kind, var, members))
    return charts[:limit]


def _sweep_chart(kind: str, var: str, members: list[dict]) -> dict:
    latest: dict[Any, dict] = {}
    for j in sorted(members, key=lambda j: j.get("finished") or 0):
        latest[j["params"][var]] = j  # the newest run of each x value
    if kind == "smem":
        meas = [(x, j["result"]["derived"]["cycles_per_warp_access"]) for x, j in latest.items()]
        model = [(x, j["result"]["prediction"]["wavefronts_per_access"]) for x, j in latest.items()]
        p = next(iter(latest.values()))["params"]
        return line_chart(f"smem sweep over {var}: {_smem_name(p)}", var, "cycles / warp access",
                          [{"name": "measured", "points": meas}, {"name": "model wavefronts", "points": model}])
    names: list[str] = []
    for j in latest.values():
        names += [v for v in j["result"]["variants"] if v not in names]
    series = [{"name": v, "points": [(x, j["result"]["variants"][v]["gbps"]) for x, j in latest.items()
                                     if v in j["result"]["variants"]]} for v in names]
    p = next(iter(latest.values()))["params"]
    return line_chart(f"transpose sweep over {var}: {p.get('dtype')}, tile {p.get('tile')}", var, "GB/s", series)


# ----------------------------------------------------------------------------------------------- committed results
def newest_result(prefix: str, results_dir: Path | None = None) -> tuple[str, dict] | None:
    """(file name, document) of the ``<prefix>_*.json`` under bench/results with the latest ``date`` field."""
    best = None
    for f in (results_dir or RESULTS_DIR).glob(f"{prefix}_*.json"):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        key = (str(doc.get("date") or ""), f.name)
        if best is None or key > best[0]:
            best = (key, f.name, doc)
    return (best[1], best[2]) if best else None


def reference_charts(results_dir: Path | None = None) -> dict:
    """Charts of the committed smem and transpose measurements: ``{"smem": {...} | None, "transpose": {...} | None}``.

    smem: one bar per case, measured cycles per warp access with the model's wavefronts as a marker and the
    slowdown against the same element size's conflict-free row read. transpose: per configuration a line chart of
    GB/s over n (one line per variant, the copies included) and a bar chart of % of the device copy at the largest n."""
    out: dict[str, Any] = {"smem": None, "transpose": None}
    found = newest_result("smem", results_dir)
    if found:
        name, doc = found
        cases = {k: v for k, v in doc.get("cases", {}).items() if "derived" in v}
        bars = []
        for case, r in cases.items():
            cyc, model = r["derived"]["cycles_per_warp_access"], r["prediction"]["wavefronts_per_access"]
            ideal = r["prediction"].get("min_wavefronts_ideal") or _ideal(r)
            bars.append({"label": case, "value": cyc, "model": model, "cls": "bad" if model > ideal else "good",
                         "note": f"{cyc / ideal:.1f}x" if ideal else "", "layout": r.get("layout")})
        out["smem"] = {"file": name, "date": doc.get("date"), "device": (doc.get("device") or {}).get("name"),
                       "driver": (doc.get("device") or {}).get("driver"), "targets": doc.get("targets"),
                       "chart": bar_chart("Shared-memory reads: cycles per warp access (measured bars, model ticks)",
                                          "cycles", bars)}
    found = newest_result("transpose", results_dir)
    if found:
        name, doc = found
        configs: dict[str, dict] = {}
        for r in doc.get("cases", {}).values():
            if "variants" not in r:
                continue
            cfg = r["config"]
            key = f"{'fp32' if cfg['elem_bytes'] == 4 else 'fp16'} tile {cfg['tile']}"
            configs.setdefault(key, {})[cfg["n"]] = r
        lines, pct = [], []
        for key, by_n in configs.items():
            variants = list(next(iter(by_n.values()))["variants"])
            lines.append(line_chart(f"Transpose {key}: GB/s over n", "n", "GB/s",
                                    [{"name": v, "points": [(n, r["variants"][v]["gbps"]) for n, r in by_n.items()
                                                            if v in r["variants"]]} for v in variants]))
            big = by_n[max(by_n)]
            for v, x in big["variants"].items():
                if v in ("memcpy", "copy_kernel"):
                    continue
                pct.append({"label": f"{key.replace(' tile ', '/')} {v}", "value": x["pct_of_copy"],
                            "cls": "good" if x["pct_of_copy"] >= 85 else "bad",
                            "note": f"{x['gbps']:.0f} GB/s"})
        out["transpose"] = {"file": name, "date": doc.get("date"), "device": (doc.get("device") or {}).get("name"),
                            "driver": (doc.get("device") or {}).get("driver"), "lines": lines,
                            "pct": bar_chart("Transpose at the largest n: % of the device-to-device copy",
                                             "%", pct, {"value": 85, "label": "target"})}
    return out


def _ideal(r: dict) -> float:
    """Fewest wavefronts a warp access of this width can take (CONTRACT §3 phases; ldmatrix: one per matrix)."""
    plan = r.get("plan") or {}
    acc = plan.get("access") or {}
    if acc.get("kind") == "ldmatrix":
        return float(acc.get("num", 4))
    width = plan.get("access_width_bytes") or plan.get("element_bytes") or 4
    return float(max(1, width // 4))
