"""The one Jinja2 environment (with block rendering for HTMX fragments) shared by every page route."""

from __future__ import annotations

import functools
import os
import types
from pathlib import Path

from jinja2_fragments.fastapi import Jinja2Blocks
from markupsafe import Markup

from app.config import clip
from app.services.layouts import strip_html

ROOT = Path(__file__).resolve().parent.parent
templates = Jinja2Blocks(directory=str(ROOT / "templates"))
# Templates are compiled once: checking each one's mtime on every render (a stat per template per request) was a
# third of a page's server time under load. LAYOUTLAB_TEMPLATE_RELOAD=1 restores it while editing templates.
templates.env.auto_reload = os.environ.get("LAYOUTLAB_TEMPLATE_RELOAD") == "1"

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


_CODE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.MethodWrapperType, type)


def _finalize(value: object) -> object:
    """Every ``{{ }}`` output passes here: a function, method or class is never page text (a Layout, callable as
    the function it is, prints as itself). ``{{ d.copy }}`` on a dict renders its
    ``copy`` method, not the key (Jinja reads attributes first): such a template is refused as it renders, so the
    page tests catch it, instead of a page showing ``<built-in method ...>``."""
    if isinstance(value, _CODE):
        raise TypeError(f"a template printed code ({value!r}): use d['key'] for a dict's key")
    return value


templates.env.finalize = _finalize
templates.env.globals["NAV"] = NAV
templates.env.globals["strip_html"] = strip_html
templates.env.filters["clip"] = clip  # error messages show at most MAX_ECHO characters of the input


@functools.cache
def op_chips() -> Markup:
    """The workbench's example chips (templates/_op_chips.html): they depend on the op table only, so they are
    rendered once per process instead of on every workbench page (about a quarter of its render time)."""
    from algebra import registry

    return Markup(templates.env.get_template("_op_chips.html").render(groups=registry.GROUPS,
                                                                       ops=list(registry.OPS.values())))


templates.env.globals["op_chips"] = op_chips


def is_htmx(request) -> bool:
    """True when the request comes from htmx (then routes answer a fragment, not the whole page)."""
    return request.headers.get("HX-Request") == "true"


def page_or_fragment(request, template: str, ctx: dict, slot: str):
    """The page's answer for a form that re-renders as you type: the whole page; for htmx, the ``result`` block, or
    (when ``ctx["error"]`` is set) only the template's ``error_slot`` block retargeted to ``#<slot>``, so the last
    good result stays on screen under the error. The result block clears the slot out of band (``ctx["oob"]``)."""
    if not is_htmx(request):
        return templates.TemplateResponse(request, template, ctx)
    if ctx.get("error"):
        ctx["stale"] = True
        return templates.TemplateResponse(request, template, ctx, block_name="error_slot",
                                          headers={"HX-Retarget": f"#{slot}", "HX-Reswap": "innerHTML"})
    ctx["oob"] = True
    return templates.TemplateResponse(request, template, ctx, block_name="result")
