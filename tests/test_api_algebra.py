"""POST /api/algebra: every op, tilers in both spellings, derivation steps, refusals."""

from __future__ import annotations

import pytest

import algebra as A


def run(client, op, *args):
    return client.post("/api/algebra", json={"op": op, "args": list(args)})


def test_contract_composition_example(client):
    j = run(client, "composition", "(6,2):(8,2)", "(4,3):(3,1)").json()
    assert j["result"] == "((2,2),3):((24,2),8)"
    assert isinstance(j["steps"], list)


def test_tiler_spellings_agree(client):
    a = run(client, "composition", "(12,(4,8)):(59,(13,1))", "<3:4, 8:2>").json()["result"]
    b = run(client, "composition", "(12,(4,8)):(59,(13,1))", '["3:4", "8:2"]').json()["result"]
    assert a == b == "(3,(2,4)):(236,(26,1))"


@pytest.mark.parametrize(("op", "args", "expected"), [
    ("complement", ["(2,2):(1,6)", "24"], "(3,2):(2,12)"),
    ("coalesce", ["(2,(1,6)):(1,(6,2))"], "12:1"),
    ("logical_divide", ["(4,2,3):(2,1,8)", "4:2"], "((2,2),(2,3)):((4,1),(2,8))"),
    ("zipped_divide", ["(8,8):(1,8)", "<2:1, 4:1>"], "((2,4),(4,2)):((1,8),(2,32))"),
    ("blocked_product", ["(2,2):(1,2)", "(3,4):(1,3)"], "((2,3),(2,4)):((1,4),(2,12))"),
])
def test_ops_match_the_algebra(client, op, args, expected):
    r = run(client, op, *args)
    assert r.status_code == 200, r.text
    assert r.json()["result"] == expected
    assert r.json()["result"] == A.to_str(getattr(A, op)(*[A.parse_arg(x) for x in args]))


def test_every_listed_op_runs(client):
    ops = client.get("/api/algebra/ops").json()
    assert {"composition", "complement", "logical_divide", "raked_product"} <= {o["op"] for o in ops}
    for o in ops:
        args = ["(4,8):(1,4)", "2:1"][: sum(1 for k in o["args"] if not k.endswith("?"))]
        if o["op"] in ("complement",):
            args = ["(4,8):(1,4)", "64"]
        r = run(client, o["op"], *args)
        assert r.status_code in (200, 422), (o["op"], r.text)


def test_steps_come_from_explain(client):
    from algebra.teach.explain import explain

    j = run(client, "composition", "(6,2):(8,2)", "(4,3):(3,1)").json()
    assert j["steps"] and all(isinstance(s["text"], str) and s["text"] for s in j["steps"])
    assert j["steps"] == [{"text": s["text"], "layout": None if s.get("layout") is None else str(s["layout"])}
                          for s in explain("composition", A.parse("(6,2):(8,2)"), A.parse("(4,3):(3,1)"))]


@pytest.mark.parametrize(("op", "args", "needle"), [
    ("nope", ["1:1"], "unknown op"),
    ("composition", ["(4,8):(1,4)"], "argument"),
    ("composition", ["(4,8", "2:1"], "A"),
    ("complement", ["(4,8):(1,4)", "x"], "integer"),
    ("composition", ["(4,8):(1,4)", "<>"], "tiler"),
    ("composition", ["(4,8):(1,4)", "[1,"], "JSON"),
])
def test_bad_input_is_422(client, op, args, needle):
    r = run(client, op, *args)
    assert r.status_code == 422
    assert needle in r.json()["detail"]


def test_refusal_carries_the_reason(client):
    r = run(client, "composition", "(4,8):(8,1)", "(3,5):(5,1)")
    if r.status_code == 200:  # CuTe accepts some non-divisible cases; then the result must be a layout
        assert A.parse(r.json()["result"])
    else:
        assert r.status_code == 422 and len(r.json()["detail"]) > 10


def test_ops_at_any_size_and_the_int_cap(client):
    """Ops are symbolic: a 2^22-element operand is an ordinary input (CONTRACT §5); sizes past 2^40 are refused."""
    r = run(client, "coalesce", "(2048,2048):(1,2048)")
    assert r.status_code == 200 and r.json()["result"] == "4194304:1"
    big = run(client, "coalesce", "(1048576,2097152):(1,1048576)")
    assert big.status_code == 422 and "2^40" in big.json()["detail"]


