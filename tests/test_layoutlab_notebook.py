"""The tour notebook, executed with a real Jupyter kernel: every output is drawn (no error, no traceback), holds one
cell element per layout element with algebra's offsets, TV labels as CuTe's, and a pycute-like object and a numpy
array draw the grid the same layout draws as text."""

from __future__ import annotations

import algebra as A
from algebra import atoms
from tests.notebook_tour import cell, executed, html_of, run_cells
from tests.test_layoutlab import Cells, cute_tv_labels, offsets_by_row


def test_every_cell_runs_without_an_error_or_traceback():
    nb = executed()
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        for o in c.outputs:
            assert o.output_type != "error", (c.source, o.get("evalue"))
            text = o.get("text", "") + o.get("data", {}).get("text/plain", "") + o.get("data", {}).get("text/html", "")
            assert "Traceback" not in text, c.source


def test_a_bare_layout_draws_itself_with_algebras_offsets():
    nb = executed()
    c = cell(nb, 'A.parse("(4,8):(8,1)")')
    assert c.outputs[0].output_type == "execute_result" and "text/html" in c.outputs[0].data
    cells = Cells(html_of(c)).cells
    want = offsets_by_row(A.parse("(4,8):(8,1)"))
    assert [int(x["data-offset"]) for x in cells] == [int(x["text"]) for x in cells] == want
    assert "+----+" in c.outputs[0].data["text/plain"]  # the text fallback: print_layout's table
    for needle, text in [("((_2,_2),(_2,_4))", "((2,2),(2,4)):((1,4),(2,8))"),
                         ("Sw<3,4,3>", "Sw<3,4,3> o 0 o (8,64):(64,1)")]:
        cells = Cells(html_of(cell(nb, needle))).cells
        assert [int(x["data-offset"]) for x in cells] == offsets_by_row(A.parse(text))


def test_tv_pictures_label_as_cute():
    nb = executed()
    mma = atoms.get("SM80_16x8x16_F32F16F16F32_TN")
    cells = Cells(html_of(cell(nb, 'atoms.get("SM80_16x8x16'))).cells
    k = 0
    for op, (rows, cols) in (("A", (16, 16)), ("B", (8, 16)), ("C", (16, 8))):
        want = cute_tv_labels(mma.operand(op), rows, cols)
        got = [x["text"] for x in cells[k:k + rows * cols]]
        assert got == [want[(i, j)] for i in range(rows) for j in range(cols)]
        k += rows * cols
    assert k == len(cells)
    tv = Cells(html_of(cell(nb, "tile=(16, 8)"))).cells
    want = cute_tv_labels(A.parse("((4,8),(2,2)):((32,1),(16,8))"), 16, 8)
    assert [x["text"] for x in tv] == [want[(i, j)] for i in range(16) for j in range(8)]


def test_pycute_and_numpy_draw_the_grid_of_the_same_text():
    nb = executed()

    def grid(needle):
        return [(x["data-offset"], x["text"]) for x in Cells(html_of(cell(nb, needle))).cells]

    text = grid('A.parse("(4,8):(8,1)")')
    assert len(text) == 32
    assert grid("PyCuteLayout((4, 8), (8, 1))") == text
    assert grid("np.zeros((4, 8)") == text


def test_big_and_bad_input_say_why():
    nb = executed()
    big = html_of(cell(nb, "(1024,1024)"))
    assert "(1024,1024):(1024,1)" in big and "render cap" in big and not Cells(big).cells
    bad = cell(nb, '"(4,8:(8,1)"')
    assert "expected" in html_of(bad) and "llab-error" in html_of(bad)
    blocked = Cells(html_of(cell(nb, "#ttg.blocked"))).cells
    assert len(blocked) == 128 and blocked[0]["text"] == "T0V0"
    assert "+----+" in "".join(o.get("text", "") for o in cell(nb, "layoutlab.text(").outputs)


def test_a_bare_coordinate_tensor_and_awkward_layouts_draw_themselves():
    """Each bare object as a cell's last line: a coordinate tensor draws its coordinates (as layoutlab.text prints
    them), negative and zero strides their offsets, and a layout over a cap says why, never a traceback."""
    coord = "ArithTuple(2,3) o (4,4):(1@0,1@1)"
    nb = run_cells(["import layoutlab\nimport algebra as A", f"A.parse({coord!r})", 'A.parse("(2,3):(-3,0)")',
                    "A.Layout((1 << 40, 2), (1, 1 << 40))", "A.Layout((2, (2, (2, (2, (2, (2, (2, 2))))))))"])
    outs = [c.outputs for c in nb.cells[1:]]
    assert all(len(o) == 1 and o[0].output_type == "execute_result" and "text/html" in o[0].data for o in outs)
    html = [o[0].data["text/html"] for o in outs]
    coords = [(x["data-offset"], x["text"]) for x in Cells(html[0]).cells]  # one attribute for every cell's value
    import layoutlab

    table = layoutlab.text(coord)
    assert len(coords) == 16 and all(a == b and f"| {a} |" in table for a, b in coords)
    assert coords[0][0] == "(2,3)" and coords[-1][0] == "(5,6)"
    assert "+-------+" in outs[0][0].data["text/plain"]
    assert [int(x["data-offset"]) for x in Cells(html[1]).cells] == offsets_by_row(A.parse("(2,3):(-3,0)"))
    assert "render cap" in html[2] and not Cells(html[2]).cells
    assert "depth 7 exceeds the cap" in html[3] and "Traceback" not in html[3]


def test_bare_pycute_objects_draw_themselves_as_html_and_as_text():
    """pycute's Layout and ComposedLayout (the nvidia-cutlass wheel) as a cell's last line: both formatters, each the
    grid / table of the same layout typed as text."""
    import pytest

    pytest.importorskip("pycute")
    import layoutlab

    nb = run_cells(["import layoutlab\nfrom pycute import ComposedLayout, Layout, Swizzle",
                    "ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))",
                    "Layout((4, (2, 4)), (2, (1, 8)))"])
    for c, text in zip(nb.cells[1:], ("Sw<3,4,3> o _0 o (8,64):(64,1)", "(4,(2,4)):(2,(1,8))"), strict=True):
        assert len(c.outputs) == 1 and c.outputs[0].output_type == "execute_result", c.source
        data = c.outputs[0].data
        assert data["text/plain"] == layoutlab.text(text), c.source
        cells = [int(x["data-offset"]) for x in Cells(data["text/html"]).cells]
        assert cells == offsets_by_row(A.parse(text))
