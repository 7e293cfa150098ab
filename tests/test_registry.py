"""The op table (algebra/teach/registry.py): every op's examples run through the API, the workbench page, explain and
codegen; the four read the same op set; the workbench's op switching drops stale arguments."""

from __future__ import annotations

import re
import types
from html import unescape

import pytest

import algebra as A
from algebra import registry
from algebra.teach.codegen import op_to_cpp, op_to_dsl
from algebra.teach.explain import derive, explain_ops

EXAMPLES = [(op.name, ex.args) for op in registry.OPS.values() for ex in op.examples]


def _expected(name: str, args: tuple[str, ...]) -> str:
    """The op's result computed directly (no recorder), in the API's notation."""
    op = registry.get(name)
    res = op.fn(*registry.parse_args(op, list(args)))
    if op.result == "tile":
        return str(res[0])
    return A.inttuple.to_str(res) if isinstance(res, tuple) else str(res)


def test_the_exported_ops_are_all_in_the_table():
    wanted = {"coalesce", "filter", "filter_zeros", "composition", "complement", "right_inverse", "left_inverse",
              "max_common_layout", "max_common_vector", "nullspace", "logical_divide", "zipped_divide",
              "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product", "flat_product",
              "blocked_product", "raked_product", "tile_to_shape", "local_tile", "local_partition", "tile_unzip",
              "upcast", "downcast", "recast_layout"}
    assert wanted <= set(registry.names())
    for name in wanted:
        assert registry.get(name).fn is getattr(A, name), name
    assert any(len(ex.args) == 2 for ex in registry.get("coalesce").examples)  # coalesce by mode has its chip


def test_registry_explain_and_codegen_cover_the_same_ops():
    assert explain_ops() == registry.names()
    assert A.explain_ops() == registry.names()
    for name, args in EXAMPLES:
        parsed = registry.parse_args(registry.get(name), list(args))
        assert op_to_cpp(name, *parsed).strip(), name
        assert op_to_dsl(name, *parsed).strip(), name
    with pytest.raises(A.LayoutError, match="no code emitter"):
        op_to_cpp("no_such_op", A.Layout(4))
    with pytest.raises(A.LayoutError, match="unknown op"):
        A.explain("no_such_op", A.Layout(4))


def test_explain_is_a_module_and_a_function():
    import algebra.teach.explain

    assert isinstance(algebra.explain, types.ModuleType)
    assert A.explain is algebra.explain
    steps = A.explain("composition", A.parse("(6,2):(8,2)"), A.parse("(4,3):(3,1)"))
    assert steps[-1]["layout"] == "((2,2),3):((24,2),8)"
    assert algebra.explain.explain("coalesce", "(4,8):(1,4)")[-1]["layout"] == "32:1"


@pytest.mark.parametrize(("name", "args"), EXAMPLES)
def test_every_example_runs_through_explain_the_api_and_the_page(client, name, args):
    want = _expected(name, args)
    result, steps = derive(name, *args)
    assert steps and steps[-1]["depth"] == 0 and steps[-1]["kind"] == "result"
    assert all(s["kind"] != "fallback" for s in steps)
    r = client.post("/api/algebra", json={"op": name, "args": list(args)})
    assert r.status_code == 200, r.text
    assert r.json()["result"] == want
    assert r.json()["steps"] == [{"text": s["text"], "layout": s["layout"]} for s in steps]
    params = {"op": name, **dict(zip("abc", args, strict=False))}
    page = client.get("/algebra", params=params)
    assert page.status_code == 200
    assert 'role="alert"' not in page.text, page.text[page.text.find('role="alert"') - 200:][:600]
    got = re.search(r'id="op-result">([^<]*)<', page.text)
    assert got and unescape(got.group(1)) == want


def test_permalink_without_b_uses_only_the_arguments_given(client):
    r = client.get("/algebra", params={"op": "right_inverse", "a": "(4,8):(8,1)"})
    assert r.status_code == 200 and 'id="op-result">(8,4):(4,1)<' in r.text
    assert "argument(s)" not in r.text
    r = client.get("/algebra", params={"op": "left_inverse"})  # no argument at all: the op's example
    assert 'id="op-result">(8,4):(4,1)<' in r.text
    assert 'id="a-input"' in r.text and 'id="b-input"' not in r.text  # one field for a one-argument op


