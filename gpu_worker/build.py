"""Building kernel templates with nvcc: toolkit discovery, a content-hashed build cache evicted least recently used
first under a size cap (LAYOUTLAB_BUILD_CACHE_MB), verbatim (trimmed) errors.

The toolkit is looked up, in order: ``LAYOUTLAB_NVCC`` (a path to nvcc), ``nvcc`` on ``PATH``, ``$CUDA_HOME/bin/nvcc``
(or ``$CUDA_PATH``), ``/usr/local/cuda/bin/nvcc``, and finally the CUDA toolkit's own PyPI packages
(``nvidia-cuda-nvcc`` with ``nvidia-nvvm``, ``nvidia-cuda-crt`` and ``nvidia-cuda-runtime``, installed by
``pip install layoutlab[gpu]``), found under ``site-packages/nvidia/cu13`` or ``nvidia/cuda_nvcc`` (CUDA 12 layout).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
#: Target flags when LAYOUTLAB_CUDA_ARCH is unset: Hopper with its arch-specific features.
DEFAULT_ARCH = "sm_90a"
COMPILE_TIMEOUT_S = 240
ERROR_CHARS = 4000
#: Build cache size cap when LAYOUTLAB_BUILD_CACHE_MB is unset.
DEFAULT_CACHE_MB = 512


class BuildError(RuntimeError):
    """nvcc failed or is missing; ``str(exc)`` is nvcc's own output, trimmed to ERROR_CHARS characters."""


