"""The built-in job kinds: ``smem``, ``transpose`` (GPU) and ``compile_only`` (queue plumbing; no GPU needed)."""

from __future__ import annotations

from gpu_worker import benches
from gpu_worker.registry import JobContext, register
from gpu_worker.schemas import CompileOnlyParams, SmemParams, TransposeParams


def run_smem(params: SmemParams, ctx: JobContext) -> dict:
    """Runner for ``smem``: see gpu_worker.benches.run_smem."""
    return benches.run_smem(params.spec(), progress=ctx.progress, cancelled=ctx.cancelled, profile=params.profile)


def run_transpose(params: TransposeParams, ctx: JobContext) -> dict:
    """Runner for ``transpose``: see gpu_worker.benches.run_transpose."""
    return benches.run_transpose(params.spec(), progress=ctx.progress, cancelled=ctx.cancelled)


def run_compile_only(params: CompileOnlyParams, ctx: JobContext) -> dict:
    """Runner for ``compile_only``: see gpu_worker.benches.run_compile_only; cancellable while holding."""
    ctx.check_cancel()
    out = benches.run_compile_only(params.spec(), progress=ctx.progress, worker_id=ctx.worker_id,
                                   cancelled=ctx.cancelled)
    ctx.check_cancel()
    return out


register("smem", SmemParams, run_smem, title="Shared-memory access pattern", needs_gpu=True)
register("transpose", TransposeParams, run_transpose, title="Transpose through shared memory", needs_gpu=True)
register("compile_only", CompileOnlyParams, run_compile_only, title="Compile only (queue check)", needs_gpu=False)
