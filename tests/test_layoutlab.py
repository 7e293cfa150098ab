"""The library face (``layoutlab``): every input kind draws one cell element per layout element, labelled with the
offsets ``algebra`` computes; TV pictures labelled as CuTe's print_latex_tv labels them; the text table as
cute::print_layout prints it; LaTeX holding every offset; refusals as one-line LayoutErrors."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import algebra as A
import layoutlab
from algebra import LayoutError, atoms


class Cells(HTMLParser):
    """The cell elements of an output: every element with ``data-offset``, its attributes and text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.cells: list[dict] = []
        self._open: dict | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-offset" in a:
            self._open = {"tag": tag, **a, "text": ""}
            self.cells.append(self._open)

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and tag == self._open["tag"]:
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open["text"] += data


def offsets_by_row(layout: A.Layout) -> list[int]:
    """L(i, j) row by row over the rank-2 view (rank 1: one row; modes 1.. folded into columns)."""
    shape = layout.layout_b.shape if hasattr(layout, "layout_b") else layout.shape
    rows = A.size(shape[0]) if isinstance(shape, tuple) and len(shape) > 1 else 1
    flat = A.offsets(layout)
    cols = len(flat) // rows
    return [flat[i + rows * j] for i in range(rows) for j in range(cols)]


LAYOUTS = ["(4,8):(8,1)", "(4,(2,4)):(2,(1,8))", "8:2", "(2,3,4):(12,4,1)", "Sw<3,4,3> o _0 o (8,64):(64,1)",
           "((_2,_2),(_2,_4)):((_1,_8),(_2,_16))", "(4,4):(-1,4)"]


@pytest.mark.parametrize("text", LAYOUTS)
def test_one_cell_element_per_element_holding_its_offset(text):
    layout = A.parse(text)
    want = offsets_by_row(layout)
    for out in (layoutlab.html(text), layoutlab.svg(text)):
        cells = Cells(out).cells
        assert len(cells) == A.size(layout)
        assert [int(c["data-offset"]) for c in cells] == want
        assert [int(c["text"]) for c in cells] == want


def test_the_dsl_swizzle_spelling_draws_as_cute_cs():
    assert layoutlab.text("S<3,4,3> o 0 o (8,64):(64,1)") == layoutlab.text("Sw<3,4,3> o _0 o (_8,_64):(_64,_1)")


def test_a_128x128_grid_is_ordinary_and_over_the_cap_says_so():
    assert len(Cells(layoutlab.html("(128,128):(1,128)")).cells) == 128 * 128
    big = layoutlab.html("(1024,1024):(1024,1)")
    assert "render cap" in big and "(1024,1024):(1024,1)" in big and not Cells(big).cells
    assert "render cap" in layoutlab.text("(1024,1024):(1024,1)")
    with pytest.raises(LayoutError, match="render cap"):
        layoutlab.latex("(1024,1024):(1024,1)")
    with pytest.raises(LayoutError, match="cap of 4,096"):  # pdflatex's memory, under the render cap
        layoutlab.latex("(128,128):(128,1)")
    assert layoutlab.latex("(64,64):(64,1)").count("\\node[fill=") == 64 * 64


def test_the_empty_layout_reads_as_cute_prints_it():
    """CuTe prints the rank-0 layout as ():() (size 1, L(0) = 0); typed back it is the same layout, and it draws the
    grid an object with shape () and stride () draws: one cell, offset 0."""
    class Empty:
        shape, stride = (), ()

    assert str(A.parse("():()")) == "():()"
    with pytest.raises(A.LayoutError):  # an empty mode inside a layout is not read (test_printed_forms)
        A.parse("(4,()):(1,())")
    assert A.parse("():()") == A.Layout((), ()) and A.size(A.parse("()")) == 1
    cells = [(c["data-offset"], c["text"]) for c in Cells(layoutlab.html("():()")).cells]
    assert cells == [(c["data-offset"], c["text"]) for c in Cells(layoutlab.html(Empty())).cells] == [("0", "0")]
    assert layoutlab.text("():()") == layoutlab.text(Empty())


def test_same_grid_from_every_input_kind():
    import numpy as np

    class PyCuteLike:  # pycute's Layout: .shape and .stride in CuTe's sense
        shape, stride = (4, (2, 4)), (2, (1, 8))

    class TorchLike:  # torch: .shape, .stride() in elements, .element_size()
        def __init__(self, shape, stride):
            self.shape, self._s = shape, stride

        def stride(self):
            return self._s

        def element_size(self):
            return 4

    def grid(x):
        return [(c["data-offset"], c["text"]) for c in Cells(layoutlab.html(x)).cells]

    assert grid(PyCuteLike()) == grid("(4,(2,4)):(2,(1,8))") == grid(A.parse("(4,(2,4)):(2,(1,8))"))
    assert grid(np.zeros((4, 8), dtype=np.float16)) == grid("(4,8):(8,1)") == grid(TorchLike((4, 8), (8, 1)))
    assert grid(np.zeros((8, 4), dtype=np.float64).T) == grid("(4,8):(1,4)") == grid(TorchLike((4, 8), (1, 4)))
    assert layoutlab.text(np.zeros((4, 8))) == layoutlab.text("(4,8):(8,1)")
    try:
        from pycute import Layout
    except ImportError:
        return
    assert grid(Layout((4, (2, 4)), (2, (1, 8)))) == grid("(4,(2,4)):(2,(1,8))")
    from pycute import ComposedLayout, Swizzle

    swizzled = ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))
    assert grid(swizzled) == grid("Sw<3,4,3> o _0 o (8,64):(64,1)")


