"""Graders judge meaning: every near-miss of a key (each integer one up and one down; for a layout also its modes
swapped, shape and stride swapped, the nesting flattened, coalesced as a whole, by mode and two levels down) is
graded right exactly when it means the key, as the prompt defines meaning. "Means" is decided here by evaluating the
layouts coordinate by coordinate with a few lines of our own, not by the drills' graders.

``LAYOUTLAB_DRILL_SEEDS`` sets the seeds per kind (30 by default; the truth sweep ran 300).
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

import algebra as A
from app.drills.core import Drill, generate, kinds

SEEDS = range(min(int(os.environ.get("LAYOUTLAB_DRILL_SEEDS", "30")), 300))
#: How many levels of mode sizes each algebra op fixes (as its prompt says), 0: the function and the size only.
DEPTH = {"coalesce": 1, "composition": 1, "complement": 0, "logical_divide": 1, "zipped_divide": 2,
         "tiled_divide": 2, "flat_divide": 1, "logical_product": 1, "blocked_product": 2, "raked_product": 2,
         "zipped_product": 2, "tiled_product": 2, "right_inverse": 0, "left_inverse": 0}
VIEWS = {"cols2": (1, 2), "rows2": (2, 1), "cols4": (1, 4), "both2": (2, 2), "transpose": (0, 0)}


def flat(x: Any) -> tuple:
    return tuple(v for i in x for v in flat(i)) if isinstance(x, tuple) else (x,)


def prod(x: Any) -> int:
    p = 1
    for v in flat(x):
        p *= v
    return p


def ev(lay: Any, i: int) -> int:
    """The offset of 1-D coordinate i: split colexicographically over the leaves, inner product with the strides."""
    off = 0
    for s, d in zip(flat(lay.shape), flat(lay.stride), strict=True):
        off += (i % s) * d
        i //= s
    return off


def sizes(shape: Any, depth: int) -> Any:
    if depth == 0 or not isinstance(shape, tuple):
        return prod(shape)
    out = tuple(sizes(s, depth - 1) for s in shape)
    return out[0] if len(out) == 1 else out


def unwrap(x: Any) -> Any:
    if isinstance(x, tuple):
        t = tuple(unwrap(v) for v in x)
        return t[0] if len(t) == 1 else t
    return x


def same_fn(g: Any, w: Any) -> bool:
    return prod(g.shape) == prod(w.shape) and all(ev(g, i) == ev(w, i) for i in range(prod(w.shape)))


def means_key(d: Drill, g: Any) -> bool:
    """Whether layout ``g`` answers the drill, by the meaning its prompt gives the answer."""
    w = A.parse(d.expected)
    gs, ws = unwrap(g.shape), unwrap(w.shape)
    if d.kind == "algebra_op":
        if d.variant == "coalesce":
            return same_fn(g, w) and len(flat(g.shape)) == len(flat(w.shape)) and A.depth(g) <= 1
        if d.variant.endswith("_inverse"):
            lay = A.parse(d.data["args"][0])
            if d.variant == "right_inverse":  # L(R(i)) = i on R's domain
                outer, inner, pts = lay, g, range(prod(g.shape))
            else:  # R(L(i)) = i on L's domain
                outer, inner, pts = g, lay, range(prod(lay.shape))
            return prod(g.shape) == prod(w.shape) and all(ev(outer, ev(inner, i)) == i for i in pts)
        return sizes(gs, DEPTH[d.variant]) == sizes(ws, DEPTH[d.variant]) and same_fn(g, w)
    if d.kind == "transpose_view":
        m, n = sizes(ws, 1)
        return sizes(gs, 1) == (m, n) and all(g((i, j)) == w((i, j)) for i in range(m) for j in range(n))
    if d.kind in ("tiled_view", "tv_layout"):
        depth = 2 if d.kind == "tiled_view" else 1
        return sizes(gs, depth) == sizes(ws, depth) and same_fn(g, w)
    if d.kind == "vector":
        return str(g) == str(w)  # what CuTe prints
    assert d.kind == "design_view", d.kind
    mat = A.parse(d.data["matrix"])
    try:
        v = A.composition(mat, g)
    except A.LayoutError:
        return False
    m, n = prod(mat.shape[0]), prod(mat.shape[1])
    rs, cs = VIEWS[d.variant]
    vm, vn = (n, m) if d.variant == "transpose" else (m // rs, n // cs)
    if A.rank(v) != 2 or (prod(v.shape[0]), prod(v.shape[1])) != (vm, vn):
        return False
    src = (lambda i, j: (j, i)) if d.variant == "transpose" else (lambda i, j: (rs * i, cs * j))
    return all(v((i, j)) == mat(src(i, j)) for i in range(vm) for j in range(vn))


def bumps(text: str) -> list[str]:
    out = []
    for m in re.finditer(r"\d+", text):
        for delta in (1, -1):
            v = int(m.group()) + delta
            if v >= 0:
                out.append(text[:m.start()] + str(v) + text[m.end():])
    return out


def structural(key: str) -> list[str]:
    """Near-misses of a layout key that change its form but maybe not its meaning."""
    w = A.parse(key)
    cands: list[tuple[Any, Any]] = []
    if isinstance(w.shape, tuple) and len(w.shape) >= 2:
        sh, st = list(w.shape), list(w.stride)
        cands += [((sh[1], sh[0], *sh[2:]), (st[1], st[0], *st[2:])), ((sh[1], sh[0], *sh[2:]), tuple(st)),
                  (tuple(sh), (st[1], st[0], *st[2:])), (flat(w.shape), flat(w.stride))]
        prof2 = tuple(tuple(1 for _ in s) if isinstance(s, tuple) else 1 for s in w.shape)
        for prof in (tuple(1 for _ in w.shape), prof2):
            c = A.coalesce(w, prof)
            cands.append((c.shape, c.stride))
    if 0 not in flat(w.stride):
        cands.append((w.stride, w.shape))
    c = A.coalesce(w)
    cands.append((c.shape, c.stride))
    out = []
    for shape, stride in cands:
        try:
            out.append(str(A.Layout(shape, stride)))
        except A.LayoutError:
            continue
    return [o for o in out if o != key]


def layout_key(d: Drill) -> bool:
    return ":" in d.expected and d.kind in ("algebra_op", "transpose_view", "tiled_view", "tv_layout", "vector",
                                            "design_view")


@pytest.mark.parametrize("kind", [k.kind for k in kinds()])
def test_near_misses_are_graded_by_meaning(kind: str) -> None:
    judged = 0
    for seed in SEEDS:
        d = generate(kind, seed)
        where = f"{kind}-{seed} ({d.variant})"
        assert d.grade(d.expected).correct, where
        if layout_key(d):
            for text in bumps(d.expected) + structural(d.expected):
                try:
                    g = A.parse(text)
                except (A.LayoutError, ValueError):
                    continue
                verdict = d.grade(text)
                assert verdict.readable and verdict.correct == means_key(d, g), (where, d.expected, text,
                                                                                  verdict.reason)
                judged += 1
        elif kind not in ("majorness", "explain", "copy_coverage") and not d.variant.endswith("fix"):
            # copy_coverage accepts any duplicate or hole: a neighbour of the key is often another one
            for text in bumps(d.expected):  # a number one off is never the answer
                verdict = d.grade(text)
                assert verdict.readable and not verdict.correct, (where, d.expected, text)
                judged += 1
    assert judged or kind in ("majorness", "explain", "copy_coverage")
