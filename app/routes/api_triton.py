"""Triton's layouts (CONTRACT §6): ``POST /api/triton/layout`` reads a TTGIR layout attribute for a tensor shape,
``POST /api/triton/conflicts`` prices a store or load between a distributed and a shared layout and gives the fix.
Bad input answers 422 with a ``detail`` that names the field."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import ConfigDict, Field

from app.budget import BudgetedRoute
from app.schemas import ExactInt, RequestBody
from app.services import triton as S

router = APIRouter(route_class=BudgetedRoute, prefix="/api/triton", tags=["triton"])

TTGIR = Annotated[str, Field(min_length=1, max_length=8000)]
Shape = Annotated[list[int], Field(min_length=1, max_length=3, examples=[[64, 64]])]
Bits = Annotated[Literal[8, 16, 32, 64], ExactInt]
REFUSED = {422: {"description": "bad TTGIR text, a field out of range or a cap; detail names the field"}}


class TritonLayoutIn(RequestBody):
    model_config = ConfigDict(strict=True, extra="forbid")
    layout: TTGIR = Field(..., examples=["#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
                                         "warpsPerCTA = [4, 1], order = [1, 0]}>"],
                          description="a TTGIR layout attribute as Triton 3.x prints it; alias definitions "
                                      "(#mma = #ttg.nvidia_mma<...>) may come first, one per line")
    shape: Shape
    element_bits: Bits = 16


class TritonConflictsIn(RequestBody):
    model_config = ConfigDict(strict=True, extra="forbid")
    distributed: TTGIR = Field(..., examples=["#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
                                              "warpsPerCTA = [4, 1], order = [1, 0]}>"])
    shared: TTGIR = Field(..., examples=["#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, "
                                         "order = [1, 0]}>"])
    shape: Shape
    element_bits: Bits = 16
    op: Literal["store", "load"] = "store"
    warp: int = Field(0, ge=0, le=1023, description="the warp whose instructions are counted")


@router.post("/layout", responses=REFUSED)
def post_layout(body: TritonLayoutIn) -> dict:
    """The attribute as Triton's LinearLayout for the shape (bases per in-dim), its CuTe layout and, for a shared
    layout, the element offset of every (row, col) as row-major nested lists (up to 128 x 128)."""
    return S.layout_view(body.layout, body.shape, body.element_bits)


@router.post("/conflicts", responses=REFUSED)
def post_conflicts(body: TritonConflictsIn) -> dict:
    """The instructions the compiler would issue for the store (load), their wavefronts against the ideal under the
    bank model, warp ``warp``'s total over every repeat of the CTA tile, and the doctor's fix as a Triton shared
    attribute and as CuTe."""
    return S.conflicts_view(body.distributed, body.shared, body.shape, body.element_bits, body.op, body.warp)
