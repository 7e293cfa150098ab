"""An MMA kernel's data path on one screen (the TV atlas's "kernel path" section): the MMA atom -> ``make_tiled_mma``
-> the tiled copies that feed A and B and drain C (``make_tiled_copy_A/B/C``) -> the registers one thread holds
(``partition_fragment_A/B/C``, ``partition_shape_*``) -> that thread's partitions of the CTA tile
(``partition_A/B/C``). Every step carries its CuTe C++ (compiled host-only by tests/oracle/test_vocab_oracle.py) and
CuTe DSL code. A tiled copy that claims an element twice or leaves one out says which threads and which elements,
in words and on its grid (cells marked ``bad``).

Post-conditions: each grid cell (m, n) of a TV layout names the lowest (thread, value) whose TV layout maps to the
column-major index ``m + rows * n``; the outlined cells of a partition are exactly the chosen thread's elements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import algebra as A
from algebra import LayoutError, atoms
from app.budget import offsets
from app.config import MAX_CELLS, MAX_THREADS
from app.services import tv as TV
from app.services.grid import GridView
from app.services.guard import guard
from app.services.layouts import parse_layout
from layoutlab.model import check_permutation_fits, lane_in_atom, lanes_text, mma_cell, mma_lanes, pick_lane

#: (label, MMA atom, atom layout, permutation, copy A, copy B, copy C, CTA tile M,N,K)
PRESETS: list[tuple[str, str, str, str, str, str, str, str]] = [
    ("m16n8k16, 2x2 warps, ldmatrix A/B, 32-bit stores of C", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)",
     "_,32,_", "SM75_U32x4_LDSM_N", "SM75_U32x4_LDSM_N", "UniversalCopy_32b", "64,64,32"),
    ("m16n8k8, 2x1 warps, universal copies", "SM80_16x8x8_F16F16F16F16_TN", "(2,1,1)", "", "UniversalCopy_32b",
     "UniversalCopy_32b", "UniversalCopy_32b", "32,16,16"),
    ("SM70 m8n8k4 quad-pairs, 2x2", "SM70_8x8x4_F32F16F16F32_TN", "(2,2,1)", "", "UniversalCopy_64b",
     "UniversalCopy_64b", "UniversalCopy_64b", "32,32,8"),
    ("a copy that does not fit: ldmatrix x4 for m16n8k16's B", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)", "",
     "SM75_U32x4_LDSM_N", "SM75_U32x4_LDSM_N", "UniversalCopy_32b", "32,16,16"),
]
#: copy atom -> CuTe DSL atom expression (element type appended by the caller)
DSL_COPY = {"SM75_U32x1_LDSM_N": "cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 1)",
            "SM75_U32x2_LDSM_N": "cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 2)",
            "SM75_U32x4_LDSM_N": "cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4)",
            "SM75_U16x2_LDSM_T": "cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 1)",
            "SM75_U16x4_LDSM_T": "cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 2)",
            "SM75_U16x8_LDSM_T": "cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4)",
            "SM90_U32x4_STSM_N": "cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4)"}
CPP_COPY = {"SM80_CP_ASYNC_CACHEALWAYS_16B": "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>",
            "SM80_CP_ASYNC_CACHEALWAYS_8B": "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>",
            "SM80_CP_ASYNC_CACHEALWAYS_4B": "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
            "SM80_CP_ASYNC_CACHEGLOBAL_16B": "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
            **{f"UniversalCopy_{b}b": f"UniversalCopy<uint{b}_t>" for b in (8, 16, 32, 64, 128)}}
CPP_TYPE_OF = {"half_t": "half_t", "float": "float", "bfloat16_t": "bfloat16_t", "tfloat32_t": "tfloat32_t",
               "double": "double", "int8_t": "int8_t", "int32_t": "int32_t"}
DSL_TYPE_OF = {"half_t": "cutlass.Float16", "float": "cutlass.Float32", "bfloat16_t": "cutlass.BFloat16",
               "tfloat32_t": "cutlass.TFloat32", "double": "cutlass.Float64", "int8_t": "cutlass.Int8",
               "int32_t": "cutlass.Int32"}


@dataclass
class Step:
    title: str
    text: str
    grids: list[GridView] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    cpp: str = ""
    dsl: str = ""
    problem: str = ""  # a tiled copy's duplicates / holes, in words (or why it could not be built)


@dataclass
class KernelPath:
    atom: str
    thread: int  # a lane: the id CuTe's get_slice reads and print_latex labels (T<lane>)
    num_threads: int
    tile_mnk: tuple[int, int, int]
    cta_mnk: tuple[int, int, int]
    steps: list[Step] = field(default_factory=list)
    #: the tiled MMA's lanes (:func:`layoutlab.model.mma_lanes`), the thread picker's choices
    lanes: list[int] = field(default_factory=list)

    @property
    def lanes_text(self) -> str:
        return lanes_text(self.lanes)


# ------------------------------------------------------------------------------------------- parsing


def parse_permutation(text: str) -> tuple[Any, Any, Any] | None:
    """``"_,32,_"`` or ``"(4,2,4):(2,1,8),_,_"`` -> a permutation per M, N, K (None, a size or a layout)."""
    text = (text or "").strip().strip("<>")
    if not text:
        return None
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    if len(parts) != 3:
        raise LayoutError(f"permutation: {text!r} needs three entries (M, N, K), each _, a size or a layout")
    out: list[Any] = []
    for p in (x.strip() for x in parts):
        if p in ("", "_"):
            out.append(None)
        elif p.isdecimal():
            if not 0 < int(p) <= 4096:
                raise LayoutError(f"permutation: size {p} must be in 1..4096")
            out.append(int(p))
        else:
            out.append(parse_layout(p, "permutation", plain=True, offsets=True))
    return tuple(out)  # type: ignore[return-value]


def parse_mnk(text: str, what: str) -> tuple[int, int, int] | None:
    text = (text or "").strip().strip("()")
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3 or not all(p.isdecimal() and 0 < int(p) <= 4096 for p in parts):
        raise LayoutError(f"{what}: {text!r} is not M,N,K (three integers in 1..4096, e.g. 64,64,32)")
    return int(parts[0]), int(parts[1]), int(parts[2])


def build_mma(atom: str, layout_text: str, perm_text: str) -> tuple[Any, Any]:
    lay = parse_layout(layout_text or "(1,1,1)", "atom layout", plain=True, offsets=True)
    if A.size(lay) > 64:
        raise LayoutError(f"atom layout: {A.size(lay)} atoms exceeds the cap of 64")
    perm = parse_permutation(perm_text)
    with guard("make_tiled_mma"):
        tm = atoms.make_tiled_mma(atom.strip(), lay, perm)
        for i, p in enumerate(perm or ()):
            own = tm.atom.shape_mnk[i] * A.size(tm.thr_layout_vmnk[i + 1])
            if p is not None and A.size(p) % own:
                raise LayoutError(f"permutation: the {'MNK'[i]} entry covers {A.size(p)}, not a multiple of the "
                                  f"atoms' {own} along {'MNK'[i]}")
    if tm.num_threads > MAX_THREADS:
        raise LayoutError(f"tiled MMA: {tm.num_threads} threads exceeds the cap of {MAX_THREADS}")
    return tm, lay


def check_thread(t: Any, tm: Any) -> tuple[int, list[int]]:
    """(the lane ``t`` names, all the tiled MMA's lanes): a thread is picked by its lane, as CuTe's ``get_slice``
    reads it and ``print_latex`` labels it (:func:`layoutlab.model.pick_lane`); a number that is no lane is refused
    with the lanes named."""
    with guard("make_tiled_mma"):
        lanes = mma_lanes(tm, offsets)
    return pick_lane(t, lanes), lanes


def check_cta(cta: tuple[int, int, int], tile: tuple[int, int, int], what: str = "CTA tile") -> None:
    for name, x, d in zip("MNK", cta, tile, strict=True):
        if x % d:
            raise LayoutError(f"{what}: {name} = {x} is not a multiple of the tiled MMA's {name} = {d} (the tiler "
                              "does not divide)")


# ------------------------------------------------------------------------------------------- grids


def tv_layout_grid(tv: Any, rows: int, cols: int, grid_id: str, caption: str, thread: int | None = None,
                   bad: set[tuple[int, int]] | None = None) -> GridView:
    """A TV layout over a rows x cols column-major tile: cell = lowest (thread, value) claiming it; claims outside
    the tile are skipped; ``thread``'s cells outlined, ``bad`` cells marked."""
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells")
    nthr = A.size(tv[0])
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    mine = set()
    for i, e in enumerate(offsets(tv, "TV layout")):
        if not 0 <= e < rows * cols:
            continue
        r, c = e % rows, e // rows
        t, v = i % nthr, i // nthr
        if threads[r][c] < 0:
            threads[r][c], values[r][c] = t, v
        if t == thread:
            mine.add((r, c))
    view = TV.TVView(name="", kind="", operand="", operands=(), tv_layout=str(tv), rows=rows, cols=cols,
                     threads=threads, values=values, sharers=[], num_threads=nthr, num_values=A.size(tv[1]),
                     shape=[rows, cols], ptx="")
    g = TV.tv_grid(view, grid_id, by_warp=nthr > 32)
    g.caption = caption
    g.marks = {c: "acc" for c in mine}
    for c in bad or ():
        g.marks[c] = "bad"
    return g


def coverage_words(tc: Any, what: str) -> tuple[str, set[tuple[int, int]]]:
    """The tiled copy's duplicates and holes in words (which threads, which elements) and the cells to mark (a rank-1
    tile is drawn as one row: element (e,) is cell (0, e))."""
    d = tc.coverage_detail(limit=4096)
    if not d["duplicates"] and not d["uncovered"]:
        return "", set()

    def cell(el: tuple[int, ...]) -> tuple[int, int]:
        return (0, el[0]) if len(el) == 1 else (el[0], el[1])

    parts = []
    if d["duplicates"]:
        ex = "; ".join(f"{A.inttuple.to_str(tuple(e['element']))} by " + ", ".join(f"T{t}V{v}" for t, v in e["claims"])
                       for e in d["duplicate_elements"][:4])
        parts.append(f"{d['duplicates']} element(s) of the {'x'.join(map(str, d['tile']))} tile are claimed more "
                     f"than once (up to {d['claims_per_element']} claims each), e.g. {ex}; threads "
                     f"{', '.join(f'T{t}' for t in d['duplicate_threads'][:8])}"
                     f"{' …' if len(d['duplicate_threads']) > 8 else ''} repeat each other's elements")
    if d["uncovered"]:
        ex = ", ".join(A.inttuple.to_str(tuple(e)) for e in d["uncovered_elements"][:6])
        parts.append(f"{d['uncovered']} element(s) are claimed by no thread (holes), e.g. {ex}")
    extra = f"; {d['outside']} claims fall outside the tile and count as neither" if d["outside"] else ""
    cells = {cell(e["element"]) for e in d["duplicate_elements"]} | {cell(e) for e in d["uncovered_elements"]}
    return f"{what} does not cover its tile exactly: " + "; ".join(parts) + extra + ".", cells


# ------------------------------------------------------------------------------------------- code


def _cpp_layout(x: Any) -> str:
    return A.to_cpp(x, style="type") if isinstance(x, A.Layout) else f"Int<{x}>{{}}" if isinstance(x, int) else "_"


def mma_cpp(tm: Any, lay: Any) -> str:
    """``make_tiled_mma(Op{}, atom_layout, Tile<...>{})`` for SM70 / SM80 atoms (wgmma's ops take majors)."""
    op = tm.atom.name
    if op.startswith("SM90_"):
        n = op.split("_")[1].split("x")[1]
        types, form = op.split("_")[2], op.split("_")[3]
        op = f"SM90::GMMA::MMA_64x{n}x16_{types}_{form}<GMMA::Major::K, GMMA::Major::K>"
    perm = ", ".join("Underscore" if p is None else _cpp_layout(p).removesuffix("{}") if isinstance(p, A.Layout)
                     else f"Int<{A.size(p)}>" for p in tm.permutation)
    return (f"auto mma = make_tiled_mma({op}{{}},\n                          {A.to_cpp(lay, style='type')},\n"
            f"                          Tile<{perm}>{{}});")


def _p(expr: str) -> str:
    return f'print({expr}); print("\\n");'


def mma_dsl(tm: Any) -> str:
    m, n, k = tm.atom.shape_mnk
    lay = tuple(A.size(tm.thr_layout_vmnk[i]) for i in (1, 2, 3))
    perm = tuple(None if p is None else A.size(p) for p in tm.permutation)
    ab, cc = DSL_TYPE_OF[tm.atom.types[1]], DSL_TYPE_OF[tm.atom.types[0]]
    op = f"cute.nvgpu.warp.MmaF16BF16Op({ab}, {cc}, ({m}, {n}, {k}))" if tm.atom.name.startswith("SM80_") and \
        tm.atom.types[1] in ("half_t", "bfloat16_t") else f"{tm.atom.name}  # (no CuTe DSL op of this name)"
    perm_txt = "" if all(p is None for p in perm) else f",\n                                permutation_mnk={perm}"
    return f"mma = cute.make_tiled_mma({op},\n                                atom_layout_mnk={lay}{perm_txt})"


def copy_cpp(name: str, type_name: str) -> str:
    return f"Copy_Atom<{CPP_COPY.get(name, name)}, {type_name}>{{}}"


def copy_dsl(name: str, type_name: str) -> str:
    dsl_t = DSL_TYPE_OF.get(type_name, "cutlass.Float16")
    if name in DSL_COPY:
        return f"cute.make_copy_atom({DSL_COPY[name]}, {dsl_t})"
    if name.startswith("SM80_CP_ASYNC"):
        bits = {"16B": 128, "8B": 64, "4B": 32}[name.rsplit("_", 1)[1]]
        return f"cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), {dsl_t}, num_bits_per_copy={bits})"
    bits = name.removeprefix("UniversalCopy_").removesuffix("b")
    return f"cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), {dsl_t}, num_bits_per_copy={bits})"


# ------------------------------------------------------------------------------------------- the path


@lru_cache(maxsize=16)
def kernel_path(atom: str, layout: str, perm: str, copy_a: str, copy_b: str, copy_c: str, cta: str,
                thread: str) -> KernelPath:
    """The whole path for one MMA, its three copies, a CTA tile (M,N,K) and one thread."""
    tm, lay = build_mma(atom, layout, perm)
    tile = tuple(tm.tile_size_mnk(i) for i in range(3))
    cta_mnk = parse_mnk(cta, "CTA tile") or tile
    check_cta(cta_mnk, tile)  # type: ignore[arg-type]
    t, lanes = check_thread(thread, tm)
    path = KernelPath(atom=tm.atom.name, thread=t, num_threads=tm.num_threads, tile_mnk=tile,  # type: ignore[arg-type]
                      cta_mnk=cta_mnk, lanes=lanes)  # type: ignore[arg-type]
    d_t, a_t, b_t, c_t = tm.atom.types
    # 1 · the atom
    v = TV.tv_view(tm.atom.name, "C")
    g = TV.tv_grid(v, "kp-mma-atom")
    g.caption = f"C of one atom · {v.tv_layout}"
    idx, lane = lane_in_atom(tm, t)  # the picture labels the atom's threads by lane (thr_id)
    g.marks = {(i, j): "acc" for i, row in enumerate(v.threads) for j, x in enumerate(row) if x == lane}
    m, n, k = tm.atom.shape_mnk
    who = f"thread {t} is the atom's thread {idx}" + (f", T{lane} in its picture" if lane != idx else "")
    path.steps.append(Step("1 · the MMA atom", f"{tm.atom.name} ({tm.atom.ptx}): {tm.atom.num_threads} threads "
                           f"compute one {m}x{n}x{k} product; A is {tm.atom.A}, B {tm.atom.B}, C {tm.atom.C}; "
                           f"{who}, outlined",
                           [g], [("ThrID", str(tm.atom.thr_id))],
                           cpp=f"using Atom = MMA_Atom<{mma_cpp(tm, lay).split('(', 1)[1].split('{', 1)[0]}>;\n"
                               + _p("Atom::LayoutC_TV{}"),
                           dsl=mma_dsl(tm).split("=", 1)[1].split(",\n")[0].strip().removeprefix(
                               "cute.make_tiled_mma(")))
    # 2 · the tiled MMA
    with guard("get_layoutC_TV"):
        tvs = {op: tm.get_layout_TV(op) for op in "ABC"}
    rows, cols = tile[0], tile[1]
    g2 = tv_layout_grid(tvs["C"], rows, cols, "kp-tiled-mma", f"get_layoutC_TV() over {rows}x{cols}", t)
    path.steps.append(Step(
        "2 · make_tiled_mma", f"{tm.num_threads} threads in {-(-tm.num_threads // 32)} warp(s) over a "
        f"{tile[0]}x{tile[1]}x{tile[2]} tile; thread {t} outlined", [g2],
        [("thr_layout_vmnk", str(tm.thr_layout_vmnk)), ("get_layoutA_TV()", str(tvs["A"])),
         ("get_layoutB_TV()", str(tvs["B"])), ("get_layoutC_TV()", str(tvs["C"]))],
        cpp="\n".join([mma_cpp(tm, lay)] + [_p(f"mma.get_layout{op}_TV()") for op in "ABC"]),
        dsl=mma_dsl(tm) + "\nprint(mma.tv_layout_A, mma.tv_layout_B, mma.tv_layout_C)"))
    # 3 · the tiled copies
    step3 = Step("3 · the tiled copies: make_tiled_copy_A / _B / _C", "each copies exactly the values its operand's "
                 "TV layout gives a thread (the copy's TV layout is the MMA's), so a thread loads what it multiplies")
    cpp3, dsl3 = [], []
    for op, name, tname, var in (("A", copy_a, a_t, "s2r_A"), ("B", copy_b, b_t, "s2r_B"),
                                 ("C", copy_c, c_t, "r2s_C")):
        if not name.strip():
            continue
        bits = tm.atom.value_bits(op)
        r, c = tm.tile_shape(op)
        try:
            with guard(f"make_tiled_copy_{op}"):
                tc = getattr(atoms, f"make_tiled_copy_{op}")(name.strip(), tm, element_bits=bits)
                words, bad = coverage_words(tc, f"make_tiled_copy_{op}")
                s_tv, d_tv = tc.get_layoutS_TV(), tc.get_layoutD_TV()
        except LayoutError as exc:
            step3.problem += f"{op}: {exc}. "
            continue
        step3.grids.append(tv_layout_grid(tc.tv_layout, r, c, f"kp-copy-{op.lower()}",
                                          f"{op} · {tc.atom.name} · {r}x{c}", t, bad))
        step3.facts += [(f"{op}: tiler", "(" + ",".join(map(str, tc.tiler)) + ")"),
                        (f"{op}: get_layoutS_TV()", str(s_tv)), (f"{op}: get_layoutD_TV()", str(d_tv))]
        if words and op != "C" and _replicated(tc, tm, op):
            step3.facts.append((f"{op}: shared", f"each element of {op} is claimed by the "
                                f"{tc.coverage_detail(limit=0)['claims_per_element']} warps along "
                                f"{'N' if op == 'A' else 'M'}: each loads its own copy of {op} (the MMA's "
                                "replication, not a fault)"))
        elif words:
            step3.problem += words + " "
        cpp3.append(f"auto {var} = make_tiled_copy_{op}({copy_cpp(tc.atom.name, tname)}, mma);\n"
                    f"{_p(var + '.get_layoutS_TV()')}\n{_p(var + '.get_layoutD_TV()')}")
        dsl3.append(f"{var} = cute.make_tiled_copy_{op}({copy_dsl(tc.atom.name, tname)}, mma)")
    step3.cpp, step3.dsl = (mma_cpp(tm, lay) + "\n" + "\n".join(cpp3)) if cpp3 else "", \
        (mma_dsl(tm) + "\n" + "\n".join(dsl3)) if dsl3 else ""
    path.steps.append(step3)
    # 4 · one thread's registers
    M, N, K = cta_mnk
    shapes = {"A": (M, K), "B": (N, K), "C": (M, N)}
    facts = []
    with guard("partition_fragment"):
        for op in "ABC":
            shp = shapes[op]
            frag = getattr(tm, f"partition_fragment_{op}")(A.Layout(shp), t)
            pshape = getattr(tm, f"partition_shape_{op}")(shp)
            facts += [(f"partition_fragment_{op}", str(frag)), (f"partition_shape_{op}", A.inttuple.to_str(pshape))]
    tpl = {"A": a_t, "B": b_t, "C": c_t}
    cpp4 = [mma_cpp(tm, lay), f"auto thr_mma = mma.get_slice({t});"]
    for op in "ABC":
        r, c = shapes[op]
        cpp4 += [f"auto s{op} = make_tensor(make_smem_ptr(({CPP_TYPE_OF[tpl[op]]}*)nullptr), "
                 f"Layout<Shape<Int<{r}>, Int<{c}>>>{{}});",
                 f"auto tCr{op} = thr_mma.partition_fragment_{op}(s{op});",
                 _p(f"tCr{op}.layout()"),
                 _p(f"partition_shape_{op}(mma, Shape<Int<{r}>, Int<{c}>>{{}})")]
    dsl4 = [mma_dsl(tm), f"thr_mma = mma.get_slice({t})"] + [
        f"tCr{op} = thr_mma.make_fragment_{op}(thr_mma.partition_{op}(s{op}))" for op in "ABC"]
    path.steps.append(Step("4 · the registers of one thread", f"thread {t}'s fragments over the {M}x{N}x{K} CTA "
                           "tile: (MMA, MMA_M, MMA_K) values, laid out as CuTe's make_fragment_like (C: compact)",
                           [], facts, cpp="\n".join(cpp4), dsl="\n".join(dsl4)))
    # 5 · the partitions of the CTA tile
    step5 = Step("5 · the partitions of the CTA tile", f"thr_mma.partition_A/B/C: thread {t}'s elements of A "
                 f"({M}x{K}), B ({N}x{K}) and C ({M}x{N}) outlined; every cell names its owner")
    cpp5 = [mma_cpp(tm, lay), f"auto thr_mma = mma.get_slice({t});"]
    for op in "ABC":
        r, c = shapes[op]
        g5, frag, off = partition_grid(tm, op, r, c, t)
        step5.grids.append(g5)
        step5.facts.append((f"partition_{op}", f"{frag} at offset {off}"))
        cpp5 += [f"auto g{op} = make_tensor(make_gmem_ptr(({CPP_TYPE_OF[tpl[op]]}*)nullptr), "
                 f"Layout<Shape<Int<{r}>, Int<{c}>>>{{}});",
                 f"auto tC{op.lower()}{op} = thr_mma.partition_{op}(g{op});",
                 _p(f"tC{op.lower()}{op}.layout()")]
    step5.cpp = "\n".join(cpp5)
    step5.dsl = "\n".join([mma_dsl(tm), f"thr_mma = mma.get_slice({t})"] +
                          [f"tC{op.lower()}{op} = thr_mma.partition_{op}(g{op})" for op in "ABC"])
    path.steps.append(step5)
    return path


def _replicated(tc: Any, tm: Any, op: str) -> bool:
    """A tiled copy of A (B) whose every element is claimed exactly once per thread group along N (M): the MMA's
    own replication, each warp loading the operand it multiplies."""
    d = tc.coverage_detail(limit=0)
    reps = A.size(tm.thr_layout_vmnk[2 if op == "A" else 1])
    return d["uncovered"] == 0 and d["duplicates"] == A.product(tc.tiler) and d["claims_per_element"] == reps \
        and reps > 1


def partition_grid(tm: Any, op: str, rows: int, cols: int, t: int) -> tuple[GridView, str, int]:
    """partition_``op`` of a column-major rows x cols tensor: owner per cell (lowest lane), lane t outlined."""
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"a {rows}x{cols} operand exceeds the render cap of {MAX_CELLS:,} cells")
    tensor = A.Layout((rows, cols))
    fn = getattr(tm, f"partition_{op}")
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    mine: set[tuple[int, int]] = set()
    frag_t, off_t = "", 0
    check_permutation_fits(tm, op, rows, cols)
    with guard(f"partition_{op}"):
        for u in mma_lanes(tm, offsets):
            frag, off = fn(tensor, u)
            if u == t:
                frag_t, off_t = str(frag), off
            for v, o in enumerate(offsets(frag, "fragment")):
                r, c = mma_cell(tm, op, u, v, off + o, rows, cols)
                if threads[r][c] < 0:
                    threads[r][c], values[r][c] = u, v
                if u == t:
                    mine.add((r, c))
    view = TV.TVView(name="", kind="", operand="", operands=(), tv_layout="", rows=rows, cols=cols, threads=threads,
                     values=values, sharers=[], num_threads=tm.num_threads, num_values=0, shape=[rows, cols], ptx="")
    g = TV.tv_grid(view, f"kp-part-{op.lower()}", by_warp=tm.num_threads > 32)
    g.caption = f"partition_{op}: {op} {rows}x{cols}"
    g.marks = {c: "acc" for c in mine}
    return g, frag_t, off_t


