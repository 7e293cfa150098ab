"""The swizzle & banks lab ``/banks?layout=...&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0``."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError
from app.budget import BudgetedRoute
from app.services import banks as S
from app.templating import page_or_fragment

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


def _int(text: str, default: int, allowed: tuple[int, ...]) -> int:
    try:
        v = int(text)
    except ValueError:
        return default
    return v if v in allowed else default


@router.get("/banks", response_class=HTMLResponse, include_in_schema=False)
def banks_page(request: Request, layout: str = Query("(8,64):(64,1)"), element_bytes: str = Query("2"),
               swizzle: str = Query(""), access: str = Query("column:0"), vector: str = Query("1"),
               num: str = Query("4"), compare: str = Query("1")) -> HTMLResponse:
    e = _int(element_bytes, 2, (1, 2, 4, 8, 16))
    vec = _int(vector, 1, (1, 2, 4, 8, 16))
    n = _int(num, 4, (1, 2, 4))
    layout, swizzle, access = layout.strip(), swizzle.strip(), access.strip()
    if swizzle.lower() == "none":
        swizzle = ""
    kind = access.partition(":")[0].strip().lower()
    params = {"layout": layout, "element_bytes": e, "swizzle": swizzle, "access": access}
    if vec != 1:
        params["vector"] = vec
    if n != 4:
        params["num"] = n
    if compare != "1":
        params["compare"] = "0"
    ctx: dict = {"request": request, "layout": layout, "e": e, "swizzle": swizzle, "access": access, "vector": vec,
                 "num": n, "kind": kind, "compare_on": compare == "1", "types": S.ELEMENT_TYPES,
                 "kinds": S.KINDS, "sw_presets": S.swizzle_presets(e), "view": None, "g": None, "xor": [],
                 "cmp": [], "error": None, "code": None, "grid_note": None,
                 "widths": S.vector_widths(e), "permalink": "/banks?" + urlencode(params)}
    try:
        acc = S.parse_access(access, vec, n)
        view = S.analyze(layout, swizzle or None, e, acc)
        g = S.bank_grid(view, "grid-banks", hover="hover-banks")
        ctx.update(view=view, g=g, xor=S.xor_rows(view), code=S.tile_code(view),
                   grid_note=None if g else S.no_grid_reason(view))
        if ctx["compare_on"]:
            ctx["cmp"] = [dict(c, g=S.bank_grid(c["view"], f"grid-cmp-{k}") if c["view"] else None)
                          for k, c in enumerate(S.compare(layout, swizzle or None, e, acc))]
    except LayoutError as exc:
        ctx["error"] = str(exc)
    return page_or_fragment(request, "banks.html", ctx, "banks-error")
