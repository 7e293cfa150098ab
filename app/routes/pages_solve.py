"""The layout doctor page ``/doctor?preset=<name>`` (or ``?tile=...&element_bytes=...``): the solver, the descriptor
doctor and the linear layouts. The page's script (static/doctor.js) calls the ``/api/solve/*`` routes."""

from __future__ import annotations

import json

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError, atoms
from app.budget import BudgetedRoute
from app.page_query import pick, problem
from app.services import solver as S
from app.templating import templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


@router.get("/doctor", response_class=HTMLResponse, include_in_schema=False)
def doctor_page(request: Request, preset: str = Query("fp16-64x64-cpasync-ldmatrix"), tile: str = Query(""),
                element_bytes: str | None = Query(None), accesses: str = Query(""), descriptor: str = Query(""),
                desc_mn: str = Query(""), desc_tile: str = Query(""), tma_call: str = Query("")) -> HTMLResponse:
    """``accesses`` (a JSON list, as the solver takes it) restores a permalink; text that is not JSON is shown as
    typed and the solver's 422 names the problem. ``descriptor`` (with ``desc_mn``, ``desc_tile``) and ``tma_call``
    fill the descriptor doctor and the TMA check, which the page then runs (the GEMM ladder's rung pages link so)."""
    chosen = S.PRESETS[pick(preset, tuple(S.PRESETS), next(iter(S.PRESETS)), "preset")]  # app.page_query
    try:
        mn = S.desc_mn(desc_mn)
    except LayoutError as exc:
        raise problem("desc_mn", desc_mn, exc) from None
    start = dict(chosen)
    start["accesses_text"] = json.dumps(chosen["accesses"])
    if accesses.strip():
        start["accesses_text"] = accesses.strip()[:8000]
    if tile.strip():
        start["tile"] = tile.strip()[:400]
    if element_bytes is not None:  # a size the menu does not offer (blank included): app.page_query
        start["element_bytes"] = pick(element_bytes, (1, 2, 4, 8, 16), 2, "element_bytes", " (bytes per element)")
    desc = {"descriptor": descriptor.strip()[:64], "mn": mn or "",
            "tile": desc_tile.strip()[:400], "tma_call": tma_call.strip()[:2000]}
    mma = [n for n in atoms.mma_names() if n.startswith(("SM80_16x8x16", "SM80_16x8x8", "SM70_8x8x4_F32F16F16F32"))]
    ctx = {"request": request, "presets": S.PRESETS, "start": start, "desc": desc,
           "atom_names": mma + atoms.copy_names()}
    return templates.TemplateResponse(request, "doctor.html", ctx)