def test_tiler_as_json_list_with_ints_and_null(client) -> None:
    """CONTRACT §2: a tiler may be a JSON list of layouts (ints and null keep their CuTe meaning)."""
    as_list = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(1,8)", ["2:1", "4:2"]]})
    as_text = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(1,8)", "<2:1, 4:2>"]})
    assert as_list.status_code == 200 and as_list.json()["result"] == as_text.json()["result"]
    keep = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(1,8)", ["2:1", None]]})
    assert keep.json()["result"] == "((2,4),8):((1,2),8)" and keep.json()["args"][1] == "<2:1, _>"
    ints = client.post("/api/algebra", json={"op": "complement", "args": ["4:2", 24]})
    assert ints.json()["result"] == "(2,3):(1,8)"
    bad = client.post("/api/algebra", json={"op": "complement", "args": ["4:2", [[[]]]]})
    assert bad.status_code == 422 and isinstance(bad.json()["detail"], str)


@pytest.mark.parametrize(("a", "tiler", "coord"), [("(16,16):(16,1)", "<4:1, 4:1>", "(1,2)"),
                                                   ("(8,(4,2)):(1,(8,64))", "<2:1, 4:1>", [3, 1]),
                                                   ("(12,8):(1,12)", "<3:1, 2:1>", "(2,3)")])
def test_local_tile_layout_and_offset(client, a, tiler, coord):
    r = client.post("/api/algebra", json={"op": "local_tile", "args": [a, tiler, coord]})
    assert r.status_code == 200, r.text
    j = r.json()
    L = A.parse(a)
    crd = tuple(coord) if isinstance(coord, list) else tuple(int(x) for x in coord.strip("()").split(","))
    tile = [int(t.split(":")[0]) for t in tiler.strip("<>").split(",")]
    R = A.parse(j["result"])
    # element (u, v) of the tile is element (crd0 * t0 + u, crd1 * t1 + v) of A
    for u in range(tile[0]):
        for v in range(tile[1]):
            assert j["offset"] + R((u, v)) == L((crd[0] * tile[0] + u, crd[1] * tile[1] + v))
    assert j["steps"] and j["args"][2] == "(" + ",".join(map(str, crd)) + ")"


def test_local_partition_layout_and_offset(client):
    r = client.post("/api/algebra", json={"op": "local_partition", "args": ["(16,32):(32,1)", "(4,8):(8,1)", "5"]})
    assert r.status_code == 200, r.text
    j = r.json()
    L, R = A.parse("(16,32):(32,1)"), A.parse(j["result"])
    thr = A.parse("(4,8):(8,1)")
    ti, tj = next((i, k) for i in range(4) for k in range(8) if thr((i, k)) == 5)  # thread 5 sits at (0, 5)
    owned = sorted(L((ti + 4 * p, tj + 8 * q)) for p in range(4) for q in range(4))
    assert sorted(j["offset"] + R(k) for k in range(A.size(R))) == owned


@pytest.mark.parametrize(("args", "needle"), [(["(8,8):(8,1)", "<2:1, 4:1>", "(1,"], "tile coordinate"),
                                              (["(8,8):(8,1)", "<2:1, 4:1>", "(x)"], "tile coordinate"),
                                              (["(8,8):(8,1)", "(4,2):(2,1)", "1.5"], "thread index"),
                                              (["(8,8):(8,1)", "<2:1, 4:1>"], "takes 3")])
def test_local_ops_bad_input(client, args, needle):
    r = client.post("/api/algebra", json={"op": "local_tile" if "<" in args[1] else "local_partition", "args": args})
    assert r.status_code == 422 and needle in r.json()["detail"]


def test_workbench_local_tile_outlines_the_tile_in_a(client, read_grid):
    r = client.get("/algebra", params={"op": "local_tile", "a": "(8,8):(8,1)", "b": "<2:1, 4:1>", "c": "(1,1)"},
                   headers={"HX-Request": "true"})
    assert r.status_code == 200 and 'id="op-offset">20<' in r.text
    g = read_grid(r.text, "grid-a")
    outlined = sorted(int(g.text[i][j]) for i in range(8) for j in range(8) if "acc" in g.classes[i][j])
    assert outlined == sorted(20 + 8 * u + v for u in range(2) for v in range(4))
    assert '"add":20' in r.text  # result cells light A's cells at offset + R(k)
    assert "local_tile(tensor" in r.text and "cute.local_tile(" in r.text  # copy as C++ / DSL


