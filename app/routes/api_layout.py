"""``POST /api/layout``: a layout's facts and its rank-2 offset table (CONTRACT §2)."""

from __future__ import annotations

import json

import orjson
from fastapi import APIRouter, Response

from algebra.core.memo import bounded
from app.budget import BudgetedRoute
from app.schemas import LayoutIn, LayoutOut
from app.services.layouts import describe_layout

router = APIRouter(route_class=BudgetedRoute, prefix="/api", tags=["layout"])


@router.post("/layout", response_model=LayoutOut,
             responses={422: {"description": "malformed layout or a cap exceeded; detail names the reason"}})
def post_layout(body: LayoutIn) -> dict:
    """size, cosize, rank, depth and ``table.offsets[i][j] = L(i, j)`` (rank 1: one row; rank > 2: modes 1..
    folded into columns). Over 2^20 cells the table is null and ``note`` names the cap."""
    return Response(_layout_json(body.layout.strip()), media_type="application/json")


@bounded(16 << 20, "layout JSON")
def _layout_json(text: str) -> bytes:
    """The answer's JSON, serialized once (a 2^20-cell table is 7 MB: validating and encoding it through the response
    model took most of the request; ``json`` a third of what was left, where orjson takes a fiftieth); same fields as
    LayoutOut, which stays the documented schema. orjson refuses integers past 64 bits, which ``json`` writes."""
    answer = describe_layout(text).to_json()
    try:
        return orjson.dumps(answer)
    except orjson.JSONEncodeError:
        return json.dumps(answer, separators=(",", ":")).encode()