def cute_tv_labels(tv: A.Layout, rows: int, cols: int) -> dict[tuple[int, int], str]:
    """CuTe's print_latex_tv: threads outer, values inner, the first (t, v) landing on a cell labels it."""
    nthr = A.size(tv.shape[0])
    out: dict[tuple[int, int], str] = {}
    for t in range(nthr):
        for v in range(A.size(tv) // nthr):
            idx = tv(t + nthr * v)
            out.setdefault((idx % rows, idx // rows), f"T{t}V{v}")
    return out


def test_tv_pictures_label_threads_and_values_as_cute():
    mma = atoms.get("SM80_16x8x16_F32F16F16F32_TN")
    cells = Cells(layoutlab.html(mma)).cells
    assert len(cells) == 16 * 16 + 8 * 16 + 16 * 8  # A (M x K), B (N x K), C (M x N)
    k = 0
    for op, (rows, cols) in (("A", (16, 16)), ("B", (8, 16)), ("C", (16, 8))):
        want = cute_tv_labels(mma.operand(op), rows, cols)
        for i in range(rows):
            for j in range(cols):
                c = cells[k]
                k += 1
                assert c["text"] == want[(i, j)] == f"T{c['data-thread']}V{c['data-value']}"
                assert int(c["data-offset"]) == i + rows * j
    tv = "((4,8),(2,2)):((32,1),(16,8))"
    got = {(int(c["data-offset"]) % 16, int(c["data-offset"]) // 16): c["text"]
           for c in Cells(layoutlab.html(tv, tile=(16, 8))).cells}
    assert got == cute_tv_labels(A.parse(tv), 16, 8)
    assert "T0V0" in layoutlab.text(tv, tile=(16, 8))


def test_tiled_copy_and_mma_and_copy_atoms_draw():
    tc = atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", thr_layout=A.Layout((4, 8), (8, 1)),
                               val_layout=A.Layout((1, 8)), element_bits=16)
    cells = Cells(layoutlab.html(tc)).cells
    assert len(cells) in (4 * 64, 2 * 4 * 64)  # its TV layout, or S and D where the tiled copy offers both
    assert {c["text"] for c in cells} >= {"T0V0", "T31V7"}
    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((2, 2, 1)))
    assert len(Cells(layoutlab.html(tm)).cells) == 32 * 16 + 16 * 16 + 32 * 16
    assert Cells(layoutlab.html(atoms.get("SM75_U32x4_LDSM_N"))).cells


def test_triton_layouts_draw_with_their_shape():
    blocked = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
               "order = [1, 0]}>")
    cells = Cells(layoutlab.html(blocked, shape=(8, 16))).cells
    assert len(cells) == 128 and cells[0]["text"] == "T0V0" and cells[4]["text"] == "T1V0"
    assert len(Cells(layoutlab.html((blocked, [8, 16]))).cells) == 128
    with pytest.raises(LayoutError, match="shape"):
        layoutlab.html(blocked)


def test_html_is_self_contained_and_ids_are_unique():
    a, b = layoutlab.html("(4,8):(8,1)"), layoutlab.html("(4,8):(8,1)")
    assert "<style>" in a and "<script>" in a and "window.LayoutLab" in a
    assert not re.search(r"(src|href)=|url\(|https?://", re.sub(r"<script>.*?</script>", "", a, flags=re.S))
    ids = re.findall(r' id="([^"]+)"', a + b)
    assert len(ids) == len(set(ids))
    assert '"hover":' in a  # the hover card's metadata travels with the grid


def test_colour_options():
    def classes(x, **kw):
        return re.findall(r'<span class="(p\d+)[^"]*" data-offset', layoutlab.html(x, **kw))

    assert classes("(2,16):(16,1)") == [f"p{o % 32}" for o in [*range(16), *range(16, 32)]]
    bank = classes("(2,16):(16,1)", colour="bank", element_bytes=2)
    assert bank == [f"p{(o * 2 // 4) % 32}" for o in [*range(16), *range(16, 32)]]
    assert set(classes("(2,16):(16,1)", colour="thread")[:16]) == {"p0"}
    assert classes("(2,16):(16,1)", color="bank", element_bytes=2) == bank  # the CLI's spelling, --color, too
    with pytest.raises(LayoutError, match="colour"):
        layoutlab.html("4:1", colour="red")
    with pytest.raises(LayoutError, match="element_bytes"):
        layoutlab.html("4:1", element_bytes=0)


PRINT_LAYOUT_4x8 = ("(4,8):(8,1)\n"
                    "       0    1    2    3    4    5    6    7 \n") + """    +----+----+----+----+----+----+----+----+
 0  |  0 |  1 |  2 |  3 |  4 |  5 |  6 |  7 |
    +----+----+----+----+----+----+----+----+
 1  |  8 |  9 | 10 | 11 | 12 | 13 | 14 | 15 |
    +----+----+----+----+----+----+----+----+
 2  | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 |
    +----+----+----+----+----+----+----+----+
 3  | 24 | 25 | 26 | 27 | 28 | 29 | 30 | 31 |
    +----+----+----+----+----+----+----+----+
"""


def test_text_is_print_layouts_table():
    """cute::print_layout (cute/util/print_tensor.hpp) for make_layout(make_shape(4,8), make_stride(8,1)), as
    CuTe prints it (tests/oracle/test_print_layout_oracle.py compares with the compiled function)."""
    assert layoutlab.text("(4,8):(8,1)") == PRINT_LAYOUT_4x8


def test_latex_holds_every_offset_and_compiles(tmp_path):
    for text in ("(4,(2,4)):(2,(1,8))", "Sw<1,0,1> o (4,4):(4,1)"):
        tex = layoutlab.latex(text)
        nodes = re.findall(r"\\node\[fill=[^\]]+\] at \((\d+),(\d+)\) \{(-?\d+)\};", tex)
        layout = A.parse(text)
        assert sorted(int(o) for *_, o in nodes) == sorted(A.offsets(layout))
        assert tex.startswith("% Layout:") and "\\begin{tikzpicture}" in tex
        assert tex.rstrip().endswith("\\end{document}")
    tv = layoutlab.latex(atoms.get("SM80_16x8x16_F32F16F16F32_TN"))
    assert tv.count("\\shortstack{T") == 16 * 16 + 8 * 16 + 16 * 8 and "\\shortstack{T0 \\\\ V0}" in tv
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    for k, tex in enumerate((layoutlab.latex("(4,(2,4)):(2,(1,8))"), tv)):
        (tmp_path / f"t{k}.tex").write_text(tex)
        r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"t{k}.tex"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout[-2000:]
        assert (tmp_path / f"t{k}.pdf").stat().st_size > 1000


@pytest.mark.parametrize(("x", "why"), [("(4,8:(8,1)", "layout"), ("", "empty"), (object(), "no .shape"),
                                         (3.5, "no .shape"), ("Sw<3,4,3>", "not a layout")])
def test_bad_input_is_one_line_layout_error(x, why):
    for fn in (layoutlab.html, layoutlab.svg, layoutlab.latex, layoutlab.text):
        with pytest.raises(LayoutError, match=why) as err:
            fn(x)
        assert "\n" not in str(err.value) and isinstance(err.value, ValueError)


def test_importing_layoutlab_imports_no_web_app_nor_array_packages():
    code = ("import sys, layoutlab, layoutlab.cli, layoutlab.render, layoutlab.inputs; layoutlab.html('4:1'); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'app', 'fastapi', 'jinja2', 'markupsafe', "
            "'numpy', 'torch', 'pycute', 'triton', 'starlette'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_palette_and_scripts_are_the_pages_own():
    from layoutlab import web

    root = Path(__file__).resolve().parent.parent / "static"
    css = (root / "app.css").read_text()
    assert all(f".p{k}{{background:{c}}}" in css for k, c in enumerate(web.palette()))
    script = web.script()
    assert all((root / n).read_text().replace("</script", "<\\/script") in script for n in web.SCRIPTS)


def test_ipython_formatters_and_one_line_refusals():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    assert layoutlab.register(ip)
    for obj in (A.parse("(4,8):(8,1)"), A.parse("Sw<3,4,3> o _0 o (8,64):(64,1)"),
                atoms.get("SM80_16x8x16_F32F16F16F32_TN")):
        data, _ = ip.display_formatter.format(obj)
        assert len(Cells(data["text/html"]).cells) >= A.size(obj if hasattr(obj, "shape") else obj.C)
        assert "+---" in data["text/plain"]
    ip.user_ns["layoutlab"] = layoutlab
    res = ip.run_cell("layoutlab.html('(4,8:(8,1)')")
    assert isinstance(res.error_in_exec, LayoutError)
    res = ip.run_cell("layoutlab.show('(4,8:(8,1)')")  # show displays the reason instead of raising
    assert res.error_in_exec is None


# CuTe's print_latex / print_latex_tv drawing lines (cells, grid, labels) as CuTe printed them (host program, seed 9700
# of tests/oracle/cute_print.py): a rank-1 layout is one column (CuTe appends a 1:0 mode; it was drawn as a row), a TV
# layout's cells come threads outer, values inner (they came row by row)
PRINT_LATEX_COLUMN = r"""
\node[fill=black!00] at (0,0) {0};
\node[fill=black!10] at (1,0) {12};
\node[fill=black!00] at (2,0) {24};
\node[fill=black!10] at (3,0) {4};
\node[fill=black!00] at (4,0) {16};
\node[fill=black!10] at (5,0) {28};
\node[fill=black!00] at (6,0) {8};
\node[fill=black!10] at (7,0) {20};
\node[fill=black!00] at (8,0) {32};
\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (9,1);
\node at (0,-1) {\Large{\texttt{0}}};
\node at (1,-1) {\Large{\texttt{1}}};
\node at (2,-1) {\Large{\texttt{2}}};
\node at (3,-1) {\Large{\texttt{3}}};
\node at (4,-1) {\Large{\texttt{4}}};
\node at (5,-1) {\Large{\texttt{5}}};
\node at (6,-1) {\Large{\texttt{6}}};
\node at (7,-1) {\Large{\texttt{7}}};
\node at (8,-1) {\Large{\texttt{8}}};
\node at (-1,0) {\Large{\texttt{0}}};
"""
PRINT_LATEX_TV = r"""
\node[fill={rgb,255:red,175;green,175;blue,255}] at (0,0) {\shortstack{T0 \\ V0}};
\node[fill={rgb,255:red,255;green,255;blue,175}] at (1,0) {\shortstack{T2 \\ V0}};
\node[fill={rgb,255:red,210;green,210;blue,255}] at (2,0) {\shortstack{T4 \\ V0}};
\node[fill={rgb,255:red,255;green,255;blue,210}] at (3,0) {\shortstack{T6 \\ V0}};
\node[fill={rgb,255:red,175;green,175;blue,255}] at (0,1) {\shortstack{T8 \\ V0}};
\node[fill={rgb,255:red,255;green,255;blue,175}] at (1,1) {\shortstack{T10 \\ V0}};
\node[fill={rgb,255:red,210;green,210;blue,255}] at (2,1) {\shortstack{T12 \\ V0}};
\node[fill={rgb,255:red,255;green,255;blue,210}] at (3,1) {\shortstack{T14 \\ V0}};
\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (4,2);
\node at (0,-1) {\Large{\texttt{0}}};
\node at (1,-1) {\Large{\texttt{1}}};
\node at (2,-1) {\Large{\texttt{2}}};
\node at (3,-1) {\Large{\texttt{3}}};
\node at (-1,0) {\Large{\texttt{0}}};
\node at (-1,1) {\Large{\texttt{1}}};
"""


def _drawing(tex: str) -> str:
    return "\n".join(ln for ln in tex.splitlines() if re.match(r"\\(node|draw)\b", ln) and "anchor=west" not in ln)


def test_latex_draws_what_print_latex_draws():
    assert _drawing(layoutlab.latex("((3,3)):((12,4))")) == PRINT_LATEX_COLUMN.strip()
    assert _drawing(layoutlab.latex(A.parse("((2,4,2),1):((0,1,4),4)"), tile=(4, 2))) == PRINT_LATEX_TV.strip()


def test_an_sm70_tiled_mma_draws_every_cell_with_cutes_lane_labels():
    """SM70's quad-pair atoms put a tiled MMA's 16 threads on lanes 0-7 and 16-23: CuTe's print_latex labels the
    cells by lane (tests/oracle/cute_pictures.py, seed 10820). The picture looped over thread indices 0..15 and left
    the quad-pairs' second halves (rows 4-7 of C) empty; now every cell is drawn once, labelled as CuTe labels it."""
    import algebra as A
    from algebra import atoms
    from layoutlab.inputs import panels

    tm = atoms.make_tiled_mma("SM70_8x8x4_F32F16F16F32_TN", A.parse("(1,2,1)"))
    a, b, c = panels(tm)
    assert [(c.threads[4][n], c.values[4][n]) for n in range(3)] == [(16, 0), (16, 1), (18, 0)]  # CuTe's nodes
    assert [(a.threads[4][k], a.values[4][k]) for k in range(2)] == [(16, 0), (16, 1)]
    assert all(t >= 0 for p in (a, b, c) for row in p.threads for t in row)
    assert "T16V0" in layoutlab.text(tm) and 'data-thread="16"' in layoutlab.svg(tm)
    assert tm.partition_C(A.Layout((8, 16)), 16) == (A.parse("((2,2,2),1,1):((8,2,32),0,0)"), 4)  # CuTe's get_slice(16)


def test_a_coordinate_layouts_cells_carry_data_offset_as_every_cell_does():
    """One attribute names a cell's value in the HTML and the SVG (the package docstring's promise): a coordinate
    layout's cells carry ``data-offset`` holding the coordinate print_layout prints, as an integer layout's carry
    their offsets, so ``[data-offset]`` counts the cells of any layout."""
    import random

    rng = random.Random(13701)
    for _ in range(6):
        r, c, x, y = rng.randint(1, 5), rng.randint(1, 5), rng.randint(0, 9), rng.randint(0, 9)
        text = f"ArithTuple({x},{y}) o ({r},{c}):(1@0,1@1)"
        table = layoutlab.text(text)
        want = [f"({x + i},{y + j})" for i in range(r) for j in range(c)]
        for doc in (layoutlab.html(text), layoutlab.svg(text)):
            assert "data-coord" not in doc
            got = [x["data-offset"] for x in Cells(doc).cells]
            assert got == want and all(re.search(rf"\| +{re.escape(v)} \|", table) for v in got), (text, got)
        assert [x["text"] for x in Cells(layoutlab.html(text)).cells] == want


def test_a_tiled_mma_over_the_pages_thread_cap_says_so_at_once():
    """The TV atlas refuses a tiled MMA of more than MAX_THREADS threads; the library face drew one anyway, by
    partitioning the tile once per thread: (64,64,1) atoms of m16n8k16 (131,072 threads, an A of 1024 x 16 under the
    cell cap) took two minutes. Now every panel says which cap it is over and still shows the notation."""
    import time

    from layoutlab.caps import MAX_THREADS

    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((64, 64, 1)))
    t0 = time.perf_counter()
    out = layoutlab.html(tm)
    assert time.perf_counter() - t0 < 5
    assert not Cells(out).cells and f"cap of {MAX_THREADS:,} threads" in out and str(tm.thr_layout_vmnk) in out
    assert f"cap of {MAX_THREADS:,} threads" in layoutlab.text(tm)
    with pytest.raises(LayoutError, match="threads"):
        layoutlab.latex(tm)
    big_copy = atoms.make_tiled_copy("UniversalCopy_32b", thr_layout=A.Layout((64, 32)), val_layout=A.Layout((1, 1)),
                                     element_bits=32)
    assert f"cap of {MAX_THREADS:,} threads" in layoutlab.text(big_copy)
    from app.services import kernel_path, tiled

    assert tiled.MAX_THREADS == kernel_path.MAX_THREADS == MAX_THREADS  # one cap, the pages' and the notebook's


def test_a_tv_layout_over_the_size_cap_names_that_cap_not_the_tile():
    """A TV layout of 2^21 (thread, value) pairs into a 1 x 1 tile was refused as "a 1x1 tile exceeds the render cap
    of 65,536 cells": the wrong cap. The note names the enumeration cap it is over, and the tile's own cap only
    where the tile is over it."""
    from layoutlab.caps import MAX_CELLS, MAX_SIZE

    out = layoutlab.text("(1024,2048):(0,0)", tile=(1, 1))
    assert f"size 2^21 exceeds the cap of 2^{MAX_SIZE.bit_length() - 1}" in out and "1x1 tile" not in out
    assert f"a 512x512 tile exceeds the render cap of {MAX_CELLS:,} cells" in layoutlab.text("(4,2):(1,4)",
                                                                                             tile=(512, 512))


@pytest.mark.parametrize(("shape", "stride", "why"), [
    ((4, 8), (1,), "not congruent"), ((4, (2, 2)), (1, 4), "not congruent"),
    ((10 ** 30, 4), (1, 1), "magnitude cap"), ((4, -8), (1, 4), "positive"),
    ((4, 8), (1.5, 2), "1.5 is not an integer"), ((4, 8), ("a", 1), "'a' is not an integer"),
])
def test_an_object_with_shape_and_stride_is_refused_for_its_real_reason(shape, stride, why):
    """Every refusal of a pycute-like object read "its shape and stride are not CuTe integer tuples", also where they
    are integer tuples that do not make a layout (not congruent, over the magnitude cap, a negative extent): the
    message now gives the algebra's own reason, on one line."""
    class PyCuteLike:
        def __init__(self) -> None:
            self.shape, self.stride = shape, stride

        def __str__(self) -> str:
            return f"{self.shape}:{self.stride}"

    for fn in (layoutlab.html, layoutlab.text):
        with pytest.raises(LayoutError, match=why) as err:
            fn(PyCuteLike())
        assert str(err.value).startswith("PyCuteLike: ") and "\n" not in str(err.value)


def test_arrays_that_make_no_layout_say_why():
    """An empty extent, or elements of no bytes (numpy's ``dtype([])``: strides divided by an item size of 0 raised
    ZeroDivisionError), are refused naming the array's type and the reason."""
    np = pytest.importorskip("numpy")
    with pytest.raises(LayoutError, match=r"^ndarray: shape entries must be positive integers, got 0$"):
        layoutlab.html(np.zeros((0, 4)))
    with pytest.raises(LayoutError, match=r"^ndarray: its item size is 0 bytes"):
        layoutlab.text(np.empty(3, dtype=[]))
    assert layoutlab.text(np.zeros((4, 8)).T[::2, ::-3]) == layoutlab.text("(4,2):(2,-24)")


@pytest.mark.timeout(900)  # pdflatex on 2,704 T/V nodes: 40 s on a quiet machine, minutes on a busy one
def test_a_tv_picture_at_the_latex_cap_is_refused_where_pdflatex_would_run_out_of_memory(tmp_path):
    """A T/V node (``\\shortstack{T \\\\ V}``) costs pdflatex about 780 words of main memory, a plain one about 530,
    over the format's 1.9M of 5,000,000: a 64 x 64 TV tile (4,096 cells, inside the old cap) stopped with "TeX
    capacity exceeded". T/V cells now count 3/2 against the cap; the largest TV picture under it compiles."""
    with pytest.raises(LayoutError, match="cap of 4,096"):
        layoutlab.latex("(128,32):(32,1)", tile=(64, 64))
    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((4, 2, 1)))  # 1,024 + 256 + 1,024 T/V cells
    assert layoutlab.latex(tm).count("\\shortstack{T") == 64 * 16 + 16 * 16 + 64 * 16
    tex = layoutlab.latex("(169,16):(16,1)", tile=(52, 52))  # 2,704 T/V cells: 4,056 of the cap
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    (tmp_path / "tv.tex").write_text(tex)
    r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "tv.tex"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-1500:]


