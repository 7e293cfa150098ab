"""The GEMM ladder's layouts: ``GET /api/bench/gemm/rungs`` (CONTRACT §6) and the rung pages ``/lab/rungs/{k}``,
both from the rungs' declarations (gpu_worker/gemm_decl.py) and the bank model, with Nsight Compute's figures beside
the predictions from the committed H200 record (``bench/results/gemm_layouts_*.json``, bench/gemm_layouts.py)."""

from __future__ import annotations

import functools
import json
from typing import Any
from urllib.parse import quote, urlencode

import algebra as A
from algebra import atoms
from app.services.bench_charts import RESULTS_DIR
from gpu_worker.gemm_decl import DECLS, predict
from gpu_worker.gemm_layouts import Access, RungDecl, SmemOperand

RECORD_GLOB = "gemm_layouts_*.json"
#: The atlas's operand for an MMA atom: the A fragment that ldmatrix feeds (SM80), the accumulator of wgmma (SM90).
TV_OPERAND = {"SM80": "A", "SM90": "C"}
TMA_CALL = ("cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, ptr, {{4096, 4096}}, {{8192}}, "
            "{{{cols}, {rows}}}, {{1, 1}}, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_{swizzle}, "
            "CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)")


class UnknownRung(LookupError):
    """No rung of that number (the page answers 404)."""


