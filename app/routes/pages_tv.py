"""The TV atlas ``/tv?atom=SM80_16x8x16_F32F16F16F32_TN&operand=C``: an atom's TV grid, tiled copy / tiled MMA, a
partition's sector efficiency and the Hopper panel. Each panel is its own form; an htmx request names its panel in
HX-Target (or ``?panel=``) and gets only that panel; every form carries the others' fields, so the address bar is the
permalink. The heavy sections in :data:`LAZY` come closed and load their result when first opened."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

import algebra as A
from algebra import LayoutError, atoms
from app.budget import BudgetedRoute
from app.page_query import pick
from app.services import blackwell as BW
from app.services import code
from app.services import hopper as H
from app.services import kernel_path as KP
from app.services import tiled as T
from app.services import tma_cluster as TC
from app.services import triton_pages as TT
from app.services import tv as S
from app.services import walkthrough as W
from app.templating import is_htmx, templates

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])

#: every query parameter of the page and its default
DEFAULTS: dict[str, str] = {
    "atom": S.DEFAULT_ATOM, "operand": "", "bits": "16",
    "part": S.SECTOR_PRESETS[0][1], "eb": "4", "vector": S.SECTOR_PRESETS[0][3],
    "tatom": T.COPY_PRESETS[0][1], "tthr": T.COPY_PRESETS[0][2], "tval": T.COPY_PRESETS[0][3],
    "tbits": "16", "tlayout": T.MMA_PRESETS[0][2], "top": "C",
    "hmajor": "K", "hspan": "128", "hbits": "16", "tdtype": "FLOAT16", "ttensor": "(4096,4096):(4096,1)",
    "tbox": "64,64", "tswz": "atom", "dmn": "64", "dk": "64", "dstart": "0",
    "cw_atom": W.COPY_WALKS[0][1], "cw_thr": W.COPY_WALKS[0][2], "cw_val": W.COPY_WALKS[0][3],
    "cw_bits": str(W.COPY_WALKS[0][4]), "cw_src": W.COPY_WALKS[0][5], "cw_dst": W.COPY_WALKS[0][6], "cw_t": "0",
    "mw_atom": W.MMA_WALKS[0][1], "mw_layout": W.MMA_WALKS[0][2], "mw_tile": W.MMA_WALKS[0][3], "mw_t": "0",
    "tt_layout": "", "tt_shape": "64,64", "tt_bits": "16", "tt_shared": "",
    "kp_atom": KP.PRESETS[0][1], "kp_layout": KP.PRESETS[0][2], "kp_perm": KP.PRESETS[0][3],
    "kp_a": KP.PRESETS[0][4], "kp_b": KP.PRESETS[0][5], "kp_c": KP.PRESETS[0][6], "kp_cta": KP.PRESETS[0][7],
    "kp_t": "0",
    "tm_g": TC.PRESETS[0][1], "tm_s": TC.PRESETS[0][2], "tm_tile": TC.PRESETS[0][3],
    "tm_cluster": str(TC.PRESETS[0][4]), "tm_dtype": TC.PRESETS[0][5], "tm_coord": "",
    "bw_kind": "f16", "bw_m": "128", "bw_n": "256", "bw_cta": "1", "bw_src": "smem", "bw_am": "K", "bw_bm": "K",
    "bw_ab": "", "bw_c": "", "bw_ld": "SM100_TMEM_LOAD_32dp32b4x", "bw_warp": "0",
}


#: The TV atlas's menus: field -> (what its menu offers, the default). A value no menu offers (a hand-edited
#: permalink: ``bits=12``, ``hmajor=X``, ``tm_cluster=٢``) is refused with a 422 naming the field and its choices,
#: before any section is drawn; it was read as the default, answering a question that was not asked.
_BITS = (8, 16, 32, 64, 128)
MENUS: dict[str, tuple[tuple, int | str]] = {
    "bits": (_BITS, 16), "tbits": (_BITS, 16), "cw_bits": (_BITS, 16), "hmajor": (H.MAJORS, "K"),
    "hspan": (H.SPANS, 128), "hbits": (H.BITS, 16), "tswz": (H.TMA_SWIZZLES, "atom"),
    "tm_cluster": (tuple(range(1, 17)), 1), "tt_bits": (TT.BITS, 16), "bw_kind": (BW.KINDS, "f16"),
    "bw_cta": ((1, 2), 1), "bw_src": (("smem", "tmem"), "smem"), "bw_am": (("K", "MN"), "K"),
    "bw_bm": (("K", "MN"), "K"), "bw_ld": (BW.TMEM_ATOMS, DEFAULTS["bw_ld"]), "eb": ((1, 2, 4, 8, 16), 4),
    # the atom pickers, the tiled MMA's operand and the TMA data types
    "atom": (tuple(atoms.names()), S.DEFAULT_ATOM),
    "tatom": (tuple(atoms.mma_names() + atoms.copy_names()), DEFAULTS["tatom"]),
    "cw_atom": (tuple(atoms.copy_names()), DEFAULTS["cw_atom"]),
    "mw_atom": (tuple(atoms.mma_names()), DEFAULTS["mw_atom"]),
    "kp_atom": (tuple(n for n in atoms.mma_names() if not n.startswith("SM90_")), DEFAULTS["kp_atom"]),
    **{k: (("", *atoms.copy_names()), "") for k in ("kp_a", "kp_b", "kp_c")}, "top": (("A", "B", "C"), "C"),
    "tdtype": (tuple(H.hopper.TMA_DTYPES), "FLOAT16"), "tm_dtype": (tuple(H.hopper.TMA_DTYPES), "FLOAT16")}


def _menu(q: dict[str, str], key: str) -> int | str:
    """The value of the menu field ``key`` (:data:`MENUS`); LayoutError for one its menu does not offer."""
    allowed, default = MENUS[key]
    return pick(q[key], allowed, default, key)


def atom_ctx(q: dict[str, str]) -> dict:
    atom, operand = q["atom"].strip(), q["operand"].strip()
    bits = _menu(q, "bits")
    ctx: dict = {"atom": atom, "bits": bits, "operand": operand, "view": None, "g": None, "error": None,
                 "code": None}
    try:
        if not operand:
            copy_prefixes = ("SM75", "SM90_U", "SM80_CP", "UNIVERSAL", "SM100_TMEM")
            operand = "C" if not atom.upper().startswith(copy_prefixes) else "dst"
        view = S.tv_view(atom, operand, bits)
        cpp, dsl = code.layout_code(A.parse(view.tv_layout))
        ctx.update(view=view, g=S.tv_grid(view, "grid-tv"), operand=view.operand, code={"cpp": cpp, "dsl": dsl})
    except LayoutError as exc:
        ctx["error"] = str(exc)
    return ctx


def sectors_ctx(q: dict[str, str]) -> dict:
    ctx: dict = {"part": q["part"].strip(), "eb": 4, "vector": q["vector"].strip(),
                 "presets": S.SECTOR_PRESETS, "sec": None, "sec_error": None}
    ctx["eb"] = _menu(q, "eb")
    text = ctx["vector"]
    if text and not (text.isascii() and text.isdigit() and len(text) < 6):
        ctx["sec_error"] = f"vector: {text!r} is not a whole number of values (leave it blank for the widest legal)"
        return ctx
    try:
        ctx["sec"] = S.sector_view(ctx["part"], ctx["eb"], int(text) if text else None)
    except LayoutError as exc:
        ctx["sec_error"] = str(exc)
    return ctx


def tiled_form(q: dict[str, str]) -> dict:
    """The tiled copy / tiled MMA form: its fields, menus and presets (cheap; the tiling is :func:`tiled_ctx`)."""
    kind = "mma" if q["tatom"].strip() in set(atoms.mma_names()) else "copy"
    return {"tkind": kind, "tatom": q["tatom"].strip(), "tthr": q["tthr"].strip(), "tval": q["tval"].strip(),
            "tbits": _menu(q, "tbits"), "tlayout": q["tlayout"].strip(),
            "top": q["top"].strip().upper() or "C", "copy_presets": T.COPY_PRESETS,
            "mma_presets": T.MMA_PRESETS, "tview": None, "tg": None, "t_error": None,
            "copy_atoms": atoms.copy_names(), "mma_atoms": atoms.mma_names()}


def tiled_ctx(q: dict[str, str]) -> dict:
    """The tiled copy / tiled MMA section: make_tiled_copy(atom, thr, val) or make_tiled_mma(atom, layout), drawn."""
    ctx = tiled_form(q)
    try:
        v = T.tiled_view(ctx["tkind"], ctx["tatom"], ctx["tthr"], ctx["tval"], ctx["tbits"], ctx["tlayout"],
                         ctx["top"])
        ctx.update(tview=v, tg=S.tv_grid(v, "grid-tiled", by_warp=v.num_threads > 32))
        for cell in v.bad or ():
            ctx["tg"].marks[cell] = "bad"
    except LayoutError as exc:
        ctx["t_error"] = str(exc)
    return ctx


def hopper_ctx(q: dict[str, str]) -> dict:
    ctx: dict = {"hmajor": _menu(q, "hmajor"), "hspan": _menu(q, "hspan"), "hbits": _menu(q, "hbits"),
                 "tdtype": q["tdtype"].strip(), "ttensor": q["ttensor"].strip(), "tbox": q["tbox"].strip(),
                 "tswz": _menu(q, "tswz"), "dmn": q["dmn"].strip(),
                 "dk": q["dk"].strip(), "dstart": q["dstart"].strip(), "majors": H.MAJORS, "spans": H.SPANS,
                 "bitss": H.BITS, "swizzles": H.TMA_SWIZZLES, "dtypes": list(H.hopper.TMA_DTYPES),
                 "smem": None, "h_error": None, "tma": None, "tma_error": None, "desc": None, "desc_error": None}
    try:
        ctx["smem"] = H.atom_view(ctx["hmajor"], ctx["hspan"], ctx["hbits"])
    except LayoutError as exc:
        ctx["h_error"] = str(exc)
        return ctx
    atom = ctx["smem"].atom
    mn, k = (int(x) if x.isdecimal() and 0 < int(x) <= 4096 else d
             for x, d in ((ctx["dmn"], atom.shape[0]), (ctx["dk"], atom.shape[1])))
    cpp, dsl = code.smem_atom_code(atom, mn, k)
    ctx["smem_code"] = {"cpp": cpp, "dsl": dsl}
    try:
        ctx["tma"] = H.tma_view(ctx["tdtype"], ctx["ttensor"], ctx["tbox"], ctx["tswz"], atom)
    except LayoutError as exc:
        ctx["tma_error"] = str(exc)
    try:
        ctx["desc"] = H.desc_view(atom, ctx["dmn"], ctx["dk"], ctx["dstart"])
    except LayoutError as exc:
        ctx["desc_error"] = str(exc)
    return ctx


def copywalk_form(q: dict[str, str]) -> dict:
    """The copy walkthrough's form: its fields and menus (cheap; the walk itself is :func:`copywalk_ctx`)."""
    cw = {"atom": q["cw_atom"].strip(), "thr": q["cw_thr"].strip(), "val": q["cw_val"].strip(),
          "bits": _menu(q, "cw_bits"), "src": q["cw_src"].strip(),
          "dst": q["cw_dst"].strip(), "t": q["cw_t"].strip(), "walk": None, "error": None}
    return {"cw": cw, "walk": None, "w_error": None, "wid": "copy", "copy_walks": W.COPY_WALKS,
            "copy_atoms": atoms.copy_names()}


