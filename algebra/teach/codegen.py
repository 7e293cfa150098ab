"""CuTe C++ and CuTe DSL (Python) source for op calls: ``op_to_cpp(op, *args)`` / ``op_to_dsl(op, *args)`` write
the statements that build the arguments and call the op (``program=True`` wraps them in a compilable program), each
op's call from its emitter in the op table (``registry``); one layout is spelled by ``algebra.core.emit``.

Post-condition: the emitted statements compute the same layout in CuTe as the op here.
"""

from __future__ import annotations

from typing import Any

from algebra.core.emit import cpp_shape, cpp_step, py_tuple, to_cpp, to_dsl
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, is_tuple
from algebra.teach import registry


def _cpp_coord(c: Any) -> str:
    if is_tuple(c):
        return "make_coord(" + ", ".join(_cpp_coord(e) for e in c) + ")"
    return "_" if c is None else str(c)


def _cpp_inline(kind: str, x: Any) -> str:
    return {"profile": cpp_step, "shape": cpp_shape, "coord": _cpp_coord}.get(kind, str)(x)


def op_to_cpp(op: str, *args: Any, program: bool = False) -> str:
    """CuTe C++ statements computing ``op(*args)`` and printing the result (``program=True``: a whole program).
    ``op``: any op of ``algebra.registry``; its emitter writes the call."""
    entry = _entry(op)
    lines, n = _bind(entry, args, lambda name, x: f"auto {name} = {to_cpp(x)};", "ABC", _cpp_inline)
    out = entry.cpp(n, args) if entry.cpp else f"{op}({', '.join(n)})"
    lines += [f"auto R = {out};", "print(R);"] if isinstance(out, str) else list(out)
    if not program:
        return "\n".join(lines)
    body = "\n".join("  " + ln for ln in lines)
    return f"#include <cstdio>\n#include <cute/tensor.hpp>\nusing namespace cute;\n\nint main() {{\n{body}\n" \
           "  printf(\"\\n\");\n  return 0;\n}\n"


# --------------------------------------------------------------------------------------------- CuTe DSL


def op_to_dsl(op: str, *args: Any, program: bool = False) -> str:
    """CuTe DSL statements computing ``op(*args)`` and printing the result (``program=True``: a runnable script
    with a ``@cute.jit`` function). An op the DSL does not offer gets a comment naming its C++ form."""
    entry = _entry(op)
    lines, n = _bind(entry, args, lambda name, x: f"{name} = {to_dsl(x)}", "abc", lambda k, x: py_tuple(x))
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


def _entry(op: str) -> Any:
    try:
        return registry.get(op)
    except LayoutError:
        raise LayoutError(f"no code emitter for {op!r}; one of: {', '.join(registry.names())}") from None


def _bind(entry: Any, args: tuple, fmt: Any, letters: str, inline: Any) -> tuple[list[str], list[str]]:
    """Name the layout and tiler arguments (A, B, C / a, b, c by ``letters``; an integer tiler tuple ``tiler``) and
    return (statements, the text of every argument); other kinds stay inline."""
    lines, names = [], []
    for x, spec in zip(args, entry.args, strict=False):
        if spec.kind not in ("layout", "tiler") or (spec.kind == "tiler" and is_int(x)):
            names.append(inline(spec.kind, x) if spec.kind != "tiler" else inline("shape", x))
            continue
        name = "tiler" if is_tuple(x) and all(e is None or is_int(e) for e in x) else letters[len(lines)]
        lines.append(fmt(name, x))
        names.append(name)
    return lines, names
