"""Shared fixtures: a temporary LAYOUTLAB_DATA, the app and a TestClient, a live uvicorn server on a free port,
and a headless chromium (Debian's package) driven by Playwright. Browser tests are marked ``browser`` and skip when
chromium or Playwright is missing."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session", autouse=True)
def layoutlab_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point LAYOUTLAB_DATA at a fresh temporary folder for the whole session (SQLite files, build cache)."""
    path = tmp_path_factory.mktemp("layoutlab-data")
    old = os.environ.get("LAYOUTLAB_DATA")
    os.environ["LAYOUTLAB_DATA"] = str(path)
    yield path
    if old is None:
        os.environ.pop("LAYOUTLAB_DATA", None)
    else:
        os.environ["LAYOUTLAB_DATA"] = old


@pytest.fixture(scope="session")
def app(layoutlab_data: Path) -> Any:
    """The FastAPI app built by ``create_app()`` (no embedded worker)."""
    from app.main import create_app

    return create_app()


@pytest.fixture(scope="session")
def client(app: Any) -> Iterator[Any]:
    """A TestClient on the app; ``raise_server_exceptions=False`` so a 500 shows up as a status, not a traceback."""
    from fastapi.testclient import TestClient

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """uvicorn serving an app in a background thread; ``url`` is its base URL (no trailing slash)."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="live-server", daemon=True)

    def start(self, timeout: float = 20.0) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"live server did not start on port {self.port}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server(app: Any) -> Iterator[LiveServer]:
    """The app served over real HTTP on a free loopback port for the session; use ``live_server.url``."""
    server = LiveServer(app).start()
    yield server
    server.stop()


def chromium_path() -> str | None:
    """Debian's chromium (or Google Chrome) on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless chromium through Playwright; skips the test when either is missing."""
    exe = chromium_path()
    if exe is None:
        pytest.skip("chromium is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (1400x900, 10 s default timeout) that records console errors in ``page.console_errors``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.console_errors = errors
    yield pg
    context.close()


@pytest.fixture()
def screenshot() -> Any:
    """``screenshot(page, name)`` saves a full-page PNG to tests/artifacts/<name>.png and returns its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(pg: Any, name: str, full_page: bool = True) -> Path:
        path = ARTIFACTS / f"{name}.png"
        pg.screenshot(path=str(path), full_page=full_page)
        return path

    return take
