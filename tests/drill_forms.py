"""Answer forms for the drill tests: every legal spelling of a drill's key, and readable wrong answers.

``accepted(d)`` lists the key and the equivalent spellings a learner may type (CuTe's ``_N`` and ``Int<N>{}``,
``Layout<Shape<..>,Stride<..>>``, a tiler as CuTe prints it, rank-1 parentheses, a formula with a nested left-hand
side, LayoutLeft/LayoutRight, letters or texts of a choice...). ``rejected(d)`` lists readable answers that are
wrong: a one-integer change of the key that changes its meaning, and every example of a named mistake.
"""

from __future__ import annotations

import re
from typing import Any

import algebra as A
from app.drills.common import lstr, names_str, natural_names

LAYOUT_ANSWERS = {("algebra_op", None), ("transpose_view", None), ("design_view", None), ("tiled_view", "layout"),
                  ("tv_layout", "tiled_copy_tv"), ("vector", "coalesce_static"), ("vector", "coalesce_dynamic")}


def is_layout_answer(d: Any) -> bool:
    if d.kind == "algebra_op":
        return d.variant != "divide_tile"
    if d.kind == "transpose_view" and d.variant == "prove":
        return False  # two offsets, not a layout
    return (d.kind, None) in LAYOUT_ANSWERS or (d.kind, d.variant) in LAYOUT_ANSWERS


def underscored(text: str) -> str:
    """CuTe's printed form: every integer as ``_N``."""
    return re.sub(r"(?<![\d_@])(\d+)", r"_\1", text)


def int_form(text: str) -> str:
    """Every integer as ``Int<N>{}``."""
    return re.sub(r"(?<![\d@])(\d+)", r"Int<\1>{}", text)


def cpp_tuple(x: Any, head: str) -> str:
    if isinstance(x, tuple):
        return f"{head}<" + ",".join(cpp_tuple(v, head) for v in x) + ">"
    return f"_{x}"


def cpp_layout(lay: Any) -> str:
    """``Layout<Shape<...>,Stride<...>>`` of a layout."""
    shape = lay.shape if isinstance(lay.shape, tuple) else (lay.shape,)
    stride = lay.stride if isinstance(lay.stride, tuple) else (lay.stride,)
    return f"Layout<{cpp_tuple(shape, 'Shape')},{cpp_tuple(stride, 'Stride')}>"


def make_form(x: Any, head: str) -> str:
    if isinstance(x, tuple):
        return f"{head}(" + ", ".join(make_form(v, head) for v in x) + ")"
    return f"_{x}{{}}"


def cpp_make(lay: Any) -> str:
    """``make_layout(make_shape(_4{}, ...), make_stride(...))`` of a layout."""
    return f"make_layout({make_form(lay.shape, 'make_shape')}, {make_form(lay.stride, 'make_stride')})"


