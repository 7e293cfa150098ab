"""The GEMM ladder's rung pages ``/lab/rungs/{rung}``: one rung's layouts (from its declaration), the bank model's
verdict on each access beside Nsight Compute's counters from the committed H200 record, and where to look at each
layout (explorer, banks lab, TV atlas, layout doctor)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse

from app.budget import BudgetedRoute
from app.routes.api_bench import RUNG_PATTERN
from app.services import ladder_layouts as L
from app.templating import templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])


@router.get("/lab/rungs/{rung}", response_class=HTMLResponse, include_in_schema=False)
def rung_page(request: Request, rung: Annotated[str, Path(pattern=RUNG_PATTERN)]) -> HTMLResponse:
    """One rung; 404 for a rung the ladder does not have (what is no integer in ASCII digits, ``1.0`` or ``٣``
    included, is the framework's 422 naming ``rung``)."""
    try:
        ctx = L.rung_page(int(rung))
    except L.UnknownRung as exc:
        raise HTTPException(404, str(exc)) from None
    return templates.TemplateResponse(request, "lab_rung.html", {"request": request, **ctx})
