"""Two pieces of CuTe's kernel vocabulary that stand apart from the tiled objects: whether a tiled copy's TV layout
covers its tile (``copy_coverage``), and CuTe's ``make_fragment_like(Layout)`` (the registers' layout of a partition).
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, make_ordered_layout, size
from algebra.core.memo import bounded
from algebra.core.modes import offsets
from algebra.core.products import tiled_product


@bounded(4 << 20, "tiled copy coverage")
def copy_coverage(tv_layout: Layout, tiler: tuple[int, ...], limit: int = 64) -> dict[str, Any]:
    """Who claims each element of the tile: ``duplicates`` (elements held by more than one (thread, value)),
    ``uncovered`` (elements nobody holds), ``outside`` (claims past the tile, from stride-0 thread layouts:
    neither), and up to ``limit`` examples of each: ``duplicate_elements`` [{"element": (m, n), "claims":
    [(t, v), ...]}], ``uncovered_elements`` [(m, n)], ``duplicate_threads`` (threads with a repeated claim)."""
    rows = tiler[0]
    total = 1
    for x in tiler:
        total *= x
    nthr, nval = size(tv_layout[0]), size(tv_layout[1])
    if nthr * nval > (1 << 20) or total > (1 << 20):
        raise LayoutError(f"coverage is capped at 2^20 claims and elements ({nthr}x{nval} over {total})")
    claims: dict[int, list[tuple[int, int]]] = {}
    outside = 0
    for i, e in enumerate(offsets(tv_layout)):  # i = t + nthr * v
        if not isinstance(e, int) or not 0 <= e < total:
            outside += 1
            continue
        claims.setdefault(e, []).append((i % nthr, i // nthr))
    dup = sorted(e for e, c in claims.items() if len(c) > 1)
    holes = [e for e in range(total) if e not in claims]

    def where(e: int) -> tuple[int, ...]:
        return (e % rows, e // rows) if len(tiler) > 1 else (e,)

    threads = sorted({t for e in dup for t, _ in claims[e]})
    return {"duplicates": len(dup), "uncovered": len(holes), "outside": outside, "tile": tuple(tiler),
            "duplicate_elements": [{"element": where(e), "claims": claims[e]} for e in dup[:limit]],
            "uncovered_elements": [where(e) for e in holes[:limit]], "duplicate_threads": threads[:limit],
            "claims_per_element": max((len(c) for c in claims.values()), default=0)}


def make_fragment_like(layout: Layout) -> Layout:
    """CuTe's ``make_fragment_like(Layout)``: mode 0 compact column-major over its non-zero strides, the other
    modes compact in the order of their strides, tiled together (``tiled_product``); rank 1: ``make_layout(shape)``."""
    if not it.is_tuple(layout.shape) or len(layout) < 2:
        return Layout(layout.shape)
    m0 = layout[0]
    first = Layout(m0.shape, _compact_left_nonzero(m0.shape, m0.stride))
    rest_shape = tuple(layout[i].shape for i in range(1, len(layout)))
    rest_stride = tuple(layout[i].stride for i in range(1, len(layout)))
    return tiled_product(first, make_ordered_layout(rest_shape, rest_stride))


def _compact_left_nonzero(shape: Any, stride: Any) -> Any:
    """``compact_major<LayoutLeft>(filter_zeros(stride, shape))``: column-major strides over the shape with every
    stride-0 mode's extent taken as 1 (and a size-1 mode given stride 0, as CuTe's compact_major does)."""
    cur = [1]

    def walk(s: Any, d: Any) -> Any:
        if it.is_tuple(s):
            return tuple(walk(a, b) for a, b in zip(s, d, strict=True))
        ext = 1 if d == 0 else s
        if ext == 1:
            return 0
        out = cur[0]
        cur[0] *= ext
        return out

    return walk(shape, stride)