def py_tuple(x: Any) -> str:
    """A Python tuple as the CuTe DSL and pycute write it: ``(4, 8)``, ``(24,)``."""
    if isinstance(x, tuple):
        return "(" + ", ".join(py_tuple(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    return str(x)


def python_forms(lay: Any) -> list[str]:
    """The CuTe DSL's ``cute.make_layout(shape, stride=...)`` and pycute's ``Layout(shape, stride)``."""
    sh, st = py_tuple(lay.shape), py_tuple(lay.stride)
    return [f"cute.make_layout({sh}, stride={st})", f"make_layout({sh}, stride={st})", f"Layout({sh}, {st})"]


def layout_forms(key: str) -> list[str]:
    lay = A.parse(key)
    out = [key, underscored(key), int_form(key), " " + key.replace(",", ", ") + " ", f"L = {key}", cpp_layout(lay),
           cpp_layout(lay) + "{}", cpp_make(lay), *python_forms(lay)]
    if isinstance(lay.shape, int):
        out.append(f"({lay.shape}):({lay.stride})")  # rank-1 parentheses
    return out


def accepted(d: Any) -> list[str]:
    """The key and equivalent spellings that must grade correct."""
    e = d.expected
    out = [e]
    if is_layout_answer(d):
        out += layout_forms(e)
        if d.kind == "design_view" and d.variant != "transpose":
            rs, cs = {"cols2": (1, 2), "rows2": (2, 1), "cols4": (1, 4), "both2": (2, 2)}[d.variant]
            b = A.parse(e)
            vm, vn = A.size(b[0]), A.size(b[1])
            out += [f"({vm}:{rs},{vn}:{cs})", f"(_{vm}:_{rs},_{vn}:_{cs})", f"<{vm}:{rs}, {vn}:{cs}>"]
        if d.kind == "tiled_view":
            out.append(e.split(":", 1)[1])  # the strides alone
        return out
    if d.kind == "majorness":
        return out + {"row": ["Row-Major", "LayoutRight", "LayoutRight{}"], "column": ["column major", "LayoutLeft",
                                                                                      "col-major"],
                      "neither": ["NEITHER", "neither"]}[e]
    if d.kind == "explain":
        k = "abcd".index(e)
        return out + [e.upper(), f"({e})", f"option {e}", d.data["options"][k]]
    if d.kind == "index_formula":
        lay = A.parse(d.data["layout"])
        lhs = names_str(natural_names(lay.shape))
        terms = [t.strip() for t in e.split("+")]
        return out + [f"index{lhs} = {e}", f"L{lhs} = {e}",
                      " + ".join(reversed([re.sub(r"^(\w+)\*(\d+)$", r"\2\1", t) for t in terms]))]
    if d.kind == "defined" and d.variant.startswith("complement"):
        if e == "overlap":
            return out + ["no, the modes overlap", "Overlapping", "not injective"]
        lay = e.split(", ", 1)[1]
        return out + [f"defined, {underscored(lay)}", f"yes: {lay}", f"Defined; {cpp_layout(A.parse(lay))}"]
    if d.kind == "defined":
        if e.startswith("stride, "):
            lay = e.split(", ", 1)[1]
            return out + [f"Stride divisibility, {underscored(lay)}", f"stride; {lay}",
                          f"shape holds, stride fails: CuTe prints {lay}", f"the stride condition fails ({lay})"]
        return out + {"defined": ["yes", "both hold", "shape: ok, stride: ok", "It's defined"],
                      "shape": ["shape divisibility", "shape fails, stride holds", "the shape condition fails"],
                      "shape and stride": ["both", "both fail", "stride and shape", "shape fails; stride fails",
                                           "neither holds"]}[e]
    if d.kind == "banks" and d.variant == "formula":
        return out + [f"bank(r) = {e}", e.replace("mod", "%")]
    if d.kind == "sectors":
        s, u = e.split(", ")
        return out + [f"{s} sectors, {float(u[:-1]) / 100}"]
    if d.kind == "tv_layout" and d.variant in ("copy", "ldmatrix"):
        return out + [" ".join(reversed(re.findall(r"\(\d+,\d+\)", e)))]
    if re.fullmatch(r"[\d, ]+", e):
        out += ["[" + e + "]", e.replace(", ", " "), underscored(e)]
        if "," in e and d.kind not in ("layout_stats", "vector"):
            out.append(", ".join(f"item {k} = {v}" for k, v in enumerate(e.split(", "))))
        return out
    if re.fullmatch(r"[()\d,]+", e) and d.kind in ("natural_coord", "arith", "swizzle", "tv_layout"):
        flat = " ".join(re.findall(r"\d+", e))
        return out + ([f"({flat.replace(' ', ',')})"] if d.kind == "arith" and "((" not in e
                      else []) + [e.replace(",", ", ")]
    return out


def bump(text: str, index: int) -> str:
    nums = list(re.finditer(r"\d+", text))
    m = nums[index]
    return text[:m.start()] + str(int(m.group()) + 1) + text[m.end():]


def rejected(d: Any) -> list[str]:
    """Readable wrong answers: one-integer changes that change the meaning, and every named mistake's example."""
    e = d.expected
    out: list[str] = []
    if d.kind == "majorness":
        out = [x for x in ("row", "column", "neither") if x != e]
    elif d.kind == "explain":
        out = [x for x in "abcd" if x != e]
    elif d.kind == "defined" and d.variant.startswith("complement"):
        out = ["defined, 1:0"] if e == "overlap" else ["overlap", bump(e, -1)]
    elif d.kind == "defined":
        out = [x for x in ("defined", "shape", "stride, 1:0", "both") if x.split(",")[0] != e.split(",")[0]
               and not (x == "both" and e == "shape and stride")]
        if e.startswith("stride, "):
            out.append(bump(e, -1))
    elif is_layout_answer(d):
        want = A.parse(e)
        for k in range(len(re.findall(r"\d+", e)) - 1, -1, -1):
            try:
                cand = A.parse(bump(e, k))
            except A.LayoutError:
                continue
            if A.size(cand) != A.size(want) or any(cand(i) != want(i) for i in range(A.size(want))):
                out.append(bump(e, k))
                break
    elif d.kind == "banks" and d.variant.endswith("fix"):
        out = ["Sw<1,0,1>", "pad 0"]
    elif re.search(r"\d", e):
        out = [bump(e, -1)]
    elif d.kind in ("index_formula", "symbolic"):
        out = [e + " + 1"]
    if d.kind == "natural_coord" and re.fullmatch(r"[()\d,]+", e) and "(" in e[1:]:
        out.append("(" + ",".join(re.findall(r"\d+", e)) + ")")  # flattened: the nesting is the skill drilled
    out += [ex for _, _, ex in d.mistakes if ex is not None]
    return out


__all__ = ["accepted", "rejected", "lstr"]