# ------------------------------------------------------------------------------------------------ links
def drawn_tile(op: SmemOperand, access: Access) -> str:
    """The operand's rows that the access's first instance touches (a multiple of 8, from row 0), same strides: the
    banks lab draws this sub-tile, whose offsets are the operand's own. A column-major tile is drawn whole: cutting
    its rows would not shorten its offsets."""
    if op.stride[0] < op.stride[1]:
        return op.base
    rows = max(r for r, _ in access.instances()[0]) + 1
    rows = min(op.shape[0], -(-rows // 8) * 8)
    return f"({rows},{op.shape[1]}):({op.stride[0]},{op.stride[1]})"


def banks_access(op: SmemOperand, access: Access) -> dict[str, str | int]:
    """The banks lab's ``access`` (and ``vector`` / ``num``) for the first instance: ldmatrix at the fragment's first
    (row, column), whose four 8x8 matrices are the instance's, or the lanes' element offsets under the swizzle."""
    coords = access.instances()[0]
    if access.kind == "ldmatrix":
        r0, c0 = min(r for r, _ in coords), min(c for _, c in coords)
        return {"access": f"ldmatrix:{r0},{c0}", "num": len(coords) // 8}
    base = A.parse(op.base)
    return {"access": "offsets:" + ",".join(str(base(c)) for c in coords), "vector": access.width // op.element_bytes}


def banks_url(op: SmemOperand, access: Access) -> str:
    q: dict[str, Any] = {"layout": drawn_tile(op, access), "element_bytes": op.element_bytes,
                         "swizzle": op.swizzle_text or "", **banks_access(op, access)}
    if q.get("vector") == 1:
        del q["vector"]
    if q.get("num") == 4:
        del q["num"]
    return "/banks?" + urlencode(q)


def tv_url(name: str) -> str | None:
    """The TV atlas for an atom it knows (None for the others: UniversalFMA, the TMA copies)."""
    if name not in atoms.names():
        return None
    operand = TV_OPERAND.get(name[:4])
    return "/tv?" + urlencode({"atom": name, **({"operand": operand} if operand else {})})


def doctor_desc_url(d: RungDecl) -> str | None:
    if not d.wgmma:
        return None
    a = d.operand("A")
    tile = f"{a.swizzle_text} o ({d.wgmma.m},{a.shape[1]}):({a.stride[0]},{a.stride[1]})"
    return "/doctor?" + urlencode({"descriptor": f"0x{d.wgmma.value:016x}", "desc_mn": d.wgmma.m,
                                   "desc_tile": tile}) + "#desc"


def tma_call(box) -> str:
    return TMA_CALL.format(cols=box.box_dim[0], rows=box.box_dim[1], swizzle=box.swizzle)


def links(d: RungDecl) -> dict[str, Any]:
    """Where to look at the rung's layouts: its page, each operand in the explorer, each access in the banks lab,
    the atoms in the TV atlas, the descriptor and the TMA boxes in the layout doctor."""
    return {"page": f"/lab/rungs/{d.rung}",
            "explorer": {op.operand: "/?layout=" + quote(op.layout) for op in d.smem},
            "banks": [{"operand": op.operand, "access": a.name, "url": banks_url(op, a)}
                      for op in d.smem for a in op.accesses],
            "tv": {"mma": tv_url(d.mma_atom), "copy": tv_url(d.copy_atom)},
            "doctor": {"descriptor": doctor_desc_url(d),
                       "tma": [{"operand": b.operand, "url": doctor_tma_url(b)} for b in d.tma]}}


def doctor_tma_url(box) -> str:
    return "/doctor?" + urlencode({"tma_call": tma_call(box)}) + "#desc"


# ------------------------------------------------------------------------------------------------ the API
def _tma(d: RungDecl) -> list[dict] | None:
    return [{"operand": b.operand, "direction": b.direction, "box_dim": list(b.box_dim),
             "swizzle": f"CU_TENSOR_MAP_{b.swizzle}", "multicast": b.multicast, "bytes": b.bytes,
             "smem_layout": b.smem_layout} for b in d.tma] or None


def _desc(d: RungDecl) -> dict | None:
    w = d.wgmma
    if not w:
        return None
    from algebra.hw.hopper import LAYOUT_TYPE_NAMES

    return {"instruction": w.instruction, "major": w.major, "layout_type": w.layout_type,
            "swizzle": LAYOUT_TYPE_NAMES[w.layout_type], "leading_byte_offset": w.leading_byte_offset,
            "stride_byte_offset": w.stride_byte_offset, "base_offset": 0, "k_step_bytes": w.k_step_bytes,
            "value": f"0x{w.value:016x}", "atom": "GMMA::Layout_K_SW128_Atom<bf16>"}


def rung_entry(d: RungDecl) -> dict[str, Any]:
    """One rung as ``GET /api/bench/gemm/rungs`` answers it (CONTRACT §6), exactly those fields."""
    smem = [{"operand": op.operand, "layout": op.layout, "swizzle": op.swizzle_text, "bytes": op.bytes,
             "accesses": [{"name": a.name, "predicted_wavefronts": p.wavefronts, "ideal": p.ideal}
                          for a in op.accesses for p in [predict(d.rung, op.operand, a.name)]]} for op in d.smem]
    return {"rung": d.rung, "name": d.name, "tile": list(d.tile), "stages": d.stages, "smem": smem, "tma": _tma(d),
            "wgmma_desc": _desc(d), "atoms": {"mma": d.mma_atom, "copy": d.copy_atom}, "links": links(d)}


@functools.cache
def _rungs_json() -> str:
    return json.dumps([rung_entry(DECLS[r]) for r in sorted(DECLS)])


def rungs_api(rung: int | None = None) -> list[dict]:
    """Every rung, in order, or only ``rung`` (UnknownRung for one the ladder does not have). Post-condition: each
    ``layout`` parses with ``algebra.parse``; each access's ``predicted_wavefronts`` is the bank model's per
    instruction and ``ideal`` its floor (one wavefront a phase)."""
    if rung is not None and rung not in DECLS:
        raise UnknownRung(f"no rung {rung}: the ladder has rungs {min(DECLS)} to {max(DECLS)}")
    return [r for r in json.loads(_rungs_json()) if rung is None or r["rung"] == rung]


# ------------------------------------------------------------------------------------------------ measurements
def record(results_dir=None) -> dict | None:
    """The newest committed layouts record (by file name: the date is in it), or None."""
    files = sorted((results_dir or RESULTS_DIR).glob(RECORD_GLOB))
    for f in reversed(files):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("rungs"), list):
            return {**doc, "file": f.name}
    return None


def measured(rung: int, doc: dict | None) -> dict | None:
    """The record's row for a rung: predicted and measured per Nsight class, the verdicts, the raw metrics."""
    if not doc:
        return None
    return next((r for r in doc["rungs"] if r.get("rung") == rung), None)


def record_meta(doc: dict | None) -> dict | None:
    """Device, driver, date, clocks and rung 8's timing of a record."""
    if not doc:
        return None
    smi = doc.get("nvidia_smi_before") or {}
    timing = (doc.get("timing") or {}).get("summary") or {}
    return {"file": doc.get("file"), "date": doc.get("date"), "device": smi.get("name"),
            "driver": smi.get("driver_version"), "sm_clock": smi.get("clocks.sm"),
            "max_sm_clock": smi.get("clocks.max.sm"),
            "size": doc.get("profile_size"), "timing": timing,
            "all_equal": doc.get("all_measured_equal_predicted")}


# ------------------------------------------------------------------------------------------------ the rung page
def banks_view(op: SmemOperand, access: Access):
    """(the banks lab's analysis of the access's first instance, its grid) on the drawn sub-tile."""
    from app.services import banks

    q = banks_access(op, access)
    kind, _, arg = str(q["access"]).partition(":")
    if kind == "ldmatrix":
        r0, c0 = (int(x) for x in arg.split(","))
        acc: dict[str, Any] = {"kind": "ldmatrix", "num": q["num"], "row": r0, "col": c0}
    else:
        acc = {"kind": "offsets", "offsets": [int(x) for x in arg.split(",")], "vector": q["vector"]}
    view = banks.analyze(drawn_tile(op, access), op.swizzle_text, op.element_bytes, acc)
    return view, banks.bank_grid(view, f"rung-{op.operand}-{access.instruction.lower().replace('.', '-')}")


def rung_page(rung: int, results_dir=None) -> dict[str, Any]:
    """Everything ``/lab/rungs/{rung}`` shows: the declaration, its neighbours, per operand the accesses with the
    model's verdict and banks-lab links, the first read drawn, and Nsight Compute's figures from the record.
    Raises UnknownRung for a rung the ladder does not have."""
    d = DECLS.get(rung)
    if d is None:
        raise UnknownRung(f"no rung {rung}: the ladder has rungs {min(DECLS)} to {max(DECLS)}")
    entry = rung_entry(d)
    ops = []
    for op, e in zip(d.smem, entry["smem"], strict=True):
        rows = [{"access": a, "p": predict(rung, op.operand, a.name), "url": banks_url(op, a)} for a in op.accesses]
        ops.append({"op": op, "entry": e, "explorer": entry["links"]["explorer"][op.operand], "rows": rows})
    read_op, read = next((op, a) for op in d.smem for a in op.accesses if a.counter in ("ld", "gmma"))
    view, grid = banks_view(read_op, read)
    doc = record(results_dir)
    row = measured(rung, doc)
    classes = [{"name": c, "predicted": row["predicted"][c], "measured": (row.get("measured") or {}).get(c),
                "match": (row.get("match") or {}).get(c)} for c in ("ld", "st", "ldgsts", "gmma")
               if row and (row["predicted"][c]["instructions"] or ((row.get("measured") or {}).get(c) or {})
                           .get("instructions") or c in ("ld", "st"))] if row else []
    return {"d": d, "entry": entry, "prev": DECLS.get(rung - 1), "next": DECLS.get(rung + 1), "ops": ops,
            "read": {"op": read_op, "access": read, "view": view, "grid": grid,
                     "url": banks_url(read_op, read)},
            "links": entry["links"], "row": row, "classes": classes, "meta": record_meta(doc),
            "timing": (doc or {}).get("timing", {}).get("summary") if rung == 8 else None}


def ladder_rows(results_dir=None) -> dict[str, Any]:
    """The lab's table of every rung: the model's verdict per access beside the record's Nsight figures."""
    doc = record(results_dir)
    rows = []
    for r in sorted(DECLS):
        d, row = DECLS[r], measured(r, doc)
        preds = [(op.operand, a, predict(r, op.operand, a.name)) for op in d.smem for a in op.accesses]
        rows.append({"rung": r, "name": d.name, "page": f"/lab/rungs/{r}", "layout": d.operand("A").layout,
                     "ideal": all(p.is_ideal for _, _, p in preds),
                     "worst": max(preds, key=lambda x: x[2].conflicts), "row": row})
    return {"rows": rows, "meta": record_meta(doc)}