@pytest.mark.parametrize(("op", "args", "result", "offset"), [
    ("local_tile", ["(4,8):(1@1,1@0)", "<2:1, 4:1>", "(1,1)"], "(2,4):(1@1,1@0)", "(4,2)"),
    ("local_partition", ["(4,8):(1@1,1@0)", "(2,2):(2,1)", "1"], "(2,4):(2@1,2@0)", "(1,0)"),
])
def test_tile_of_a_coordinate_layout_answers_its_coordinate_offset(client, op, args, result, offset):
    """A coordinate layout's tile starts at a coordinate, not an int: the API and the workbench page answer it (the
    response model and the grid's link data took only ints: a 500)."""
    r = run(client, op, *args)
    assert r.status_code == 200, r.text
    assert (r.json()["result"], r.json()["offset"]) == (result, offset)
    page = client.get("/algebra", params={"op": op, "a": args[0], "b": args[1], "c": args[2]})
    assert page.status_code == 200
    assert f"first element at offset {offset} of A" in page.text


@pytest.mark.parametrize(("op", "args", "field"), [
    ("zipped_divide", ["Sw<3,3,3>", "<2:1, 4:1>"], "A"),
    ("nullspace", ["Sw<3,3,3>"], "A"),
    ("local_tile", ["Sw<3,3,3>", "<2:1, 4:1>", "(1,1)"], "A"),
    ("logical_product", ["Sw<3,3,3>", "6:1"], "A"),
])
def test_a_bare_swizzle_where_a_layout_goes_is_named(client, op, args, field):
    """A bare Sw<B,M,S> is refused by the field's name and what it is (it reached the engine and came back as
    'cannot evaluate this input (AttributeError ...)')."""
    r = run(client, op, *args)
    assert r.status_code == 422
    assert r.json()["detail"].startswith(f"{field}: Sw<3,3,3> is a swizzle, not a layout"), r.json()["detail"]


def test_ops_that_take_a_bare_swizzle_still_do(client):
    r = run(client, "composition", "Sw<3,3,3>", "(8,64):(64,1)")
    assert r.status_code == 200
    assert r.json()["result"] == "Sw<3,3,3> o 0 o (8,64):(64,1)"
    assert run(client, "right_inverse", "Sw<3,3,3>").json()["result"] == "Sw<3,3,3>"  # a swizzle is its own inverse
    # CuTe's upcast / downcast / recast_layout of a swizzle (cute/swizzle_layout.hpp): M moves by log2 N
    assert run(client, "upcast", "Sw<3,3,3>", "2").json()["result"] == "Sw<3,2,3>"
    assert run(client, "downcast", "Sw<3,3,3>", "4").json()["result"] == "Sw<3,5,3>"
    assert run(client, "recast_layout", "Sw<3,4,3>", "16", "32").json()["result"] == "Sw<3,3,3>"
    r = run(client, "upcast", "Sw<3,3,3>", "3")
    assert r.status_code == 422 and "power of two" in r.json()["detail"]


@pytest.mark.parametrize(("op", "args", "detail"), [
    ("upcast", ["(4,8):(1@1,1@0)", "2"], "upcast needs integer strides"),
    ("recast_layout", ["(4,8):(1@1,1@0)", "16", "32"], "recast_layout needs integer strides"),
    ("local_partition", ["(16,32):(32,1)", "(4,8):(1@1,1@0)", "5"], "thread layout: local_partition needs integer"),
    ("idx2crd", ["7", "0"], "shape: shape entries must be positive integers, got 0"),
    ("idx2crd", ["7", "(3,(0,3))"], "shape: shape entries must be positive integers, got 0"),
    ("crd2idx", ["(1,1)", "(3,-2)"], "shape: shape entries must be positive integers, got -2"),
    ("tile_to_shape", ["(2,2):(1,2)", "(8,0)"], "shape: shape entries must be positive integers, got 0"),
    ("idx2crd", ["(1,_)", "(3,(2,3))"], "idx2crd: the index must be an integer or a tuple of integers congruent with "
                                       "the shape (3,(2,3)), got (1,_)"),
    ("idx2crd", ["_", "(3,4)"], "idx2crd: the index must be an integer or a tuple of integers congruent with the "
                               "shape (3,4), got _"),
    ("idx2crd", ["(1,(_,1))", "(3,(2,3))"], "idx2crd: the index must be an integer or a tuple of integers "
                                           "congruent with the shape (3,(2,3)), got (1,(_,1))"),
])
def test_arguments_the_op_cannot_take_are_refused_by_name(client, op, args, detail):
    """These reached the engine and came back as 'cannot evaluate this input (TypeError / ZeroDivisionError ...)'."""
    r = run(client, op, *args)
    assert r.status_code == 422
    assert r.json()["detail"].startswith(detail), r.json()["detail"]
    assert "cannot evaluate" not in r.json()["detail"]


