"""The swizzle & banks lab ``/banks?layout=...&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0``."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError, parse, size
from app.budget import COST, BudgetedRoute, WorkCapError, remaining
from app.config import clip
from app.page_query import QueryProblem, pick
from app.services import banks as S
from app.services import presets
from app.services.swizzle_note import byte_form_note
from app.templating import page_or_fragment

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


FLAGS = {"": False, "0": False, "false": False, "off": False, "no": False,
         "1": True, "true": True, "on": True, "yes": True}


def _numbers(element_bytes: str, vector: str, num: str, trans: str) -> tuple[int, int, int, bool]:
    """(element bytes, vector, ldmatrix num, trans). A field that is not one of its legal values raises
    app.page_query.QueryProblem naming it and what it takes (the page's answer is that module's)."""
    e = pick(element_bytes, (1, 2, 4, 8, 16), 2, "element_bytes", " (bytes per element)")
    vec = pick(vector, S.vector_widths(e), 1, "vector",
               f" (elements of {e} bytes per thread: one access moves at most 16 bytes)")
    n = pick(num, (1, 2, 4), 4, "num", " (ldmatrix .x1, .x2, .x4)")
    return e, vec, n, _flag(trans, "trans", " (ldmatrix .trans off / on)")


def _flag(text: str, field: str, why: str) -> bool:
    """A checkbox's query value (:data:`FLAGS`; blank is off, as an unticked box sends nothing)."""
    t = text.strip().lower()
    if t not in FLAGS:
        raise QueryProblem(f"{field}: {clip(text.strip(), 20)!r} is not one of 0, 1{why}", field, text)
    return FLAGS[t]


def _compare_grids(panels: list[dict]) -> list[dict]:
    """Each comparison panel with its grid, drawn while the request's work budget still holds one (else a note)."""
    out = []
    for k, c in enumerate(panels):
        g, why = None, "not drawn: over the render cap of cells"
        if c["view"] is not None:
            cells = size(parse(c["view"].layout))
            if 2 * cells * COST["drawn cell"] <= remaining("integer cell"):
                g = S.bank_grid(c["view"], f"grid-cmp-{k}")
            else:
                why = (f"not drawn: its {cells:,} cells are past what this request's work budget has left after the "
                       "grids above (the counts are exact; compare off, or a smaller tile, draws it)")
        out.append(dict(c, g=g, grid_why=why))
    return out


@router.get("/banks", response_class=HTMLResponse, include_in_schema=False)
def banks_page(request: Request, layout: str = Query("(8,64):(64,1)"), element_bytes: str = Query("2"),
               swizzle: str = Query(""), access: str = Query("column:0"), vector: str = Query("1"),
               num: str = Query("4"), trans: str = Query("0"), compare: str = Query("1")) -> HTMLResponse:
    """``num`` (1, 2, 4) and ``trans`` (0 / 1) are ldmatrix's .xN and .trans; the other kinds ignore them."""
    e, vec, n, tr = _numbers(element_bytes, vector, num, trans)
    on = _flag(compare, "compare", " (the comparison off / on)") if compare.strip() else True
    layout, swizzle, access = layout.strip(), swizzle.strip(), access.strip()
    if swizzle.lower() == "none":
        swizzle = ""
    kind = access.partition(":")[0].strip().lower()
    params = {"layout": layout, "element_bytes": e, "swizzle": swizzle, "access": access}
    if vec != 1:
        params["vector"] = vec
    if n != 4:
        params["num"] = n
    if tr:
        params["trans"] = 1
    if not on:
        params["compare"] = "0"
    ctx: dict = {"request": request, "layout": layout, "e": e, "swizzle": swizzle, "access": access, "vector": vec,
                 "num": n, "trans": tr, "kind": kind, "compare_on": bool(on), "types": S.ELEMENT_TYPES,
                 "kinds": S.KINDS, "sw_presets": S.swizzle_presets(e), "all_presets": S.all_swizzle_presets(),
                 "view": None, "g": None, "xor": [], "cmp": [], "error": None, "code": None, "grid_note": None,
                 "sw_note": byte_form_note(f"{swizzle} {layout}", e),
                 "ldm": None, "widths": S.vector_widths(e), "access_presets": presets.BANKS_ACCESSES,
                 "permalink": "/banks?" + urlencode(params),
                 "preset_query": {k: v for k, v in params.items() if k != "swizzle"}}
    try:
        acc = S.parse_access(access, vec, n, tr)
        view = S.analyze(layout, swizzle or None, e, acc)
        try:  # the bank map is 32 lanes; drawing the whole tile is what a big swizzled tile may not afford
            g, note = S.bank_grid(view, "grid-banks", hover="hover-banks"), None
        except WorkCapError as exc:
            g, note = None, (f"the tile is not drawn: {exc}; the bank strip and the counts above are exact "
                             "(a smaller tile, or compare off, draws it)")
        ctx.update(view=view, g=g, xor=S.xor_rows(view), code=S.tile_code(view),
                   grid_note=note or (None if g else S.no_grid_reason(view)),
                   ldm=S.ldmatrix_story(acc, S.tile_rows(view), e))
        if ctx["compare_on"]:
            ctx["cmp"] = _compare_grids(S.compare(layout, swizzle or None, e, acc))
    except LayoutError as exc:
        ctx["error"] = str(exc)
    return page_or_fragment(request, "banks.html", ctx, "banks-error")
