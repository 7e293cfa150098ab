"""The layout doctor's service layer: one function per ``/api/solve/*`` route, shared with the ``/doctor`` page.

Every function turns anything unexpected into a LayoutError (422) through ``guard``; the algebra modules do the work
(``algebra.doctor.solver``, ``algebra.doctor.solver_desc``, ``algebra.doctor.linear_layout``)."""

from __future__ import annotations

import importlib.util
import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import algebra as A
from algebra import LayoutError, atoms
from algebra.doctor import linear_layout as LL
from algebra.doctor import solver_desc as D
from algebra.doctor.solver import solve
from app.budget import cell_kind, charge
from app.config import clip
from app.services.guard import guard

#: Worked examples the page offers (the issue's known answers first).
PRESETS: dict[str, dict[str, Any]] = {
    "fp16-64x64-cpasync-ldmatrix": {
        "title": "fp16 64x64: cp.async 16 B stores + ldmatrix.x4",
        "element_bytes": 2, "tile": "(64,64):(64,1)",
        "accesses": [{"name": "cp.async 16 B", "kind": "offsets", "offsets": [[t // 8, (t % 8) * 8] for t in range(32)],
                      "vector": 8, "op": "store"},
                     {"name": "ldmatrix.x4", "kind": "ldmatrix", "index": [0, 0], "num": 4}]},
    "fp32-32x32-transpose": {
        "title": "fp32 32x32: row writes + column reads (transpose)",
        "element_bytes": 4, "tile": "(32,32):(32,1)",
        "accesses": [{"name": "row write", "kind": "row", "index": 0, "op": "store"},
                     {"name": "column read", "kind": "column", "index": 0}]},
    "fp16-64x64-wgmma": {
        "title": "fp16 64x64: TMA box + wgmma K-major operand + a column read",
        "element_bytes": 2, "tile": "(64,64):(64,1)",
        "accesses": [{"name": "TMA box", "kind": "tma", "box": [64, 64]},
                     {"name": "wgmma A", "kind": "wgmma", "operand": "A", "major": "K"},
                     {"name": "column read", "kind": "column", "index": 0}]},
}


#: The MN extent the descriptor doctor decodes with (``POST /api/solve/descriptor``'s ``mn``, the page's ``desc_mn``).
DESC_MN = range(8, 257)


def desc_mn(text: str) -> int | None:
    """The page's ``desc_mn`` field: blank -> None (the form's default); ASCII digits in :data:`DESC_MN` -> that
    number; anything else -> LayoutError naming the field, so the form never shows another MN than the one asked."""
    t = str(text).strip()
    if not t:
        return None
    if t.isascii() and t.isdigit() and len(t) < 4 and int(t) in DESC_MN:
        return int(t)
    raise LayoutError(f"desc_mn: {clip(t, 20)!r} is not a whole number from {DESC_MN.start} to {DESC_MN.stop - 1} "
                      "(the MN extent of the tile the descriptor describes)")


def _lab_choice(c: dict[str, Any]) -> dict[str, Any]:
    if c["kind"] == "swizzle":
        sw = A.parse(c["swizzle"])
        return {"kind": "swizzle", "swizzle": [sw.bits, sw.base, sw.shift]}
    if c["kind"] == "padding":
        return {"kind": "padding", "pad": c["pad"]}
    if c["kind"] == "xor":
        return {"kind": "xor", "xor": c["xor"]}
    return {"kind": "naive"}


def solve_smem(element_bytes: Any, tile: Any, accesses: Any, limit: int = 12) -> dict[str, Any]:
    """``POST /api/solve/smem`` (CONTRACT §5). Each candidate also carries ``lab``: the ``smem_solve`` job that
    measures it beside the tile as given (``POST /api/bench/jobs``)."""
    t0 = time.perf_counter()
    with guard("solver"):
        out = solve(element_bytes, tile, accesses, limit=limit)
    base = {"element_bytes": out["element_bytes"], "tile": out["tile"], "accesses": accesses}
    for c in out["candidates"]:
        c["lab"] = {"kind": "smem_solve", "params": {**base, "layouts": [{"kind": "naive"}, _lab_choice(c)]}}
    out["elapsed_ms"] = round(1000 * (time.perf_counter() - t0), 1)
    return out


def preview_access(element_bytes: Any, tile: Any, access: Any, index: int = 0) -> dict[str, Any]:
    """One doctor access on the tile as given (``POST /api/solve/access``): ``{"name", "kind", "lanes": [{"lane",
    "row", "col", "offset", "byte", "bank"}], "access_bytes", "phases", "wavefronts", "ideal", "constraint"}``.

    Post-condition: ``bank == (byte // 4) % 32`` and ``byte == element_bytes * offset`` for every lane; the phases
    are ``algebra.hw.banks``' (the solver's ``naive`` per access). A tma / wgmma access has no lanes."""
    from algebra.doctor.solver_access import lane_offsets, make_access, make_tile
    from algebra.hw.banks import analyze, analyze_ldmatrix

    with guard("access"):
        try:
            charge("integer cell", A.size(A.parse(str(tile))), "the tile's offsets")
        except (LayoutError, ValueError, TypeError):
            pass  # make_tile names what is wrong with the tile
        t = make_tile(tile, element_bytes)
        acc = make_access(access, index, t)
        head = {"name": acc.name, "kind": acc.kind, "constraint": acc.constraint}
        if acc.constraint:
            return dict(head, lanes=[], access_bytes=0, phases=[], wavefronts=0, ideal=0)
        offs = lane_offsets(acc, t.offset)
        if offs is None:
            raise LayoutError(f"accesses[{index}]: a lane's {acc.vector} elements are not consecutive, aligned offsets "
                              "in the tile as given, so they are not one vector access")
        eb = t.element_bytes
        addrs = [o * eb for o in offs]
        r = analyze_ldmatrix(addrs, acc.num, kind=acc.kind) if acc.matrix else analyze(addrs, acc.access_bytes(eb))
        lanes = [{"lane": k, "row": rc[0], "col": rc[1], "offset": o, "byte": a, "bank": b}
                 for k, (rc, o, a, b) in enumerate(zip(acc.lanes, offs, addrs, r.banks, strict=True))]
        return dict(head, lanes=lanes, access_bytes=acc.access_bytes(eb), phases=list(r.phases),
                    wavefronts=r.wavefronts, ideal=acc.ideal(eb))


def descriptor(value: Any, element_bytes: int, major: str, mn: int, k: int | None, tile: str | None,
               arch: str = "sm90") -> dict:
    """Decode a wgmma (sm90) or UMMA (sm100) descriptor (``algebra.doctor.solver_desc.decode``)."""
    with guard("descriptor"):
        return D.decode(value, element_bytes, major, mn, k, tile or None, arch=arch)


def descriptor_encode(tile: str, element_bytes: int, major: str, start_address: int, arch: str = "sm90") -> dict:
    """Encode a smem tile as a wgmma or UMMA descriptor (``algebra.doctor.solver_desc.encode``)."""
    with guard("descriptor"):
        return D.encode(tile, element_bytes, major, start_address, arch=arch)


def tma(args: dict[str, Any]) -> dict:
    """Validate ``cuTensorMapEncodeTiled`` arguments (or a pasted call) and draw the box."""
    with guard("tma"):
        return D.tma(args)


def linear_from_layout(text: str) -> dict:
    """A layout (swizzled or not) as its F2 matrix and Triton linear layout JSON."""
    with guard("linear layout"):
        try:
            lay = A.parse(text)
        except (LayoutError, ValueError) as exc:
            raise LayoutError(f"layout: {exc}") from None
        if isinstance(lay, tuple | A.Swizzle):  # a tiler <2:1, 4:1>, a bare Sw<3,3,3>: no one layout's bits
            raise LayoutError(f"layout: {clip(text.strip(), 80)} is not a layout (shape:stride, optionally "
                              "swizzled: Sw<3,3,3> o (8,64):(64,1))")
        charge(cell_kind(lay), A.size(lay), "linear layout")  # enumerated once, then checked point by point
        charge("linear point", A.size(lay), "linearity check")
        out = LL.from_cute(lay)
        out["layout"] = str(lay)
        return out


def linear_to_cute(obj: Any) -> dict:
    """A Triton linear layout JSON (or Gluon's DistributedLinearLayout arguments) as a CuTe layout, or why not."""
    with guard("linear layout"):
        ll = LL.LinearLayout.from_json(obj)
        out = LL.to_cute(ll)
        out["matrix"] = ll.matrix()
        out["bases"] = ll.to_json()
        return out


def linear_from_atom(name: str, operand: str, element_bits: int | None = None) -> dict:
    """An MMA atom's A/B/C or a copy atom's src/dst TV layout as a distributed linear layout. ``element_bits`` recasts
    a copy atom's bits (default 16); an MMA atom's layouts index its own element types, so it takes none."""
    with guard("atom"):
        if name not in atoms.names():
            raise LayoutError(f"name: unknown atom {name[:80]!r}")
        a = atoms.get(name)
        op = operand.upper()
        if hasattr(a, "shape_mnk"):
            if element_bits is not None:
                raise LayoutError(f"element_bits: {name} is an MMA atom, whose TV layouts index its own element "
                                  "types; element_bits recasts a copy atom's bits")
            m, n, k = a.shape_mnk
            tv, tile = {"A": (a.A, (m, k)), "B": (a.B, (n, k)), "C": (a.C, (m, n))}.get(op, (None, None))
        else:
            tv = {"SRC": a.src_layout, "DST": a.dst_layout}.get(op)
            try:
                tv = tv(16 if element_bits is None else element_bits) if tv else None
            except LayoutError as exc:
                raise LayoutError(f"element_bits: {exc}") from None
            tile = (1 << (A.cosize(tv) - 1).bit_length(),) if tv is not None else None
        if tv is None:
            raise LayoutError(f"operand: {operand!r} is not one of A, B, C (MMA) or src, dst (copy)")
        charge("linear point", A.size(tv), "linearity check of the TV layout")
        charge(cell_kind(tv), A.size(tv), "TV layout")
        ll = LL.from_tv(tv, tile)
        return {"atom": name, "operand": op, "tv_layout": str(tv), "tile": list(tile), "bases": ll.to_json(),
                "gluon": ll.gluon(), "matrix": ll.matrix(), "cute": LL.to_cute(ll)["cute"]}


RESULTS_DIR = Path(__file__).resolve().parent.parent.parent / "bench" / "results"


def _strip_names(accesses: Any) -> Any:
    return [{k: v for k, v in a.items() if k != "name"} if isinstance(a, dict) else a for a in accesses or []]


def committed_measurement(element_bytes: Any, tile: Any, accesses: Any) -> dict[str, Any]:
    """The newest committed GPU measurement (bench/results/solve_smem_*.json, ``bench/solve_smem.py``) of this exact
    request (access names aside): ``{"found", "file", "date", "device", "result"}``; ``found`` false otherwise. The
    request is read as the solver reads it first, so a bad one is refused (422) as ``/api/solve/smem`` refuses it."""
    from algebra.doctor.solver_access import make_tile, parse_accesses

    with guard("solver"):
        parse_accesses(accesses, make_tile(tile, element_bytes))
    best = None
    for f in RESULTS_DIR.glob("solve_smem_*.json"):
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("benchmark") == "solve_smem" and (best is None or str(doc.get("date")) > str(best[1].get("date"))):
            best = (f.name, doc)
    if best is None:
        return {"found": False}
    want = (element_bytes, str(tile).strip(), _strip_names(accesses))
    for name, spec in _bench_cases().items():
        if (spec["element_bytes"], spec["tile"], _strip_names(spec["accesses"])) == want:
            result = best[1]["cases"].get(name)
            if result and "layouts" in result:
                return {"found": True, "file": best[0], "date": best[1].get("date"), "case": name,
                        "device": (best[1].get("device") or {}).get("name"), "result": result}
    return {"found": False}


@lru_cache(maxsize=1)
def _bench_cases() -> dict[str, dict]:
    """The cases of bench/solve_smem.py (the script that wrote the committed measurements)."""
    path = RESULTS_DIR.parent / "solve_smem.py"
    spec = importlib.util.spec_from_file_location("layoutlab_bench_solve_smem", path)
    if spec is None or spec.loader is None:
        return {}
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.CASES)
