"""``POST /api/algebra``: run one layout-algebra op and its derivation steps (CONTRACT §2)."""

from __future__ import annotations

from fastapi import APIRouter

from app.budget import BudgetedRoute
from app.schemas import AlgebraIn, AlgebraOut
from app.services import overlay
from app.services.algebra_ops import available_ops, run_op

router = APIRouter(route_class=BudgetedRoute, prefix="/api", tags=["algebra"])


@router.post("/algebra", response_model=AlgebraOut,
             responses={422: {"description": "unknown op, malformed argument or an op CuTe refuses (detail says why)"}})
def post_algebra(body: AlgebraIn) -> dict:
    """``result = op(*args)`` in CuTe notation with ``steps`` from ``algebra.explain``. Tilers are written
    ``"<2:1, 4:2>"`` or as a JSON list of layouts; integers as ``"24"``."""
    res = run_op(body.op, body.args)
    return {**res.to_json(), "notes": overlay.op_notes(res)}


@router.get("/algebra/ops", tags=["algebra"])
def list_ops() -> list[dict]:
    """Every op of the op table (``algebra.registry``): its arguments (name, kind, optional), a one-line gloss, its
    group and its example arguments."""
    return [{"op": s.name, "args": [a.kind + ("?" if a.optional else "") for a in s.args],
             "arg_names": [a.name for a in s.args], "gloss": s.gloss, "group": s.group, "result": s.result,
             "examples": [{"label": e.label, "args": list(e.args)} for e in s.examples]}
            for s in available_ops()]
