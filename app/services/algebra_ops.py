"""The algebra workbench service: parse op arguments, run the op and its explanation (``POST /api/algebra`` and
``/algebra`` share it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import algebra as A
from algebra import LayoutError, registry
from algebra.core.checks import ENUM_CAP, FULL_CAP, has_f2
from algebra.core.inttuple import flatten
from algebra.core.memo import bounded
from algebra.teach.explain import derive
from algebra.teach.registry import Op
from app.budget import WorkCapError, charge, offsets
from app.config import MAX_CELLS, MAX_DEPTH, MAX_MODES, MAX_TEXT
from app.services import code
from app.services.guard import guard
from app.services.layouts import pow2_text

MAX_INT = 1 << 40


def available_ops() -> list[Op]:
    """Every op of ``algebra.registry``, in menu order."""
    return list(registry.OPS.values())


def _check_caps(x: Any, what: str) -> Any:
    """Caps on a parsed argument: integers up to 2^40; layouts (also inside a tiler) up to the nesting depth cap and
    a size in the int range (ops are symbolic: only enumeration, on the pages, is capped at MAX_SIZE cells)."""
    if isinstance(x, tuple):
        for k, e in enumerate(x):
            _check_caps(e, f"{what} mode {k}" if any(hasattr(v, "shape") for v in x) else what)
        return x
    if isinstance(x, int) and abs(x) > MAX_INT:
        raise LayoutError(f"{what}: {x} is beyond the cap of 2^40")
    if hasattr(x, "shape") and callable(x):
        if A.depth(x) > MAX_DEPTH:
            raise LayoutError(f"{what}: depth {A.depth(x)} exceeds the cap of {MAX_DEPTH}")
        if A.size(x) > MAX_INT:
            raise LayoutError(f"{what}: size {pow2_text(A.size(x))} exceeds the cap of 2^40")
    return x


def parse_args(op: Op, texts: tuple[str, ...]) -> list[Any]:
    """The op's arguments from their text (``algebra.registry.parse_value`` by kind), within the caps."""
    for t, arg in zip(texts, op.args, strict=False):
        if not t:
            raise LayoutError(f"{arg.name}: empty input; e.g. {op.example.args[op.args.index(arg)]}"
                              if op.args.index(arg) < len(op.example.args) else f"{arg.name}: empty input")
        if len(t) > MAX_TEXT:
            raise LayoutError(f"{arg.name}: {len(t):,} characters exceeds the cap of {MAX_TEXT:,}")
    with guard(op.name):
        parsed = registry.parse_args(op, list(texts))
    for x, a in zip(parsed, op.args, strict=False):
        shape = a.kind in ("shape", "cotarget") and not hasattr(x, "shape")  # (a cotarget may be a layout)
        bad = [s for s in flatten(x) if isinstance(s, int) and s <= 0] if shape else []
        if bad:  # as the layout parser says it (idx2crd by a 0 divided by zero)
            raise LayoutError(f"{a.name}: shape entries must be positive integers, got {bad[0]}")
        if _leaves(x) > MAX_MODES:
            raise LayoutError(f"{a.name}: {_leaves(x)} modes (counted leaf by leaf) exceeds the cap of {MAX_MODES}")
    return [_check_caps(x, a.name) for x, a in zip(parsed, op.args, strict=False)]


def _leaves(x: Any) -> int:
    """The leaves of an argument: of a layout's shape, summed over a tiler's or a tuple's entries."""
    if isinstance(x, tuple):
        return sum(_leaves(e) for e in x)
    if hasattr(x, "shape") and callable(x):
        return len(flatten((x.layout_b if hasattr(x, "layout_b") else x).shape))
    return 1


def _int_strides(x: Any) -> bool:
    lay = x.layout_b if hasattr(x, "layout_b") else x
    return all(isinstance(d, int) for d in flatten(lay.stride))