def copywalk_ctx(q: dict[str, str]) -> dict:
    """The copy walkthrough: the atom, make_tiled_copy's TV layout, one thread's partition_S / partition_D."""
    ctx = copywalk_form(q)
    cw = ctx["cw"]
    try:
        cw["walk"] = W.copy_walk(cw["atom"], cw["thr"], cw["val"], cw["bits"], cw["src"], cw["dst"], cw["t"])
    except LayoutError as exc:
        cw["error"] = str(exc)
    return {**ctx, "walk": cw["walk"], "w_error": cw["error"]}


def mmawalk_form(q: dict[str, str]) -> dict:
    """The MMA walkthrough's form: its fields and menus (cheap; the walk itself is :func:`mmawalk_ctx`)."""
    mw = {"atom": q["mw_atom"].strip(), "layout": q["mw_layout"].strip(), "tile": q["mw_tile"].strip(),
          "t": q["mw_t"].strip(), "walk": None, "error": None}
    return {"mw": mw, "walk": None, "w_error": None, "wid": "mma", "mma_walks": W.MMA_WALKS,
            "mma_atoms": atoms.mma_names()}


def mmawalk_ctx(q: dict[str, str]) -> dict:
    """The MMA walkthrough: the atom's A / B / C, make_tiled_mma's warps, one thread's partition_A / B / C."""
    ctx = mmawalk_form(q)
    mw = ctx["mw"]
    try:
        mw["walk"] = W.mma_walk(mw["atom"], mw["layout"], mw["tile"], mw["t"])
    except LayoutError as exc:
        mw["error"] = str(exc)
    return {**ctx, "walk": mw["walk"], "w_error": mw["error"]}


