"""CuTe C++ / CuTe DSL snippets and the index formula of a layout or an op, from the algebra's emitters."""

from __future__ import annotations

from typing import Any

import algebra as A


def _emitter(name: str) -> Any:
    mod = getattr(A, "emit", None)
    return getattr(A, name, None) or (getattr(mod, name, None) if mod else None)


def layout_code(layout: Any) -> tuple[str, str]:
    """(CuTe C++, CuTe DSL) source that builds ``layout``; empty strings where the algebra has no emitter."""
    cpp, dsl = _emitter("to_cpp"), _emitter("to_dsl")
    return (cpp(layout) if cpp else "", dsl(layout) if dsl else "")


def op_code(op: str, args: list[Any]) -> tuple[str, str]:
    """(CuTe C++, CuTe DSL) source of ``op(*args)``; empty strings where the algebra has no emitter."""
    cpp, dsl = _emitter("op_to_cpp"), _emitter("op_to_dsl")
    return (cpp(op, *args) if cpp else "", dsl(op, *args) if dsl else "")


def index_formula(layout: Any) -> str:
    """The offset of a natural coordinate as text (``algebra.formula``), e.g. ``2i + j + 8k``."""
    from algebra.formula import formula

    if hasattr(layout, "layout_b"):
        return ""  # a swizzle is not a linear formula; the hover card shows the offset before the swizzle
    return formula(layout)
