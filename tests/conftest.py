"""Shared fixtures: a temporary LAYOUTLAB_DATA, the app and a TestClient, a live uvicorn server on a free port,
and a headless chromium (Debian's package) driven by Playwright. Browser tests are marked ``browser`` and skip when
chromium or Playwright is missing."""

from __future__ import annotations

import json
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
# TestClient sends ``Host: testserver``: the tests' apps answer for it, besides the default names (app.hosts); the
# default itself stays as it is served (tests/test_front_door.py checks it).
os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver,localhost,127.0.0.1,::1")
# no start-up warm-up thread (app.main): it would run drill generators beside tests that patch or count them
os.environ.setdefault("LAYOUTLAB_WARM", "0")
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
        from app.proxies import uvicorn_options

        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False,
                                **uvicorn_options())  # proxy headers as `layoutlab serve` takes them
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


class RenderedGrid:
    """A grid of ``templates/_grid.html`` read back from HTML: ``text[i][j]`` / ``classes[i][j]`` of cell (i, j),
    the row / column labels, and which (band, tile) blocks arrived cold (``cold``: set of (first row, first col)).
    ``text`` and ``classes`` build a fresh table on each access: take them once outside loops."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], tuple[str, set[str]]] = {}
        self.row_labels: list[tuple[str, set[str]]] = []
        self.col_labels: list[tuple[str, set[str]]] = []
        self.cold: set[tuple[int, int]] = set()
        self.tiles: set[tuple[int, int]] = set()

    @property
    def rows(self) -> int:
        return 1 + max((i for i, _ in self.cells), default=-1)

    @property
    def cols(self) -> int:
        return 1 + max((j for _, j in self.cells), default=-1)

    @property
    def text(self) -> list[list[str]]:
        return [[self.cells[i, j][0] for j in range(self.cols)] for i in range(self.rows)]

    @property
    def classes(self) -> list[list[set[str]]]:
        return [[self.cells[i, j][1] for j in range(self.cols)] for i in range(self.rows)]


def fill_deferred(out: RenderedGrid, d: dict[str, Any], meta: dict[str, Any] | None = None) -> None:
    """The cells a deferred tile gets from the grid's JSON (app/services/grid.py ``data_json``), as static/app.js
    ``fill`` writes them; cells already in the HTML are kept. A thread / value grid's labels and colours come from its
    hover tables (``meta``) where the JSON says ``"t": "tv"``."""
    if d["t"] == "tv":
        assert meta is not None, "a thread / value grid's JSON needs its grid-meta"
        d = dict(d, t=[[f"T{t}V{v}" if t >= 0 else "" for t, v in zip(tr, vr, strict=True)]
                       for tr, vr in zip(meta["threads"], meta["values"], strict=True)],
                 c=[[(t // d["tv"]) % 32 if t >= 0 else -1 for t in tr] for tr in meta["threads"]])
    marks = {(i, j): c for i, j, c in d["m"]}
    cl = {int(k): v for k, v in d["cl"].items()}  # only the non-zero levels travel
    cols = len(d["t"][0]) if d["t"] else 0
    for j in range(len(out.col_labels), cols):  # cold label tiles (data-h) arrive empty: the warm ones are a prefix
        out.col_labels.append((d["ch"][j] if d["ch"] else str(j), {f"l{cl[j]}"} if cl.get(j) else set()))
    for i, row in enumerate(d["t"]):
        for j, t in enumerate(row):
            if (i, j) in out.cells:
                continue
            c = t % d["cm"] if d["cm"] else d["c"][i][j] if d["c"] else None
            cls = set() if c is None else {f"p{c}" if c >= 0 else "x"}
            if cl.get(j):
                cls.add(f"l{cl[j]}")
            if (i, j) in marks:
                cls.add(marks[i, j])
            out.cells[i, j] = (str(t), cls)


def parse_grid(html: str, grid_id: str) -> RenderedGrid:
    """Read the grid ``id=grid_id`` out of a page or fragment (raises KeyError when it is absent)."""
    from html.parser import HTMLParser

    out = RenderedGrid()

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[dict[str, Any]] = []
            self.inside = 0  # stack depth of the grid's own div; 0 outside it
            self.span: list[Any] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            node: dict[str, Any] = {"tag": tag, "class": set((dict(attrs).get("class") or "").split()),
                                    **{k: v or "" for k, v in attrs if k.startswith("data-") or k == "id"}, "n": 0}
            self.stack.append(node)
            if not self.inside and tag == "div" and node.get("id") == grid_id:
                self.inside = len(self.stack)
            elif self.inside and tag == "div" and "data-i0" in node:  # a deferred tile, filled from grid-data
                out.tiles.add((int(node["data-i0"]), int(node["data-j"])))
                out.cold.add((int(node["data-i0"]), int(node["data-j"])))
            elif tag == "script" and node.get("data-for") == grid_id and "grid-data" in node["class"]:
                self.data = True
            elif tag == "script" and node.get("data-for") == grid_id and "grid-meta" in node["class"]:
                self.meta = True
            elif self.inside and tag == "span":
                parent = self.stack[-2]
                self.span = [parent, node["class"], "", parent["n"]]
                parent["n"] += 1

        def handle_endtag(self, tag: str) -> None:
            if self.span is not None and tag == "span":
                parent, cls, text, k = self.span
                self.span = None
                if "gt" in parent["class"] and "gh" in self.stack[-3]["class"]:
                    out.col_labels.append((text, cls))
                elif "gl" in parent["class"]:
                    out.row_labels.append((text, cls))
                elif "gr" in parent["class"]:
                    tile, band = self.stack[-3], self.stack[-4]
                    i, j = int(parent["data-i"]), int(tile["data-j"]) + k
                    out.cells[i, j] = (text, cls)
                    band.setdefault("first", i)
                    key = (band["first"], int(tile["data-j"]))
                    out.tiles.add(key)
                    if "cold" in tile["class"]:
                        out.cold.add(key)
            while self.stack:
                top = self.stack.pop()
                if len(self.stack) < self.inside:
                    self.inside = 0
                if top["tag"] == tag:
                    break

        def handle_data(self, data: str) -> None:
            if self.span is not None:
                self.span[2] += data
            elif getattr(self, "meta", False):
                self.meta = False
                self.meta_json = json.loads(data)
            elif getattr(self, "data", False):
                self.data = False
                fill_deferred(out, json.loads(data), getattr(self, "meta_json", None))

    reader = Reader()
    reader.feed(html)
    if not out.cells and not out.col_labels:
        raise KeyError(f"no grid with id {grid_id!r}")
    return out


@pytest.fixture()
def read_grid() -> Any:
    """``read_grid(html, grid_id)`` -> RenderedGrid: the cells of a rendered grid by (row, column)."""
    return parse_grid


@pytest.fixture()
def screenshot() -> Any:
    """``screenshot(page, name)`` saves a full-page PNG to tests/artifacts/<name>.png and returns its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(pg: Any, name: str, full_page: bool = True) -> Path:
        path = ARTIFACTS / f"{name}.png"
        pg.screenshot(path=str(path), full_page=full_page)
        return path

    return take