@dataclass
class OpResult:
    op: str
    args: list[str]
    result: str
    steps: list[dict[str, Any]]
    spec: Op
    parsed: list[Any] = field(default_factory=list)
    cpp: str = ""
    dsl: str = ""
    #: local_tile / local_partition: the offset in A of the result's first element (an ArithTuple where A is a
    #: coordinate layout such as (4,8):(1@1,1@0))
    offset: Any = None

    def to_json(self) -> dict[str, Any]:
        """The JSON answer; ``offset`` an int, or the CuTe notation of a coordinate offset such as ``(8,0)``."""
        steps = [{"text": s["text"], "layout": s["layout"]} for s in self.steps]
        out = {"op": self.op, "args": self.args, "result": self.result, "steps": steps}
        if self.offset is not None:
            out["offset"] = self.offset if isinstance(self.offset, int) else str(self.offset)
        return out


def _arg_str(x: Any, kind: str = "") -> str:
    """An argument in CuTe notation: tilers as ``<...>``, coordinates as ``(1,_)``, shapes as ``(8,8)``."""
    if isinstance(x, tuple) and kind in ("coord", "shape", "cotarget", "profile"):
        return "(" + ",".join(_arg_str(e, kind) for e in x) + ")"
    if isinstance(x, tuple):
        return "<" + ", ".join(_arg_str(e) for e in x) + ">"
    return "_" if x is None else str(x)


def _value_str(x: Any) -> str:
    return "(" + ",".join(_value_str(e) for e in x) + ")" if isinstance(x, tuple) else str(x)


@bounded(16 << 20, "op results")  # bounded in bytes: an entry may hold 4 arguments of 4,000 characters
def _run(name: str, args: tuple[str, ...]) -> OpResult:
    op = registry.get(name)
    parsed = parse_args(op, args)
    _charge_f2_checks(op, parsed)
    try:
        with guard(name):
            result, raw = _derive(op, parsed)
        _check_shape(op, parsed, result[0] if op.result == "tile" else result)
    except LayoutError as exc:
        exc.refused = True  # the op itself refused these (well-formed) arguments: a lesson, not a typo
        exc.parsed = parsed
        _exact_inverse(name, parsed, exc)
        raise
    cpp, dsl = code.op_code(name, parsed)
    steps = [{"text": str(s.get("text", "")), "layout": None if s.get("layout") is None else str(s["layout"]),
              "depth": int(s.get("depth", 0))} for s in raw]
    offset = None
    if op.result == "tile":  # local_tile / local_partition: (layout, offset of its first element)
        result, offset = result
    text = _value_str(result) if op.result == "value" else str(result)
    return OpResult(op=name, args=[_arg_str(p, a.kind) for p, a in zip(parsed, op.args, strict=False)],
                    result=text, steps=steps, spec=op, parsed=parsed, cpp=cpp, dsl=dsl, offset=offset)


