"""Triton itself as the oracle (``pip install triton``; CPU is enough): its own layout conversion, its own printed
TTGIR and Gluon's ``bank_conflicts``, all through Gluon's frontend with no GPU.

- ``linear(layout, shape)``: ``GluonOpBuilder.to_linear_layout`` (the compiled conversion, callable outside a kernel)
  as ``{"register"|"offset": [...], "lane", "warp", "block"}``;
- ``printed(layout, shape)``: the TTGIR text Triton prints for the layout (alias definitions included), from the IR
  of a Gluon kernel that holds a tensor (or a shared buffer) of that layout;
- ``bank_conflicts(dist, shared, shape, bits)``: ``ttgl.bank_conflicts`` evaluated at compile time inside a
  ``@gluon.jit`` function (``static_print``), the excess wavefronts per wavefront of the st.shared / ld.shared
  instructions Triton would issue;
- ``compiled_store(dist, shared, shape, bits)``: the st.shared / stmatrix instructions of a Gluon kernel that stores
  the tensor into the buffer, compiled by Triton for sm_90 on the CPU (PTX), in a child process.
"""

from __future__ import annotations

import contextlib
import io
import math
import re

import triton
import triton.experimental.gluon.language as ttgl
from triton._C.libtriton import gluon_ir, ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend
from triton.experimental import gluon
from triton.experimental.gluon._runtime import GluonASTSource

VERSION = triton.__version__
TARGET = GPUTarget("cuda", 90, 32)
_BACKEND = make_backend(TARGET)
_DTYPES = {8: ttgl.int8, 16: ttgl.float16, 32: ttgl.float32, 64: ttgl.float64}


def _builder():
    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx, gluon_ir.GluonOpBuilder(ctx)


#: Triton 3.6's ``to_linear_layout`` wraps a shared layout's LinearLayout as a distributed one and aborts the process
#: (an MLIR assertion: "Expected input dimension 0 to be 'register'"); 3.8 and 3.9 convert shared layouts
SHARED_LINEAR = not VERSION.startswith("3.6")
#: Triton 3.9 drops a blocked layout's register bases past the shape; 3.6 and 3.8 keep them as zero bases
#: (broadcasts), as the product does (docs/triton.md). Only there may the two differ.
DROPS_BLOCKED_REGISTERS = tuple(int(x) for x in re.findall(r"\d+", VERSION)[:2]) >= (3, 9)


def same_bases(layout, mine: dict, theirs: dict) -> bool:
    """``mine == theirs``, or, on a Triton that drops a blocked layout's registers past the shape, equal once the
    zero register bases are dropped from ``mine`` (a ``BlockedLayout`` only; every other layout must be equal)."""
    if mine == theirs:
        return True
    if not (DROPS_BLOCKED_REGISTERS and type(layout).__name__ == "BlockedLayout" and "register" in mine):
        return False
    return {**mine, "register": [v for v in mine["register"] if any(v)]} == theirs


def linear(layout, shape) -> dict:
    """Triton's LinearLayout of ``layout`` (a Gluon layout object) for ``shape``; on Triton 3.6 a shared layout skips
    the test (``SHARED_LINEAR``) instead of aborting the run."""
    if not SHARED_LINEAR and "Shared" in type(layout).__name__:
        import pytest

        pytest.skip(f"Triton {VERSION}'s to_linear_layout aborts on shared layouts (3.8 or 3.9 converts them)")
    ctx, b = _builder()
    ll = b.to_linear_layout(layout._to_ir(b), list(shape))
    if hasattr(ll, "offset_bases"):
        return {"offset": [list(x) for x in ll.offset_bases], "block": [list(x) for x in ll.block_bases]}
    return {"register": [list(x) for x in ll.reg_bases], "lane": [list(x) for x in ll.lane_bases],
            "warp": [list(x) for x in ll.warp_bases], "block": [list(x) for x in ll.block_bases]}


@gluon.jit
def _hold(L: ttgl.constexpr, DT: ttgl.constexpr, SHAPE: ttgl.constexpr, SHARED: ttgl.constexpr):
    if SHARED:
        ttgl.allocate_shared_memory(DT, SHAPE, L)
    else:
        ttgl.full(SHAPE, 0, DT, L)


@gluon.jit
def _conflicts(L: ttgl.constexpr, S: ttgl.constexpr, DT: ttgl.constexpr, SHAPE: ttgl.constexpr):
    ttgl.static_print(ttgl.bank_conflicts(ttgl.distributed_type(DT.value, SHAPE, L),
                                          ttgl.shared_memory_descriptor_type(DT, SHAPE, S, SHAPE)))


def _run(fn, constexprs: dict, num_warps: int, num_ctas: int = 1):
    options = _BACKEND.parse_options({"num_warps": num_warps, "num_ctas": num_ctas})
    ctx = ir.context()
    ir.load_dialects(ctx)
    _BACKEND.load_dialects(ctx)
    names = list(constexprs)
    src = GluonASTSource(fn=fn, signature={n: "constexpr" for n in names},
                         constexprs={(i,): constexprs[n] for i, n in enumerate(names)})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module = src.make_ir(TARGET, options, _BACKEND.get_codegen_implementation(options),
                             _BACKEND.get_module_map(), ctx)
    return module, out.getvalue()


def num_warps(layout) -> int:
    """The warps a distributed Gluon layout spans (the kernel's num_warps)."""
    if hasattr(layout, "warp_bases"):
        return 1 << len(layout.warp_bases)
    if hasattr(layout, "parent"):
        return num_warps(layout.parent)
    return math.prod(layout.warps_per_cta) if hasattr(layout, "warps_per_cta") else 4


