"""The GEMM ladder on the lab page: measured TFLOP/s per rung against cuBLAS (one bar chart per problem size) from a
committed ``bench/results/gemm_*.json`` through ``gpu_worker.gemm.ladder``, and each rung's shared-memory layout
drawn by the explorer's grid renderer (``app.services.banks.bank_grid``) with the bank model's verdict."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from algebra import LayoutError
from app.services import banks
from app.services.bench_charts import RESULTS_DIR, bar_chart

#: The ldmatrix.x4 of a 16x16 bf16 fragment at the tile's origin: what rungs 2-5 issue and the 8-row x 16-byte
#: pattern a K-major wgmma descriptor walks (gpu_worker.gemm.predicted_wavefronts reads the same addresses).
LDMATRIX_X4 = {"kind": "ldmatrix", "num": 4, "row": 0, "col": 0}


def gemm_files() -> list[dict]:
    """The ladder result files: ``[{"name", "rungs", "date"}]``, most complete (then newest) first; files holding no
    rung of the ladder (experiment records, ncu summaries) are left out."""
    out = []
    for f in RESULTS_DIR.glob("gemm_*.json"):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        rungs = {e.get("rung") for e in doc.get("rungs", []) if isinstance(e, dict) and not e.get("defines")}
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
                                + (f"{res['tflops']:.1f} TFLOP/s" if ok else res.get("error") or "failed")})
        ref = {"value": cublas.get(size), "label": "cuBLAS"} if cublas.get(size) else None
        charts.append(bar_chart(f"{size.replace('x', ' x ')} bf16: TFLOP/s per rung", "TFLOP/s", bars, ref))
    return {"files": files, "source": chosen, "charts": charts, "rungs": rung_views(lad["rungs"]),
            "device": lad.get("device"), "driver": lad.get("driver"), "date": lad.get("date"), "error": None}
