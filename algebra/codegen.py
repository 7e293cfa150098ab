"""Emit CuTe C++ and CuTe DSL (Python) source for layouts and for op calls.

- ``to_cpp(x)``: ``make_layout(make_shape(Int<4>{}, ...), make_stride(...))``; ``to_cpp(x, style="type")``:
  ``Layout<Shape<_4,...>, Stride<...>>{}``; ``static=False`` writes plain ints (run-time values).
- ``to_dsl(x)``: ``cute.make_layout((4, (2, 4)), stride=(2, (1, 8)))``, ``cute.make_swizzle(3, 4, 3)``, ...
- ``op_to_cpp(op, *args)`` / ``op_to_dsl(op, *args)``: the statements that build the arguments and call the op
  (``program=True`` wraps them in a compilable program).

Post-condition: the emitted expression denotes the same layout in CuTe (same shape, stride, swizzle and offset);
identity layouts come out as ``make_identity_layout``, basis strides as ``E<...>{}`` / ``cute.E(...)``.
"""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra.errors import LayoutError
from algebra.inttuple import is_int, is_tuple
from algebra.layout import Layout
from algebra.swizzle import ComposedLayout, Swizzle

#: The ``_N`` aliases CuTe defines (``cute/numeric/integral_constant.hpp``).
CPP_ALIASES = frozenset(list(range(11)) + [12, 16, 24] + list(range(32, 257, 8)) + [
    384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288])



def _is_identity(x: Layout) -> bool:
    from algebra.arith import make_basis_like

    return is_tuple(x.shape) and any(getattr(d, "is_basis", False) for d in it.flatten(x.stride)) and \
        x.stride == make_basis_like(x.shape)


# --------------------------------------------------------------------------------------------- C++


def _cpp_int(v: int, static: bool, typ: bool = False) -> str:
    if not static:
        return str(v)
    name = f"_{v}" if v in CPP_ALIASES else f"Int<{v}>"
    return name if typ else name + "{}"


def _cpp_leaf(d: Any, static: bool, typ: bool) -> str:
    if getattr(d, "is_basis", False):
        path = ",".join(map(str, d.mode_path))
        if d.value == 1:
            return f"E<{path}>" + ("" if typ else "{}")
        return f"ScaledBasis<{_cpp_int(d.value, True, True)},{path}>" + ("" if typ else "{}")
    if not is_int(d):
        raise LayoutError(f"cannot emit the stride {d!r}")
    return _cpp_int(d, static, typ)


def _cpp_tuple(t: Any, maker: str, static: bool) -> str:
    if is_tuple(t):
        return f"{maker}(" + ", ".join(_cpp_tuple(x, maker, static) for x in t) + ")"
    return _cpp_leaf(t, static, False)


def _cpp_type(t: Any, name: str) -> str:
    if is_tuple(t):
        return f"{name}<" + ",".join(_cpp_type(x, name) for x in t) + ">"
    return _cpp_leaf(t, True, True)


def to_cpp(x: Any, style: str = "make", static: bool = True) -> str:
    """CuTe C++ expression for a Layout, Swizzle, ComposedLayout, tiler tuple, int or coordinate tuple.

    ``style``: ``"make"`` (``make_layout(...)``) or ``"type"`` (``Layout<Shape<...>, Stride<...>>{}``, static only).
    """
    if style not in ("make", "type"):
        raise LayoutError(f"style is 'make' or 'type', got {style!r}")
    typ = style == "type"
    if isinstance(x, Swizzle):
        return f"Swizzle<{x.bits},{x.base},{x.shift}>{{}}"
    if isinstance(x, ComposedLayout):
        inner, outer = to_cpp(x.layout_b, style, static), to_cpp(x.layout_a, style, static)
        if typ:
            return f"ComposedLayout<{outer[:-2]}, {_cpp_int(x.offset, True, True)}, {inner[:-2]}>{{}}"
        if x.offset == 0:
            return f"composition({outer}, {inner})"
        return f"make_composed_layout({outer}, {_cpp_int(x.offset, static)}, {inner})"
    if isinstance(x, Layout):
        if typ:
            return f"Layout<{_cpp_type(x.shape, 'Shape')}, {_cpp_type(x.stride, 'Stride')}>{{}}"
        if _is_identity(x):
            return f"make_identity_layout({_cpp_tuple(x.shape, 'make_shape', static)})"
        shape, stride = _cpp_tuple(x.shape, "make_shape", static), _cpp_tuple(x.stride, "make_stride", static)
        return f"make_layout({shape}, {stride})"
    if x is None:
        return "_"
    if is_tuple(x):
        if any(isinstance(e, Layout | ComposedLayout) or e is None or is_tuple(e) for e in x):
            return "make_tile(" + ", ".join(to_cpp(e, style, static) for e in x) + ")"
        return _cpp_tuple(x, "make_shape", static)
    if is_int(x):
        return _cpp_int(x, static)
    raise LayoutError(f"cannot emit {x!r} as CuTe C++")