def num_ctas(layout) -> int:
    """The CTAs of a cluster a Gluon layout spans (the kernel's num_ctas)."""
    if hasattr(layout, "parent"):
        return num_ctas(layout.parent)
    bases = getattr(layout, "block_bases", None) or getattr(layout, "cga_layout", None) or []
    return 1 << len(bases)


def printed(layout, shape, bits: int = 16, warps: int | None = None) -> str:
    """Triton's printed TTGIR for ``layout``: its alias definitions, then the attribute as the tensor type names it."""
    shared = "Shared" in type(layout).__name__
    module, _ = _run(_hold, {"L": layout, "DT": _DTYPES[bits], "SHAPE": ttgl.constexpr(list(shape)),
                             "SHARED": ttgl.constexpr(shared)}, warps or (4 if shared else num_warps(layout)),
                     num_ctas(layout))
    text = module.str_nodebug()
    aliases = [line for line in text.splitlines() if re.match(r"#\w+ = #ttg\.", line)]
    dims = "x".join(str(s) for s in shape)
    m = re.search(rf"(?:tensor|memdesc)<{dims}x\w+, (#[\w.]+(?:<.*?}}>)?)(?:, #smem|>)", text)
    assert m, text
    return "\n".join(aliases + [m.group(1)])


def bank_conflicts(dist, shared, shape, bits: int = 16) -> int:
    """Gluon's ``bank_conflicts(distributed, shared)`` for a tensor of ``shape`` with ``bits``-bit elements."""
    _, out = _run(_conflicts, {"L": dist, "S": shared, "DT": _DTYPES[bits], "SHAPE": ttgl.constexpr(list(shape))},
                  num_warps(dist))
    return int(out.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the compiled store (PTX, sm_90, CPU)

_PTX_TYPES = {8: "*i8", 16: "*fp16", 32: "*fp32"}


def _store_kernel():
    if not hasattr(ttgl, "thread_barrier"):  # Triton 3.9 names it barrier
        ttgl.thread_barrier = ttgl.barrier

    @gluon.jit
    def store_tile(src, dst, R: ttgl.constexpr, C: ttgl.constexpr, L: ttgl.constexpr, S: ttgl.constexpr):
        rows = ttgl.arange(0, R, layout=ttgl.SliceLayout(1, L))
        cols = ttgl.arange(0, C, layout=ttgl.SliceLayout(0, L))
        offs = rows[:, None] * C + cols[None, :]
        smem = ttgl.allocate_shared_memory(src.dtype.element_ty, [R, C], S)
        smem.store(ttgl.load(src + offs))
        ttgl.thread_barrier()
        ttgl.store(dst + offs, smem.load(L))

    return store_tile


def _forked(fn):
    """``fn()`` in a child process (an LLVM assertion of Triton's aborts the process): its JSON answer, or None."""
    import json
    import os

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            out = json.dumps(fn())
        except BaseException:  # noqa: BLE001
            out = "null"
        with os.fdopen(w, "w") as f:
            f.write(out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data) if data else None


def compiled_store(dist, shared, shape, bits: int, op: str = "store") -> dict | None:
    """The shared-memory stores of a Gluon kernel that loads a tensor of ``dist`` and stores it into ``shared``,
    compiled by Triton for sm_90 with no GPU: ``{"kind": "st" | "stmatrix", "bytes" (st), "num", "trans" (stmatrix),
    "count" (per thread), "pairs" (stmatrix.trans: the XOR of the register indices packed into one 32-bit word)}``,
    None where Triton refuses the kernel or mixes instruction kinds (LLVM merged part of them). ``op="load"``: the
    same kernel's shared-memory loads back into ``dist`` (``ld.shared`` / ``ldmatrix``, named "st" / "stmatrix")."""
    st, mat = ("st", "stmatrix") if op == "store" else ("ld", "ldmatrix")

    def work():
        src = GluonASTSource(fn=_store_kernel(), signature={"src": _PTX_TYPES[bits], "dst": _PTX_TYPES[bits],
                                                            "R": "constexpr", "C": "constexpr", "L": "constexpr",
                                                            "S": "constexpr"},
                             constexprs={(2,): shape[0], (3,): shape[1], (4,): dist, (5,): shared})
        ptx = triton.compile(src, target=TARGET, options={"num_warps": num_warps(dist)}).asm["ptx"]
        ops = re.findall(rf"\b({st}\.shared(?:\.[\w:]+)*|{mat}(?:\.[\w:]+)*)\s", ptx)
        order = [x.strip() for g in re.findall(r"ld\.global(?:\.v\d)?\.b16 \{ ([^}]*) \}", ptx) for x in g.split(",")]
        idx = {name: i for i, name in enumerate(order)}
        pairs = sorted({idx[a] ^ idx[b] for a, b in re.findall(r"mov\.b32\s+%r\d+, \{(%rs\d+), (%rs\d+)\}", ptx)
                        if a in idx and b in idx})
        return [ops, pairs]
    got = _forked(work)
    if not got or len(set(got[0])) != 1:
        return None
    n = len(got[0])
    m = re.match(rf"{st}\.shared(?:\.v(\d))?\.b(\d+)$", got[0][0])
    if m:
        return {"kind": "st", "bytes": int(m.group(1) or 1) * int(m.group(2)) // 8, "count": n}
    m = re.match(rf"{mat}\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16$", got[0][0])
    if m:
        return {"kind": "stmatrix", "num": int(m.group(1)), "trans": bool(m.group(2)), "count": n, "pairs": got[1]}
    return None