def test_offsets_past_2_to_the_53_reach_the_page_exactly():
    """A JSON number past 2^53 is rounded when the page reads it: the hover card of ``(2,2):(1,2^60+1)`` showed mode 1's
    share as 1152921504606846976 (2^60), and a deferred grid built its cells from such numbers. The grid model now
    writes every integer past Number.MAX_SAFE_INTEGER as its decimal text, in the hover data and the cell data alike
    (the pages and the notebook share it), and the cards sum those with BigInt."""
    import json

    from layoutlab.grid import JS_SAFE, exact_json

    big = (1 << 60) + 1
    out = layoutlab.html(f"(2,2):(1,{big})")
    meta = json.loads(re.search(r'class="grid-meta"[^>]*>(.*?)</script>', out, flags=re.S).group(1))
    assert meta["colOff"] == [[0], [str(big)]] and meta["rowOff"] == [0, 1]
    assert [c["data-offset"] for c in Cells(out).cells] == ["0", str(big), "1", str(big + 1)]
    assert exact_json([[1, JS_SAFE], [-JS_SAFE - 1]]) == [[1, JS_SAFE], [str(-JS_SAFE - 1)]]
    plain = [[1, 2], [3]]
    assert exact_json(plain) is plain
    from layoutlab import model

    view = model.facts(A.parse(f"(64,64):(1,{big})"))
    model.fill_table(view, A.parse(f"(64,64):(1,{big})"))
    model.fill_hover(view, A.parse(f"(64,64):(1,{big})"))
    g = model.layout_grid(view, "g")  # deferred: its cells travel as JSON
    assert g.deferred
    data = json.loads(g.data_json())
    assert data["t"][1][1] == str(big + 1) and data["cm"] == 0 and data["c"][1][1] == (big + 1) % 32