def kernel_form(q: dict[str, str]) -> dict:
    """The kernel path section's form: its fields and menus (cheap; the walk itself is :func:`kernel_ctx`)."""
    kp = {k: q[f"kp_{k}"].strip() for k in ("atom", "layout", "perm", "cta", "t")}
    kp.update({f"kp_{k}": q[f"kp_{k}"].strip() for k in "abc"})
    return {"kp": kp, "kpath": None, "kp_error": None, "kp_presets": KP.PRESETS,
            "kp_mma_atoms": [n for n in atoms.mma_names() if not n.startswith("SM90_")],
            "kp_copy_atoms": atoms.copy_names()}


def kernel_ctx(q: dict[str, str]) -> dict:
    """The kernel path section: atom -> tiled MMA -> tiled copies -> one thread's registers -> its partitions."""
    ctx = kernel_form(q)
    kp = ctx["kp"]
    try:
        ctx["kpath"] = KP.kernel_path(kp["atom"], kp["layout"], kp["perm"], kp["kp_a"], kp["kp_b"], kp["kp_c"],
                                      kp["cta"], kp["t"])
    except LayoutError as exc:
        ctx["kp_error"] = str(exc)
    return ctx


def tma_form(q: dict[str, str]) -> dict:
    """The TMA section's form: its fields (cheap; the partition itself is :func:`tma_ctx`)."""
    tm = {"g": q["tm_g"].strip(), "s": q["tm_s"].strip(), "tile": q["tm_tile"].strip(),
          "cluster": _menu(q, "tm_cluster"), "dtype": q["tm_dtype"].strip() or "FLOAT16",
          "coord": q["tm_coord"].strip()}
    return {"tm": tm, "tmv": None, "tm_error": None, "tm_presets": TC.PRESETS}


