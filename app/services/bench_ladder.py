"""The GEMM ladder on the lab page: measured TFLOP/s per rung against cuBLAS (one bar chart per problem size) from a
committed ``bench/results/gemm_*.json`` through ``gpu_worker.gemm.ladder``; the ladder as a waterfall (each rung's
idea as the TFLOP/s it adds, with cuBLAS and the measured mma.sync and wgmma ceilings as lines); rung 4's limit from
the committed Nsight Compute figures; and each rung's shared-memory layout drawn by the explorer's grid renderer
(``app.services.banks.bank_grid``) with the bank model's verdict."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from algebra import LayoutError
from app.services import banks
from app.services.bench_charts import BAR_GAP, BAR_W, LEFT, PLOT_H, RESULTS_DIR, _fmt, _nice_top, bar_chart

#: The idea each rung adds, as the waterfall labels it.
STEP_LABELS = {1: "SIMT fp32", 2: "mma.sync", 3: "padding", 4: "swizzle", 5: "cp.async", 6: "wgmma+TMA",
               7: "warp-spec.", 8: "stream-K"}
WATERFALL_SIZES = ("4096x4096x4096", "8192x8192x8192")
NCU_FILE = "gemm_h200_ncu_rung4_vs_rung5.json"
ENERGY_FILE = "gemm_h200_energy.json"
LSU_METRIC = "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed"

#: The ldmatrix.x4 of a 16x16 bf16 fragment at the tile's origin: what rungs 2-5 issue and the 8-row x 16-byte
#: pattern a K-major wgmma descriptor walks (gpu_worker.gemm.predicted_wavefronts reads the same addresses).
LDMATRIX_X4 = {"kind": "ldmatrix", "num": 4, "row": 0, "col": 0}


def gemm_files() -> list[dict]:
    """The ladder result files: ``[{"name", "rungs", "date"}]``, most complete (then newest) first; files holding no
    timed rung of the ladder (experiment records, ncu summaries, the layouts records) are left out."""
    out = []
    for f in RESULTS_DIR.glob("gemm_*.json"):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        rungs = {e.get("rung") for e in doc.get("rungs", [])
                 if isinstance(e, dict) and not e.get("defines") and isinstance(e.get("results"), list)}
        if not rungs - {None}:
            continue
        out.append({"name": f.name, "rungs": len(rungs - {None}), "date": str(doc.get("date") or "")})
    return sorted(out, key=lambda d: (d["rungs"], d["date"]), reverse=True)


def rung_access(info: dict) -> tuple[str, dict, int]:
    """(the drawn sub-layout's base, the access, rows drawn) for a rung: the rows the first fragment read touches.

    bf16 rungs: the first 16 rows of the A tile and ldmatrix.x4 at (0, 0). Rung 1 (fp32, M-major): the first 64 rows,
    lane l reading a float4 at row 4 (l % 16) of k 0 (as gpu_worker.gemm.predicted_wavefronts)."""
    shape_stride = info["base_layout"]
    shape, _, stride = shape_stride.partition(":")
    cols = shape.strip("()").split(",")[1]
    if info["element_bytes"] == 4:
        rows = 64
        access = {"kind": "offsets", "offsets": [4 * (lane % 16) for lane in range(32)], "vector": 4}
    else:
        rows = 16
        access = LDMATRIX_X4
    return f"({rows},{cols}):{stride}", access, rows


def banks_url(info: dict, sub: str, access: dict) -> str:
    """Permalink of the swizzle & banks lab showing the same tile and access."""
    q = {"layout": sub, "element_bytes": info["element_bytes"], "swizzle": info.get("swizzle") or ""}
    if access["kind"] == "ldmatrix":
        q.update(access=f"ldmatrix:{access['row']},{access['col']}", num=access["num"])
    else:
        q.update(access="offsets:" + ",".join(map(str, access["offsets"])), vector=access["vector"])
    return "/banks?" + urlencode(q)


def rung_views(rungs: list[dict]) -> list[dict]:
    """Per rung: the grid (cells coloured and labelled by bank, the accessed cells outlined), the analysis, and
    ``agrees``: whether the drawn access gives the wavefronts ``gpu_worker.gemm`` predicts for the kernel."""
    out = []
    for r in rungs:
        sub, access, rows = rung_access(r)
        item: dict[str, Any] = {"rung": r, "sub": sub, "rows_drawn": rows, "banks_url": banks_url(r, sub, access)}
        try:
            view = banks.analyze(sub, r.get("swizzle"), r["element_bytes"], access)
            item.update(view=view, grid=banks.bank_grid(view, f"rung{r['id']}-smem"),
                        agrees=view.wavefronts == (r.get("prediction") or {}).get("wavefronts"))
        except LayoutError as exc:
            item.update(view=None, grid=None, error=str(exc), agrees=False)
        out.append(item)
    return out


def ladder_view(source: str | None = None) -> dict:
    """The ladder section: ``{"files", "source", "charts", "rungs", "device", "date", "error"}``.

    ``source`` picks a file by name among ``gemm_files()`` (anything else falls back to the first). Post-condition:
    one bar chart per size, one bar per rung that ran at that size (failed checks are drawn as 0 with a note), the
    chart's reference line at that size's cuBLAS TFLOP/s."""
    files = gemm_files()
    names = [f["name"] for f in files]
    if not names:
        return {"files": [], "source": None, "charts": [], "rungs": [], "error": "no gemm_*.json under bench/results"}
    chosen = source if source in names else names[0]
    try:
        from gpu_worker import gemm

        lad = gemm.ladder(RESULTS_DIR / chosen)
    except (ImportError, OSError, ValueError, KeyError) as exc:
        return {"files": files, "source": chosen, "charts": [], "rungs": [],
                "error": f"cannot read {chosen}: {type(exc).__name__}: {exc}"}
    cublas = {c["size"]: c["tflops"] for c in lad["cublas"]}
    charts = []
    for size in lad["sizes"]:
        bars = []
        for r in lad["rungs"]:
            res = next((x for x in r["results"] if x["size"] == size), None)
            if res is None:
                continue
            ok = bool(res.get("ok")) and res.get("tflops") is not None
            pct = res.get("pct_of_cublas")
            bars.append({"label": f"rung {r['id']}", "value": res["tflops"] if ok else 0.0,
                         "cls": "good" if ok and pct and pct >= 70 else ("bad" if not ok else ""),
                         "note": (f"{pct:.0f}%" if pct is not None else "") if ok else "check failed",
                         "tip": f"rung {r['id']} {r['title']}: "
                                + (f"{res['tflops']:.1f} TFLOP/s" if ok else res.get("error") or "failed")
                                + (f", SM clock {clk['ghz_median']:.2f} GHz in the kernel"
                                   if ok and (clk := res.get("in_kernel_clock")) else "")})
        ref = {"value": cublas.get(size), "label": "cuBLAS"} if cublas.get(size) else None
        charts.append(bar_chart(f"{size.replace('x', ' x ')} bf16: TFLOP/s per rung", "TFLOP/s", bars, ref))
    from app.services.ladder_layouts import ladder_rows

    return {"files": files, "source": chosen, "charts": charts, "rungs": rung_views(lad["rungs"]),
            "layouts": ladder_rows(),
            "waterfalls": ladder_waterfalls(lad), "lsu": lsu_limit(), "energy": energy_rows(),
            "peaks": lad.get("peaks"),
            "variants": lad.get("variants") or [], "variant_sizes": lad["sizes"],
            "throttle": lad.get("throttle"), "command": lad.get("command"),
            "device": lad.get("device"), "driver": lad.get("driver"), "date": lad.get("date"), "error": None}


def waterfall_chart(title: str, unit: str, steps: list[dict], lines: list[dict]) -> dict:
    """Floating bars ``[{"label", "value", "tip"?}]`` (each a cumulative value; bar i spans step i-1's value to its
    own, the first from 0) and labelled horizontal lines ``[{"label", "value", "cls"}]``.

    Post-condition: each bar gets ``x``, ``y`` (its top) and ``h`` with ``h == |value - previous| / top * PLOT_H``,
    ``delta`` (value - previous) and ``cls`` "good" (gain) or "bad" (loss); ``top`` >= every value and line; each line
    gets ``y`` and a label row ``ty`` at least 12 px from the others."""
    vals = [st["value"] for st in steps] + [ln["value"] for ln in lines]
    top = _nice_top(max(vals, default=1.0))
    chars = max([len(st["label"]) for st in steps] + [6])
    slot = max(BAR_W + BAR_GAP, round(5.6 * chars) + 8)
    px = lambda v: round(PLOT_H - v / top * PLOT_H, 1)  # noqa: E731
    bars, prev = [], 0.0
    for i, st in enumerate(steps):
        v, delta = st["value"], st["value"] - prev
        bars.append({**st, "x": LEFT + i * slot + (slot - BAR_W) // 2, "y": px(max(v, prev)),
                     "h": round(abs(delta) / top * PLOT_H, 1), "delta": delta, "prev_y": px(prev), "vy": px(v),
                     "text": ("+" if delta >= 0 else "−") + _fmt(abs(delta)) if i else _fmt(v),
                     "cls": "good" if delta >= 0 else "bad", "total": _fmt(v)})
        prev = v
    right = LEFT + max(len(steps), 1) * slot
    placed = []
    for ln in sorted(lines, key=lambda x: -x["value"]):
        ty = px(ln["value"]) + 4
        if placed and ty - placed[-1]["ty"] < 12:
            ty = placed[-1]["ty"] + 12
        placed.append({**ln, "y": px(ln["value"]), "ty": ty, "text": _fmt(ln["value"])})
    return {"type": "waterfall", "title": title, "unit": unit, "bars": bars, "lines": placed, "top": top,
            "plot_h": PLOT_H, "right": right, "width": right + 190, "bar_w": BAR_W,
            "yticks": [{"y": px(top * f), "label": _fmt(top * f)} for f in (0, 0.25, 0.5, 0.75, 1)]}


def ladder_waterfalls(lad: dict) -> list[dict]:
    """One waterfall per size of WATERFALL_SIZES in the ladder: the rungs that passed there, in order, each bar the
    TFLOP/s its idea adds, a rung's TFLOP/s being its % of cuBLAS times cuBLAS's median TFLOP/s at that size in the
    run; lines at that cuBLAS median and the measured mma.sync and wgmma ceilings."""
    cublas = {c["size"]: c["tflops"] for c in lad["cublas"]}
    peaks = lad.get("peaks") or {}
    out = []
    for size in WATERFALL_SIZES:
        steps = []
        for r in lad["rungs"]:
            res = next((x for x in r["results"] if x["size"] == size and x.get("ok") and x.get("tflops")), None)
            if res and res.get("pct_of_cublas") and cublas.get(size):
                # The rung's ratio to cuBLAS (timed interleaved, so at the same clocks) times cuBLAS's median over the
                # run: the clock drift between one rung's timing and the next's (power capping) drops out.
                value = round(res["pct_of_cublas"] / 100 * cublas[size], 1)
                steps.append({"label": f"{r['id']} {STEP_LABELS.get(r['id'], '')}".strip(), "value": value,
                              "tip": f"rung {r['id']} {r['title']}: {res['pct_of_cublas']:.1f}% of cuBLAS; measured "
                                     f"{res['tflops']:.1f} TFLOP/s beside cuBLAS {res['cublas_tflops']:.1f}"})
        if len(steps) < 2:
            continue
        lines = [{"label": "cuBLAS", "value": cublas[size], "cls": "cublas"}] if cublas.get(size) else []
        if peaks.get("wgmma"):
            lines.append({"label": "wgmma ceiling", "value": peaks["wgmma"], "cls": "ceiling"})
        if peaks.get("mma_sync"):
            lines.append({"label": "mma.sync ceiling", "value": peaks["mma_sync"], "cls": "ceiling"})
        out.append(waterfall_chart(f"{size.replace('x', ' x ')} bf16: TFLOP/s each idea adds", "TFLOP/s", steps,
                                   lines))
    return out


def lsu_limit(results_dir=None) -> dict | None:
    """Rung 4's limit from the committed Nsight Compute run: per kernel the TFLOP/s of the profiled launch, L1/TEX
    throughput, and the L1's LSU data pipe (wavefronts, % of peak) where measured, with the pipe % one TFLOP/s costs
    and the pipe % that rung 4's withdrawn target (60 % of cuBLAS) would need. None without the file."""
    path = (results_dir or RESULTS_DIR) / NCU_FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    target = 0.6 * 783  # 60 % of cuBLAS at 4096^3 in the ladder's runs
    rows, bars = [], []
    for name, k in doc.get("kernels", {}).items():
        m = k.get("metrics") or {}
        tf = m.get("tflops_from_duration")
        lsu = (k.get("l1tex_breakdown_pct_of_peak") or {}).get(LSU_METRIC)
        if not tf:
            continue
        row = {"name": name, "what": k.get("what"), "tflops": tf, "l1tex_pct": m.get("L1/TEX Cache Throughput (%)"),
               "lsu_pct": lsu, "lsu_per_tflops": lsu / tf if lsu else None,
               "lsu_at_target": lsu / tf * target if lsu else None}
        rows.append(row)
        if lsu:
            bars.append({"label": name, "value": round(row["lsu_at_target"], 1),
                         "cls": "bad" if row["lsu_at_target"] > 80 else "good",
                         "note": f"{row['lsu_per_tflops']:.3f}%/TF",
                         "tip": f"{k.get('what')}: {lsu:.1f}% of the LSU pipe at {tf:.0f} TFLOP/s"})
    chart = bar_chart(f"L1 LSU data pipe needed for {target:.0f} TFLOP/s (60% of cuBLAS), % of its peak", "%", bars,
                      {"value": 100, "label": "pipe peak"}) if bars else None
    return {"file": path.name, "date": doc.get("date"), "device": doc.get("device"), "command": doc.get("command"),
            "reading": doc.get("reading"), "rows": rows, "chart": chart, "target_tflops": round(target)}


def energy_rows(results_dir=None) -> dict | None:
    """The sustained runs (``harness --energy``) of the committed energy file: per job, size and distribution, each
    kernel's mean over its two runs (TFLOP/s, joules per GEMM, watts, NVML's SM clock) and the job's sustained % of
    cuBLAS. None without the file or without sustained runs in it."""
    path = (results_dir or RESULTS_DIR) / ENERGY_FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None

    def mean(runs: list[dict], key: str) -> float | None:
        vals = [r[key] for r in runs if isinstance(r.get(key), (int, float)) and r[key] >= 0]
        return sum(vals) / len(vals) if vals else None

    rows = []
    for entry in doc.get("rungs", []):
        for r in entry.get("results", []):
            s = r.get("sustained")
            if not s:
                continue
            row = {"job": entry.get("label"), "size": f"{r['m']}x{r['n']}x{r['k']}", "dist": r.get("dist"),
                   "pct_of_cublas": s.get("pct_of_cublas")}
            for who in ("rung", "cublas"):
                row[who] = {k: mean(s.get(who) or [], k) for k in ("tflops", "joules_per_gemm", "watts",
                                                                    "sm_clock_mhz")}
            rows.append(row)
    if not rows:
        return None
    return {"file": path.name, "date": doc.get("date"), "reading": doc.get("reading"), "rows": rows,
            "seconds": next((r.get("sustained", {}).get("seconds") for e in doc.get("rungs", [])
                             for r in e.get("results", []) if r.get("sustained")), None)}