@pytest.mark.parametrize("text", ["1048576:1048576", "(4,4):(2,8)", "(2,2):(2,2)", "(4,4):(-2,-8)", "1:4", "1:0",
                                  "(4,8):(8,1)", "(2,2):(1,1)", "(8,8):(64,8)", "(4,8):(2@0,1@1)", "(4,8):(F1,F4)"])
def test_injective_and_compact_as_defined_whatever_factor_of_two_the_offsets_share(text):
    """``finish`` gathers offsets that share a factor 2^k shifted right by k (a set hashed 2^20 multiples of 2^20 in
    0.9 s, over the explorer's CPU budget): the flags still say what the definition says."""
    import itertools

    from app.services.layouts import describe_layout

    view = describe_layout(text)
    flat = list(itertools.chain.from_iterable(view.offsets))
    injective = len(set(flat)) == view.size
    compact = injective and (view.size == view.cosize if view.coords is not None else sorted(flat) == list(
        range(view.size)))
    assert (view.injective, view.compact) == (injective, compact), text


class _SparseLike:
    """A torch sparse tensor as ``layoutlab`` meets it: ``.shape`` and ``.element_size`` read fine, ``.stride()``
    raises RuntimeError ("sparse tensors do not have strides")."""

    shape = (4, 8)

    def element_size(self) -> int:
        return 4

    def stride(self) -> tuple:
        raise RuntimeError("sparse tensors do not have strides")