def tma_ctx(q: dict[str, str]) -> dict:
    """The TMA section: make_tma_atom with a cluster, tma_partition per CTA, the cuTensorMapEncodeTiled checks."""
    ctx = tma_form(q)
    tm = ctx["tm"]
    try:
        ctx["tmv"] = TC.tma_cluster_view(tm["g"], tm["s"], tm["tile"], tm["cluster"], tm["dtype"], tm["coord"])
    except LayoutError as exc:
        ctx["tm_error"] = str(exc)
    return ctx


def blackwell_form(q: dict[str, str]) -> dict:
    """The Blackwell panel's form: its fields and menus (cheap; the views are :func:`blackwell_ctx`). A menu's
    value is the menu's own spelling of it (``TF32`` -> ``tf32``), so the select shows what is drawn."""
    bw = {k[3:]: q[k].strip() for k in q if k.startswith("bw_")}
    bw.update({k[3:]: str(_menu(q, k)) for k in MENUS if k.startswith("bw_")})
    return {"bw": bw, "bw_kinds": BW.KINDS,
            "bw_tmem_atoms": BW.TMEM_ATOMS, "umma": None, "bw_error": None, "tmem": None, "ld_error": None}


def blackwell_ctx(q: dict[str, str]) -> dict:
    """The Blackwell panel: a UMMA atom and its accumulator in TMEM, a TMEM copy atom for one warp."""
    ctx = blackwell_form(q)
    bw = ctx["bw"]
    try:
        m, n, cta = (BW.whole(bw[x], what) for x, what in (("m", "M"), ("n", "N"), ("cta", "CTAs")))
        ctx["umma"] = BW.umma_view(bw["kind"], m, n, bw["am"], bw["bm"], cta, bw["src"], bw["ab"], bw["c"] or None)
    except LayoutError as exc:
        ctx["bw_error"] = str(exc)
    try:
        ctx["tmem"] = BW.tmem_view(bw["ld"], BW.whole(bw["warp"], "warp"))
    except LayoutError as exc:
        ctx["ld_error"] = str(exc)
    return ctx


