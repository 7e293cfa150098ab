"""The TV atlas ``/tv?atom=SM80_16x8x16_F32F16F16F32_TN&operand=C`` (plus the sector-efficiency panel)."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError
from app.services import tv as S
from app.templating import is_htmx, templates

router = APIRouter(tags=["pages"])


def _int(text: str, default: int, allowed: tuple[int, ...]) -> int:
    try:
        v = int(text)
    except ValueError:
        return default
    return v if v in allowed else default


@router.get("/tv", response_class=HTMLResponse, include_in_schema=False)
def tv_page(request: Request, atom: str = Query(S.DEFAULT_ATOM), operand: str = Query(""),
            bits: str = Query("16"), part: str = Query(S.SECTOR_PRESETS[0][1]), eb: str = Query("4"),
            vector: str = Query(S.SECTOR_PRESETS[0][3])) -> HTMLResponse:
    atom, operand = atom.strip(), operand.strip()
    element_bits = _int(bits, 16, (8, 16, 32, 64, 128))
    ctx: dict = {"request": request, "atom": atom, "operand": operand, "bits": element_bits, "menu": S.atom_menu(),
                 "view": None, "g": None, "error": None, "part": part.strip(), "eb": _int(eb, 4, (1, 2, 4, 8, 16)),
                 "vector": vector.strip(), "presets": S.SECTOR_PRESETS, "sec": None, "sec_error": None}
    try:
        if not operand:
            operand = "C" if not atom.upper().startswith(("SM75", "SM90_U", "SM80_CP", "UNIVERSAL")) else "dst"
        view = S.tv_view(atom, operand, element_bits)
        ctx.update(view=view, g=S.tv_grid(view, "grid-tv"), operand=view.operand)
    except LayoutError as exc:
        ctx["error"] = str(exc)
    try:
        vec = int(ctx["vector"]) if ctx["vector"] else None
        ctx["sec"] = S.sector_view(ctx["part"], ctx["eb"], vec)
    except ValueError:
        ctx["sec_error"] = f"vector: {ctx['vector']!r} is not an integer"
    except LayoutError as exc:
        ctx["sec_error"] = str(exc)
    ctx["permalink"] = "/tv?" + urlencode({"atom": atom, "operand": ctx["operand"], **(
        {"bits": element_bits} if element_bits != 16 else {})})
    block = request.headers.get("HX-Target") if is_htmx(request) else None
    block = {"result": "result", "sectors": "sectors"}.get(block or "", "result") if is_htmx(request) else None
    return templates.TemplateResponse(request, "tv.html", ctx, block_name=block)
