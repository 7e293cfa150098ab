"""Nsight Compute for the GEMM benchmark (bench/gemm.py): the ldmatrix wavefront counters of rungs 2-4 on one small
size, and the summary of an ``ncu --section ...`` text report (bench/gemm_device.sh). Standard library only."""

from __future__ import annotations

import csv
import glob
import io
import re
import shutil
import subprocess
from pathlib import Path

NCU_RUNGS = (2, 3, 4)
NCU_SIZE = "1024x1024x1024"
NCU_METRICS = [
    "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
]


def run_ncu(binary: Path, env: dict, timeout: int) -> dict:
    ncu = shutil.which("ncu") or next(iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))), None)
    if not ncu:
        return {"error": "ncu not found"}
    result: dict = {"size": NCU_SIZE, "clock_control": "none"}
    pending = list(NCU_METRICS)
    for attempt in range(2):
        metrics = pending if attempt == 0 else None
        todo = [pending] if metrics else [[m] for m in pending]
        pending = []
        for group in todo:
            cmd = [ncu, "--clock-control", "none", "--csv", "--launch-count", "1", "-k", "regex:gemm_(rung|mma)",
                   "--metrics", ",".join(group), str(binary), "--profile", "--sizes", NCU_SIZE]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            except subprocess.TimeoutExpired:
                result.setdefault("errors", []).append(f"timeout: {group}")
                continue
            got = parse_ncu_csv(proc.stdout)
            result.update(got)
            missing = [m for m in group if m not in got]
            if missing:
                if attempt == 0:
                    pending = missing
                else:
                    result.setdefault("unavailable", []).extend(missing)
                    result.setdefault("errors", []).append(proc.stderr.strip()[-400:] or proc.stdout.strip()[-400:])
        if not pending:
            break
    ld = result.get("smsp__sass_inst_executed_op_ldsm.sum")
    wf = result.get("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum")
    if ld and wf:
        result["wavefronts_per_ldmatrix"] = round(wf / ld, 3)
        result["ldsm_excess_wavefronts"] = wf - 4 * ld  # x4: 4 wavefronts per instruction without conflicts
    return result


def parse_ncu_csv(text: str) -> dict:
    start = text.find('"ID"')
    if start < 0:
        return {}
    out = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        name, value = row.get("Metric Name"), (row.get("Metric Value") or "").replace(",", "")
        try:
            out[name] = float(value)
        except ValueError:
            continue
    return out


NCU_KEYS = ("SM Frequency", "Elapsed Cycles", "Duration", "DRAM Throughput", "L2 Cache Throughput",
            "L1/TEX Cache Throughput", "SM Active Cycles", "Compute (SM) Throughput", "Issue Slots Busy", "L2 Hit Rate",
            "Memory Throughput", "Warp Cycles Per Issued Instruction")


def ncu_sections_summary(text: str) -> dict:
    """Per kernel in an ``ncu --section ...`` text report: the NCU_KEYS figures ("name (unit)": value) and the
    tensor pipe's share of elapsed cycles where ncu names it the busiest pipe (or the shared pipe's, where ncu names
    that one, dominated by its tensor sub-pipe). Keys: "rung8" or cuBLAS's kernel name."""
    out = {}
    for block in re.split(r"\n(?=  \S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\))", text)[1:]:
        head = block.splitlines()[0].strip()
        name = "rung8" if "gemm_rung8" in head else head.split(" ")[0]
        m = {}
        for k in NCU_KEYS:
            hit = re.search(r"^\s+" + re.escape(k) + r"\s+(\S+)\s+([\d,.]+)\s*$", block, re.M)
            if hit:
                m[f"{k} ({hit.group(1)})"] = float(hit.group(2).replace(",", ""))
        tensor = re.search(r"Tensor is the highest-utilized pipeline \(([\d.]+)%\)", block)
        shared = re.search(r"Shared is the highest-utilized pipeline \(([\d.]+)%\)(?:(?!highest-utilized).)*?"
                           r"dominated by its\s+Tensor", block, re.S)
        if tensor:
            m["tensor pipe, % of elapsed cycles"] = float(tensor.group(1))
        elif shared:  # ncu may name the shared pipe, the sum that holds the tensor pipe, when tensor work dominates it
            m["shared pipe (tensor-dominated), % of elapsed cycles"] = float(shared.group(1))
        out[name] = {"kernel": head[:160], "metrics": m}
    return out
