"""A Triton layout as CuTe sees it: the CuTe layout (or ``Swizzle o Layout``) that equals it, or why none does.

* distributed: the TV layout ``((lane, warp, block), register) -> column-major index in the tensor`` (CuTe's TV
  convention, as the atoms' A/B/C), when its bases move disjoint bits (``linear_layout.to_cute``);
* shared: coordinate -> element offset, ``(R,C):(...)`` or ``Sw<B,M,S> o (R,C):(...)``; a padded_shared layout whose
  linear part moves whole bits is one integer layout: its paddings add to each coordinate bit's stride (an offset
  o = sum of distinct powers of two has o // i = sum of (2^k // i), so padding is additive over the bits).

``cute_of(layout) -> {"cute", "kind", "why", "swizzle"}``; post: ``cute`` (when not null), evaluated at every
coordinate, gives the layout's offset (shared) or index (distributed).
"""

from __future__ import annotations

from typing import Any

from algebra.doctor import linear_layout as LL
from algebra.doctor.triton_layouts import TritonLayout
from algebra.doctor.triton_shared import padded


def _padded_cute(t: TritonLayout) -> dict[str, Any]:
    ll = t.ll.to_linear(("offset",), [f"dim{i}" for i in range(len(t.shape))])
    cols = ll.columns()
    inv = LL.inverse_columns(cols) if len(cols) == sum(ll.out_bits) else None  # coordinate bit -> linear offset
    if inv is None:
        return {"cute": None, "kind": "offset", "why": "the linear part is not a bijection onto the tensor"}
    if any(c & (c - 1) for c in inv):
        return {"cute": None, "kind": "offset",
                "why": "the linear part XORs offset bits (a swizzle) under the paddings: CuTe has no layout "
                       "that pads after a swizzle (pad o Sw o L), so no CuTe text is exact"}
    strides = [padded(c, t.paddings) for c in inv]
    lay = LL._layout_from(strides, ll.out_bits)
    return {"cute": str(lay), "kind": "offset", "why": None}


def cute_of(t: TritonLayout) -> dict[str, Any]:
    """The CuTe text of a Triton layout (see the module docstring), and its swizzle when it has one."""
    if t.paddings:
        out = _padded_cute(t)
    elif t.shared:
        if any(any(v) for v in t.ll.bases.get("block", [])):
            return {"cute": None, "kind": "offset", "why": "a layout over several CTAs (CGALayout) is not one CuTe "
                    "layout of one shared buffer", "swizzle": None}
        out = LL.to_cute(t.ll.to_linear(("offset",), [f"dim{i}" for i in range(len(t.shape))]))
    else:
        out = LL.to_cute(t.linear())
    text = out.get("cute")
    sw = [int(x) for x in text[3:text.index(">")].split(",")] if text and text.startswith("Sw<") else None
    return {"cute": text, "kind": out.get("kind"), "why": out.get("why"), "swizzle": sw}
