"""The explorer page ``/?layout=...``: the whole page, or its ``result`` block for htmx requests. An htmx request
whose layout does not parse (yet: the user is typing) answers only the error, retargeted to ``#explorer-error``, so
the last good grid stays on the page."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError
from app.budget import BudgetedRoute
from app.page_query import pick
from app.services import presets
from app.services.layouts import cells_by_offset, describe_layout, layout_grid
from app.services.swizzle_note import byte_form_note
from app.services.triton_pages import bits_of, explorer_panel
from app.templating import page_or_fragment

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])
DEFAULT = "(4,(2,4)):(2,(1,8))"


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def explorer(request: Request, layout: str = Query(DEFAULT),
             colour: str = Query("offset"), ttgir: str = Query("", max_length=8000),
             shape: str = Query("64,64", max_length=40), bits: str = Query("16", max_length=4)) -> HTMLResponse:
    colour = pick(colour, ("offset", "none"), "offset", "colour")  # a value no menu offers: app.page_query
    bits_of(bits)
    text = layout.strip()
    tt = explorer_panel(ttgir, shape, bits) if ttgir.strip() else None
    if tt and tt["cute"]:
        text = tt["cute"]  # a shared layout's offset grid is its CuTe form's
    ctx: dict = {"request": request, "text": text, "colour": colour, "presets": presets.EXPLORER,
                 "view": None, "g": None, "strip": None, "error": None, "tt": tt,
                 "sw_note": byte_form_note(text)}
    try:
        view = describe_layout(text)
        ctx.update(view=view, g=layout_grid(view, "grid-explorer", hover="hover-explorer", colour=colour),
                   strip=cells_by_offset(view))
    except LayoutError as exc:
        ctx["error"] = str(exc)
    return page_or_fragment(request, "explorer.html", ctx, "explorer-error")
