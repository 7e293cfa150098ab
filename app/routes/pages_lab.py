"""The GPU lab page ``/lab``: a job form, the queue with live progress (HTMX polling), results beside the model's
prediction, and the history chart."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from app.budget import BudgetedRoute
from app.config import clip
from app.page_query import pick, problem
from app.routes.api_bench import address_of, client_of, refusal
from app.services import bench as S
from app.services import lab_class, lab_results
from app.services.lab_clients import is_admin
from app.templating import is_htmx, templates
from gpu_worker.schemas import ACCESS_FIELD_USED_BY, VARIANT_FIELD_USED_BY

router = APIRouter(route_class=BudgetedRoute, tags=["pages"])
# a job's result as a table and its chart, and the history's result column (app.services.lab_results)
templates.env.globals.update(lab_result_rows=lab_results.result_rows, lab_result_chart=lab_results.result_chart,
                             lab_summary=lab_results.summary)
#: Fields a lab form may carry (the form has about 25).
MAX_FORM_FIELDS = 64
SMEM_FIELDS = {"element_bytes": int, "rows": int, "cols": int, "pad": int, "nacc": int, "iterations": int, "runs": int}
#: Every field form_params reads (the page's form shows most of them; nacc, iterations and runs are for scripts).
FORM_KEYS = frozenset({"kind", *SMEM_FIELDS, "variant", "swizzle", "layout", "access", "index", "num", "trans",
                       "thread_layout", "profile", "dtype", "n", "tile", "v_naive", "v_tiled", "v_padded",
                       "v_swizzled", "rung", "m", "k", "template"})


def _number(text: str) -> int | str:
    """A form field as the JSON integer it spells (ASCII digits, an optional minus), else the text as typed, which
    the kind's model refuses by the field's name: ``٣٢`` or ``1_024`` are no numbers here, as in the JSON API."""
    t = text.strip()
    return int(t) if t.isascii() and t.lstrip("-").isdigit() and t.count("-") <= 1 else t


def form_params(form: dict) -> tuple[str, dict]:
    """(kind, params) from the lab form's flat fields; empty fields are left to the model's defaults, and the fields
    the chosen variant or access does not read (the form shows them all) are not sent, as the JSON API refuses them."""
    kind = form.get("kind", "smem")
    if kind == "transpose":
        params: dict = {"dtype": form.get("dtype", "fp32")}
        for key in ("n", "tile"):
            if form.get(key):
                params[key] = _number(form[key])
        variants = [v for v in ("naive", "tiled", "padded", "swizzled") if form.get(f"v_{v}")]
        if variants:
            params["variants"] = variants
        return kind, params
    if kind == "gemm":
        return kind, {key: _number(form[key])
                      for key in ("rung", "m", "n", "k") if (form.get(key) or "").strip()}
    if kind == "compile_only":
        return kind, {"template": form.get("template", "noop")}
    params = {"variant": form.get("variant", "naive")}
    custom = params["variant"] == "custom"  # its layout's shape is the tile's; only it reads a layout
    unread = {key for key, used in VARIANT_FIELD_USED_BY.items() if params["variant"] not in used}
    for key in SMEM_FIELDS:
        val = (form.get(key) or "").strip()
        if val and key not in unread and not (custom and key in ("rows", "cols")):
            params[key] = _number(val)
    for key in ("swizzle", "layout"):
        if key not in unread and (form.get(key) or "").strip():
            params[key] = form[key].strip()
    access: dict = {"kind": form.get("access", "column")}
    if (form.get("index") or "").strip() and access["kind"] in ACCESS_FIELD_USED_BY["index"]:
        access["index"] = _number(form["index"])
    if access["kind"] == "ldmatrix":
        access["num"] = _number(form.get("num") or "4")
        access["trans"] = bool(form.get("trans"))
    if access["kind"] == "thread_layout":
        access["layout"] = (form.get("thread_layout") or "").strip()
    params["access"] = access
    params["profile"] = bool(form.get("profile"))
    return kind, params


def _page_ctx(request: Request, **extra) -> dict:
    here = request.headers.get("hx-current-url")
    given = {k: request.query_params.get(k) for k in ("gpu", "mine")}
    try:  # ?gpu=<uuid> (or, for the history's poll, the page's own URL) keeps the jobs of one GPU
        gpu = S.gpu_filter(given["gpu"], here)
    except S.ParamsError as exc:
        raise problem("gpu", given["gpu"] or "", exc) from None
    try:
        mine = S.mine_filter(given["mine"], here)
    except S.ParamsError as exc:
        raise problem("mine", given["mine"] or "", exc) from None
    jobs = S.history(60, client_of(request), gpu=gpu, mine=mine)
    device = S.device_status(admin=is_admin(request.headers))
    return {"request": request, "device": device, "jobs": jobs[:30], "history_charts": S.history_charts(jobs),
            "sweeps": S.sweeps(jobs), "gpu_choices": S.gpu_choices(jobs, device, gpu), "gpu_selected": gpu,
            "mine_only": mine, **extra}


@router.get("/lab", response_class=HTMLResponse, include_in_schema=False)
def lab_page(request: Request, gemm: str | None = None) -> HTMLResponse:
    """The lab: form, live job, history charts, the committed measurements and the GEMM ladder (``?gemm=<file>``
    picks the ladder's results file; a name that is none of them is refused by name, not drawn as the first)."""
    if gemm is not None:  # a results file the menu does not offer (blank included): app.page_query
        gemm = pick(gemm, tuple(f["name"] for f in S.gemm_files()), None, "gemm",
                    " (the ladder's results files under bench/results)")
    return templates.TemplateResponse(request, "lab.html", _page_ctx(request, reference=S.reference_charts(),
                                                                      ladder=S.ladder_view(gemm)))


async def form_fields(request: Request) -> list[tuple[str, str]]:
    """The submitted form's fields, in order, repeats included. On the event loop only the body is awaited and
    decoded, as FastAPI decodes every route's body: at most MAX_FORM_BYTES (64 kB, BodyLimitMiddleware's cap on a
    form) and MAX_FORM_FIELDS fields (400 past it), linear in its size. Reading the fields as a job (read_form),
    validating and queueing it run in the budgeted handler."""
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    return [(k, v) for k, v in form.multi_items() if isinstance(v, str)]


def read_form(fields: list[tuple[str, str]]) -> dict[str, str]:
    """The form's fields by name. A name the form does not have, or one given twice with two values (which of them
    would the job take?), is refused by its name (ValueError: the card's 422), never dropped or overwritten."""
    form: dict[str, str] = {}
    for key, value in fields:
        if key not in FORM_KEYS:
            raise ValueError(f"{clip(key)}: the lab form has no such field; it reads {', '.join(sorted(FORM_KEYS))}")
        if key in form and form[key] != value:
            raise ValueError(f"{key}: given twice ({clip(form[key])!r} and {clip(value)!r}); give it once")
        form[key] = value
    return form


@router.post("/lab/jobs", response_class=HTMLResponse, include_in_schema=False)
def lab_submit(request: Request, fields: list[tuple[str, str]] = Depends(form_fields)) -> HTMLResponse:
    """Queue a job from the lab form: the job card (202), or the card with the reason (409, 422, 429, 503). The
    form's fields become the same ``(kind, params)`` that ``POST /api/bench/jobs`` takes, and both go through
    ``S.submit``: one validation, one set of caps, one rate limit (a refused submission counts)."""
    error, job, status, headers = None, None, 202, {}
    try:
        kind, params = form_params(read_form(fields))
        job = S.get_job(S.submit(kind, params, client_of(request), address_of(request),
                                 lab_class.learner_of(request.cookies))["id"], client_of(request))
    except (S.ParamsError, S.NoWorker, S.RateLimited, S.QueueFull) as exc:
        answer = refusal(exc)  # the JSON route's status, Retry-After and clipped detail
        error, status = clip(str(exc)), answer.status_code
        if "retry-after" in answer.headers:
            headers["Retry-After"] = answer.headers["retry-after"]
    except ValueError as exc:  # a field the form does not have, one given twice, or one that is no number
        error, status = clip(str(exc)), 422
    return templates.TemplateResponse(request, "lab.html", {"request": request, "job": job, "error": error},
                                      block_name="job_card", status_code=status, headers=headers)


@router.get("/lab/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
def lab_job(request: Request, job_id: str) -> HTMLResponse:
    """One job's card: the htmx fragment the page polls, or opened on its own a page of the site around it (404
    when there is no such job)."""
    job = S.get_job(job_id, client_of(request))
    ctx = {"request": request, "job": job, "error": None if job else f"no job {job_id}"}
    if not is_htmx(request):
        alone = {**ctx, "fragment": "job", "title": f"job {job_id}", "what": "one job and its result"}
        return templates.TemplateResponse(request, "lab_alone.html", alone, status_code=200 if job else 404)
    return templates.TemplateResponse(request, "lab.html", ctx, block_name="job_card")


@router.post("/lab/jobs/{job_id}/cancel", response_class=HTMLResponse, include_in_schema=False)
def lab_cancel(request: Request, job_id: str) -> HTMLResponse:
    error, status = None, 200
    try:
        job = S.cancel(job_id, client_of(request), is_admin(request.headers))
    except S.Forbidden as exc:
        job, error, status = S.get_job(job_id, client_of(request)), str(exc), 403
    return templates.TemplateResponse(request, "lab.html", {"request": request, "job": job,
                                                            "error": error or (None if job else f"no job {job_id}")},
                                      block_name="job_card", status_code=status if job else 404)


@router.get("/lab/history", response_class=HTMLResponse, include_in_schema=False)
def lab_history(request: Request) -> HTMLResponse:
    """The history: the fragment the lab page polls, or opened on its own a page of the site around it."""
    if not is_htmx(request):
        return templates.TemplateResponse(request, "lab_alone.html", {
            **_page_ctx(request), "fragment": "history", "title": "history",
            "what": "the latest jobs, their results and their charts"})
    return templates.TemplateResponse(request, "lab.html", _page_ctx(request), block_name="history")
