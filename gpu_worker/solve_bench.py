"""Measure the layout doctor's answer: each access of a solver request, on the tile as given and on the chosen fixes,
run as one warp instruction (kernels/smem_access.cu) and counted by Nsight Compute beside the model's prediction.

Standard library plus ``algebra`` (the stand-alone script ``bench/solve_smem.py`` runs it on a bare GPU host).
A layout choice is ``{"kind": "naive"}``, ``{"kind": "swizzle", "swizzle": [B, M, S]}``, ``{"kind": "padding",
"pad": p}`` or ``{"kind": "xor", "xor": {"<source bit>": mask}}``; or ``"best"``, the solver's first candidate.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

from gpu_worker.benches import find_ncu, ncu_metrics
from gpu_worker.build import build_kernel
from gpu_worker.run import RunError, run_binary

PROFILE_ITERS = 16
METRICS = {  # (wavefronts, instructions) per mode
    "ld": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__inst_executed_op_shared_ld.sum"),
    "st": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__inst_executed_op_shared_st.sum"),
    "ldmatrix": ("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                 "smsp__inst_executed_op_ldsm.sum"),
}


def _noop(*_a: Any, **_k: Any) -> None:
    return None


def candidate_of(tile: Any, choice: Any, best: Any = None) -> Any:
    """The algebra.doctor.solver Candidate for a layout choice (see the module docstring)."""
    from algebra.doctor import solver
    from algebra.doctor.solver_access import SolveError

    if choice == "best":
        if best is None:
            raise SolveError("layouts: no candidate to measure")
        return best
    kind = choice.get("kind") if isinstance(choice, dict) else None
    if kind == "naive":
        return solver.candidate(tile, "naive")
    if kind == "swizzle":
        b, m, s = (int(x) for x in choice["swizzle"])
        if not solver.swizzle_fits(tile, b, m, s) or b < 1 or s < b:
            raise SolveError(f"layouts: Sw<{b},{m},{s}> does not fit the tile")
        return solver.candidate(tile, "swizzle", (b, m, s))
    if kind == "padding":
        p = int(choice["pad"])
        if tile.lead is None or not 1 <= p <= 128:
            raise SolveError("layouts: padding needs a flat rank-2 tile and 1 <= pad <= 128")
        return solver.candidate(tile, "padding", p)
    if kind == "xor":
        cols = {int(k): int(v) for k, v in dict(choice["xor"]).items()}
        if any(v >> k for k, v in cols.items()):
            raise SolveError("layouts: an XOR map may only flip bits below its source bit")
        return solver.candidate(tile, "xor", cols)
    raise SolveError(f"layouts: unknown layout choice {choice!r}")


def plan(element_bytes: int, tile_text: str, accesses: list[dict], layouts: list[Any]) -> dict[str, Any]:
    """Per layout, per LSU access: the 32 lane byte offsets, the kernel's mode and the model's wavefronts.

    Post-condition: ``predicted`` is ``algebra.banks.analyze`` of ``addresses`` (via the solver's describe)."""
    from algebra.doctor import solver
    from algebra.doctor.solver_explain import describe, hardware

    tile = solver.make_tile(tile_text, element_bytes)
    accs = solver.parse_accesses(accesses, tile)
    naive, cands, _, _ = solver.search(tile, accs)
    best = cands[0] if any(c == "best" for c in layouts) else None
    out = []
    for choice in layouts:
        cand = candidate_of(tile, choice, best)
        if not solver.evaluate(tile, accs, cand):
            raise solver.SolveError(f"layouts: {choice} breaks a vector access")
        d = describe(tile, accs, cand, dict(hardware(tile, accs, cand), vector_kept=True), naive)
        runs = []
        for k, (a, pa) in enumerate(zip(accs, d["per_access"], strict=True)):
            if a.constraint:
                continue
            if a.kind == "stmatrix":  # smem_access.cu issues ld.shared, st.shared and ldmatrix only
                raise solver.SolveError(f"accesses[{k}].kind: the lab measures ld.shared, st.shared and ldmatrix "
                                        "(kernel smem_access.cu), not stmatrix; the doctor's prediction for it uses "
                                        "ldmatrix's bank model (one phase per 8x8 matrix)")
            addrs = list(pa["byte_addresses"])
            mode = "ldmatrix" if a.kind == "ldmatrix" else ("st" if a.op == "store" else "ld")
            lanes = len(addrs)
            table = [addrs[t % lanes] for t in range(32)]  # ld/st: lanes past `lanes` stay idle (--lanes)
            runs.append({"name": a.name, "mode": mode, "width": a.access_bytes(element_bytes), "num": a.num,
                         "trans": bool(a.spec.get("trans", False)), "lanes": lanes, "addresses": table,
                         "predicted": pa["wavefronts"], "phases": pa["phases"]})
        out.append({"choice": choice if choice != "best" else "best", "kind": cand.kind, "layout": d["layout"],
                    "footprint_bytes": max(d["footprint_bytes"], 16), "accesses": runs})
    return {"tile": tile.text, "element_bytes": element_bytes, "layouts": out}


def defines(run: dict) -> dict[str, int]:
    """Compile-time constants of smem_access.cu for one access."""
    mode = {"ld": 0, "st": 1, "ldmatrix": 2}[run["mode"]]
    return {"MODE": mode, "WIDTH": run["width"] if mode != 2 else 16, "LDM_NUM": run["num"] or 4,
            "LDM_TRANS": int(run["trans"])}


def measure_access(run: dict, footprint: int, *, profile: bool = True, timeout_s: float = 240.0) -> dict:
    """Build and run one access (checked on the host), then count its wavefronts with ncu.

    Post-condition: ``check.passed`` (else RunError); ``measured`` is wavefronts per instruction from ncu or None
    with ``reason`` when ncu is missing or failed."""
    built = build_kernel("smem_access", defines(run))
    with tempfile.TemporaryDirectory(prefix="solve-") as tmp:
        path = os.path.join(tmp, "table.txt")
        with open(path, "w") as fh:
            fh.write(" ".join(map(str, run["addresses"])) + "\n")
        args = ["--table", path, "--footprint", str(footprint), "--iters", str(PROFILE_ITERS),
                "--lanes", str(run["lanes"]), "--seed", str(int.from_bytes(os.urandom(4), "little"))]
        result = run_binary(built.path, args, timeout_s=timeout_s)
        out = {"check": result["check"], "device": result["device"], "measured": None, "reason": None}
        if not profile:
            out["reason"] = "not profiled"
            return out
        if not find_ncu():
            out["reason"] = "Nsight Compute (ncu) not found"
            return out
        wave, inst = METRICS[run["mode"]]
        try:
            try:
                m = ncu_metrics(str(built.path), args, (wave, inst), timeout_s=timeout_s)
            except RunError:  # an older ncu without the instruction metric: one warp issues PROFILE_ITERS
                m = ncu_metrics(str(built.path), args, (wave,), timeout_s=timeout_s)
        except RunError as exc:
            out["reason"] = str(exc)
            return out
    n = m.get(inst) or PROFILE_ITERS
    out.update(measured=m.get(wave, 0.0) / n, instructions=n, wavefronts_total=m.get(wave), metrics=m)
    return out


def prebuild(specs: list[dict], workers: int = 8) -> list[str]:
    """Build every kernel variant the specs need, in parallel (nvcc runs are independent); returns build keys."""
    from concurrent.futures import ThreadPoolExecutor

    variants = set()
    for spec in specs:
        p = plan(int(spec["element_bytes"]), spec["tile"], spec["accesses"], list(spec.get("layouts") or ["best"]))
        for lay in p["layouts"]:
            for run in lay["accesses"]:
                variants.add(tuple(sorted(defines(run).items())))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [b.key for b in pool.map(lambda d: build_kernel("smem_access", dict(d)), sorted(variants))]


def run_solve(spec: dict, *, progress: Callable[..., None] = _noop,
              cancelled: Callable[[], bool] = lambda: False, profile: bool = True) -> dict:
    """Measure every access on every requested layout. ``spec``: element_bytes, tile, accesses, layouts.

    Post-condition: each access has ``predicted`` and ``measured`` (wavefronts per instruction, or None with a
    reason) and ``match`` (True when both exist and are equal); ``all_match`` over every measured access."""
    p = plan(int(spec["element_bytes"]), spec["tile"], spec["accesses"], list(spec.get("layouts") or ["best"]))
    total = sum(len(lay["accesses"]) for lay in p["layouts"])
    done = 0
    device = None
    for lay in p["layouts"]:
        for run in lay["accesses"]:
            if cancelled():
                raise RunError("cancelled by user")
            progress("measuring", done, total, access=run["name"], layout=lay["layout"])
            r = measure_access(run, lay["footprint_bytes"], profile=profile)
            device = device or r.pop("device", None)
            r.pop("device", None)
            run.update(r)
            run["match"] = r["measured"] is not None and abs(r["measured"] - run["predicted"]) < 1e-6
            done += 1
    measured = [r for lay in p["layouts"] for r in lay["accesses"] if r["measured"] is not None]
    return {"kind": "smem_solve", **p, "device": device, "all_match": bool(measured) and all(r["match"]
                                                                                            for r in measured),
            "measured_accesses": len(measured)}
