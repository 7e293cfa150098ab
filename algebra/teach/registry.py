"""The op table: every layout-algebra op the product offers, in one place.

Each ``Op`` holds the op's name, its implementation, its arguments (a name and a kind each), a one-line description,
example presets (arguments in CuTe notation, the first one the op's default on the workbench), and its CuTe C++ and
CuTe DSL emitters. ``POST /api/algebra``, the workbench (``/algebra``), ``explain``, ``codegen`` and the drills read
this table; nothing else lists the ops.

Argument kinds (``Arg.kind``) and how text is read (``parse_value``):

- ``layout``: a layout in CuTe notation (also swizzled ``Sw<B,M,S> o off o L`` where the op takes one);
- ``tiler``: a layout, an integer ``n`` (the layout ``n:1``), a tiler ``<2:1, _, 4:2>`` (a JSON list in the API) or a
  shape ``(4,3)`` (by mode, as CuTe reads ``make_shape(4,3)``: the tiler ``<4:1, 3:1>``);
- ``int``: an integer;  ``shape``: an integer or an integer tuple ``(8,(2,4))``;
- ``cotarget``: a shape, or a layout standing for its shape (CuTe's ``complement`` reads ``shape(cotarget)``);
- ``profile``: an integer tuple whose structure alone matters (``(1,1)``; CuTe's ``Step<_1,_1>``);
- ``coord``: a coordinate, an integer or a tuple ``(1,(0,1))``, ``_`` keeping a whole mode.

Emitters take ``(n, a)``: ``n[k]`` is argument k as C++ (or DSL) text (a bound variable for layouts and tilers,
inline otherwise) and ``a[k]`` its value; they return an expression, or a list of statements that print the result.
An op without an emitter is emitted as ``name(args...)`` / ``cute.name(args...)``.

Adding an op: implement it in its group's module (``_IMPLEMENTED_IN``), recording its steps through
``algebra.core.recorder.active()`` (see ``algebra.core.coalesce.coalesce``), then add one ``_op(...)`` row below
(``nullspace``'s is the plainest). The workbench, the API, explain and codegen pick it up; ``tests/test_registry.py``
runs its example everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from algebra.core import emit, inverses, ops, products, recast
from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout
from algebra.core.notation import parse_arg, parse_htuple
from algebra.hw.atoms import UINT_TYPES
from algebra.teach import coords

KINDS = ("layout", "tiler", "int", "shape", "cotarget", "profile", "coord")


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str
    optional: bool = False


@dataclass(frozen=True)
class Example:
    label: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Op:
    """One op. ``result``: "layout", "tile" (a layout and the offset of its first element) or "value" (a number or a
    coordinate). ``link``: how a result cell relates to A's cells on the workbench ("via-b": R(c) = A(B(c));
    "offset": R's values are offsets of A; "index": R's values are 1-D coordinates of A; "same": R(i) = A(i))."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Arg, ...]
    gloss: str
    group: str
    examples: tuple[Example, ...]
    cpp: Callable[[list[str], tuple], Any] | None = None
    dsl: Callable[[list[str], tuple], Any] | None = None
    link: str = ""
    result: str = "layout"
    has_dsl: bool = True

    @property
    def example(self) -> Example:
        return self.examples[0]

    @property
    def required(self) -> int:
        return sum(1 for a in self.args if not a.optional)


OPS: dict[str, Op] = {}

#: the module that implements a group's ops, each under its op's name
_IMPLEMENTED_IN = {"Basics": ops, "Inverses": inverses, "Divides": products, "Products": products,
                   "Tiling": products, "Recast": recast, "Coordinates": coords}


def _op(name: str, args: str, gloss: str, group: str, examples: list[tuple[str, ...]], *,
        cpp: Callable | None = None, dsl: Callable | None | bool = True, link: str = "",
        result: str = "layout") -> None:
    """Register ``name``, the function of that name in its group's module: ``args`` as
    ``"A:layout B:tiler cotarget:shape?"`` (``?`` marks an optional one)."""
    spec = tuple(Arg(arg.replace("_", " "), kind.rstrip("?"), kind.endswith("?"))
                 for arg, kind in (part.split(":") for part in args.split()))
    assert all(a.kind in KINDS for a in spec), args
    OPS[name] = Op(name, getattr(_IMPLEMENTED_IN[group], name), spec, gloss, group,
                   tuple(Example(e[0], tuple(e[1:])) for e in examples), cpp, dsl if callable(dsl) else None, link,
                   result, dsl is not None)


