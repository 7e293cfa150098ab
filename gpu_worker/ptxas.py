"""The ``nvcc -Xptxas -v`` resource report of a GEMM rung (standard library only: bench scripts import it too)."""

from __future__ import annotations

import re


def parse_ptxas(text: str) -> dict:
    """Registers, spills, stack and static shared memory of the rung's kernel from ``-Xptxas -v`` output.

    Post: keys ``registers``, ``static_smem_bytes``, ``kernel`` (and ``stack_bytes``, ``spill_stores``,
    ``spill_loads`` when reported) for the last ``gemm_rung*`` / ``gemm_mma_*`` entry; ``warnings`` lists ptxas lines
    about serialized wgmma or setmaxnreg.
    """
    info: dict = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            continue
        if not current or not re.search(r"gemm_(rung\d|mma_)", current):
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            info.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            s = re.search(r"(\d+) bytes smem", line)
            info.update(registers=int(m.group(1)), static_smem_bytes=int(s.group(1)) if s else 0, kernel=current)
        if "C7508" in line or "setmaxnreg" in line.lower() or "serialized" in line.lower():
            info.setdefault("warnings", []).append(line.strip())
    return info