def _cpp_coord(c: Any) -> str:
    if is_tuple(c):
        return "make_coord(" + ", ".join(_cpp_coord(e) for e in c) + ")"
    return "_" if c is None else str(c)


def _cpp_step(t: Any) -> str:
    """A profile or mode order as a static tuple type: ``Step<_1,_0>{}`` (nested: ``Step<_1,Step<_0,_2>>{}``)."""
    return _cpp_type(t, "Step") + "{}" if is_tuple(t) else _cpp_int(t, True)


def cpp_shape(t: Any, static: bool = True) -> str:
    """A shape as ``make_shape(...)`` (an int alone as ``_8{}`` / ``8``)."""
    return _cpp_tuple(t, "make_shape", static)


def _cpp_inline(kind: str, x: Any) -> str:
    if kind == "profile":
        return _cpp_step(x)
    if kind == "shape":
        return cpp_shape(x)
    if kind == "coord":
        return _cpp_coord(x)
    return str(x)


def op_to_cpp(op: str, *args: Any, program: bool = False) -> str:
    """CuTe C++ statements computing ``op(*args)`` and printing the result (``program=True``: a whole program).
    ``op``: any op of ``algebra.registry``; its emitter writes the call."""
    entry = _entry(op)
    lines, n = _bind(entry, args, lambda name, x: f"auto {name} = {to_cpp(x)};", True, _cpp_inline)
    out = entry.cpp(n, args) if entry.cpp else f"{op}({', '.join(n)})"
    lines += [f"auto R = {out};", "print(R);"] if isinstance(out, str) else list(out)
    if not program:
        return "\n".join(lines)
    body = "\n".join("  " + ln for ln in lines)
    return f"#include <cstdio>\n#include <cute/tensor.hpp>\nusing namespace cute;\n\nint main() {{\n{body}\n" \
           "  printf(\"\\n\");\n  return 0;\n}\n"


# --------------------------------------------------------------------------------------------- CuTe DSL


def py_tuple(t: Any) -> str:
    if is_tuple(t):
        inner = ", ".join(py_tuple(x) for x in t)
        return f"({inner},)" if len(t) == 1 else f"({inner})"
    if getattr(t, "is_basis", False):
        path = t.mode_path
        mode = "[" + ", ".join(map(str, path)) + "]" if len(path) > 1 else str(path[0])
        return f"cute.E({mode})" if t.value == 1 else f"cute.ScaledBasis({t.value}, {mode})"
    if t is None:
        return "None"
    if not is_int(t):
        raise LayoutError(f"cannot emit {t!r} as CuTe DSL")
    return str(t)