def _not_in_cpp(name: str) -> Callable:
    """The C++ of an op CuTe C++ does not have: its result, computed here, as a C++ literal."""
    return lambda n, a: [f"// CuTe C++ has no {name}; its result, computed by this algebra:",
                         f"auto R = {emit.to_cpp(OPS[name].fn(*a))};", "print(R);"]


def _tensor_op(op: str) -> Callable:
    return lambda n, a: [
        f"auto tensor = make_tensor(counting_iterator<int>{{}}, {n[0]});   // its values are A's offsets",
        f"auto R = {op}(tensor, {n[1]}, {n[2]});",
        "print(R.layout()); print(\"  first offset: \"); print(*R.data());"]


def _dsl_product(op: str) -> Callable:
    """The DSL's zipped/tiled/flat_product take one layout as the tiler; for a tiler tuple, regroup the by-mode
    logical_product by hand as ``tile_unzip`` does."""
    return lambda n, a: _dsl_unzip(op, a[0], a[1]) if it.is_tuple(a[1]) else f"cute.{op}({n[0]}, {n[1]})"


def _dsl_unzip(op: str, block: Any, tiler: tuple) -> list[str]:
    if any(it.is_tuple(e) for e in tiler):
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


def _default_order(shape: Any) -> Any:
    """CuTe DSL's tile_to_shape takes the order explicitly: column-major (0, 1, ...) by default."""
    return tuple(range(it.rank(shape))) if it.is_tuple(shape) else 0


def _ctype(bits: int) -> str:
    return UINT_TYPES.get(bits, f"uint_bit_t<{bits}>")


# --------------------------------------------------------------------------------------------- the table

_op("coalesce", "A:layout profile:profile?", "the same function of the 1-D coordinate, with the fewest modes (by mode: "
    "each mode of the profile on its own)", "Basics",
    [("coalesce", "(2,(1,6)):(1,(6,2))"), ("coalesce by mode", "(2,(1,6)):(1,(6,2))", "(1,1)")], link="same",
    dsl=lambda n, a: f"cute.coalesce({n[0]}, target_profile={n[1]})" if len(n) > 1 else f"cute.coalesce({n[0]})")
_op("filter", "A:layout profile:profile?", "coalesce after dropping stride-0 and size-1 modes", "Basics",
    [("filter", "(4,(2,3)):(0,(1,2))")])
_op("filter_zeros", "A:layout", "every stride-0 mode gets size 1", "Basics", [("filter_zeros", "(4,(2,3)):(0,(1,2))")])
_op("composition", "A:layout B:tiler", "R(c) = A(B(c)): B picks which of A's coordinates", "Basics",
    [("composition", "(6,2):(8,2)", "(4,3):(3,1)"), ("transpose by composition", "(4,8):(8,1)", "(8,4):(4,1)"),
     ("composition with a tiler", "(12,(4,8)):(59,(13,1))", "<3:4, 8:2>")], link="via-b")
_op("complement", "A:layout cotarget:cotarget?", "the layout of the offsets A does not reach, up to the cotarget",
    "Basics", [("complement", "(2,2):(1,6)", "24")],
    cpp=lambda n, a: f"complement({n[0]}, {emit.to_cpp(a[1])})" if len(a) > 1 else f"complement({n[0]})",
    dsl=lambda n, a: f"cute.complement({n[0]}, {n[1] if len(n) > 1 else f'cute.cosize({n[0]})'})")
_op("right_inverse", "A:layout", "A(R(i)) = i on R's domain, the longest contiguous run of offsets", "Inverses",
    [("right inverse", "(4,(2,4)):(2,(1,8))"), ("right inverse of a transpose", "(4,8):(8,1)")], link="index")
_op("left_inverse", "A:layout", "R(A(i)) = i for every coordinate i of an injective A", "Inverses",
    [("left inverse", "(4,8):(8,1)")], link="index")
_op("max_common_layout", "A:layout B:layout", "the longest run R with A(R(i)) = B(R(i)) = i", "Inverses",
    [("max_common_layout", "(4,8):(1,4)", "(8,4):(1,8)")], link="index")
_op("max_common_vector", "A:layout B:layout", "how many elements are contiguous in both A and B", "Inverses",
    [("max_common_vector", "(4,8):(1,4)", "32:1")], result="value")
_op("nullspace", "A:layout", "the coordinates A sends to offset 0 (its stride-0 modes)", "Inverses",
    [("nullspace", "(4,(2,3)):(0,(1,0))")], link="index")
