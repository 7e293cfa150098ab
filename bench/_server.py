"""Shared by the web reliability benchmarks: start the app in a subprocess (``layoutlab serve``: gunicorn's master and
ASGI workers, app.serve; or plain uvicorn, for a comparison), read its CPU time and RSS
from /proc, and describe the machine (load average, cores) for the result files."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


async def http_send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str, path: str,
                body: bytes | None = None) -> int:
    """Sends one HTTP/1.1 request on a kept-alive connection; returns its status once the whole body is read."""
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    writer.write(head.encode() + b"\r\n" + (body or b""))
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    await reader.readexactly(length)
    return status


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The app on a free loopback port: ``layoutlab serve --no-worker`` (``server="front-door"``, what production
    runs), or uvicorn serving ``app.main:create_app`` with httptools and uvloop when installed
    (``server="uvicorn"``). ``tree``: serve another checkout's app (a ``git worktree`` of a baseline revision, with
    its static/vendor copied in) with this interpreter, for a before / after in one sitting."""

    def __init__(self, workers: int = 1, server: str = "front-door", tree: str | Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        data = os.environ.get("LAYOUTLAB_DATA", str(ROOT / ".data" / "bench"))
        Path(data).mkdir(parents=True, exist_ok=True)
        if server == "front-door":
            args = [sys.executable, "-m", "app.cli", "serve", "--port", str(self.port), "--workers", str(workers),
                    "--no-worker"]
        else:
            args = [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--port", str(self.port),
                    "--log-level", "warning", "--no-access-log", "--workers", str(workers)]
            if importlib.util.find_spec("httptools"):
                args += ["--http", "httptools"]
            if importlib.util.find_spec("uvloop"):
                args += ["--loop", "uvloop"]
        self.args = args
        self.tree = Path(tree).resolve() if tree else ROOT
        if not (self.tree / "app" / "main.py").is_file():
            raise SystemExit(f"{self.tree} is not a LayoutLab checkout (no app/main.py)")
        if not (self.tree / "static" / "vendor" / "htmx.min.js").is_file():  # ignored by git: setup.sh makes it
            raise SystemExit(f"{self.tree}/static/vendor has no htmx.min.js: copy static/vendor there")
        env = dict(os.environ, LAYOUTLAB_DATA=data, PYTHONPATH=str(self.tree))
        self.proc = subprocess.Popen(args, cwd=self.tree, env=env)
        self._wait()

    def _wait(self) -> None:
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit("server did not start")

    def pids(self) -> list[int]:
        """The server process and its children (gunicorn's or uvicorn's workers)."""
        out = [self.proc.pid]
        try:
            kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
            out += [int(k) for k in kids]
        except OSError:
            pass
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU seconds used so far by the server's processes."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / tick

    def rss_mb(self) -> float:
        """Resident set size of the server's processes, in MB."""
        total = 0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except OSError:
                continue
        return total / 1024

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def stop_group(proc: subprocess.Popen, grace: float = 20) -> None:
    """Stop a process started in its own process group (``start_new_session``): SIGTERM to the group, then SIGKILL
    after ``grace`` seconds; nothing when it has exited."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def revision(tree: Path) -> str:
    """The served checkout's commit (``+dirty`` when its tracked files differ from it)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *a], capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+dirty" if git("status", "--porcelain", "-uno") else "")


def machine() -> dict[str, Any]:
    return {"host_cores": os.cpu_count(), "loadavg": os.getloadavg(), "python": platform.python_version(),
            "platform": platform.platform()}


def write_result(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path