@pytest.mark.parametrize(("op", "args", "would_be"), [
    ("complement", ["(4,8):(-1,-4)"], "(-1,0):(1,-32)"),
    ("logical_product", ["4:-1", "2:1"], "(4,(-1,-2)):(-1,(1,-4))"),
])
def test_a_result_with_a_negative_shape_is_refused(client, op, args, would_be):
    """complement of a layout with negative strides answered (-1,0):(1,-32), a shape no layout has: the algebra
    refuses it (``algebra.core.checks.not_a_layout``), naming the condition, the shape and what CuTe prints."""
    r = run(client, op, *args)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail.startswith(f"{op}({', '.join(args)}) is not a layout: positive shape condition"), detail
    assert "the shape -1" in detail and detail.endswith(f"CuTe would print {op}({', '.join(args)}) = {would_be}")
    page = client.get("/algebra", params={"op": op, "a": args[0], **({"b": args[1]} if len(args) > 1 else {})})
    assert page.status_code == 200 and "is not a layout: positive shape condition" in page.text


def test_an_inverse_with_an_offset_is_a_layout_after_a_swizzle(client):
    """CuTe's right_inverse(Sw o 8 o L) is L^-1 o -8 o Sw: answered; it has no shape, so no grid, said as such."""
    j = run(client, "right_inverse", "Sw<1,2,4> o 8 o (4,16):(16,1)").json()
    assert j["result"] == "(16,4):(4,1) o -8 o Sw<1,2,4>"
    back = run(client, "left_inverse", j["result"]).json()
    assert back["result"] == "Sw<1,2,4> o 8 o (4,16):(16,1)"
    page = client.get("/algebra", params={"op": "right_inverse", "a": "Sw<1,2,4> o 8 o (4,16):(16,1)"})
    assert page.status_code == 200 and "there is no grid to draw" in page.text
    assert "(16,4):(4,1) o -8 o Sw&lt;1,2,4&gt;" in page.text
    r = client.post("/api/layout", json={"layout": j["result"]})
    assert r.status_code == 422 and "a layout applied after a swizzle" in r.json()["detail"]
    r = run(client, "logical_divide", j["result"], "4:1")
    assert r.status_code == 422 and "a layout applied after a swizzle" in r.json()["detail"], r.json()


def test_a_refused_swizzled_inverse_names_the_exact_one(client):
    """CuTe's right_inverse(Sw<2,0,-7> o 4:1) is the layout itself (R(1) = 129): refused, naming the exact 1:0."""
    r = run(client, "right_inverse", "Sw<2,0,-7> o 4:1")
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert "CuTe would print Sw<2,0,-7> o 0 o 4:1 here" in detail
    assert "The right inverse of this function is 1:0 (through its F2 form 4:F129" in detail


def test_layout_add_of_swizzled_and_f2_layouts_through_the_api_and_the_workbench(client):
    """A swizzled addend is read as its F2 strides; an F2 and an int offset add as integers, refused at a carry (it
    answered 8:F0, the XOR, for 8:F1 + 8:1), on the page as in the API."""
    assert run(client, "layout_add", "Sw<3,0,3> o (8,8):(1,8)", "(8,8):(0,64)").json()["result"] == "(8,8):(F1,F73)"
    assert run(client, "layout_add", "Sw<3,0,3> o (8,8):(1,8)", "(8,8):(F0,F1)").json()["result"] == "64:F1"
    r = run(client, "layout_add", "8:F1", "8:1")
    assert r.status_code == 422 and "sum condition" in r.json()["detail"] and "A(1) + B(1) = 2" in r.json()["detail"]
    page = client.get("/algebra", params={"op": "layout_add", "a": "8:F1", "b": "8:1"})
    assert page.status_code == 200 and "A(1) + B(1) = 2" in page.text
    r = run(client, "layout_add", "Sw<3,0,3> o 8 o (8,8):(1,8)", "64:1")
    assert r.status_code == 422 and r.json()["detail"].startswith("layout_add: A = Sw<3,0,3> o 8 o (8,8):(1,8)")


