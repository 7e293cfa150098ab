"""The algebra workbench ``/algebra?op=...&a=...&b=...&c=...``: the whole page, or a fragment for htmx.

``a``, ``b``, ``c`` are the op's arguments in the order ``algebra.registry`` lists them; a permalink that gives none
of them opens the op's example. The form also sends ``shown``, the op its fields were drawn for: when the op menu
changes, ``op != shown``, the arguments on screen belong to the old op and are dropped for the new op's example, and
the answer re-draws the form (htmx: ``HX-Retarget: #workbench``). Every htmx answer sets ``HX-Replace-Url`` to the
permalink of what it shows.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from algebra import LayoutError, registry
from app.budget import BudgetedRoute
from app.page_query import pick
from app.services import overlay
from app.services.algebra_ops import available_ops, input_grids, op_grids, run_op
from app.templating import is_htmx, templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])

PARAMS = ("a", "b", "c")
HINTS = {"layout": "a layout, e.g. (4,8):(8,1)", "tiler": "a layout, an integer, or a tiler <2:1, 4:2>",
         "int": "an integer", "shape": "an integer or a shape such as (8,8)",
         "cotarget": "an integer, a shape such as (8,8), or a layout (its shape)",
         "profile": "an integer tuple such as (1,1): only its structure matters",
         "coord": "an integer or a coordinate such as (1,2); _ keeps a mode"}
_CUTE = re.compile(r"^(?P<why>.*?)\s*CuTe would print (?P<layout>.+?) here(?=[;,.]|$)(?P<rest>.*)$", re.S)
_WHERE = re.compile(r"at i = (?P<i>\d+) that gives (?P<r>-?\d+), but A\(B\(\d+\)\) = A\((?P<x>-?\d+)\) = (?P<ax>-?\d+)")


def _lesson(message: str) -> dict:
    """A refusal split for the page: the failed condition, and (when the text says) what CuTe would print, where
    that goes wrong, whether the refusal is a composition's (its print is not A o B) and whether the print was
    found wrong or only not confirmed (over the point cap)."""
    m = _CUTE.match(message)
    if not m:
        return {"why": message, "layout": None, "rest": "", "where": None}
    w = _WHERE.search(m["rest"])
    where = {k: int(v) for k, v in w.groupdict().items()} if w else None
    why = m["why"].rstrip()  # the page reads as the message: "..., but" / "CuTe would print X here, of size 3; ..."
    rest = m["rest"].lstrip(";,. ")
    return {"why": why if why.endswith((".", ",", ";", ":", " but")) else why + ".", "layout": m["layout"],
            "rest": rest, "sep": m["rest"][:len(m["rest"]) - len(rest)].rstrip() or ".", "where": where,
            "composition": message.startswith("composition "), "confirmed": "not confirmed" not in m["rest"]}


def _about(message: str, parsed: list) -> bool:
    """True when the refusal is about ``composition A o B`` with A and B the arguments as given (a divide, a
    product or a tiler refuses a composition of other layouts: then its counterexample is not in these grids)."""
    m = re.match(r"composition (\S+) o (\S+) is", message)
    return bool(m) and len(parsed) >= 2 and (m[1], m[2]) == (str(parsed[0]), str(parsed[1]))


def permalink(op: str, args: list[str]) -> str:
    return "/algebra?" + urlencode({"op": op, **{k: v for k, v in zip(PARAMS, args, strict=False)}})


@router.get("/algebra", response_class=HTMLResponse, include_in_schema=False)
def algebra_page(request: Request, op: str = Query("composition"), a: str | None = Query(None),
                 b: str | None = Query(None), c: str | None = Query(None),
                 shown: str | None = Query(None)) -> HTMLResponse:
    op = pick(op, tuple(registry.OPS), "composition", "op")  # an op the menu does not offer: app.page_query
    spec = registry.OPS.get(op)
    given = [(x or "").strip() for x in (a, b, c)]
    switched = shown is not None and shown.strip() != op
    if spec is not None and (switched or all(x is None for x in (a, b, c))):
        args = list(spec.example.args)
    else:
        n = len(spec.args) if spec is not None else 3
        args = given[:n]
        while args and not args[-1] and (spec is None or len(args) > spec.required):
            args.pop()  # an empty optional field is left out; an empty required one is reported by name
    # a permalink's argument that the op does not take is named, not dropped (the op drawn without it)
    unread = [] if spec is None or switched else [p for p, x in zip(PARAMS, given, strict=True)
                                                  if x and PARAMS.index(p) >= len(spec.args)]
    ctx: dict = {"request": request, "op": op, "spec": spec, "ops": available_ops(), "groups": registry.GROUPS,
                 "hints": HINTS, "fields": _fields(spec, args), "res": None, "grids": [], "error": None,
                 "lesson": None, "refusal_steps": [], "permalink": permalink(op, args),
                 "switched": switched and is_htmx(request)}  # the re-drawn form keeps the focus on the op menu
    try:
        if unread:
            raise LayoutError(f"{unread[0]}: {op} takes {len(spec.args)} argument(s) "
                              f"({', '.join(a.name for a in spec.args)}); {unread[0]} is not one of them: drop it")
        res = run_op(op, args)
        panel = overlay.highlight_panel(res)  # divides / products: A highlighted by B
        ctx.update(res=res, grids=op_grids(res) + ([panel] if panel else []), notes=overlay.op_notes(res))
    except LayoutError as exc:
        ctx["error"] = str(exc)
        if getattr(exc, "refused", False):
            ctx["lesson"] = _lesson(str(exc))
            ctx["refusal_steps"] = [s for s in getattr(exc, "steps", []) if s.get("kind") != "error"]
            parsed = getattr(exc, "parsed", [])
            where = ctx["lesson"]["where"]  # outline the counterexample: B(i) in B, A(B(i)) in A, unless ...
            lesson = ctx["lesson"]
            if lesson["layout"] and lesson["composition"] and not _about(str(exc), parsed):  # one inside the op
                ctx["lesson"]["inner"] = True
                where = ctx["lesson"]["where"] = None  # its counterexample is not in these grids
            ctx["grids"] = input_grids(op, parsed, {where["ax"]} if where else None,
                                       {where["x"]} if where else None)
    block = None
    if is_htmx(request):
        block = "workbench" if switched else "result"
    response = templates.TemplateResponse(request, "algebra.html", ctx, block_name=block)
    if is_htmx(request):
        response.headers["HX-Replace-Url"] = ctx["permalink"]
        if switched:
            response.headers["HX-Retarget"] = "#workbench"
            response.headers["HX-Reswap"] = "outerHTML"
    return response


def _fields(spec: registry.Op | None, args: list[str]) -> list[dict]:
    """The argument inputs of the form: one per argument of the op, labelled with its name and kind."""
    if spec is None:
        return [{"param": p, "name": p.upper(), "kind": "", "optional": False, "value": v, "example": ""}
                for p, v in zip(PARAMS, args + [""] * 3, strict=False)]
    ex = spec.example.args
    return [{"param": p, "name": arg.name, "kind": arg.kind, "optional": arg.optional,
             "value": args[k] if k < len(args) else "", "example": ex[k] if k < len(ex) else ""}
            for k, (p, arg) in enumerate(zip(PARAMS, spec.args, strict=False))]
