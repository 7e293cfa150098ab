"""Running one built benchmark binary: a subprocess with a timeout and cancellation, its JSON parsed and checked.

The exit status alone is never trusted: a run counts only when the last JSON line of stdout says ``"ok": true`` and
every correctness check it reports passed.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path


class RunError(RuntimeError):
    """The binary failed, timed out, was cancelled, printed no JSON, or its correctness check failed."""


class RunCancelled(RunError):
    """The run was stopped because the job was cancelled."""


def parse_output(stdout: str) -> dict:
    """The last line of ``stdout`` that parses as a JSON object; raises RunError when there is none."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise RunError("the benchmark printed no JSON result")


def failed_checks(result: dict) -> list[str]:
    """Names of the correctness checks in ``result`` that did not pass (``check`` at top level or per variant)."""
    bad = []
    check = result.get("check")
    if isinstance(check, dict) and not check.get("passed", False):
        bad.append(f"check: {check.get('mismatches')} mismatches; first: {check.get('first_mismatch') or '-'}")
    for name, variant in (result.get("variants") or {}).items():
        vcheck = variant.get("check") if isinstance(variant, dict) else None
        if isinstance(vcheck, dict) and not vcheck.get("passed", False):
            bad.append(f"{name}: {vcheck.get('mismatches')} mismatches")
    return bad


def run_binary(binary: str | Path, args: Sequence[str], *, timeout_s: float = 300.0,
               cancelled: Callable[[], bool] = lambda: False, env: dict | None = None,
               on_progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Run ``binary args`` and return its parsed JSON. Post-condition: the returned dict has ``ok`` true, passed
    every check it reports, and carries ``wall_s`` and ``returncode``; otherwise RunError says why.
    ``PROGRESS <stage> <done> <total>`` lines on stderr are passed to ``on_progress`` as they arrive."""
    cmd = [str(binary), *map(str, args)]
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    except OSError as exc:
        raise RunError(f"could not start {Path(binary).name}: {exc}") from None
    out_chunks: list[str] = []
    err_lines: list[str] = []

    def pump_out() -> None:
        out_chunks.append(proc.stdout.read())

    def pump_err() -> None:
        for line in proc.stderr:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "PROGRESS" and parts[2].isdigit() and parts[3].isdigit():
                if on_progress:
                    on_progress(parts[1], int(parts[2]), int(parts[3]))
            else:
                err_lines.append(line)

    readers = [threading.Thread(target=pump_out, daemon=True), threading.Thread(target=pump_err, daemon=True)]
    for t in readers:
        t.start()
    while proc.poll() is None:
        if cancelled():
            proc.kill()
            proc.wait()
            raise RunCancelled("cancelled by user")
        if time.monotonic() - t0 > timeout_s:
            proc.kill()
            proc.wait()
            raise RunError(f"{Path(binary).name} timed out after {timeout_s:.0f} s")
        time.sleep(0.05)
    for t in readers:
        t.join(timeout=5)
    stdout, stderr = "".join(out_chunks), "".join(err_lines)
    wall = time.monotonic() - t0
    try:
        result = parse_output(stdout)
    except RunError:
        tail = (stderr or stdout or "").strip()[-1500:]
        raise RunError(f"{Path(binary).name} exited with status {proc.returncode} and no JSON result"
                       + (f": {tail}" if tail else "")) from None
    if not result.get("ok", False):
        raise RunError(str(result.get("error") or f"benchmark reported failure (status {proc.returncode})"))
    bad = failed_checks(result)
    if bad:
        raise RunError("correctness check failed: " + "; ".join(bad))
    if proc.returncode != 0:
        raise RunError(f"{Path(binary).name} exited with status {proc.returncode} despite an ok result")
    result["wall_s"] = round(wall, 3)
    result["returncode"] = proc.returncode
    return result