_op("layout_add", "A:layout B:layout", "R(i) = A(i) + B(i): the sum of two layouts as one layout", "Inverses",
    [("layout_add", "(4,3):(1,4)", "(4,3):(3,1)"), ("one mode and two", "12:2", "(4,3):(3,1)")],
    cpp=_not_in_cpp("layout_add"), dsl=None)
_op("greatest_common_domain", "A:layout B:layout", "the largest 1-D sub-modes that both shapes split into, in order",
    "Inverses", [("greatest_common_domain", "(5,3,4):(1,5,15)", "(10,6):(1,10)")], link="index",
    cpp=_not_in_cpp("greatest_common_domain"), dsl=None)
_op("logical_divide", "A:layout tiler:tiler", "A o (B, B*): ((inside a tile), (which tile))", "Divides",
    [("logical divide", "(4,2,3):(2,1,8)", "4:2")], link="offset")
_op("zipped_divide", "A:layout tiler:tiler", "logical_divide with the tile modes gathered first", "Divides",
    [("zipped divide", "(8,8):(1,8)", "<2:1, 4:1>")], link="offset")
_op("tiled_divide", "A:layout tiler:tiler", "zipped_divide with the tile-index modes unpacked", "Divides",
    [("tiled divide", "(8,8):(1,8)", "<2:1, 4:1>")], link="offset")
_op("flat_divide", "A:layout tiler:tiler", "zipped_divide with every mode unpacked", "Divides",
    [("flat divide", "(8,8):(1,8)", "<2:1, 4:1>")], link="offset")
_op("logical_product", "A:layout B:tiler", "(A, A* o B): A repeated in the pattern of B", "Products",
    [("logical product", "(2,2):(4,1)", "6:1")], link="offset")
_op("zipped_product", "A:layout B:tiler", "logical_product with the block modes gathered first", "Products",
    [("zipped product", "(2,2):(1,2)", "<3:1, 2:1>")], link="offset", dsl=_dsl_product("zipped_product"))
_op("tiled_product", "A:layout B:tiler", "zipped_product with the repeat modes unpacked", "Products",
    [("tiled product", "(2,2):(1,2)", "<3:1, 2:1>")], link="offset", dsl=_dsl_product("tiled_product"))
_op("flat_product", "A:layout B:tiler", "zipped_product with every mode unpacked", "Products",
    [("flat product", "(2,2):(1,2)", "<3:1, 2:1>")], link="offset", dsl=_dsl_product("flat_product"))
_op("blocked_product", "A:layout B:layout", "A's blocks laid out by B, mode by mode", "Products",
    [("blocked product", "(2,2):(1,2)", "(3,4):(1,3)")], link="offset")
_op("raked_product", "A:layout B:layout", "A's elements interleaved (raked) across B's pattern", "Products",
    [("raked product", "(2,2):(1,2)", "(3,4):(1,3)")])
_op("tile_to_shape", "block:layout shape:shape order:profile?",
    "the block repeated (blocked_product) until it covers the shape, the repeats in the given mode order", "Tiling",
    [("tile_to_shape", "(2,2):(1,2)", "(8,8)"), ("tile_to_shape, repeats row-major", "(2,2):(1,2)", "(8,8)", "(1,0)")],
    dsl=lambda n, a: f"cute.tile_to_shape({n[0]}, {n[1]}, "
                     f"{n[2] if len(n) > 2 else emit.py_tuple(_default_order(a[1]))})")
_op("local_tile", "A:layout tiler:tiler tile_coordinate:coord",
    "the tile of A at a tile coordinate: zipped_divide(A, tiler)(_, coord), and where it starts", "Tiling",
    [("local_tile: tile (1,2) of 4x4 tiles", "(16,16):(16,1)", "<4:1, 4:1>", "(1,2)")], link="offset", result="tile",
    cpp=_tensor_op("local_tile"), dsl=lambda n, a: f"cute.local_tile(cute.make_tensor(0, {n[0]}), {n[1]}, {n[2]})")
_op("local_partition", "A:layout thread_layout:layout thread_index:int",
    "what one thread of a thread layout owns: zipped_divide(A, shape(thr))(thr^-1(index), _)", "Tiling",
    [("local_partition: thread 5 of (4,8)", "(16,32):(32,1)", "(4,8):(8,1)", "5")], link="offset", result="tile",
    cpp=_tensor_op("local_partition"),
    dsl=lambda n, a: f"cute.local_partition(cute.make_tensor(0, {n[0]}), {n[1]}, cutlass.Int32({n[2]}))")
