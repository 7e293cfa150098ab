"""The pages' own CSS and scripts, inlined into a notebook output so that it draws, hovers and zooms as the explorer
does, without a server or a network: the grid rules of static/app.css scoped under ``.llab`` (a notebook's own
styles are left alone), and static/grid-data.js, app.js and grid-tools.js, run once per page.

``layoutlab/static`` is the repository's ``static/`` folder (a link; a built wheel holds copies of the files read
here), so the notebook and the pages read the same files."""

from __future__ import annotations

import functools
import re
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
SCRIPTS = ("grid-data.js", "app.js", "grid-tools.js")
#: Selectors of app.css that draw a grid, its tools and its hover card.
_GRID_RULE = re.compile(r"(^|[\s,])(\.grid\b|\.gridwrap|\.gridfig|figure\.gridfig|\.gridtools|\.gridview|\.hover\b|"
                        r"\.with-card|\.grid-caption|\.mma-atom|\.p\d+\b|\.muted\b)")
SCOPE = ".llab"


def _read(name: str) -> str:
    path = STATIC / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuntimeError(f"layoutlab: {path} is missing ({exc}); install the package from its repository") from None


def _rules(css: str) -> list[tuple[str, str]]:
    """Top-level ``(selectors, body)`` rules of a stylesheet, comments dropped; ``@media`` blocks whole."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, k = [], 0
    while True:
        a = css.find("{", k)
        if a < 0:
            return out
        sel = css[k:a].strip()
        depth, b = 1, a + 1
        while depth and b < len(css):
            depth += (css[b] == "{") - (css[b] == "}")
            b += 1
        out.append((sel, css[a + 1:b - 1]))
        k = b


def _scoped(sel: str) -> str:
    parts = []
    for s in sel.split(","):
        s = s.strip()
        parts.append(SCOPE if s == ":root" else f"{SCOPE} {s}")
    return ",".join(parts)


@functools.cache
def css() -> str:
    """The grid rules of static/app.css under ``.llab`` (its custom properties on ``.llab`` itself)."""
    out = []
    for sel, body in _rules(_read("app.css")):
        if sel.startswith("@media"):
            inner = [f"{_scoped(s)}{{{b}}}" for s, b in _rules(body) if _GRID_RULE.search(s)]
            if inner:
                out.append(f"{sel}{{{''.join(inner)}}}")
        elif sel == ":root" or _GRID_RULE.search(sel):
            out.append(f"{_scoped(sel)}{{{body.strip()}}}")
    out.append(f"{SCOPE}{{font:13px/1.45 system-ui,sans-serif;color:#1d1f23;background:#fff;padding:4px;"
               f"box-sizing:border-box}}"
               f"{SCOPE} *{{box-sizing:border-box}}{SCOPE} button{{font:12px system-ui,sans-serif;padding:.1rem .45rem;"
               f"border:1px solid #aab;border-radius:5px;background:#f3f4f7;color:#1d1f23;cursor:pointer}}"
               f"{SCOPE} .llab-note{{margin:.3rem 0;padding:.4rem .6rem;border-radius:6px;background:#fffbea;"
               f"border:1px solid #f6e05e;color:#744210;font:13px var(--mono)}}"
               f"{SCOPE} .llab-error{{background:#fff5f5;border-color:#feb2b2;color:#c53030}}"
               f"{SCOPE} .llab-title{{font:600 13px var(--mono);margin:.4rem 0 .2rem}}")
    return "".join(out)


@functools.cache
def script() -> str:
    """static/grid-data.js, app.js and grid-tools.js in one function that runs once per page (``window.LayoutLab``
    set: a later output's copy does nothing; their listeners are delegated from ``document``, so they serve every
    grid on the page, those added later too)."""
    body = "\n".join(_read(n) for n in SCRIPTS)
    return ("(function(){if(window.LayoutLab)return;\n" + body.replace("</script", "<\\/script") + "\n})();")


@functools.cache
def palette() -> list[str]:
    """The 32 cell colours of static/app.css (``.p0`` .. ``.p31``), as ``#rrggbb``."""
    found = dict(re.findall(r"\.p(\d+)\{background:(#[0-9a-fA-F]{6})\}", _read("app.css")))
    return [found[str(k)] for k in range(32)]
