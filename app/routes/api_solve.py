"""The layout doctor's JSON routes: ``POST /api/solve/smem`` (CONTRACT §5), the descriptor doctor and the linear
layouts. Bad input answers 422 with a ``detail`` that names the field."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field

from app.budget import BudgetedRoute
from app.config import MAX_TEXT
from app.schemas import ExactInt, RequestBody
from app.services import solver as S

router = APIRouter(route_class=BudgetedRoute, prefix="/api/solve", tags=["doctor"])


class SolveIn(RequestBody):
    model_config = ConfigDict(extra="forbid")
    element_bytes: int = Field(2, description="1, 2, 4 or 8")
    tile: str = Field(..., min_length=1, max_length=MAX_TEXT, examples=["(64,64):(64,1)"])
    accesses: list[dict[str, Any]] = Field(..., min_length=1, max_length=8,
                                           description="offsets / row / column / thread_layout / ldmatrix / tma / "
                                                       "wgmma accesses (see algebra.doctor.solver_access)")
    limit: int = Field(12, ge=1, le=50, description="candidates returned")


#: The longest descriptor text: 64 bits are 18 characters in hex (0x...), 20 in decimal; room for separators.
MAX_DESCRIPTOR_CHARS = 64


class DescriptorIn(RequestBody):
    model_config = ConfigDict(extra="forbid")
    descriptor: Annotated[str, Field(max_length=MAX_DESCRIPTOR_CHARS)] | int = Field(
        ..., examples=["0x4000004000010000"],
        description=f"a 64-bit descriptor: an integer, or its text (hex or decimal, at most {MAX_DESCRIPTOR_CHARS} "
                    "characters)")
    element_bytes: Annotated[Literal[1, 2, 4], ExactInt] = 2
    major: Literal["K", "MN"] = "K"
    mn: int = Field(64, ge=S.DESC_MN.start, le=S.DESC_MN.stop - 1)
    k: int | None = Field(None, ge=1, le=256)
    tile: str | None = Field(None, max_length=MAX_TEXT)
    arch: Literal["sm90", "sm100", "auto"] = Field(
        "sm90", description="sm90: Hopper's wgmma descriptor; sm100: Blackwell's UMMA descriptor; auto: read the "
                            "version bits (46-47 = 1 is Blackwell)")


class EncodeIn(RequestBody):
    model_config = ConfigDict(extra="forbid")
    tile: str = Field(..., min_length=1, max_length=MAX_TEXT, examples=["Sw<3,3,3> o (64,64):(64,1)"])
    element_bytes: Annotated[Literal[1, 2, 4], ExactInt] = 2
    major: Literal["K", "MN"] = "K"
    start_address: int = Field(0, ge=0, lt=1 << 18)
    arch: Literal["sm90", "sm100"] = Field("sm90", description="sm90: wgmma (make_gmma_desc); sm100: UMMA "
                                                                "(make_umma_desc)")


class LayoutIn(RequestBody):
    layout: str = Field(..., min_length=1, max_length=MAX_TEXT)


@router.post("/smem", responses={422: {"description": "bad input; detail names the field"}})
def post_smem(body: SolveIn) -> dict:
    """Every Sw<B,M,S> that fits the tile, every padding and (when they beat the swizzles) XOR maps, best first."""
    return S.solve_smem(body.element_bytes, body.tile, body.accesses, body.limit)


class AccessIn(RequestBody):
    model_config = ConfigDict(extra="forbid")
    element_bytes: int = Field(2, description="1, 2, 4, 8 or 16")
    tile: str = Field(..., min_length=1, max_length=MAX_TEXT, examples=["(64,64):(64,1)"])
    access: dict[str, Any] = Field(..., description="one access, as in /api/solve/smem's accesses")
    index: int = Field(0, ge=0, lt=8, description="its place in the list (error messages name accesses[index])")


@router.post("/access", responses={422: {"description": "bad input; detail names the field"}})
def post_access(body: AccessIn) -> dict:
    """One access of the doctor on the tile as given, lane by lane: (row, col), element offset, byte address and
    bank of each lane's first element, and the wavefronts per phase (the page's live preview)."""
    return S.preview_access(body.element_bytes, body.tile, body.access, body.index)


@router.post("/smem/measured")
def post_smem_measured(body: SolveIn) -> dict:
    """The committed GPU measurement (bench/results/solve_smem_*.json) of this exact request, if there is one."""
    return S.committed_measurement(body.element_bytes, body.tile, body.accesses)


@router.post("/descriptor")
def post_descriptor(body: DescriptorIn) -> dict:
    """Decode a 64-bit wgmma (sm90) or UMMA (sm100) descriptor: fields, canonical layout, checks, drawing."""
    return S.descriptor(body.descriptor, body.element_bytes, body.major, body.mn, body.k, body.tile, body.arch)


@router.post("/descriptor/encode")
def post_descriptor_encode(body: EncodeIn) -> dict:
    """The wgmma (sm90) or UMMA (sm100) descriptor of a smem tile (MN x K), checked by decoding it again."""
    return S.descriptor_encode(body.tile, body.element_bytes, body.major, body.start_address, body.arch)


@router.post("/tma")
def post_tma(body: dict[str, Any]) -> dict:
    """``cuTensorMapEncodeTiled`` arguments (or ``{"call": "<pasted call>"}``): every rule, and the box drawn."""
    return S.tma(body)


@router.post("/linear")
def post_linear(body: LayoutIn) -> dict:
    """A CuTe layout as its F2 matrix and Triton LinearLayout bases (forward, and offset -> coordinate)."""
    return S.linear_from_layout(body.layout)


@router.post("/linear/import")
def post_linear_import(body: dict[str, Any]) -> dict:
    """A Triton LinearLayout (``bases`` + ``out_dims``, or Gluon's ``reg_bases``...``shape``) as a CuTe layout."""
    return S.linear_to_cute(body)


@router.get("/linear/atom")
def get_linear_atom(name: str, operand: str = "C", element_bits: int | None = Query(
        None, description="a copy atom's element width (default 16); an MMA atom takes none")) -> dict:
    """An MMA atom's A/B/C or a copy atom's src/dst TV layout as a Triton distributed linear layout."""
    return S.linear_from_atom(name, operand, element_bits)