class _ShapeRaises:
    """An object whose ``.shape`` property raises something other than AttributeError."""

    stride = (1, 4)

    @property
    def shape(self) -> tuple:
        raise NotImplementedError("shape is only known inside a kernel")


@pytest.mark.parametrize(("x", "why"), [(_SparseLike(), "RuntimeError: sparse tensors do not have strides"),
                                         (_ShapeRaises(), "NotImplementedError: shape is only known inside a kernel")])
def test_an_object_whose_shape_or_stride_raises_is_refused_in_one_line(x, why):
    """Reading a foreign object's ``.shape`` / ``.stride()`` may raise anything (a torch sparse tensor's ``stride()``
    raises RuntimeError): that is a refusal naming the type and what was raised, on one line, in every output and in
    ``show`` (a notebook cell shows it without a traceback), never the object's exception escaping."""
    for fn in (layoutlab.html, layoutlab.svg, layoutlab.latex, layoutlab.text):
        with pytest.raises(LayoutError, match=why) as err:
            fn(x)
        assert str(err.value).startswith(type(x).__name__ + ": ") and "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["ArithTuple(2,3) o (4,4):(-1@0,1@1)", "ArithTuple(1,2,3) o (2,3):(-1@0,2@1)",
                                  "ArithTuple(5,1) o (3,2):(1@1,-2@0)"])
