"""Pydantic request/response models of the JSON API (CONTRACT §2): layout, algebra, banks and atoms."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict

from app.config import MAX_CELLS, MAX_NESTING, MAX_TEXT, nesting_depth
from gpu_worker.schemas import ExactInt  # noqa: F401  (one JSON-integer rule for the API and the jobs)


def check_nesting(text: str) -> str:
    """Refuse (422) text nested deeper than MAX_NESTING before any recursive parser sees it."""
    if "(" in text or "[" in text or "<" in text or "{" in text:
        d = nesting_depth(text)
        if d > MAX_NESTING:
            raise ValueError(f"nested {d} deep, over the nesting cap of {MAX_NESTING}")
    return text


#: A typed layout, tiler, coordinate or swizzle: at most MAX_TEXT characters, nested at most MAX_NESTING deep.
CuteText = Annotated[str, Field(max_length=MAX_TEXT), AfterValidator(check_nesting)]


class RequestBody(BaseModel):
    """Base of every JSON request body: strict types, so a JSON integer goes where an int goes (``true``, ``4.0`` and
    ``"4"`` are refused by the field's name, not read as 1, 4 and 4)."""

    model_config = ConfigDict(strict=True, extra="forbid")




class LayoutIn(RequestBody):
    layout: CuteText = Field(..., min_length=1, max_length=MAX_TEXT, examples=["(4,(2,4)):(2,(1,8))"],
                        description="CuTe notation, e.g. (4,8):(8,1) or Sw<3,3,3> o (8,64):(64,1)")


class Table(BaseModel):
    rows: int
    cols: int
    offsets: list[list[int]] | list[list[str]] = Field(
        description="offsets[i][j] = L(i, j) in the rank-2 view; a coordinate layout (basis strides such as "
                    "(3,4):(1@1,1@0)) gives its coordinates as text, e.g. \"(1,0)\"")


class LayoutOut(BaseModel):
    layout: str
    size: int
    cosize: int
    rank: int
    depth: int
    injective: bool | None = Field(None, description="distinct offsets for distinct coordinates (null: not enumerated)")
    compact: bool | None = Field(None, description="injective and cosize == size (null: not enumerated)")
    table: Table | None = Field(None, description="null when size exceeds the enumeration cap (see note)")
    note: str | None = None
    offset_range: list[int] | None = Field(None, description="[lowest, highest] offset (integer strides only); "
                                           "cosize is its width, as in CuTe's coshape with |strides|")
    last_plus_one: int | None = Field(None, description="L(size - 1) + 1: pycute's cosize, which differs from "
                                      "CuTe's when a stride is negative")


class Step(BaseModel):
    text: str
    layout: str | None = None


class AlgebraIn(RequestBody):
    op: str = Field(..., min_length=1, max_length=40, examples=["composition"])
    args: list[CuteText | int | Annotated[list[CuteText | int | None], Field(max_length=16)]] = Field(
        ..., min_length=1, max_length=4, examples=[["(6,2):(8,2)", "(4,3):(3,1)"]],
        description='layouts in CuTe notation; tilers as "<2:1, 4:2>" or a JSON list of layouts / ints / null '
                    '(null keeps the mode); ints as "24" or 24')


class AlgebraOut(BaseModel):
    op: str
    args: list[str]
    result: str
    steps: list[Step]
    offset: int | str | None = Field(None, description="local_tile / local_partition: the offset in A of the "
                                                       "result's first element (the result is the layout of the tile "
                                                       "from there); a coordinate such as \"(8,0)\" where A is a "
                                                       "coordinate layout")
    notes: list[str] = Field(default_factory=list, description="why the result looks surprising, e.g. a divide "
                                                               "whose tiler does not divide A draws more cells than A")


class Access(RequestBody):
    kind: Literal["column", "row", "offsets", "ldmatrix", "thread_layout"] = "column"
    index: int | Annotated[list[int | Annotated[list[int], Field(max_length=8)]], Field(max_length=32)] | None = Field(
        0, description="column / row: which one; offsets: one element offset (or [row, col]) per thread, a vector "
                       "from [row, col] running along the row; ldmatrix: the first row, or [row, col] of the first "
                       "8x8 matrix")
    vector: int = Field(1, ge=1, le=16, description="elements per thread and access (row / offsets / thread_layout "
                                                     "kinds; at most 16 bytes)")
    num: Annotated[Literal[1, 2, 4], ExactInt] = Field(4, description="ldmatrix .x1 / .x2 / .x4")
    trans: bool = Field(False, description="ldmatrix .trans: the same rows are read (same banks), columns delivered")
    layout: CuteText | None = Field(None, max_length=MAX_TEXT,
                                    description="thread_layout: every element is a thread; thread t reads the vector "
                                                "at 1-D coordinate layout(t) of the tile's grid of vectors")


class BanksIn(RequestBody):
    layout: CuteText = Field(..., min_length=1, max_length=MAX_TEXT, examples=["(8,64):(64,1)"])
    swizzle: CuteText | None = Field(None, max_length=40, examples=["Sw<3,3,3>"])
    element_bytes: Annotated[Literal[1, 2, 4, 8, 16], ExactInt] = 2
    access: Access = Field(default_factory=Access)


class BanksOut(BaseModel):
    banks: list[int]
    ways: int
    wavefronts: int
    byte_addresses: list[int]
    phases: list[int]
    access_bytes: int
    offsets: list[int] = Field(description="element offsets read, one per thread (after the swizzle)")
    coords: list[list[int]] = Field(description="(row, col) of the element each thread reads")


class AtomSummary(BaseModel):
    name: str
    kind: str


class TVGrid(BaseModel):
    operand: str
    tv_layout: str
    rows: int
    cols: int
    threads: list[list[int]] = Field(description="threads[m][n]: the thread holding element (m, n)")
    values: list[list[int]] = Field(description="values[m][n]: that thread's value index")


class AtomOut(BaseModel):
    name: str
    kind: str
    shape: list[int]
    operands: list[TVGrid]


#: A cell's fill as the page's computed style names it: ``#rgb`` / ``#rrggbb`` or ``rgb(...)`` / ``rgba(...)``.
CssColour = Annotated[str, Field(max_length=40, pattern=r"^(#[0-9a-fA-F]{3,8}|rgba?\([0-9., ]{5,32}\))$")]
Label = Annotated[str, Field(max_length=64)]
#: A grid boundary's level (0: none, up to 3: the outermost mode's).
Level = Annotated[int, Field(ge=0, le=3)]


class SvgIn(RequestBody):
    """What one grid of a page shows, as the page's SVG button reads it (static/grid-tools.js): the cells row by row,
    each cell's fill as an index into ``palette``, its marks, the boundary levels and labels, the caption.

    The lists of up to MAX_CELLS items stop at their first bad item (``fail_fast``): FastAPI turns every error into a
    dict on the event loop, before any handler and outside the work budget, and a body of lists that were bad
    throughout (300,000 errors in 670 kB) cost 1.4 s of server CPU there."""

    rows: Annotated[int, Field(ge=1, le=MAX_CELLS)]
    cols: Annotated[int, Field(ge=1, le=MAX_CELLS)]
    text: list[Label] = Field(..., max_length=MAX_CELLS, fail_fast=True,
                              description="cell labels, row-major (rows x cols)")
    palette: list[CssColour] = Field(..., max_length=64, description="the distinct fills")
    colour: list[Annotated[int, Field(ge=-1, le=63)]] = Field(..., max_length=MAX_CELLS, fail_fast=True,
                                                               description="each cell's fill: palette index, -1 none")
    marks: list[Annotated[tuple[Annotated[int, Strict(), Field(ge=0)], Annotated[int, Strict(), Field(ge=0)],
                                Annotated[str, Field(pattern=r"^(acc|bad|dim)( (acc|bad|dim))*$", max_length=16)]],
                          Strict(False)]] = Field(default_factory=list, max_length=MAX_CELLS, fail_fast=True,
                                                  description="[row, col, 'acc' | 'bad' | 'dim' ...]")
    row_levels: list[Level] = Field(default_factory=list, max_length=MAX_CELLS, fail_fast=True)
    col_levels: list[Level] = Field(default_factory=list, max_length=MAX_CELLS, fail_fast=True)
    row_labels: list[Label] = Field(default_factory=list, max_length=MAX_CELLS, fail_fast=True)
    col_labels: list[Label] = Field(default_factory=list, max_length=MAX_CELLS, fail_fast=True)
    caption: str = Field("", max_length=MAX_TEXT + 200)
    outline: str = Field("", max_length=200, description="what the outlined cells are")
