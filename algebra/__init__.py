"""CuTe's layout algebra in pure Python (standard library only), exact to NVIDIA CuTe's static semantics.

``import algebra as A``: ``A.Layout``, ``A.parse``, the ops under their CuTe names, ``A.explain(op, *args)`` (the
module ``algebra.explain``, callable), the op table ``A.registry``, the bank model ``A.analyze``, the atoms.

The package is four floors, each importing only those below it (``docs/architecture.md``,
``tests/test_import_graph.py``): ``algebra.core`` (the algebra: Layout, notation, the ops, the never-wrong check),
``algebra.hw`` (the hardware models: banks, sectors, atoms, Hopper), ``algebra.doctor`` (the layout doctor: the
solver, Triton layouts) and ``algebra.teach`` (the op table, explain, formulas, code for op calls). This module,
and the thin ``algebra.atoms`` and ``algebra.banks``, sit on top and name what they hold.
"""

# modules, under the names the flat package had (algebra.explain is callable: A.explain(op, *args))
from algebra.core import arith, inttuple, memo, notation
from algebra.core.arith import (
    F2,
    ArithTuple,
    E,
    ScaledBasis,
    as_arithmetic_tuple,
    basis_get,
    basis_value,
    clmul,
    coprofile,
    coshape,
    make_basis_like,
)
from algebra.core.coord_tensor import CoordTensor, make_coord_tensor
from algebra.core.errors import LayoutError
from algebra.core.inttuple import (
    ceil_div,
    compatible,
    congruent,
    coordinates,
    crd2idx,
    flatten,
    idx2crd,
    prefix_product,
    product,
    shape_div,
    weakly_compatible,
    weakly_congruent,
)
from algebra.core.layout import (
    Layout,
    cosize,
    depth,
    get_flat_coord,
    get_hier_coord,
    is_compact,
    is_injective,
    make_identity_layout,
    make_layout,
    make_layout_row_major,
    make_ordered_layout,
    offsets,
    rank,
    shape,
    size,
    slice_and_offset,
    slice_layout,
    stride,
)
from algebra.core.notation import parse, parse_arg, parse_layout, to_str
from algebra.core.ops import *  # noqa: F403  (the ops under their CuTe names: ops.__all__)
from algebra.core.products import (
    blocked_product,
    flat_divide,
    flat_product,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    raked_product,
    tile_to_shape,
    tile_unzip,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from algebra.core.recast import downcast, recast_layout, upcast
from algebra.core.refine import common_coarsening, common_refinement, flat_refinement
from algebra.core.swizzle import ComposedLayout, Swizzle, as_f2_layout

# the floors above the core load on first use (``A.analyze``, ``from algebra import atoms``): importing costs the core
_UPPER = {name: module for module, names in (
    ("algebra.atoms", "atoms"), ("algebra.banks", "banks"), ("algebra.hw", "hw"), ("algebra.doctor", "doctor"),
    ("algebra.teach", "teach"), ("algebra.teach.registry", "registry"), ("algebra.hw.hopper", "hopper"),
    ("algebra.doctor.linear_layout", "describe_swizzle"), ("algebra.hw.bank_access", "bank_access"),
    ("algebra.hw.bankfix", "padding_fix swizzle_fixes"), ("algebra.hw.banks", "analyze analyze_ldmatrix"),
    ("algebra.hw.coalescing", "coalescing partition_sectors sectors widest_vector"),
    ("algebra.core.emit", "to_cpp to_dsl"), ("algebra.teach.codegen", "op_to_cpp op_to_dsl"),
    ("algebra.teach.explain", "explain derive explain_ops format_steps"),
    ("algebra.teach.formula", "FormulaCheck SymLayout evaluate_formula formula natural_names parse_symbolic"),
) for name in names.split()}
_MODULES = {"atoms", "banks", "registry", "hw", "doctor", "teach", "hopper", "coalescing", "explain"}  # A.formula: def


def __getattr__(name: str) -> object:
    from importlib import import_module

    if name not in _UPPER:
        raise AttributeError(f"module 'algebra' has no attribute {name!r}")
    module = import_module(_UPPER[name])
    globals()[name] = value = module if name in _MODULES else getattr(module, name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_UPPER))


__all__ = [name for name in __dir__() if not name.startswith("_")]
