"""The algebra workbench service: parse op arguments, run the op and its explanation (``POST /api/algebra`` and
``/algebra`` share it)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import algebra as A
from algebra import LayoutError
from app.config import MAX_SIZE
from app.services import code
from app.services.guard import guard
from app.services.layouts import parse_layout, pow2_text

_INT = re.compile(r"^[+-]?\d+$")
MAX_INT = 1 << 40


@dataclass(frozen=True)
class OpSpec:
    """One workbench op: its argument kinds ("layout", "layout|tiler", "int", "profile", "coord"; optional ones end
    in "?"), how result cells link back to A ("offset", "index", "same", "via-b" or ""), and a one-line gloss."""

    name: str
    args: tuple[str, ...]
    link: str
    gloss: str
    arg_names: tuple[str, ...] = ("A", "B")


OPS: dict[str, OpSpec] = {s.name: s for s in [
    OpSpec("composition", ("layout", "layout|tiler"), "via-b", "R(c) = A(B(c)): B picks which of A's coordinates"),
    OpSpec("coalesce", ("layout", "profile?"), "same", "the same function of the 1-D coordinate, fewest modes",
           ("A", "profile")),
    OpSpec("complement", ("layout", "int?"), "", "the layout of the offsets A does not reach, up to the cotarget",
           ("A", "cotarget")),
    OpSpec("right_inverse", ("layout",), "index", "A(R(i)) = i on R's domain", ("A",)),
    OpSpec("left_inverse", ("layout",), "index", "R(A(i)) = i for every coordinate i of A", ("A",)),
    OpSpec("logical_divide", ("layout", "layout|tiler"), "offset", "A o (B, B*): ((inside a tile), (which tile))"),
    OpSpec("zipped_divide", ("layout", "layout|tiler"), "offset", "logical_divide with tile modes gathered first"),
    OpSpec("tiled_divide", ("layout", "layout|tiler"), "offset", "zipped_divide with the tile-index modes unpacked"),
    OpSpec("flat_divide", ("layout", "layout|tiler"), "offset", "zipped_divide with every mode unpacked"),
    OpSpec("logical_product", ("layout", "layout|tiler"), "offset", "(A, A* o B): A repeated in the pattern of B"),
    OpSpec("zipped_product", ("layout", "layout|tiler"), "offset", "logical_product, tile modes gathered"),
    OpSpec("tiled_product", ("layout", "layout|tiler"), "offset", "zipped_product with the repeat modes unpacked"),
    OpSpec("blocked_product", ("layout", "layout"), "offset", "A's blocks laid out by B, mode by mode"),
    OpSpec("raked_product", ("layout", "layout"), "", "A's elements interleaved (raked) across B's pattern"),
    OpSpec("local_tile", ("layout", "layout|tiler", "coord"), "offset",
           "the tile of A at a tile coordinate: zipped_divide(A, tiler)(_, coord), and where it starts",
           ("A", "tiler", "tile coordinate")),
    OpSpec("local_partition", ("layout", "layout", "int"), "offset",
           "what one thread of a thread layout owns: zipped_divide(A, shape(thr))(thr^-1(index), _)",
           ("A", "thread layout", "thread index")),
]}


def available_ops() -> list[OpSpec]:
    """The ops of OPS that the algebra package provides, in menu order."""
    return [s for s in OPS.values() if hasattr(A, s.name)]


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses / angle brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _as_int(text: str, what: str) -> int:
    v = int(text)
    if abs(v) > MAX_INT:
        raise LayoutError(f"{what}: {v} is beyond the cap of 2^40")
    return v


def _capped(layout: Any, what: str) -> Any:
    if A.size(layout) > MAX_SIZE:
        raise LayoutError(f"{what}: size {pow2_text(A.size(layout))} exceeds the cap of {pow2_text(MAX_SIZE)}")
    return layout


def parse_tiler(text: str, what: str) -> tuple:
    """``"<2:1, 4:2>"`` or a JSON list ``["2:1", 4]`` -> a tuple of Layouts / ints (a tiler, mode by mode)."""
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise LayoutError(f"{what}: not a JSON list of layouts ({exc.msg})") from None
        if not isinstance(items, list) or not items:
            raise LayoutError(f"{what}: a tiler needs at least one mode")
        elems = [str(x) for x in items]
    else:
        inner = text[1:-1].strip()
        if not inner:
            raise LayoutError(f"{what}: a tiler needs at least one mode, e.g. <2:1, 4:2>")
        elems = _split_top(inner)
    out: list[Any] = []
    for k, e in enumerate(elems):
        name = f"{what} mode {k}"
        if e.strip() in ("_", "None"):
            out.append(None)
            continue
        out.append(_as_int(e, name) if _INT.match(e) else _capped(parse_layout(e, name), name))
    return tuple(out)


_COORD_TOKEN = re.compile(r"\s*(?:(-?\d+)|(_)|([(),]))")


def parse_coord(text: str, what: str) -> Any:
    """``3``, ``(1,2)``, ``(1,(0,_))`` (or a JSON list ``[1, [0, null]]``) -> an int or nested tuple of ints,
    ``_`` (None) keeping a whole mode."""
    text = text.strip()
    if text.startswith("["):
        try:
            text = json.dumps(json.loads(text)).replace("[", "(").replace("]", ")").replace("null", "_")
        except ValueError as exc:
            raise LayoutError(f"{what}: not a JSON list ({exc.msg})") from None
    toks: list[Any] = []
    pos = 0
    while pos < len(text):
        m = _COORD_TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise LayoutError(f"{what}: unexpected {text[pos:pos + 8]!r} in {text!r}; write e.g. (1,2) or (1,_)")
        toks.append(int(m[1]) if m[1] else None if m[2] else m[3])
        pos = m.end()
    toks = [t for t in toks if t != ""]

    def one(k: int) -> tuple[Any, int]:
        if k >= len(toks):
            raise LayoutError(f"{what}: {text!r} ends early")
        t = toks[k]
        if t == "(":
            items = []
            k += 1
            while True:
                item, k = one(k)
                items.append(item)
                if k < len(toks) and toks[k] == ",":
                    k += 1
                    continue
                if k < len(toks) and toks[k] == ")":
                    return tuple(items), k + 1
                raise LayoutError(f"{what}: expected ',' or ')' in {text!r}")
        if t in (")", ","):
            raise LayoutError(f"{what}: unexpected {t!r} in {text!r}")
        if isinstance(t, int) and abs(t) > MAX_INT:
            raise LayoutError(f"{what}: {t} is beyond the cap of 2^40")
        return t, k + 1

    value, end = one(0)
    if end != len(toks):
        raise LayoutError(f"{what}: unexpected text after {text!r}")
    return value


def parse_arg(text: str, kind: str, what: str) -> Any:
    """One argument of an op by its kind (see OpSpec)."""
    text = text.strip()
    kind = kind.rstrip("?")
    if kind == "coord":
        return parse_coord(text, what)
    if kind == "int":
        if not _INT.match(text):
            raise LayoutError(f"{what}: expected an integer such as 24, got {text!r}")
        return _as_int(text, what)
    if kind == "profile":
        return parse_layout(text, what).shape
    if kind == "layout|tiler" and (text.startswith("[") or (text.startswith("<") and text.endswith(">"))):
        return parse_tiler(text, what)
    if kind == "layout|tiler" and _INT.match(text):
        return _as_int(text, what)
    return _capped(parse_layout(text, what), what)


@dataclass
class OpResult:
    op: str
    args: list[str]
    result: str
    steps: list[dict[str, Any]]
    spec: OpSpec
    parsed: list[Any] = field(default_factory=list)
    cpp: str = ""
    dsl: str = ""
    offset: int | None = None  # local_tile / local_partition: the offset in A of the result's first element

    def to_json(self) -> dict[str, Any]:
        out = {"op": self.op, "args": self.args, "result": self.result, "steps": self.steps}
        if self.offset is not None:
            out["offset"] = self.offset
        return out


def _explain() -> Any:
    """``algebra.explain`` (exported at the top level or from ``algebra.explain``)."""
    fn = getattr(A, "explain", None)
    if callable(fn):
        return fn
    from algebra.explain import explain

    return explain


def _spec(op: str) -> OpSpec:
    spec = OPS.get(op)
    if spec is None or not hasattr(A, op):
        names = ", ".join(s.name for s in available_ops())
        raise LayoutError(f"unknown op {op!r}; one of: {names}")
    return spec


def _arg_str(x: Any, kind: str = "") -> str:
    """An argument in CuTe notation: tilers as ``<...>``, coordinates as ``(1,_)``."""
    if kind.startswith("coord") and isinstance(x, tuple):
        return "(" + ",".join(_arg_str(e, kind) for e in x) + ")"
    if isinstance(x, tuple):
        return "<" + ", ".join(_arg_str(e) for e in x) + ">"
    return "_" if x is None else str(x)


@lru_cache(maxsize=512)
def _run(op: str, args: tuple[str, ...]) -> OpResult:
    spec = _spec(op)
    required = [k for k in spec.args if not k.endswith("?")]
    if not len(required) <= len(args) <= len(spec.args):
        want = f"{len(required)}" if len(required) == len(spec.args) else f"{len(required)} or {len(spec.args)}"
        raise LayoutError(f"{op} takes {want} argument(s) ({', '.join(spec.arg_names)}), {len(args)} given")
    parsed = [parse_arg(t, k, spec.arg_names[i]) for i, (t, k) in enumerate(zip(args, spec.args, strict=False))]
    with guard(op):
        result = getattr(A, op)(*parsed)
        raw = _explain()(op, *parsed)
        cpp, dsl = code.op_code(op, parsed)
    steps = [{"text": str(s.get("text", "")), "layout": None if s.get("layout") is None else str(s["layout"])}
             for s in raw]
    offset = None
    if isinstance(result, tuple):  # local_tile / local_partition: (layout, offset of its first element)
        result, offset = result
    return OpResult(op=op, args=[_arg_str(p, k) for p, k in zip(parsed, spec.args, strict=False)],
                    result=str(result), steps=steps, spec=spec, parsed=parsed, cpp=cpp, dsl=dsl, offset=offset)


def _arg_text(a: Any) -> str:
    """An argument as text: ints as digits, a JSON list (a tiler) as its JSON, strings as they are."""
    if isinstance(a, list):
        return json.dumps(a)
    return str(a).strip()


def run_op(op: str, args: list[Any]) -> OpResult:
    """Run ``op`` on the text arguments (a JSON list is a tiler). Post-condition:
    ``result == str(getattr(algebra, op)(*parsed))`` and ``steps == algebra.explain(op, *parsed)``; a refusal
    raises LayoutError with CuTe's reason."""
    return _run(op.strip(), tuple(_arg_text(a) for a in args))