def test_a_coordinate_tensor_with_a_negative_basis_stride_draws_origin_plus_its_layout(text):
    """``origin o L`` with a negative scaled-basis stride is a coordinate tensor like any other (CuTe evaluates
    ``origin + L(i)``; ``A.parse(text)(k)`` does): every renderer drew it as refused, "an origin of 2 entries beside
    coordinates of no entries: there is no grid to draw"."""
    x = A.parse(text)
    rows, cols = A.size(x.layout[0]), A.size(x.layout) // A.size(x.layout[0])
    want = ["(" + ",".join(map(str, x(i + rows * j))) + ")" for i in range(rows) for j in range(cols)]
    for doc in (layoutlab.html(text), layoutlab.svg(text)):
        assert [c["data-offset"] for c in Cells(doc).cells] == want, text
    table = layoutlab.text(text)
    got = [c.strip() for line in table.rstrip("\n").split("\n")[3::2] for c in line.split("|")[1:-1]]
    assert got == want
    assert all(v in layoutlab.latex(text) for v in want)


def test_the_explorer_draws_a_coordinate_tensor_with_a_negative_basis_stride_as_the_notebook_does(client):
    """The same table in ``/api/layout`` (it answered 422, "there is no grid to draw")."""
    text = "ArithTuple(2,3) o (4,4):(-1@0,1@1)"
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code == 200, r.text
    assert [v for row in r.json()["table"]["offsets"] for v in row] == [
        c["data-offset"] for c in Cells(layoutlab.html(text)).cells]
    assert r.json()["table"]["offsets"][3][0] == "(-1,3)"


def test_an_object_whose_shape_and_stride_are_numpy_integer_arrays_draws_as_those_tuples():
    """``.shape`` / ``.stride`` held as numpy integer arrays (``np.array([4, 8])``), or numpy 0-d arrays as leaves, are
    integer tuples in CuTe's sense: they were refused ("only integer scalar arrays can be converted to a scalar
    index": a 1-D array has ``__index__`` and was read as one integer)."""
    np = pytest.importorskip("numpy")

    class FromNumpy:
        def __init__(self, shape, stride) -> None:
            self.shape, self.stride = shape, stride

    assert layoutlab.text(FromNumpy(np.array([4, 8]), np.array([8, 1]))) == layoutlab.text("(4,8):(8,1)")
    assert layoutlab.text(FromNumpy((np.array(4), (np.int32(2), np.array(2))), (2, np.array([1, 8])))) == \
        layoutlab.text("(4,(2,2)):(2,(1,8))")


