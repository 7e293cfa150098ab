"""The layout algebra's ops under their CuTe names, in one namespace (``cute/layout.hpp``, static case); each lives
in its own module, its post-condition in its docstring."""

from algebra.core.coalesce import coalesce, filter, filter_zeros
from algebra.core.complement import complement
from algebra.core.composition import composition
from algebra.core.inverses import (
    greatest_common_domain,
    layout_add,
    left_inverse,
    max_common_layout,
    max_common_vector,
    nullspace,
    right_inverse,
)

__all__ = ["coalesce", "complement", "composition", "filter", "filter_zeros", "greatest_common_domain", "layout_add",
           "left_inverse", "max_common_layout", "max_common_vector", "nullspace", "right_inverse"]
