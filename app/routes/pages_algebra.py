"""The algebra workbench ``/algebra?op=...&a=...&b=...``: the whole page or its ``result`` block for htmx."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError
from app.services import presets
from app.services.algebra_ops import available_ops, op_grids, run_op
from app.templating import is_htmx, templates

router = APIRouter(tags=["pages"])


@router.get("/algebra", response_class=HTMLResponse, include_in_schema=False)
def algebra_page(request: Request, op: str = Query("composition"), a: str = Query("(6,2):(8,2)"),
                 b: str = Query("(4,3):(3,1)"), c: str = Query("")) -> HTMLResponse:
    op, a, b, c = op.strip(), a.strip(), b.strip(), c.strip()
    args = [a, b, c] if c else [a, b] if b else [a]
    ctx: dict = {"request": request, "op": op, "a": a, "b": b, "c": c, "ops": available_ops(),
                 "presets": presets.ALGEBRA, "res": None, "grids": [], "error": None,
                 "permalink": "/algebra?" + urlencode({"op": op, "a": a, **({"b": b} if b else {}),
                                                       **({"c": c} if c else {})})}
    try:
        res = run_op(op, args)
        ctx.update(res=res, grids=op_grids(res))
    except LayoutError as exc:
        ctx["error"] = str(exc)
    return templates.TemplateResponse(request, "algebra.html", ctx, block_name="result" if is_htmx(request) else None)