def test_a_shape_of_a_billion_entries_is_refused_by_the_mode_cap_before_it_is_read():
    """An object's ``.shape`` is read entry by entry: one that says it has 10^9 entries (a lazy sequence) is refused
    by the cap on modes (algebra's MAX_LEAVES) from its length, before any entry is read; nested ones count together."""
    from algebra import inttuple

    class Endless:
        def __len__(self) -> int:
            return 10 ** 9

        def __iter__(self):
            for k in range(10 ** 9):
                assert k < 5000, "read past the cap"
                yield 2

    class Huge:
        shape = Endless()
        stride = Endless()

    class Nested:  # 64 modes of 64 modes of 64: 262,144 leaves, each tuple under the cap
        shape = ((((2,) * 64,) * 64),) * 64
        stride = shape

    for x in (Huge(), Nested()):
        with pytest.raises(LayoutError, match=f"more than {inttuple.MAX_LEAVES:,} modes") as err:
            layoutlab.text(x)
        assert "\n" not in str(err.value) and str(err.value).startswith(type(x).__name__)


@pytest.mark.parametrize(("text", "want"), [("(1):(-1@0)", "(0)"), ("(1,1):(-1@0,1@1)", "(0,0)"),
                                            ("1:-1@0", "(0)"), ("(1,(1,1)):(-2@1,(1@0,-1@0))", "(0,0)")])
def test_a_coordinate_layout_of_size_one_modes_draws_its_coordinate_whatever_the_strides_sign(text, want):
    """Every cell of a coordinate layout (scaled-basis strides) is a coordinate: ``(1,1):(1@0,1@1)`` drew ``(0,0)``,
    but with a negative basis stride (``(1,1):(-1@0,1@1)``) the one cell read as the integer ``0``, in every
    renderer."""
    positive = text.replace("-", "")
    for t in (text, positive):
        assert [c["data-offset"] for c in Cells(layoutlab.html(t)).cells] == [want], t
        assert [c["data-offset"] for c in Cells(layoutlab.svg(t)).cells] == [want], t
        assert f"| {want} |" in layoutlab.text(t), t


@pytest.mark.parametrize(("text", "rows", "cols"), [
    ("(2,3):(-1@0,1@1)", ["(0,0)", "(-1,0)"], ["(0,0)", "(0,1)", "(0,2)"]),
    ("(2,(2,2)):(1@1,(-2@0,1@0))", ["(0,0)", "(0,1)"], ["(0,0)", "(-2,0)", "(1,0)", "(-1,0)"]),
])
def test_a_negative_basis_strides_hover_shares_are_coordinates_as_the_other_modes_are(text, rows, cols):
    """Each mode's share on the hover card is a coordinate of the layout's coshape, as for non-negative strides
    (``(2,3):(1@0,1@1)``: rows ``(0,0)``, ``(1,0)``): a negative basis stride's mode read ``0@0``, ``-1@0``."""
    from layoutlab.inputs import panels

    view = panels(text)[0].view
    assert view.row_off == rows
    assert [_sum(c) for c in view.col_off] == cols


def _crd(text: str) -> tuple:
    return tuple(int(v) for v in text.strip("()").split(","))


def _sum(parts: list[str]) -> str:
    """The column's share: the sum of its column modes' coordinates."""
    total = [sum(v) for v in zip(*map(_crd, parts), strict=True)]
    return "(" + ",".join(map(str, total)) + ")"


