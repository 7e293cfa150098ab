"""The one Jinja2 environment (with block rendering for HTMX fragments) shared by every page route."""

from __future__ import annotations

from pathlib import Path

from jinja2_fragments.fastapi import Jinja2Blocks

from app.config import clip
from app.services.layouts import strip_html

ROOT = Path(__file__).resolve().parent.parent
templates = Jinja2Blocks(directory=str(ROOT / "templates"))

#: Navigation entries shown in base.html: (path, label).
NAV = [
    ("/", "Explorer"),
    ("/algebra", "Workbench"),
    ("/banks", "Swizzle & banks"),
    ("/doctor", "Layout doctor"),
    ("/tv", "TV atlas"),
    ("/drills", "Drills"),
    ("/lab", "GPU lab"),
]
templates.env.globals["NAV"] = NAV
templates.env.globals["strip_html"] = strip_html
templates.env.filters["clip"] = clip  # error messages show at most MAX_ECHO characters of the input


def is_htmx(request) -> bool:
    """True when the request comes from htmx (then routes answer a fragment, not the whole page)."""
    return request.headers.get("HX-Request") == "true"