_op("tile_unzip", "A:layout tiler:tiler", "regroup a by-mode divide or product as ((tile modes), (rest modes))",
    "Tiling", [("tile_unzip", "((2,4),(4,2)):((1,2),(8,32))", "<2:1, 4:1>")], link="offset", dsl=None)
_op("upcast", "A:layout n:int", "n consecutive elements viewed as one", "Recast", [("upcast by 2", "(8,8):(1,8)", "2")],
    cpp=lambda n, a: f"upcast<{a[1]}>({n[0]})", dsl=lambda n, a: f"cute.recast_layout({a[1]}, 1, {n[0]})")
_op("downcast", "A:layout n:int", "each element viewed as n smaller ones", "Recast",
    [("downcast by 2", "(4,8):(1,4)", "2")], cpp=lambda n, a: f"downcast<{a[1]}>({n[0]})",
    dsl=lambda n, a: f"cute.recast_layout(1, {a[1]}, {n[0]})")
_op("recast_layout", "A:layout old_bits:int new_bits:int", "A re-expressed in elements of new_bits instead of old_bits",
    "Recast", [("recast 16-bit to 32-bit", "(8,8):(1,8)", "16", "32")],
    cpp=lambda n, a: f"recast_layout<{_ctype(a[1])}, {_ctype(a[2])}>({n[0]})",
    dsl=lambda n, a: f"cute.recast_layout({a[2]}, {a[1]}, {n[0]})")
_op("evaluate", "A:layout coordinate:coord", "the offset A gives a 1-D, flat or natural coordinate", "Coordinates",
    [("evaluate at a natural coordinate", "(4,(2,4)):(2,(1,8))", "(1,5)")], result="value",
    cpp=lambda n, a: f"{n[0]}({n[1]})", dsl=lambda n, a: f"cute.crd2idx({n[1]}, {n[0]})")
_op("idx2crd", "index:coord shape:shape", "the natural coordinate of a 1-D index in a shape", "Coordinates",
    [("idx2crd", "7", "(3,(2,3))")], result="value",
    cpp=lambda n, a: f"idx2crd({n[0]}, {emit.cpp_shape(a[1], static=False)})")
_op("crd2idx", "coordinate:coord shape:shape", "the 1-D index of a coordinate in a shape (column-major)",
    "Coordinates", [("crd2idx", "(1,(0,1))", "(3,(2,3))")], result="value",
    cpp=lambda n, a: f"crd2idx({n[0]}, {emit.cpp_shape(a[1], static=False)})")

GROUPS = tuple(dict.fromkeys(op.group for op in OPS.values()))


def get(name: str) -> Op:
    """The op called ``name``; ``LayoutError`` naming the known ops otherwise."""
    op = OPS.get(name)
    if op is None:
        raise LayoutError(f"unknown op {name!r}; one of: {', '.join(OPS)}")
    return op


def names() -> list[str]:
    return list(OPS)


# --------------------------------------------------------------------------------------------- reading arguments

_INT = re.compile(r"^[+-]?_?\d+$")
#: the first character no integer tuple argument holds (with ``_``: where ``_`` may not stand either)
_STRAY = {True: re.compile(r"[^\s\d_(),-]|-(?!\d)"), False: re.compile(r"[^\s\d_(),-]|-(?!\d)|_")}
_STATIC = re.compile(r"_\s*(?=[-\d_])")  # CuTe's static marker (``_4``): a ``_`` here is a leaf of its own


def parse_tuple(text: str, what: str, allow_keep: bool = False) -> Any:
    """``3``, ``(1,2)``, ``(1,(0,2))`` -> an int or nested tuple of ints; with ``allow_keep`` also ``_`` (None,
    "keep this mode"). Read by ``algebra.core.notation.parse_htuple``; ``LayoutError`` starting with ``what``
    otherwise, a syntax error in the op table's words with ``pos`` where reading stopped (a character or a ``_`` no
    tuple argument holds stops it too).

    >>> parse_tuple(" (1,(0,_)) ", "coordinate", allow_keep=True)
    (1, (0, None))
    """
    text = text.strip()
    stray = _STRAY[allow_keep].search(text)
    if stray and stray[0] == "_":
        raise LayoutError(f"{what}: '_' has no meaning here; write integers, e.g. (1,2)", pos=stray.start())
    if stray:
        at = len(text[:stray.start()].rstrip())
        raise LayoutError(f"{what}: unexpected {text[at:at + 8]!r} in {text!r}; write e.g. (1,2)"
                          + (" or (1,_)" if allow_keep else ""), pos=stray.start())
    static = _STATIC.search(text) if allow_keep else None
    try:
        value = parse_htuple(text, keep=allow_keep)
    except LayoutError as exc:
        if exc.pos is None:  # over a bound (nesting depth, length), not a syntax error
            raise LayoutError(f"{what}: {exc}") from None
        stop = exc.pos if static is None else min(exc.pos, static.end())
    else:
        if static is None:
            return value
        stop = static.end()
    before = text[:stop]
    if before.rstrip()[-1:] in ("", "(", ","):  # a value was due
        msg = (f"unexpected {text[stop]!r} in {text!r}" if stop < len(text) else f"{text!r} ends early" if text
               else "empty input")
    else:
        msg = "expected ',' or ')' in " + repr(text) if before.count("(") > before.count(")") \
            else f"unexpected text after {text!r}"
    raise LayoutError(f"{what}: {msg}", pos=stop)