def _grid_of(text: str, grid_id: str, links: list[dict[str, Any]] | None = None,
             picked: set[int] | None = None) -> tuple[Any, str]:
    """The grid of the layout ``text`` (None and the reason when it is not drawn); ``picked`` outlines the cells
    holding those offsets."""
    from app.services.layouts import describe_layout, layout_grid

    view = describe_layout(text)
    g = layout_grid(view, grid_id)
    if g is None:
        return None, view.note or "not drawn"
    if links:
        g.meta["links"] = links
    if picked:
        g.marks = {(i, j): "acc" for i, row in enumerate(view.offsets or []) for j, v in enumerate(row) if v in picked}
    return g, ""


def op_grids(res: OpResult) -> list[tuple[str, Any, str]]:
    """(title, GridView or None, message) for A, B (when a layout) and the result, with the result's cells linked
    back to the cells of A (and B) they come from. local_tile / local_partition outline in A the cells of the
    tile / the thread's partition (offsets ``offset + R(k)``) and in B the thread's cell."""
    spec = res.spec
    out: list[tuple[str, Any, str]] = []
    a = res.parsed[0]
    picked = None
    if res.offset is not None:
        with guard(res.op):
            picked = {res.offset + o for o in A.offsets(A.parse(res.result))}
    g, msg = _grid_of(str(a), "grid-a", picked=picked)
    out.append((f"A = {a}", g, msg))
    b = res.parsed[1] if len(res.parsed) > 1 else None
    b_is_layout = b is not None and not isinstance(b, (tuple, int)) and spec.args[1].startswith("layout")
    if b_is_layout:
        thread = {res.parsed[2]} if res.op == "local_partition" else None
        g, msg = _grid_of(str(b), "grid-b", picked=thread)
        out.append((f"{spec.arg_names[1]} = {b}", g, msg))
    links: list[dict[str, Any]] = []
    if spec.link == "via-b":
        links = ([{"to": "grid-b", "by": "same"}, {"to": "grid-a", "by": "via", "via": "grid-b"}] if b_is_layout
                 else [{"to": "grid-a", "by": "offset"}])
    elif spec.link:
        links = [{"to": "grid-a", "by": spec.link, **({"add": res.offset} if res.offset else {})}]
    g, msg = _grid_of(res.result, "grid-r", links)
    where = f", first element at offset {res.offset} of A" if res.offset is not None else ""
    out.append((f"result = {res.result}{where}", g, msg))
    return out