def triton_ctx(q: dict[str, str]) -> dict:
    return TT.tv_panel(q["tt_layout"], q["tt_shape"], q["tt_bits"], q["tt_shared"])


PANELS = {"result": ("tv.html", "result", atom_ctx), "sectors": ("tv.html", "sectors", sectors_ctx),
          "tiled": ("tv_tiled.html", None, tiled_ctx), "hopper": ("tv_hopper.html", None, hopper_ctx),
          "copywalk": ("tv_walk.html", None, copywalk_ctx), "mmawalk": ("tv_walk.html", None, mmawalk_ctx),
          "triton": ("tv_triton.html", "triton", triton_ctx), "kernel": ("tv_kernel.html", "kernel", kernel_ctx),
          "tmac": ("tv_tma.html", "tmac", tma_ctx),
          "blackwell": ("tv_blackwell.html", None, blackwell_ctx)}

#: The sections the first load sends closed, with their form but not their result (32, 280, 72, 40, 75 and 82 kB of
#: grids and tables with the defaults): a ``<details>`` whose first opening fetches ``/tv?panel=<name>`` plus its
#: form's fields, answered by the same block (or template) as above. A query that names one of the section's fields
#: (its prefix, or one of its prefixes) renders it open and filled.
LAZY: dict[str, tuple[str | tuple[str, ...], Callable[[dict[str, str]], dict]]] = {
    "tiled": (("tatom", "tthr", "tval", "tbits", "tlayout", "top"), tiled_form),
    "copywalk": ("cw_", copywalk_form), "mmawalk": ("mw_", mmawalk_form),
    "kernel": ("kp_", kernel_form), "tmac": ("tm_", tma_form), "blackwell": ("bw_", blackwell_form)}


@router.get("/tv", response_class=HTMLResponse, include_in_schema=False)
def tv_page(request: Request) -> HTMLResponse:
    """The whole page, or one panel's fragment: the panel named by ``?panel=`` (a lazy section's first opening) or
    by htmx's HX-Target (a form re-rendering its own result)."""
    q = {k: request.query_params.get(k, v)[:8000 if k.startswith("tt_") else 4000] for k, v in DEFAULTS.items()}
    for key in MENUS:  # a value no menu offers: the page's answer is app.page_query's; one it offers, its spelling
        q[key] = str(_menu(q, key))
    mma = q["atom"].strip().upper() in {n.upper() for n in atoms.mma_names()}  # the operands this atom's menu offers
    q["operand"] = pick(q["operand"], ("", "A", "B", "C") if mma else ("", "src", "dst"), "", "operand")
    state = {k: v for k, v in q.items() if v != DEFAULTS[k]}
    base: dict = {"request": request, "menu": S.atom_menu(), "permalink": "/tv?" + urlencode(state) if state else "/tv"}
    name = request.query_params.get("panel") or (request.headers.get("HX-Target") or "" if is_htmx(request) else "")
    panel = PANELS.get(name)
    if panel is not None:
        template, block, make = panel
        return templates.TemplateResponse(request, template, {**base, **make(q)}, block_name=block)
    ctx = {**base, **atom_ctx(q), **sectors_ctx(q), **hopper_ctx(q), **triton_ctx(q)}
    for section, (prefix, form) in LAZY.items():
        asked = any(k.startswith(prefix) for k in request.query_params)
        ctx.update(PANELS[section][2](q) if asked else form(q))
        ctx[f"{section}_open"] = asked
    return templates.TemplateResponse(request, "tv.html", ctx)
