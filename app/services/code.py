"""CuTe C++ / CuTe DSL snippets and the index formula of a layout or an op (``algebra.teach.codegen``,
``algebra.teach.formula``), for the pages' "copy as" buttons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from algebra import LayoutError
from algebra.core.emit import to_cpp, to_dsl
from algebra.teach.codegen import op_to_cpp, op_to_dsl
from algebra.teach.formula import formula
from app.services.guard import guard

#: C++ / DSL element type of a copy atom's value, by bits
CPP_TYPES = {8: "uint8_t", 16: "half_t", 32: "float", 64: "double", 128: "uint128_t"}


def _either(make: Callable[[], tuple[str, str]]) -> tuple[str, str]:
    """``make()``, or no code ("", "") where the emitter refuses: a page never fails for want of a snippet."""
    try:
        with guard("code"):
            return make()
    except LayoutError:
        return "", ""


def layout_code(layout: Any) -> tuple[str, str]:
    """(CuTe C++, CuTe DSL) expressions that build ``layout`` (a Layout, Swizzle or swizzled ComposedLayout)."""
    return _either(lambda: (to_cpp(layout), to_dsl(layout)))


def op_code(op: str, args: list[Any]) -> tuple[str, str]:
    """(CuTe C++, CuTe DSL) statements that compute ``op(*args)`` and print the result."""
    return _either(lambda: (op_to_cpp(op, *args), op_to_dsl(op, *args)))


def tiled_copy_code(atom: str, element_bits: int, thr: Any, val: Any) -> tuple[str, str]:
    """CuTe C++ ``make_tiled_copy(Copy_Atom<atom, T>{}, thr, val)``; in the DSL the atom-independent part,
    ``cute.make_layout_tv(thr, val)`` (the tiler and the TV layout that make_tiled_copy_tv uses)."""
    t = CPP_TYPES.get(element_bits, f"uint_bit_t<{element_bits}>")
    return _either(lambda: (
        f"auto thr = {to_cpp(thr)};\nauto val = {to_cpp(val)};\n"
        f"auto tiled_copy = make_tiled_copy(Copy_Atom<{atom}, {t}>{{}}, thr, val);\nprint(tiled_copy);",
        f"thr = {to_dsl(thr)}\nval = {to_dsl(val)}\n"
        "tiler_mn, layout_tv = cute.make_layout_tv(thr, val)\nprint(tiler_mn, layout_tv)"))


def tiled_mma_code(atom: str, atom_layout: Any) -> tuple[str, str]:
    """CuTe C++ ``make_tiled_mma(atom{}, atom_layout)`` (the DSL names its MMA ops differently: no DSL snippet)."""
    return _either(lambda: (f"auto tiled_mma = make_tiled_mma({atom}{{}}, {to_cpp(atom_layout)});\n"
                            "print(tiled_mma);", ""))


def index_formula(layout: Any) -> str:
    """The offset of a natural coordinate as text, e.g. ``i*2 + j + k*8`` ("" for a swizzled layout: not linear;
    the hover card shows the offset before the swizzle)."""
    if hasattr(layout, "layout_b"):
        return ""
    return formula(layout)


#: CuTe DSL element type by bits, for the GMMA smem atoms
DSL_TYPES = {8: "cutlass.Uint8", 16: "cutlass.Float16", 32: "cutlass.Float32"}


def smem_atom_code(atom: Any, tile_mn: int, tile_k: int) -> tuple[str, str]:
    """The GMMA smem atom tiled to a ``tile_mn`` x ``tile_k`` tile (``tile_to_shape``), in CuTe C++ and the DSL."""
    t = CPP_TYPES[atom.element_bits]
    kind = atom.name.removeprefix("Layout_").removesuffix("_Atom")
    cpp = (f"using SmemLayoutAtom = GMMA::{atom.name}<{t}>;\n"
           f"auto sA = tile_to_shape(SmemLayoutAtom{{}}, make_shape(Int<{tile_mn}>{{}}, Int<{tile_k}>{{}}));\n"
           "print(sA);")
    dsl = (f"atom = cute.nvgpu.warpgroup.make_smem_layout_atom(\n"
           f"    cute.nvgpu.warpgroup.SmemLayoutAtomKind.{kind}, {DSL_TYPES[atom.element_bits]})\n"
           f"sA = cute.tile_to_shape(atom, ({tile_mn}, {tile_k}), (0, 1))\nprint(sA)")
    return cpp, dsl