@dataclass(frozen=True)
class Toolkit:
    """Where nvcc was found. ``source`` is one of env, PATH, CUDA_HOME, /usr/local/cuda, pip (or None: not found)."""

    nvcc: str | None
    source: str | None
    version: str | None = None
    extra_flags: tuple[str, ...] = ()
    reason: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready description (what ``/api/bench/device`` reports as ``toolkit``)."""
        return {"nvcc": self.nvcc, "source": self.source, "version": self.version, "reason": self.reason}


@dataclass
class BuildResult:
    """A built binary. Post-condition: ``path`` exists and is executable; ``cached`` tells whether nvcc ran."""

    path: Path
    key: str
    cached: bool
    seconds: float
    command: list[str] = field(default_factory=list)


def _pip_toolkit() -> tuple[str, tuple[str, ...]] | None:
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        for sub in ("cu13", "cu12", "cuda_nvcc"):
            nvcc = Path(root) / sub / "bin" / "nvcc"
            if not nvcc.is_file():
                continue
            flags: list[str] = []
            base = nvcc.parent.parent
            includes = [base / "include", Path(root) / "cuda_runtime" / "include"]
            libs = [base / "lib", base / "lib64", Path(root) / "cuda_runtime" / "lib"]
            for inc in includes:
                if inc.is_dir() and inc != base / "include":
                    flags.append(f"-I{inc}")
            libdirs = [d for d in libs if d.is_dir()]
            static = any((d / "libcudart_static.a").is_file() for d in libdirs)
            for d in libdirs:
                flags += [f"-L{d}", f"-Xlinker=-rpath,{d}"]
            if not static:
                flags += ["-cudart", "shared"]
            return str(nvcc), tuple(flags)
    return None


def find_toolkit() -> Toolkit:
    """Locate nvcc (see the module docstring for the order). Post-condition: ``nvcc`` is an existing file or None,
    and when None, ``reason`` says what was searched. ``LAYOUTLAB_TOOLKIT=pip`` tries the PyPI packages first."""
    if os.environ.get("LAYOUTLAB_TOOLKIT") == "pip":
        pip = _pip_toolkit()
        if pip:
            return Toolkit(pip[0], "pip", _version(pip[0]), pip[1])
    candidates: list[tuple[str | None, str]] = [
        (os.environ.get("LAYOUTLAB_NVCC"), "env"),
        (shutil.which("nvcc"), "PATH"),
    ]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append((str(Path(os.environ[var]) / "bin" / "nvcc"), "CUDA_HOME"))
    candidates.append(("/usr/local/cuda/bin/nvcc", "/usr/local/cuda"))
    for path, source in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return Toolkit(path, source, _version(path))
    pip = _pip_toolkit()
    if pip:
        return Toolkit(pip[0], "pip", _version(pip[0]), pip[1])
    return Toolkit(None, None, reason="nvcc not found: LAYOUTLAB_NVCC, PATH, CUDA_HOME, /usr/local/cuda and the "
                   "nvidia-cuda-nvcc PyPI package (pip install 'layoutlab[gpu]') were searched")


def _version(nvcc: str) -> str | None:
    """nvcc's release (e.g. "13.0"), run once per binary: cached by path, size and modification time."""
    try:
        st = os.stat(nvcc)
    except OSError:
        return None
    return _version_of(nvcc, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _version_of(nvcc: str, size: int, mtime_ns: int) -> str | None:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release ([\d.]+)", out)
    return m.group(1) if m else None


def arch_flags(arch: str | None = None) -> list[str]:
    """``-gencode`` flags for ``arch`` (default: LAYOUTLAB_CUDA_ARCH or sm_90a), e.g. sm_90a ->
    ``-gencode=arch=compute_90a,code=sm_90a``."""
    arch = arch or os.environ.get("LAYOUTLAB_CUDA_ARCH") or DEFAULT_ARCH
    m = re.fullmatch(r"sm_(\d+[a-z]?)", arch)
    if not m:
        raise BuildError(f"bad CUDA arch {arch!r}; expected e.g. sm_90a or sm_80")
    return [f"-gencode=arch=compute_{m.group(1)},code=sm_{m.group(1)}"]


def cache_dir() -> Path:
    """The build cache folder: LAYOUTLAB_BUILD_DIR, else ``data_dir()/build``. Created if missing."""
    env = os.environ.get("LAYOUTLAB_BUILD_DIR")
    if env:
        path = Path(env).resolve()
    else:
        from storage.config import data_dir

        path = data_dir() / "build"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_cap_bytes() -> int:
    """The build cache's size cap: LAYOUTLAB_BUILD_CACHE_MB (default DEFAULT_CACHE_MB) megabytes."""
    return int(float(os.environ.get("LAYOUTLAB_BUILD_CACHE_MB") or DEFAULT_CACHE_MB) * (1 << 20))


def mark_used(entry: Path) -> None:
    """Record a cache hit on ``entry`` (a folder of the cache): its modification time is the LRU clock."""
    try:
        os.utime(entry)
    except OSError:
        pass


def _size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def evict(cap_bytes: int | None = None, keep: Path | None = None) -> list[str]:
    """Remove least recently used cache entries until the cache is at most ``cap_bytes`` (default
    :func:`cache_cap_bytes`); ``keep`` (the entry just built) is never removed. Post-condition: the entries left,
    ``keep`` aside, total at most the cap. Returns the names of the removed entries, oldest first."""
    cap = cache_cap_bytes() if cap_bytes is None else cap_bytes
    root = cache_dir()
    entries = []
    for d in root.iterdir():
        if d.is_dir() and not d.name.startswith("."):
            try:
                entries.append((d.stat().st_mtime, d.name, _size(d)))
            except OSError:
                continue
    total = sum(e[2] for e in entries)
    removed = []
    for _, name, size in sorted(entries):
        if total <= cap:
            break
        if keep is not None and name == keep.name:
            continue
        doomed = root / f".evict-{name}-{os.getpid()}"
        try:
            os.replace(root / name, doomed)  # atomic: a concurrent reader sees the entry whole or not at all
        except OSError:
            continue
        shutil.rmtree(doomed, ignore_errors=True)
        total -= size
        removed.append(name)
    return removed


def template_path(template: str) -> Path:
    """The ``.cu`` file of a template name (letters, digits, underscore); raises BuildError if unknown."""
    if not re.fullmatch(r"[a-z0-9_]+", template) or not (KERNEL_DIR / f"{template}.cu").is_file():
        known = sorted(p.stem for p in KERNEL_DIR.glob("*.cu"))
        raise BuildError(f"unknown kernel template {template!r}; known: {', '.join(known)}")
    return KERNEL_DIR / f"{template}.cu"


def define_flags(defines: dict[str, int]) -> list[str]:
    """``-DNAME=value`` flags, sorted; names must be upper-case identifiers and values integers."""
    flags = []
    for name in sorted(defines):
        value = defines[name]
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or isinstance(value, bool) or not isinstance(value, int):
            raise BuildError(f"bad compile-time constant {name}={value!r}")
        flags.append(f"-D{name}={value}")
    return flags


def build_key(template: str, defines: dict[str, int], flags: list[str], toolkit: Toolkit) -> str:
    """Content hash of everything that decides the binary: the template and its headers, constants, flags, nvcc."""
    h = hashlib.sha256()
    h.update(template_path(template).read_bytes())
    for header in sorted(KERNEL_DIR.glob("*.cuh")):
        h.update(header.name.encode() + header.read_bytes())
    h.update("\0".join(define_flags(defines) + flags).encode())
    h.update(f"{toolkit.version}|{toolkit.extra_flags}".encode())  # not the path: caches travel between hosts
    return h.hexdigest()[:24]


def trim_log(text: str, tmp: str | None = None) -> str:
    """nvcc's output with temporary paths shortened, cut to the last ERROR_CHARS characters."""
    if tmp:
        text = text.replace(tmp + os.sep, "")
    text = text.replace(str(KERNEL_DIR) + os.sep, "").strip()
    return text if len(text) <= ERROR_CHARS else "...\n" + text[-ERROR_CHARS:]


def build_kernel(template: str, defines: dict[str, int], *, arch: str | None = None,
                 toolkit: Toolkit | None = None, timeout_s: float = COMPILE_TIMEOUT_S) -> BuildResult:
    """Build ``kernels/<template>.cu`` with the given constants. Post-condition: the returned path is the binary for
    exactly this (source, constants, flags, nvcc); a second call with the same inputs does not run nvcc."""
    toolkit = toolkit or find_toolkit()
    if not toolkit.nvcc:
        raise BuildError(toolkit.reason or "nvcc not found")
    src = template_path(template)
    flags = ["-O3", "-std=c++17", "-lineinfo", *arch_flags(arch), *toolkit.extra_flags]
    key = build_key(template, defines, flags, toolkit)
    out_dir = cache_dir() / key
    binary = out_dir / template
    if binary.is_file() and os.access(binary, os.X_OK):
        mark_used(out_dir)
        return BuildResult(binary, key, True, 0.0)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=out_dir)
    cmd = [toolkit.nvcc, *flags, *define_flags(defines), f"-I{KERNEL_DIR}", "-o", os.path.join(tmp, template),
           str(src)]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=tmp)
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError(f"nvcc timed out after {timeout_s:.0f} s") from None
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError(f"could not run nvcc: {exc}") from None
    if proc.returncode != 0 or not os.path.isfile(os.path.join(tmp, template)):
        log = trim_log(proc.stderr + proc.stdout, tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError(log or f"nvcc exited with status {proc.returncode}")
    os.replace(os.path.join(tmp, template), binary)  # atomic: concurrent builders of one key agree
    shutil.rmtree(tmp, ignore_errors=True)
    evict(keep=out_dir)
    return BuildResult(binary, key, False, time.monotonic() - t0, cmd)