def to_dsl(x: Any) -> str:
    """CuTe DSL (``import cutlass.cute as cute``) expression for a Layout, Swizzle, ComposedLayout, tiler, int."""
    if isinstance(x, Swizzle):
        return f"cute.make_swizzle({x.bits}, {x.base}, {x.shift})"
    if isinstance(x, ComposedLayout):
        return f"cute.make_composed_layout({to_dsl(x.layout_a)}, {x.offset}, {to_dsl(x.layout_b)})"
    if isinstance(x, Layout):
        if _is_identity(x):
            return f"cute.make_identity_layout({py_tuple(x.shape)})"
        return f"cute.make_layout({py_tuple(x.shape)}, stride={py_tuple(x.stride)})"
    if is_tuple(x) and any(isinstance(e, Layout | ComposedLayout) or is_tuple(e) for e in x):
        inner = ", ".join(to_dsl(e) for e in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    return py_tuple(x)


def op_to_dsl(op: str, *args: Any, program: bool = False) -> str:
    """CuTe DSL statements computing ``op(*args)`` and printing the result (``program=True``: a runnable script
    with a ``@cute.jit`` function). An op the DSL does not offer gets a comment naming its C++ form."""
    entry = _entry(op)
    lines, n = _bind(entry, args, lambda name, x: f"{name} = {to_dsl(x)}", False, lambda k, x: py_tuple(x))
    if not entry.has_dsl:
        lines.append(f"# no CuTe DSL emitter for {op}; in CuTe C++: {op}({', '.join(n)})")
        lines.append("r = None")
    else:
        out = entry.dsl(n, args) if entry.dsl else f"cute.{op}({', '.join(n)})"
        lines += [f"r = {out}"] if isinstance(out, str) else list(out)
    lines.append("print(r)")
    if not program:
        return "\n".join(lines)
    body = "\n".join("    " + ln for ln in lines)
    return f"import cutlass\nimport cutlass.cute as cute\n\n\n@cute.jit\ndef main():\n{body}\n\n\nmain()\n"


def dsl_unzip(op: str, block: Layout, tiler: tuple) -> list[str]:
    """The DSL's zipped/tiled/flat_product take one layout as the tiler; for a tiler tuple, regroup the by-mode
    logical_product by hand as ``tile_unzip`` does."""
    if any(is_tuple(e) for e in tiler):
        return [f"# the DSL's {op} takes a single layout; nested tiler modes are not regrouped here",
                "r = cute.logical_product(a, b)"]
    n, r = len(tiler), it.rank(block.shape)
    ts = [f"cute.get(lp, mode=[{i}, 0])" for i in range(n)]
    rs = [f"cute.get(lp, mode=[{i}, 1])" for i in range(n)] + [f"cute.get(lp, mode=[{i}])" for i in range(n, r)]

    def group(parts: list[str]) -> str:
        return "cute.make_layout([" + ", ".join(parts) + "])"

    if op == "zipped_product" or (len(rs) == 1 and len(ts) == 1):
        modes = [group(ts), group(rs)]
    elif op == "tiled_product" or len(ts) == 1:
        modes = [group(ts)] + (rs if len(rs) > 1 else [group(rs)])
    else:
        modes = ts + (rs if len(rs) > 1 else [group(rs)])
    return ["# the DSL's " + op + " takes a single layout; by mode it is logical_product, regrouped",
            "lp = cute.logical_product(a, b)", "r = " + group(modes)]


def _entry(op: str) -> Any:
    from algebra import registry

    try:
        return registry.get(op)
    except LayoutError:
        raise LayoutError(f"no code emitter for {op!r}; one of: {', '.join(registry.names())}") from None


def _bind(entry: Any, args: tuple, fmt: Any, upper: bool, inline: Any) -> tuple[list[str], list[str]]:
    """Name the layout and tiler arguments (A, B, C / a, b, c; an integer tiler tuple ``tiler``) and return
    (statements, the text of every argument); other kinds stay inline."""
    lines, names = [], []
    k = 0
    for x, spec in zip(args, entry.args, strict=False):
        if spec.kind not in ("layout", "tiler") or (spec.kind == "tiler" and is_int(x)):
            names.append(inline(spec.kind, x) if spec.kind != "tiler" else inline("shape", x))
            continue
        name = "ABC"[k] if upper else "abc"[k]
        k += 1
        if is_tuple(x) and all(e is None or is_int(e) for e in x):
            name = "tiler"
        lines.append(fmt(name, x))
        names.append(name)
    return lines, names
