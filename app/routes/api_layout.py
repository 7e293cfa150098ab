"""``POST /api/layout``: a layout's facts and its rank-2 offset table (CONTRACT §2)."""

from __future__ import annotations

from fastapi import APIRouter

from app.schemas import LayoutIn, LayoutOut
from app.services.layouts import describe_layout

router = APIRouter(prefix="/api", tags=["layout"])


@router.post("/layout", response_model=LayoutOut,
             responses={422: {"description": "malformed layout or a cap exceeded; detail names the reason"}})
def post_layout(body: LayoutIn) -> dict:
    """size, cosize, rank, depth and ``table.offsets[i][j] = L(i, j)`` (rank 1: one row; rank > 2: modes 1..
    folded into columns). Over 2^20 cells the table is null and ``note`` names the cap."""
    return describe_layout(body.layout.strip()).to_json()
