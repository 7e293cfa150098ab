"""CuTe C++ and CuTe DSL (Python) spellings of one layout, swizzle, composed layout, tiler, shape or coordinate.

- ``to_cpp(x)``: ``make_layout(make_shape(Int<4>{}, ...), make_stride(...))``; ``to_cpp(x, style="type")``:
  ``Layout<Shape<_4,...>, Stride<...>>{}``; ``static=False`` writes plain ints (run-time values);
- ``to_dsl(x)``: ``cute.make_layout((4, (2, 4)), stride=(2, (1, 8)))``, ``cute.make_swizzle(3, 4, 3)``, ...

Post-condition: the emitted expression denotes the same layout in CuTe (same shape, stride, swizzle and offset);
identity layouts come out as ``make_identity_layout``, basis strides as ``E<...>{}`` / ``cute.E(...)``. Whole op
calls are written by ``algebra.teach.codegen`` from these.

>>> from algebra.core.notation import parse as P
>>> to_cpp(P("(4,(2,4)):(2,(1,8))"))
'make_layout(make_shape(_4{}, make_shape(_2{}, _4{})), make_stride(_2{}, make_stride(_1{}, _8{})))'
>>> to_cpp(P("Sw<3,4,3> o (8,64):(64,1)"), style="type")
'ComposedLayout<Swizzle<3,4,3>, _0, Layout<Shape<_8,_64>, Stride<_64,_1>>>{}'
>>> to_dsl(P("(4,(2,4)):(2,(1,8))")), to_dsl(P("(4,4):(1@0,1@1)"))
('cute.make_layout((4, (2, 4)), stride=(2, (1, 8)))', 'cute.make_identity_layout((4, 4))')
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import make_basis_like
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, is_tuple
from algebra.core.layout import Layout
from algebra.core.swizzle import ComposedLayout, Swizzle

#: The ``_N`` aliases CuTe defines (``cute/numeric/integral_constant.hpp``).
CPP_ALIASES = frozenset(list(range(11)) + [12, 16, 24] + list(range(32, 257, 8)) + [
    384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288])


def _is_identity(x: Layout) -> bool:
    return is_tuple(x.shape) and any(getattr(d, "is_basis", False) for d in it.flatten(x.stride)) and \
        x.stride == make_basis_like(x.shape)


# --------------------------------------------------------------------------------------------- C++


def _cpp_int(v: int, static: bool, typ: bool = False) -> str:
    if not static:
        return str(v)
    name = f"_{v}" if v in CPP_ALIASES else f"Int<{v}>"
    return name if typ else name + "{}"


def _cpp_tuple(t: Any, maker: str, static: bool, typ: bool = False) -> str:
    """``maker(a, b)``; with ``typ`` the static type ``maker<a,b>``."""
    if is_tuple(t):
        parts = [_cpp_tuple(x, maker, static, typ) for x in t]
        return f"{maker}<{','.join(parts)}>" if typ else f"{maker}({', '.join(parts)})"
    if getattr(t, "is_basis", False):
        path = ",".join(map(str, t.mode_path))
        name = f"E<{path}>" if t.value == 1 else f"ScaledBasis<{_cpp_int(t.value, True, True)},{path}>"
        return name if typ else name + "{}"
    if not is_int(t):
        raise LayoutError(f"cannot emit the stride {t!r}")
    return _cpp_int(t, static, typ)


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
            shape, stride = _cpp_tuple(x.shape, "Shape", True, True), _cpp_tuple(x.stride, "Stride", True, True)
            return f"Layout<{shape}, {stride}>{{}}"
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


def cpp_step(t: Any) -> str:
    """A profile or mode order as a static tuple type: ``Step<_1,_0>{}`` (nested: ``Step<_1,Step<_0,_2>>{}``)."""
    return _cpp_tuple(t, "Step", True, True) + "{}" if is_tuple(t) else _cpp_int(t, True)


def cpp_shape(t: Any, static: bool = True) -> str:
    """A shape as ``make_shape(...)`` (an int alone as ``_8{}`` / ``8``)."""
    return _cpp_tuple(t, "make_shape", static)


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
