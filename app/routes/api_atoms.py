"""``/api/atoms``: MMA and copy atoms as TV grids; ``/api/sectors``: a thread partition's sector efficiency."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from algebra import atoms
from app.schemas import AtomOut, AtomSummary
from app.services import tv as S

router = APIRouter(prefix="/api", tags=["atoms"])


@router.get("/atoms", response_model=list[AtomSummary])
def list_atoms() -> list[dict]:
    """Every atom name (CuTe's spelling) with its kind, ``mma`` or ``copy``."""
    mma = set(atoms.mma_names())
    return [{"name": n, "kind": "mma" if n in mma else "copy"} for n in atoms.names()]


@router.get("/atoms/{name}", response_model=AtomOut,
            responses={422: {"description": "unknown atom, or an element size the copy atom cannot move"}})
def get_atom(name: str, element_bits: int = 16) -> dict:
    """The atom's operands (MMA: A, B, C; copy: src, dst) as grids: ``threads[m][n]`` / ``values[m][n]`` hold the
    (thread, value) owning element (m, n)."""
    first = S.tv_view(name, "C" if name in set(atoms.mma_names()) else "src", element_bits)
    views = [S.tv_view(name, op, element_bits) for op in first.operands]
    return {"name": first.name, "kind": first.kind, "shape": first.shape, "operands": [v.to_json() for v in views]}


class SectorsIn(BaseModel):
    tv: str = Field(..., min_length=1, max_length=4000, examples=["((16,2),4):((1,16),32)"],
                    description="(thread, value) -> element offset")
    element_bytes: int = Field(4, ge=1, le=16)
    vector: int | None = Field(None, ge=1, le=16)


@router.post("/sectors")
def post_sectors(body: SectorsIn) -> dict:
    """32-byte sectors per instruction for warp 0 of the partition, and the overall utilization."""
    v = S.sector_view(body.tv, body.element_bytes, body.vector)
    return {"tv": v.tv, "vector": v.vector, "max_vector": v.max_vector, "total_sectors": v.total_sectors,
            "utilization": v.utilization, "instructions": v.instructions}