#: Ops whose result the never-wrong layer checks as a composition (``algebra.core.checks.post_composition``): with an
#: F2-strided side there is no structural proof, and past ENUM_CAP points the check evaluates up to FULL_CAP points of
#: that side one by one (~10 us each: 2^20 points took 12 s).
COMPOSING = frozenset({"composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                       "max_common_layout", "max_common_vector"})


def _charge_f2_checks(op: Op, parsed: list[Any]) -> None:
    """Charge the never-wrong check's points before a composing op runs where a side has F2 strides (no structural
    proof then) and the check would pass ENUM_CAP points: composition checks B's points, the divides and
    max_common_* a composition as large as their largest argument. Refused at once (422 naming the cap) instead of by
    the CPU budget."""
    if op.name not in COMPOSING:
        return
    layouts = [getattr(p, "layout_b", p) for x in parsed for p in (x if isinstance(x, tuple) else (x,))
               if hasattr(p, "shape") or hasattr(p, "layout_b")]
    if not any(has_f2(getattr(x, "stride", None)) for x in layouts):
        return
    checked = parsed[1:2] if op.name == "composition" else parsed
    n = max((A.size(p) for x in checked for p in (x if isinstance(x, tuple) else (x,))
             if hasattr(p, "shape") or hasattr(p, "layout_b")), default=0)
    if n > ENUM_CAP:
        charge("F2 point", min(n, FULL_CAP), f"{op.name} with F2 strides: its never-wrong check, point by point over "
               f"{n:,} points")


def _exact_inverse(name: str, parsed: list[Any], exc: LayoutError) -> None:
    """An inverse of a swizzled layout refused because CuTe's print is not the inverse (``right_inverse(Sw<2,0,-7> o
    4:1)``: CuTe prints the layout itself) or CuTe does not compile it (its ``make_swizzle`` fails): the message also
    names the exact inverse of the same function, through its F2 form (``as_f2_layout``), where there is one (there:
    1:0)."""
    if name not in ("right_inverse", "left_inverse") or not parsed or not (
            "CuTe would print" in str(exc) or "make_swizzle" in str(exc)):
        return
    try:
        f2 = A.as_f2_layout(parsed[0])
        exact = getattr(A, name)(f2)
    except LayoutError:
        return
    exc.args = (f"{exc}. The {name.replace('_', ' ')} of this function is {exact} (through its F2 form {f2}: "
                f"{name}(as_f2_layout(A)))",)


def _derive(op: Op, parsed: list[Any]) -> tuple[Any, list]:
    """``derive(op, *parsed)``; where the engine fails on a bare swizzle Sw<B,M,S> (an op that takes layouts; some
    take a swizzle: composition, the inverses) or on basis strides (1@0) where it needs integers, the refusal names
    the argument instead of the engine's error."""
    try:
        return derive(op.name, *parsed)
    except RecursionError:
        raise
    except Exception as exc:
        for x, a in zip(parsed, op.args, strict=False):  # L o O o Sw (an inverse with an offset) where a layout goes
            if hasattr(x, "domain") and not hasattr(x, "shape") and not op.name.endswith("_inverse"):
                raise LayoutError(f"{a.name}: {x} is a layout applied after a swizzle, a function of 1-D offsets "
                                  f"defined where {x.domain_text()}, with no shape: {op.name} needs a layout "
                                  f"({exc})") from None
        if isinstance(exc, LayoutError) and not isinstance(exc, AttributeError):
            raise  # (a refusal that is also an AttributeError: a swizzle asked for its shape, named below)
        for x, a in zip(parsed, op.args, strict=False):
            if isinstance(x, A.Swizzle):
                raise LayoutError(f"{a.name}: {x} is a swizzle, not a layout (a swizzled layout is written "
                                  f"{x} o (8,64):(64,1))") from None
        for x, a in zip(parsed, op.args, strict=False):
            if hasattr(x, "shape") and callable(x) and not _int_strides(x):
                raise LayoutError(f"{a.name}: {op.name} needs integer strides; {x} has basis (E) strides such as "
                                  "1@0") from None
        raise


def _check_shape(op: Op, parsed: list[Any], result: Any) -> None:
    """Never answer a layout whose shape has an entry below 1 (complement of a layout with negative strides came
    back as (-1,0):(1,-32)): refuse, naming the op, the result it would be and the negative strides."""
    inner = result.layout_b if hasattr(result, "layout_b") else result
    bad = [s for s in flatten(inner.shape) if isinstance(s, int) and s < 1] if hasattr(inner, "shape") else []
    if not bad:
        return
    neg = [f"{a.name} = {x}" for x, a in zip(parsed, op.args, strict=False)
           if hasattr(x, "shape") and callable(x) and _int_strides(x)
           and any(d < 0 for d in flatten((x.layout_b if hasattr(x, "layout_b") else x).stride))]
    why = f"; it needs strides >= 0 and {' and '.join(neg)} has a negative one" if neg else ""
    raise LayoutError(f"{op.name}: not a layout: the result would be {result}, with the shape entry {bad[0]} "
                      f"(shape entries are positive){why}")


def _arg_text(a: Any) -> str:
    """An argument as text: ints as digits, a JSON list (a tiler or a tuple) as its JSON, strings as they are."""
    if isinstance(a, list):
        return json.dumps(a)
    return str(a).strip()


def run_op(op: str, args: list[Any]) -> OpResult:
    """Run ``op`` (a name of ``algebra.registry``) on the text arguments. Post-condition: ``result`` is the CuTe
    notation of the op's result and ``steps`` its derivation (``algebra.explain``), recorded from the same run; a
    refusal raises LayoutError with the reason (``err.refused`` is True when the op itself refused)."""
    return _run(op.strip(), tuple(_arg_text(a) for a in args))


def _grid_of(text: str, grid_id: str, links: list[dict[str, Any]] | None = None,
             picked: set[int] | None = None) -> tuple[Any, str]:
    """The grid of the layout ``text`` (None and the reason when it is not drawn); ``picked`` outlines the cells
    holding those offsets."""
    from app.services.layouts import describe_layout, layout_grid

    try:
        view = describe_layout(text, for_grid=True)
    except LayoutError as exc:  # a result with no grid (a layout applied after a swizzle): say why, show the rest
        return None, str(exc).removeprefix("layout: ")
    try:
        g = layout_grid(view, grid_id)
    except WorkCapError as exc:  # over what is left of the request's drawing budget: the notation is still shown
        return None, f"the grid is not drawn: {exc}"
    if g is None:
        return None, view.note or "not drawn"
    if links:
        g.meta["links"] = links
    if picked:
        g.marks = {(i, j): "acc" for i, row in enumerate(view.offsets or []) for j, v in enumerate(row) if v in picked}
    return g, ""


def _layout_args(op: Op, parsed: list[Any]) -> list[tuple[int, Any]]:
    """(position, value) of the arguments that are layouts (a tiler given as one layout counts)."""
    return [(k, x) for k, (x, a) in enumerate(zip(parsed, op.args, strict=False))
            if a.kind in ("layout", "tiler") and hasattr(x, "shape") and callable(x)]


def input_grids(name: str, parsed: list[Any], picked_a: set[int] | None = None,
                picked_b: set[int] | None = None) -> list[tuple[str, Any, str]]:
    """(title, GridView or None, message) for the layout arguments: A as ``grid-a``, the next as ``grid-b``."""
    op = registry.OPS.get(name)
    if op is None:
        return []
    out = []
    for n, (k, x) in enumerate(_layout_args(op, parsed)[:2]):
        g, msg = _grid_of(str(x), ("grid-a", "grid-b")[n], picked=(picked_a, picked_b)[n])
        out.append((f"{op.args[k].name} = {x}", g, msg))
    return out


def op_grids(res: OpResult) -> list[tuple[str, Any, str]]:
    """(title, GridView or None, message) for A, B (when a layout) and the result, with the result's cells linked
    back to the cells of A (and B) they come from. local_tile / local_partition outline in A the cells of the
    tile / the thread's partition (offsets ``offset + R(k)``) and in B the thread's cell; evaluate outlines the
    cell it reads. A result that is a number or a coordinate has no grid of its own."""
    spec = res.spec
    picked_a = picked_b = None
    if res.offset is not None:
        with guard(res.op):
            tile = A.parse(res.result)
            if A.size(tile) <= MAX_CELLS and A.size(res.parsed[0]) <= MAX_CELLS:  # A's grid is drawn: outline it
                picked_a = {res.offset + o for o in offsets(tile, "tile highlight")}
    if res.op == "evaluate" and res.result.lstrip("-").isdecimal():
        picked_a = {int(res.result)}
    if res.op == "local_partition":
        picked_b = {res.parsed[2]}
    out = input_grids(res.op, res.parsed, picked_a, picked_b)
    shapes = [k for k, a in enumerate(spec.args) if a.kind == "shape"]
    if not out and shapes and spec.result == "value":  # idx2crd / crd2idx: the shape's 1-D indices, one outlined
        shape = res.parsed[shapes[0]]
        index = int(res.result) if res.result.lstrip("-").isdecimal() else res.parsed[0]
        g, msg = _grid_of(str(A.Layout(shape)), "grid-a", picked={index} if isinstance(index, int) else None)
        out.append((f"1-D index of each coordinate of {_arg_str(shape, 'shape')} (column-major)", g, msg))
    if spec.result == "value":
        return out
    b_is_layout = any(g[1] is not None and g[1].id == "grid-b" for g in out)
    links: list[dict[str, Any]] = []
    if spec.link == "via-b":
        links = ([{"to": "grid-b", "by": "same"}, {"to": "grid-a", "by": "via", "via": "grid-b"}] if b_is_layout
                 else [{"to": "grid-a", "by": "offset"}])
    elif spec.link:
        add = res.offset if isinstance(res.offset, int) and res.offset else None  # a coordinate offset: no shift
        links = [{"to": "grid-a", "by": spec.link, **({"add": add} if add else {})}]
    g, msg = _grid_of(res.result, "grid-r", links)
    where = f", first element at offset {res.offset} of A" if res.offset is not None else ""
    out.append((f"result = {res.result}{where}", g, msg))
    return out