@pytest.mark.parametrize("new_op", ["blocked_product", "complement", "right_inverse", "coalesce", "local_tile"])
def test_switching_the_op_drops_the_old_arguments(client, new_op):
    old = {"a": "(6,2):(8,2)", "b": "(4,3):(3,1)"}
    r = client.get("/algebra", params={"op": new_op, "shown": "composition", **old},
                   headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert r.headers["HX-Retarget"] == "#workbench" and r.headers["HX-Reswap"] == "outerHTML"
    ex = registry.get(new_op).example.args
    assert r.headers["HX-Replace-Url"].startswith(f"/algebra?op={new_op}")
    assert 'id="op-result">' in r.text and 'role="alert"' not in r.text
    assert f'value="{ex[0]}"' in unescape(r.text) or f'value="{ex[0]}"' in r.text
    assert 'id="algebra-form"' in r.text  # the form is re-drawn with the new op's fields
    same = client.get("/algebra", params={"op": "composition", "shown": "composition", **old},
                      headers={"HX-Request": "true"})
    assert "HX-Retarget" not in same.headers and 'id="algebra-form"' not in same.text  # typing: only the result


def test_coalesce_profile_is_its_own_labelled_argument(client):
    r = client.get("/algebra", params={"op": "coalesce", "a": "(2,(1,6)):(1,(6,2))"})
    assert 'id="op-result">12:1<' in r.text and "<span>profile <span" in r.text
    by_mode = client.get("/algebra", params={"op": "coalesce", "a": "(2,(1,6)):(1,(6,2))", "b": "(1,1)"})
    assert 'id="op-result">(2,6):(1,2)<' in by_mode.text
    layout_as_profile = client.post("/api/algebra", json={"op": "coalesce", "args": ["(4,8):(1,4)", "(4,3):(3,1)"]})
    assert layout_as_profile.status_code == 422 and "profile" in layout_as_profile.json()["detail"]


def test_a_refusal_is_shown_as_a_lesson(client, read_grid):
    r = client.get("/algebra", params={"op": "composition", "a": "(6,2):(8,2)", "b": "4:4"})
    assert r.status_code == 200
    if 'id="refusal"' not in r.text:
        pytest.skip("composition does not refuse this case yet")
    assert 'id="refusal-layout">(2,2):(32,2)<' in r.text
    assert "A(B(2)) = A(8) = 18" in unescape(r.text)
    outlined_a = [g.text[i][j] for g in [read_grid(r.text, "grid-a")] for i in range(g.rows) for j in range(g.cols)
                  if "acc" in g.classes[i][j]]
    outlined_b = [g.text[i][j] for g in [read_grid(r.text, "grid-b")] for i in range(g.rows) for j in range(g.cols)
                  if "acc" in g.classes[i][j]]
    assert outlined_a == ["18"] and outlined_b == ["8"]  # the counterexample, in both grids
    divide = client.get("/algebra", params={"op": "logical_divide", "a": "(6,2):(8,2)", "b": "4:4"})
    assert 'id="refusal"' in divide.text and "Outlined below" not in divide.text  # its B is not the tiler
    assert 'id="refusal-inner"' in divide.text and 'id="refusal-inner"' not in r.text
    assert "acc" not in read_grid(divide.text, "grid-a").classes[2][1]
    api = client.post("/api/algebra", json={"op": "composition", "args": ["(6,2):(8,2)", "4:4"]})
    assert api.status_code == 422 and "CuTe would print (2,2):(32,2)" in api.json()["detail"]


@pytest.mark.parametrize("op,a,b,note,inner", [
    ("composition", "(6,2):(8,2)", "4:4", "is not the function A o B", False),
    ("logical_divide", "(6,2):(8,2)", "4:4", "is not the function A o B", True),
    ("left_inverse", "(6,3):(2,1)", "", "breaks the condition above", False),
    ("complement", "(8,24):(9,97)", "2298", "breaks the condition above", False),
    ("right_inverse", "Sw<2,0,-7> o 4:1", "", "breaks the condition above", False),
    ("left_inverse", "Sw<3,3,3> o 0 o (3,341,2049):(1,3,1023)", "", "could not be confirmed", False),
])
def test_a_refusals_note_names_its_kind(client, op, a, b, note, inner):
    """The note under CuTe's print says what is wrong with it: a composition's print is not A o B, another op's
    breaks its own condition (not "built on that composition"), one over the point cap is not confirmed; CuTe's print
    is split out whole, a swizzled one included."""
    r = client.get("/algebra", params={"op": op, "a": a, "b": b})
    text = unescape(r.text)
    assert r.status_code == 200 and 'id="refusal-layout"' in r.text, text[:300]
    m = re.search(r'id="refusal-note">(.*?)</p>', text, re.S)
    assert m and note in " ".join(m[1].split()), m and m[1]
    assert ('id="refusal-inner"' in r.text) == inner
    why = re.search(r'id="refusal-why">(.*?)</p>', text, re.S)[1]
    assert "CuTe would print" not in why and not why.endswith("but.")


def test_malformed_input_is_an_error_not_a_lesson(client):
    r = client.get("/algebra", params={"op": "composition", "a": "(4,8", "b": "2:1"})
    assert 'role="alert"' in r.text and 'id="refusal"' not in r.text
    r = client.get("/algebra", params={"op": "composition", "a": "(4,8):(1,4)", "b": ""})
    assert "B: empty input; e.g. (4,3):(3,1)" in r.text
    r = client.get("/algebra", params={"op": "no_such_op", "a": "4:1"})
    assert r.status_code == 200 and "op: &#39;no_such_op&#39; is not one of" in r.text  # app.page_query


def test_the_op_listing_is_the_table(client):
    ops = client.get("/api/algebra/ops").json()
    assert [o["op"] for o in ops] == registry.names()
    for o in ops:
        op = registry.get(o["op"])
        assert o["arg_names"] == [a.name for a in op.args] and o["gloss"] == op.gloss
        assert [e["args"] for e in o["examples"]] == [list(e.args) for e in op.examples]


@pytest.mark.parametrize(("op", "args"), [("idx2crd", {"a": "7", "b": "(3,(2,3))"}),
                                          ("crd2idx", {"a": "(1,(0,1))", "b": "(3,(2,3))"})])
def test_coordinate_ops_draw_the_shape_with_the_index_outlined(client, read_grid, op, args):
    r = client.get("/algebra", params={"op": op, **args})
    g = read_grid(r.text, "grid-a")
    outlined = [g.text[i][j] for i in range(g.rows) for j in range(g.cols) if "acc" in g.classes[i][j]]
    assert outlined == ["7"]


@pytest.mark.parametrize(("text", "keep", "said"), [
    ("(1,", True, "'(1,' ends early"), ("(1,2", True, "expected ',' or ')' in '(1,2'"),
    ("(,1)", True, "unexpected ',' in '(,1)'"), ("()", False, "unexpected ')' in '()'"),
    ("(1)2", True, "unexpected text after '(1)2'"), ("(_4)", True, "expected ',' or ')' in '(_4)'"),
    ("__3", True, "unexpected text after '__3'"), ("(1 2)", False, "expected ',' or ')' in '(1 2)'"),
    ("(1, x)", True, "unexpected ' x)' in '(1, x)'; write e.g. (1,2) or (1,_)"),
    ("(1, x)", False, "unexpected ' x)' in '(1, x)'; write e.g. (1,2)"),
    ("(1,_)", False, "'_' has no meaning here; write integers, e.g. (1,2)"), ("", True, "empty input")])
def test_tuple_arguments_are_read_by_notation_and_refused_in_the_tables_words(text, keep, said):
    """Shapes, profiles and coordinates are read by notation's parser; where it stops, the words are the op table's
    (the texts the API has always answered with), and ``pos`` says where."""
    with pytest.raises(A.LayoutError) as err:
        registry.parse_tuple(text, "tile coordinate", keep)
    assert str(err.value) == f"tile coordinate: {said}" and err.value.pos is not None
    assert registry.parse_tuple("(_ ,(1,_))", "c", True) == (None, (1, None)) and registry.parse_tuple("-3", "s") == -3


def test_tuple_arguments_nested_past_the_cores_depth_are_refused_as_layouts_are():
    deep = "(" * 25 + "1" + ")" * 25
    for kind in ("shape", "profile", "coord"):
        with pytest.raises(A.LayoutError, match=r"^w: nested deeper than 24 levels$"):
            registry.parse_value(deep, kind, "w")
    with pytest.raises(A.LayoutError, match=r"^A: nested deeper than 24 levels$"):
        registry.parse_value("(" * 25 + "1" + ")" * 25 + ":1", "layout", "A")
