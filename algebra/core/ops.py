"""The layout algebra's ops under their CuTe names, in one namespace (``cute/layout.hpp``, static case).

Each op lives in its own module, with its post-condition in its docstring: ``coalesce`` and ``filter``
(``algebra.core.coalesce``), ``composition`` (``algebra.core.composition``), ``complement``
(``algebra.core.complement``), the inverses (``algebra.core.inverses``), divides, products, ``local_tile`` and
``local_partition`` (``algebra.core.products``).
"""

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