@pytest.mark.parametrize(("spelled", "cute"), [
    ("S<3,4,3> o 0 o (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),            # the CuTe DSL's print
    ("SW_3_4_3 o 0 o (8, 64):(64, 1)", "Sw<3,4,3> o 0 o (8,64):(64,1)"),          # pycute's print
    ("SW_1_1_-1 o 0 o (4, 4):(4, 1)", "Sw<1,1,-1> o 0 o (4,4):(4,1)"),            # pycute, a negative shift
    ("(16,4):(4,1) o -8 o S<1,2,4>", "(16,4):(4,1) o -8 o Sw<1,2,4>"),            # a swizzle as the inner part
    ("(8,):(2,)", "(8):(2)"),                                                      # pycute's print of a rank-1 tuple
    ("SW_2_1_2 o 0 o (4,):(1,)", "Sw<2,1,2> o 0 o (4):(1)")])
def test_the_dsls_and_pycutes_printed_forms_are_read_by_the_one_parser_that_the_pages_use(client, spelled, cute):
    """The CuTe DSL prints a swizzle ``S<B,M,S>`` and pycute ``SW_B_M_S`` (its shift may be negative) and a rank-1
    tuple ``(8,)``: the notebook read the first two and the pages refused them all ("unexpected character 'S'"). One
    parser (algebra's notation) reads them, so the explorer, the API, the CLI's ops and the notebook agree."""
    assert str(A.parse(spelled)) == str(A.parse(cute))
    r, want = (client.post("/api/layout", json={"layout": t}) for t in (spelled, cute))
    assert (r.status_code, r.json()) == (want.status_code, want.json())
    if spelled.startswith("(16,4)"):  # a layout after a swizzle has no grid: either spelling says so in one line
        assert r.status_code == 422 and "no grid to draw" in r.json()["detail"]
        with pytest.raises(LayoutError, match="no grid to draw"):
            layoutlab.text(spelled)
    else:
        assert r.status_code == 200, r.text
        assert layoutlab.text(spelled) == layoutlab.text(cute)


def test_pycute_composed_layouts_draw_what_pycute_computes():
    """A pycute ComposedLayout whose swizzle shifts left (``Swizzle(1,1,-1)``) or whose inner layout has a rank-1
    tuple shape (``Layout((4,), (1,))``, printed ``(4,):(1,)``) was refused; each cell is pycute's own value."""
    pycute = pytest.importorskip("pycute")
    for x in (pycute.ComposedLayout(pycute.Swizzle(1, 1, -1), 0, pycute.Layout((4, 4), (4, 1))),
              pycute.ComposedLayout(pycute.Swizzle(2, 1, 2), 0, pycute.Layout((4,), (1,))),
              pycute.ComposedLayout(pycute.Swizzle(2, 1, 2), 8, pycute.Layout((4, (2, 2)), (1, (4, 16))))):
        shape = x.layoutA.shape
        rows = pycute.product(shape[0]) if isinstance(shape, tuple) and len(shape) > 1 else 1
        n = pycute.size(x.layoutA)
        want = [str(x(i + rows * j)) for i in range(rows) for j in range(n // rows)]
        for out in (layoutlab.html(x), layoutlab.svg(x)):
            assert [c["data-offset"] for c in Cells(out).cells] == want, str(x)


def test_a_shape_whose_length_understates_its_entries_is_refused_not_read_forever():
    """``len(shape)`` says 2 but iterating it never ends: it was read until memory ran out (a hang in a notebook
    cell). Entries are read up to the length the object claims, and a mismatch is refused in one line."""

    class Liar:
        def __len__(self) -> int:
            return 2

        def __iter__(self):
            for k in range(10 ** 12):  # endless for a reader; the test stops one that reads on
                assert k < 1000, "read past the length it claims"
                yield 4

    class Obj:
        shape = Liar()
        stride = (1, 4)

    with pytest.raises(LayoutError) as err:
        layoutlab.text(Obj())
    assert "\n" not in str(err.value) and "claims 2 entries" in str(err.value), err.value


@pytest.mark.parametrize(("layout_tv", "tiler"), [("(4,2):(1,1)", "5"), ("(4,(2,2)):(2,(1,4))", "4,3"),
                                                   ("((2,2),3):((3,1),1)", "8"), ("(4,2):(1,4)", "5")])
def test_the_tv_atlas_labels_a_tiled_copys_shared_cells_as_cute_and_the_notebook_do(client, layout_tv, tiler):
    """Where two (thread, value) pairs of a tiled copy claim one element, CuTe's print_latex_copy labels it by the first
    pair with threads outer and values inner, as ``layoutlab`` does (T0V1 of ``(4,2):(1,1)`` at element 1); the TV
    atlas and ``/api/tiled`` walked the pairs in 1-D order (values outer) and labelled it T1V0. Pairs past the tiler
    (``(4,2):(1,4)`` over 5) are left out by both, and named in the picture's title (``layoutlab`` refused it)."""
    tv = A.parse(layout_tv)
    dims = tuple(int(x) for x in tiler.split(","))
    rows, cols = (1, dims[0]) if len(dims) == 1 else dims
    nthr, flat = A.size(tv[0]), A.offsets(tv)
    want = [[None] * cols for _ in range(rows)]
    for t in range(nthr):  # print_latex_copy: for tid, for vid, the first to fill (m, n) names it
        for v in range(A.size(tv) // nthr):
            e = flat[t + nthr * v]
            if e < rows * cols and want[e % rows][e // rows] is None:
                want[e % rows][e // rows] = (t, v)
    r = client.post("/api/tiled", json={"atom": "UniversalCopy_16b", "layout_tv": layout_tv, "tiler": tiler})
    assert r.status_code == 200, r.text
    got = [[(t, v) if t >= 0 else None for t, v in zip(tr, vr, strict=True)]
           for tr, vr in zip(r.json()["threads"], r.json()["values"], strict=True)]
    assert got == want
    tc = atoms.make_tiled_copy("UniversalCopy_16b", layout_tv=tv, tiler=dims, element_bits=16)
    past = sum(1 for e in flat if e >= rows * cols)
    assert (f"{past} (thread, value) pair" in layoutlab.text(tc)) == bool(past)
    cells = Cells(layoutlab.html(tc)).cells[:rows * cols]  # the S panel (a universal copy's S is its TV layout)
    assert [(int(c["data-thread"]), int(c["data-value"])) if "data-thread" in c else None for c in cells] == \
        [x for row in want for x in row]


@pytest.mark.parametrize("text", ["(?,8):(8,1)", "(4,8):(?{div=8},1)", "S<3,4,3> o 0 o ((8,?),64):((64,?),1)"])
def test_a_dynamic_value_as_the_dsl_prints_it_is_refused_as_one(client, text):
    """The CuTe DSL prints a value it knows only at run time as ``?`` (``?{div=8}`` with its divisibility): the reason
    says so and asks for the number, in the notebook, the CLI and the pages alike ("unexpected character '?'")."""
    with pytest.raises(LayoutError, match="known only at run time") as err:
        layoutlab.text(text)
    assert "\n" not in str(err.value)
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code == 422 and "known only at run time" in r.json()["detail"]


@pytest.mark.parametrize("text", ["gmem_ptr[16b](0x7f8a00000000) o (4,8):(8,1)",
                                  "rmem_ptr[32b](0x7ffd1c) o (4,8):(8,1)", "ptr[16b](0x7f8a00000000) o (4,8):(8,1)",
                                  "smem_ptr[16b](unset) o (4,8):(8,1)"])
def test_cutes_print_of_a_tensor_draws_its_layout(client, text):
    """``print(tensor)`` in CuTe C++ writes its pointer before its layout (``gmem_ptr[16b](0x...) o (4,8):(8,1)``): the
    layout is drawn, as for the shared-memory pointer; a global or register pointer was refused ("unexpected
    character 'g'")."""
    assert str(A.parse(text)) == "(4,8):(8,1)"
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code == 200 and r.json()["layout"] == "(4,8):(8,1)", r.text
    assert layoutlab.text(text) == layoutlab.text("(4,8):(8,1)")