@pytest.mark.parametrize(("op", "arg"), [("left_inverse", "Sw<3,0,6> o 0 o (8,8):(8,1)"),
                                         ("left_inverse", "Sw<4,1,-7> o 0 o (2):(16)"),
                                         ("right_inverse", "Sw<3,2,3> o 0 o (2,64):(64,1)")])
def test_an_inverse_cute_does_not_compile_names_the_exact_one_too(client, op, arg):
    """CuTe's make_swizzle fails inside these inverses (CuTe does not compile them): refused as CuTe does, and the
    message names the exact inverse of the same function through its F2 form, as for CuTe's wrong prints."""
    r = run(client, op, arg)
    assert r.status_code == 422 and "make_swizzle" in r.json()["detail"], r.text
    named = r.json()["detail"].split("of this function is ")[1].split(" (through its F2 form")[0]
    tile, inv = A.parse(arg), A.parse(named)
    n, vals = A.size(tile), [A.parse(arg)(i) for i in range(A.size(tile))]
    at = [v if isinstance(v, int) else v.value for v in (inv(i) for i in range(A.size(inv)))]
    if op == "right_inverse":
        assert all(0 <= x < n and vals[x] == i for i, x in enumerate(at))
    else:
        assert all(at[vals[i]] == i for i in range(n))


@pytest.mark.parametrize(("a", "cotarget"), [("4:1", "6:1"), ("(4,1,3):(1,1,4)", "16:3"),
                                              ("(2,2):(1,6)", "(4,6):(6,1)")])
def test_a_layout_cotarget_is_read_as_its_shape_as_the_algebra_and_cute_do(client, a, cotarget):
    """CuTe's complement(L, cotarget) takes shape(cotarget), so a layout is a cotarget; the route and the workbench
    answer what ``algebra.complement`` answers (they refused the layout as "not a shape")."""
    want = str(A.complement(A.parse(a), A.parse(cotarget)))
    r = run(client, "complement", a, cotarget)
    assert r.status_code == 200, r.text
    assert r.json()["result"] == want
    page = client.get("/algebra", params={"op": "complement", "a": a, "b": cotarget})
    assert page.status_code == 200 and want in page.text and "expected an integer or a shape" not in page.text


def test_the_workbench_shows_a_result_whose_grid_is_over_the_requests_drawing_budget(client):
    """The grids of A and B use most of the request's drawn-cell budget; the result's grid (under the per-grid cap)
    would pass it. The page still shows the result's notation and names the cap instead of the answer (it showed
    only the cap's error, while /api/algebra answered)."""
    a, b = "Sw<5,4,-5> o 512 o ((8,2),8,32):((256,2048),1,8)", "(4,4):(1,4)"
    want = str(A.logical_product(A.parse(a), A.parse(b)))
    assert run(client, "logical_product", a, b).json()["result"] == want
    page = client.get("/algebra", params={"op": "logical_product", "a": a, "b": b})
    assert page.status_code == 200
    assert want.replace("<", "&lt;").replace(">", "&gt;") in page.text
    assert "work cap" in page.text


@pytest.mark.parametrize(("op", "a", "tiler"), [("flat_divide", "1:-2", "[[[3]]]"),
                                                ("logical_divide", "((4),4):((0),0)", "[[3]]"),
                                                ("logical_divide", "(2,((1,(2),(1))),1):(3,((3,(18),(1))),-2)",
                                                 '["8:0", [4]]')])
def test_a_divide_by_a_nested_tiler_of_ints_answers_on_the_route_and_the_page(client, op, a, tiler):
    """A tiler mode that is itself a tuple of ints (``[[3]]``): the note on a divide that does not fill A took its
    size with int() and the route answered 500."""
    want = str(getattr(A, op)(A.parse(a), A.registry.parse_value(tiler, "tiler", "tiler")))
    r = run(client, op, a, tiler)
    assert r.status_code == 200, r.text
    assert r.json()["result"] == want
    assert client.get("/algebra", params={"op": op, "a": a, "b": tiler}).status_code == 200