# ------------------------------------------------------------------------------------------- the API's additions


def mma_vocab(atom: str, layout: str, perm: str, tile: str, thread: Any) -> dict[str, Any]:
    """``/api/partition``'s MMA answer: one thread's partition_A/B/C of an M x N x K tile (default: the tiled MMA's
    own), its partition_fragment_A/B/C (the registers' layouts), partition_shape_A/B/C and the tiled MMA's
    get_layout{A,B,C}_TV. Each part lists the [row, column] cells the thread holds (column-major tensors)."""
    tm, _ = build_mma(atom, layout, perm)
    own = tuple(tm.tile_size_mnk(i) for i in range(3))
    mnk = parse_mnk(tile, "tile") or own
    check_cta(mnk, own, "tile")  # type: ignore[arg-type]
    t, _ = check_thread(thread, tm)
    m, n, k = mnk
    shapes = {"A": (m, k), "B": (n, k), "C": (m, n)}
    parts, frags, pshapes = [], {}, {}
    with guard("partition"):
        tvs = {op: str(tm.get_layout_TV(op)) for op in "ABC"}
        for op in "ABC":
            rows, cols = shapes[op]
            if rows * cols > MAX_CELLS:
                raise LayoutError(f"a {rows}x{cols} operand exceeds the cap of {MAX_CELLS:,} cells")
            check_permutation_fits(tm, op, rows, cols)
            frag, off = getattr(tm, f"partition_{op}")(A.Layout((rows, cols)), t)
            cells = sorted(list(mma_cell(tm, op, t, v, off + o, rows, cols))
                           for v, o in enumerate(offsets(frag, "fragment")))
            parts.append({"call": f"thr_mma.partition_{op}(g{op})", "fragment": str(frag), "offset": off,
                          "rows": rows, "cols": cols, "cells": cells})
            frags[op] = str(getattr(tm, f"partition_fragment_{op}")(A.Layout((rows, cols)), t))
            pshapes[op] = A.inttuple.to_str(getattr(tm, f"partition_shape_{op}")((rows, cols)))
    notes = [] if mnk == own else [
        f"the {m}x{n}x{k} tile holds {m // own[0]} x {n // own[1]} x {k // own[2]} copies of the tiled MMA's "
        f"{own[0]}x{own[1]}x{own[2]}: each thread's fragment repeats over them"]
    return {"kind": "mma", "atom": tm.atom.name, "thread": t, "num_threads": tm.num_threads, "parts": parts,
            "notes": notes, "tile_mnk": list(mnk), "tiled_mma_tile": list(own), "fragments": frags,
            "partition_shapes": pshapes, "layout_TV": tvs, "thr_layout_vmnk": str(tm.thr_layout_vmnk)}


def operand_copy(copy_atom: str, bits: int, atom: str, layout: str, perm: str, operand: str) -> Any:
    """``make_tiled_copy_{operand}(Copy_Atom<copy_atom, T>{}, make_tiled_mma(atom, layout, perm))``."""
    op = operand.strip().upper()
    if op not in ("A", "B", "C"):
        raise LayoutError(f"operand of make_tiled_copy_A/B/C is A, B or C, not {operand!r}")
    tm, _ = build_mma(atom, layout, perm)
    with guard(f"make_tiled_copy_{op}"):
        return getattr(atoms, f"make_tiled_copy_{op}")(copy_atom.strip(), tm, element_bits=bits)