@pytest.fixture()
def redis_url() -> Iterator[str]:
    """A fresh redis-server (no persistence) on a free loopback port; skips when redis-server is not installed."""
    import subprocess

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    import redis

    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                             "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(10)


def _pg_bin(name: str) -> str | None:
    """A PostgreSQL server binary: on PATH, else under Debian's /usr/lib/postgresql/<version>/bin."""
    import glob

    found = shutil.which(name)
    if found:
        return found
    paths = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return paths[0] if paths else None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throw-away PostgreSQL server (initdb into a temporary folder, TCP on a free loopback port) for the session.
    As root it runs as the ``postgres`` user (the server refuses root). Skips when the server binaries, psycopg, or a
    non-root user to run them are missing."""
    import pwd
    import subprocess

    initdb, postgres = _pg_bin("initdb"), _pg_bin("postgres")
    if not initdb or not postgres:
        pytest.skip("PostgreSQL server binaries (initdb, postgres) not installed")
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg not installed")
    import tempfile

    prefix: list[str] = []
    # not under pytest's basetemp: other pytest sessions reset its parent to mode 0700, out of the server user's reach
    root = Path(tempfile.mkdtemp(prefix="layoutlab-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        runuser = shutil.which("runuser") or shutil.which("setpriv")
        if not runuser:
            pytest.skip("running as root without runuser to drop to the 'postgres' user")
        prefix = [runuser, "-u", "postgres", "--"]
        os.chown(root, user.pw_uid, user.pw_gid)
    data = root / "data"
    subprocess.run([*prefix, initdb, "-D", str(data), "-U", "layoutlab", "--auth=trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True)
    port = free_port()
    with open(root / "server.log", "wb") as log:
        proc = subprocess.Popen([*prefix, postgres, "-D", str(data), "-p", str(port), "-h", "127.0.0.1", "-k",
                                 str(root), "-F", "-c", "fsync=off"], stdout=subprocess.DEVNULL, stderr=log,
                                 start_new_session=True)
    url = f"postgresql://layoutlab@127.0.0.1:{port}/postgres"
    deadline = time.monotonic() + 30
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            break
        except psycopg.OperationalError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError(f"PostgreSQL did not start on port {port}") from None
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(20)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def pg_database(postgres_url: str) -> Iterator[str]:
    """A fresh, empty database on the session's PostgreSQL server; its URL."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(postgres_url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    except psycopg.OperationalError:  # the server goes with the session anyway
        pass


@pytest.fixture()
def drills_pg(pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The drills' store on a fresh PostgreSQL database (its URL), its connections reset before and after."""
    monkeypatch.setenv("LAYOUTLAB_DATABASE_URL", pg_database)
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    from app.drills import store

    store.reset_connections()
    yield pg_database
    store.reset_connections()


def race(n: int, fn: Any) -> list[Any]:
    """Run ``fn(i)`` in ``n`` threads released at the same moment; their results in order (an exception raised is
    the result: the race's outcome is what a test reads)."""
    import threading

    gate = threading.Barrier(n)
    out: list[Any] = [None] * n

    def run(i: int) -> None:
        gate.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # noqa: BLE001
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out