def parse_value(text: str, kind: str, what: str) -> Any:
    """One argument of kind ``kind`` from its text (see the module doc); ``LayoutError`` starting with ``what``."""
    value = _parse_value(text.strip(), kind, what)
    if kind == "tiler":  # an integer of a tiler, in any of its forms, is the layout n:1
        bad = next((n for n in _tiler_ints(value) if n <= 0), None)
        if bad is not None:
            raise LayoutError(f"{what}: shape entries must be positive integers, got {bad}")
    return value


def _tiler_ints(x: Any) -> Iterator[int]:
    if type(x) is int:
        yield x
    elif type(x) is tuple:
        for e in x:
            yield from _tiler_ints(e)


def _parse_value(text: str, kind: str, what: str) -> Any:
    if text.startswith("[") and kind != "int":  # a JSON list: a tiler (of layouts, ints and null) or a tuple
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise LayoutError(f"{what}: not a JSON list ({exc.msg})") from None
        if kind == "tiler":
            if not isinstance(items, list) or not items:
                raise LayoutError(f"{what}: a tiler needs at least one mode, e.g. <2:1, 4:2>")
            try:
                return parse_arg(items)
            except LayoutError as exc:
                raise LayoutError(f"{what}: {exc}") from None
        text = json.dumps(items).replace("[", "(").replace("]", ")").replace("null", "_")
    if kind == "int":
        if not _INT.match(text):
            raise LayoutError(f"{what}: expected an integer such as 24, got {text!r}")
        return int(text.replace("_", ""))
    if kind == "cotarget" and ":" in text:  # a layout: the op reads its shape, as CuTe does
        return _parse_value(text, "layout", what)
    if kind in ("shape", "cotarget"):
        if ":" in text:
            raise LayoutError(f"{what}: expected an integer or a shape such as 24 or (4,6), got the layout {text!r}")
        try:
            return parse_tuple(text.replace("_", "") if _INT.match(text) else text, what)
        except LayoutError as exc:
            if exc.pos is None:
                raise
            raise LayoutError(f"{what}: expected an integer or a shape such as 24 or (4,6), got {text!r}") from None
    if kind == "profile":
        if ":" in text:
            raise LayoutError(f"{what}: a profile is an integer tuple such as (1,1) (only its structure matters), "
                              f"not the layout {text!r}")
        return parse_tuple(text, what)
    if kind == "coord":
        return parse_tuple(text, what, allow_keep=True)
    if kind == "tiler" and re.fullmatch(r"<\s*>", text):
        raise LayoutError(f"{what}: a tiler needs at least one mode, e.g. <2:1, 4:2>")
    try:
        value = parse_arg(text)
    except LayoutError as exc:
        raise LayoutError(f"{what}: {exc}") from None
    if kind == "layout" and (isinstance(value, tuple) or isinstance(value, int)):
        raise LayoutError(f"{what}: expected a layout such as (4,8):(8,1), got {text!r}")
    if kind == "tiler" and isinstance(value, Layout) and ":" not in text and "Layout" not in text:
        return value.shape  # a shape (``(4,3)``, ``Shape<_4,_3>{}``) as a tiler is by mode, as CuTe reads it
    return value


def parse_args(op: Op, texts: list[Any]) -> list[Any]:
    """The op's arguments from text (non-text values pass through); checks their number."""
    if not op.required <= len(texts) <= len(op.args):
        want = str(op.required) if op.required == len(op.args) else f"{op.required} or {len(op.args)}"
        raise LayoutError(f"{op.name} takes {want} argument(s) ({', '.join(a.name for a in op.args)}), "
                          f"{len(texts)} given")
    return [parse_value(t, a.kind, a.name) if isinstance(t, str) else t for t, a in zip(texts, op.args, strict=False)]
