"""The ``smem_solve`` job kind: measure the layout doctor's accesses on the tile as given and on its fixes
(gpu_worker.solve_bench), Nsight Compute's wavefronts beside the model's for every access."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpu_worker import solve_bench
from gpu_worker.registry import JobContext, register
from gpu_worker.schemas import ExactInt


class _Choice(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NaiveChoice(_Choice):
    kind: Literal["naive"]


class SwizzleChoice(_Choice):
    kind: Literal["swizzle"]
    swizzle: list[int] = Field(..., min_length=3, max_length=3, description="[B, M, S] of Sw<B,M,S>")


class PaddingChoice(_Choice):
    kind: Literal["padding"]
    pad: int = Field(..., ge=1, le=128, description="elements added to each row")


class XorChoice(_Choice):
    kind: Literal["xor"]
    xor: dict[Annotated[str, Field(pattern=r"^[0-9]{1,2}$")], Annotated[int, Field(ge=0, lt=1 << 31)]] = Field(
        ..., max_length=32, description='{"<source bit>": mask of the lower bits it flips}')


#: A layout to measure (gpu_worker.solve_bench.candidate_of), told apart by its kind.
LayoutChoice = Annotated[NaiveChoice | SwizzleChoice | PaddingChoice | XorChoice, Field(discriminator="kind")]


class SmemSolveParams(BaseModel):
    """A solver request (element_bytes, tile, accesses as ``POST /api/solve/smem`` takes them) and the layouts to
    measure: ``"best"`` or ``{"kind": "naive" | "swizzle" | "padding" | "xor", ...}``."""

    model_config = ConfigDict(extra="forbid")

    element_bytes: Annotated[Literal[1, 2, 4, 8], ExactInt] = 2
    tile: str = Field(..., min_length=1, max_length=4000)
    accesses: list[dict[str, Any]] = Field(..., min_length=1, max_length=8)
    layouts: list[Literal["best"] | LayoutChoice] = Field(
        default_factory=lambda: [NaiveChoice(kind="naive"), "best"], min_length=1, max_length=4)
    profile: bool = Field(True, description="count wavefronts with Nsight Compute when present")

    @model_validator(mode="after")
    def _check(self) -> SmemSolveParams:
        try:
            self._plan = solve_bench.plan(self.element_bytes, self.tile, self.accesses, self.spec()["layouts"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(str(exc)) from None
        return self

    def spec(self) -> dict:
        return self.model_dump()


def run_smem_solve(params: SmemSolveParams, ctx: JobContext) -> dict:
    """Runner for ``smem_solve``: see gpu_worker.solve_bench.run_solve."""
    return solve_bench.run_solve(params.spec(), progress=ctx.progress, cancelled=ctx.cancelled,
                                 profile=params.profile)


register("smem_solve", SmemSolveParams, run_smem_solve, title="Layout doctor: measured wavefronts", needs_gpu=True)
