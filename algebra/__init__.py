# ruff: noqa: I001
"""CuTe's layout algebra in pure Python (standard library only), exact to NVIDIA CuTe's static semantics.

``import algebra as A``: ``A.Layout``, ``A.parse``, the ops under their CuTe names, ``A.explain(op, *args)`` (the
module ``algebra.explain``, callable), the op table ``A.registry``.
"""

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
from algebra.core.ops import (
    coalesce,
    complement,
    composition,
    filter,
    filter_zeros,
    left_inverse,
    max_common_layout,
    max_common_vector,
    nullspace,
    right_inverse,
)
from algebra.core.partition import local_partition, local_tile
from algebra.core.products import (
    blocked_product,
    flat_divide,
    flat_product,
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
from algebra.core.swizzle import ComposedLayout, Swizzle

# the hardware models and explanations are built on the names above (order matters)
from algebra import atoms, banks  # noqa: E402  (thin: the hardware models under their old module names)
from algebra.doctor import f2  # noqa: E402
from algebra.hw import atoms_tiled, bankfix, coalescing, hopper  # noqa: E402
from algebra.core.arith import ArithTuple, E, ScaledBasis, coprofile, coshape  # noqa: E402
from algebra.hw.bank_access import bank_access  # noqa: E402
from algebra.hw.bankfix import padding_fix, swizzle_fixes  # noqa: E402
from algebra.hw.banks import analyze, analyze_ldmatrix  # noqa: E402
from algebra.hw.coalescing import partition_sectors, sectors, widest_vector  # noqa: E402
from algebra import explain, registry  # noqa: E402  (explain: a callable module, A.explain(op, *args))
from algebra.explain import derive, explain_ops  # noqa: E402
from algebra.formula import FormulaCheck, SymLayout, evaluate_formula, formula, index_formula, natural_names  # noqa: E402
from algebra.formula import parse_symbolic  # noqa: E402
from algebra.codegen import op_to_cpp, op_to_dsl  # noqa: E402
from algebra.core.emit import to_cpp, to_dsl  # noqa: E402
from algebra.explain import format_steps  # noqa: E402
from algebra.doctor.f2 import F2, F2Layout, clmul, describe_swizzle, swizzle_matrix, to_f2_layout  # noqa: E402
from algebra.core.refine import common_coarsening, common_refinement, flat_refinement  # noqa: E402
from algebra.core.arith import as_arithmetic_tuple, basis_get, basis_value, make_basis_like  # noqa: E402

# the modules of the flat package that came before the subpackages, under their old names
from algebra.core import (  # noqa: E402
    arith, checks, coords, errors, fastpath, inttuple, inverses, layout, memo, notation, ops, partition, products,
    recast, recorder, refine, swizzle,
)

__all__ = [name for name in dir() if not name.startswith("_")]
