"""``POST /api/banks``: the bank map of one warp's shared-memory access (CONTRACT §2 and §3)."""

from __future__ import annotations

from fastapi import APIRouter

from app.budget import BudgetedRoute
from app.schemas import BanksIn, BanksOut
from app.services.banks import access_dict, analyze

router = APIRouter(route_class=BudgetedRoute, prefix="/api", tags=["banks"])


@router.post("/banks", response_model=BanksOut,
             responses={422: {"description": "malformed layout / swizzle, an access outside the tile, or a cap"}})
def post_banks(body: BanksIn) -> dict:
    """Byte address of lane t = element_bytes * swizzle(layout(coordinate of t)), from the tensor's pointer at a
    128-byte boundary (below it, negative, where a stride is negative); bank = floor(address / 4) mod 32; ``ways`` is
    the worst phase's wavefront count and ``wavefronts`` the sum over phases."""
    acc = body.access
    access = access_dict(acc.kind, acc.index, acc.vector, acc.num, acc.layout, acc.trans)
    return analyze(body.layout, body.swizzle, body.element_bytes, access).to_json()
