"""The lab's job parameters on fresh inputs (seeds 16600-16699): an smem job refuses, by name, every field its
variant or access kind does not read; what the queue keeps of a job validates again, on the worker, as the same job;
``/api/bench/jobs?limit=`` outside 1..200 is refused by name; ``/api/bench/gemm/rungs?rung=`` picks one rung."""

from __future__ import annotations

import random

import pytest
from fastapi.testclient import TestClient

from gpu_worker import registry
from gpu_worker.registry import ParamsError
from gpu_worker.schemas import ACCESS_FIELD_USED_BY, VARIANT_FIELD_USED_BY

VALUES = {"pad": 4, "swizzle": "Sw<3,3,3>", "layout": "(32,32):(1,32)"}
NEEDS = {"padded": {"pad": 1}, "swizzle": {"swizzle": "Sw<5,0,5>"}, "custom": {"layout": "(32,32):(32,1)"}}


@pytest.fixture(scope="module")
def http(app):
    mp = pytest.MonkeyPatch()
    mp.setenv("LAYOUTLAB_LAB_RATE", "100000/60")
    mp.setenv("LAYOUTLAB_LAB_ADDRESS_RATE", "100000/60")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c
    mp.undo()


def _refused(kind: str, params: dict) -> str:
    with pytest.raises(ParamsError) as exc:
        registry.validate(kind, params)
    return str(exc.value)


@pytest.mark.parametrize("variant", ["naive", "padded", "swizzle", "custom"])
@pytest.mark.parametrize("field", ["pad", "swizzle", "layout"])
def test_an_smem_job_refuses_a_field_its_variant_does_not_read(variant, field):
    if variant in VARIANT_FIELD_USED_BY[field]:
        return
    params = {"variant": variant, **NEEDS.get(variant, {}), field: VALUES[field]}
    msg = _refused("smem", params)
    assert msg.startswith(f"{field}:") and variant in msg and VARIANT_FIELD_USED_BY[field][0] in msg, (params, msg)
    msg = _refused("smem", {**params, field: 0 if field == "pad" else VALUES[field]})  # a zero pad is given too
    assert msg.startswith(f"{field}:"), (params, msg)


def _fresh_smem(rng: random.Random) -> dict:
    variant = rng.choice(["naive", "padded", "swizzle", "custom"])
    eb = rng.choice([1, 2, 4, 8, 16])
    p: dict = {"variant": variant, "element_bytes": eb}
    if variant == "custom":
        p["layout"] = rng.choice(["(32,32):(32,1)", "(32,32):(1,32)", "Sw<3,3,3> o (64,64):(64,1)", "(16,64):(64,1)"])
    else:
        p["rows"], p["cols"] = rng.choice([16, 32, 64]), rng.choice([16, 32, 64])
    if variant == "padded":
        p["pad"] = rng.randrange(1, 9)
    if variant == "swizzle":
        p["swizzle"] = rng.choice(["Sw<3,3,3>", "Sw<5,0,5>", "Sw<2,2,3>"])
    kind = rng.choice(["column", "row", "ldmatrix", "offsets", "thread_layout"])
    acc: dict = {"kind": kind}
    if kind in ("column", "row"):
        acc["index"] = rng.randrange(0, 16)
    if kind == "ldmatrix":
        acc["num"], acc["trans"] = rng.choice([1, 2, 4]), rng.random() < 0.5
    if kind == "offsets":
        acc["offsets"] = [rng.randrange(0, 256) for _ in range(32)]
    if kind == "thread_layout":
        acc["layout"] = rng.choice(["(32,1):(1,0)", "(8,4):(4,1)", "(4,8):(1,4)"])
    p["access"] = acc
    p["nacc"], p["iterations"], p["runs"] = rng.randrange(1, 33), rng.randrange(1, 64), rng.randrange(20, 40)
    return p


def _fresh(rng: random.Random) -> tuple[str, dict]:
    kind = rng.choice(["smem", "smem", "transpose", "gemm", "compile_only"])
    if kind == "smem":
        return kind, _fresh_smem(rng)
    if kind == "transpose":
        dtype = rng.choice(["fp32", "fp16"])
        return kind, {"dtype": dtype, "tile": rng.choice([32, 64]), "n": rng.choice([256, 1024, 4096]),
                      "variants": rng.sample(["naive", "tiled", "padded", "swizzled"], rng.randrange(1, 5))}
    if kind == "gemm":
        return kind, {"rung": rng.randrange(1, 9), "m": 1024, "n": 1024, "k": 1024, "iters": rng.randrange(5, 30)}
    return kind, {"template": "noop", "defines": {"VALUE": rng.randrange(-1024, 1025)}, "nvcc": "skip"}


def test_what_the_queue_keeps_of_a_job_validates_again_as_the_same_job():
    """The worker validates a job's stored parameters again before it runs them (gpu_worker.service.execute_job):
    what the queue keeps (registry.stored) must be a job the model accepts, and the same one. Before, every smem job
    was kept with all its fields, access.layout null included, and the worker refused it."""
    rng = random.Random(16600)
    seen: dict[str, int] = {}
    while sum(seen.values()) < 60:
        kind, params = _fresh(rng)
        try:
            model = registry.validate(kind, params)
        except ParamsError:
            continue
        seen[kind] = seen.get(kind, 0) + 1
        kept = registry.stored(model)
        again = registry.validate(kind, kept)
        assert again.model_dump() == model.model_dump(), (kind, params, kept)
        assert registry.stored(again) == kept
    assert set(seen) == {"smem", "transpose", "gemm", "compile_only"}, seen


def test_a_queued_smem_job_reaches_its_runner(tmp_path, monkeypatch):
    """Through the real queue and worker path: the attempt validates what was stored and fails only because this
    host's GPU is fake, never on the job's own fields."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    for k in ("LAYOUTLAB_DATABASE_URL", "LAYOUTLAB_REDIS_URL"):
        monkeypatch.delenv(k, raising=False)
    from gpu_worker import telemetry
    from gpu_worker.service import execute_job
    from gpu_worker.store import get_store

    store = get_store()
    model = registry.validate("smem", {"element_bytes": 2, "access": {"kind": "column", "index": 3}})
    store.create("smem", registry.stored(model))
    out = execute_job(store.lease("w0", 30, 3), "w0", telemetry._fake_info(0), store, heartbeat_s=0.05)
    assert out["status"] == "failed" and "fake GPU" in out["error"], out["error"]


def test_the_job_route_refuses_an_unread_pad_by_name(http):
    r = http.post("/api/bench/jobs", json={"kind": "smem", "params": {"variant": "swizzle", "swizzle": "Sw<5,0,5>",
                                                                      "pad": 2}})
    assert r.status_code == 422 and r.json()["detail"].startswith("pad:"), r.text


def test_the_lab_form_sends_no_field_the_variant_does_not_read():
    from app.routes.pages_lab import form_params

    base = {"kind": "smem", "pad": "3", "swizzle": "Sw<5,0,5>", "layout": "(32,32):(1,32)", "rows": "32"}
    for variant in ("naive", "padded", "swizzle", "custom"):
        _, params = form_params({**base, "variant": variant})
        for field, readers in VARIANT_FIELD_USED_BY.items():
            assert (field in params) == (variant in readers), (variant, field, params)
        registry.validate("smem", params)
    assert set(ACCESS_FIELD_USED_BY) >= {"index", "num", "trans", "offsets", "layout"}


@pytest.mark.parametrize("limit", ["0", "-5", "201", "100000", "99999999999999999999999"])
def test_a_job_listing_limit_outside_its_range_is_refused_by_name(http, limit):
    r = http.get("/api/bench/jobs", params={"limit": limit})
    assert r.status_code == 422 and r.json()["detail"].startswith("limit:") and "200" in r.json()["detail"] \
        or limit in ("0", "-5") and "1" in r.json()["detail"], (limit, r.status_code, r.text)


def test_a_job_listing_limit_inside_its_range_answers(http):
    for limit in ("1", "200"):
        assert http.get("/api/bench/jobs", params={"limit": limit}).status_code == 200


def test_the_rungs_route_picks_one_rung_and_names_a_bad_one(http):
    every = http.get("/api/bench/gemm/rungs").json()
    for k in range(1, len(every) + 1):
        one = http.get("/api/bench/gemm/rungs", params={"rung": k})
        assert one.status_code == 200 and one.json() == [every[k - 1]], k
    for bad in ("0", str(len(every) + 1), "-1", "abc", "1.0", "\u0663", "99999999999999999999", " "):
        r = http.get("/api/bench/gemm/rungs", params={"rung": bad})
        assert r.status_code == 422 and r.json()["detail"].startswith("rung:"), (bad, r.status_code, r.text[:200])


TRANSPOSE_READER = {"pad": "padded", "swizzle": "swizzled"}


def test_a_transpose_job_refuses_a_pad_or_swizzle_no_variant_of_it_reads():
    rng = random.Random(16601)
    for _ in range(12):
        dtype = rng.choice(["fp32", "fp16"])
        variants = rng.sample(["naive", "tiled", "padded", "swizzled"], rng.randrange(1, 4))
        given = {"pad": 2, "swizzle": "Sw<5,1,5>" if dtype == "fp16" else "Sw<5,0,6>"}
        for field, reader in TRANSPOSE_READER.items():
            params = {"dtype": dtype, "variants": variants, field: given[field]}
            if reader in variants:
                model = registry.validate("transpose", params)
                assert getattr(model, field) == given[field]
            else:
                msg = _refused("transpose", params)
                assert msg.startswith(f"{field}:") and reader in msg, (params, msg)


def test_a_transpose_variant_named_twice_is_refused():
    msg = _refused("transpose", {"variants": ["naive", "tiled", "naive"]})
    assert msg.startswith("variants:") and "naive" in msg and "twice" in msg, msg


def test_the_lab_form_refuses_a_field_it_does_not_have_and_one_given_twice(http):
    """The page's form holds an "n" for transpose and one for GEMM; sent both, the transpose job used to take the
    GEMM's (the last), silently. A repeated name with two values, or a name the form lacks, is refused by name."""
    hx = {"HX-Request": "true", "content-type": "application/x-www-form-urlencoded"}
    r = http.post("/lab/jobs", content="kind=transpose&dtype=fp32&n=1024&tile=64&v_naive=1&rung=7&m=4096&n=4096"
                  "&k=4096", headers=hx)
    assert r.status_code == 422 and "n: given twice" in r.text, r.text[:400]
    r = http.post("/lab/jobs", content="kind=transpose&dtype=fp32&n=1024&tile=64&v_naive=1", headers=hx)
    assert r.status_code == 409 and "no live worker" in r.text, r.text[:400]
    rng = random.Random(16602)
    for _ in range(5):
        name = "".join(rng.choice("abcdefghij_") for _ in range(rng.randrange(3, 9)))
        r = http.post("/lab/jobs", data={"kind": "compile_only", name: "1"}, headers={"HX-Request": "true"})
        assert r.status_code == 422 and f"{name}: the lab form has no such field" in r.text, (name, r.text[:300])


def test_the_page_form_sends_the_chosen_kind_only(http):
    """Every fieldset of a kind other than the one shown is disabled (so not submitted) as it is hidden."""
    import re

    page = http.get("/lab").text
    tags = re.findall(r'<fieldset data-kind="(\w+)"([^>]*)>', page)
    assert tags and all(("disabled" in rest) == (kind != "smem") == ("hidden" in rest) for kind, rest in tags), tags


BASES = {"smem": {"variant": "naive", "rows": 32, "cols": 32, "element_bytes": 4},
         "transpose": {"dtype": "fp32", "n": 1024, "tile": 32},
         "gemm": {"rung": 7, "m": 1024, "n": 1024, "k": 1024},
         "compile_only": {"template": "noop", "nvcc": "skip"}}
BAD = [True, 1.5, "4", None, [], {}, -1, 1 << 40, "\u0664"]


def test_a_fresh_wrong_value_in_any_field_of_any_kind_is_refused_by_its_name(http):
    """One field of a valid job at a time takes a wrong type or an out-of-range value: 422 whose detail starts with
    that field's name (never 5xx, never queued, never 409 as if it were valid); an unknown key is named too."""
    rng = random.Random(16603)
    fields = {"smem": ["element_bytes", "rows", "cols", "nacc", "iterations", "runs", "profile", "variant"],
              "transpose": ["dtype", "n", "tile", "block_rows", "runs", "variants"],
              "gemm": ["rung", "m", "n", "k", "dtype", "iters", "warmup"],
              "compile_only": ["template", "defines", "hold_ms", "nvcc", "tag"]}
    tried = 0
    for _ in range(60):
        kind = rng.choice(sorted(BASES))
        field, bad = rng.choice(fields[kind]), rng.choice(BAD)
        if field == "tag" and bad is None or field == "defines" and bad == {}:
            continue  # a null tag and no constants are valid
        params = {**BASES[kind], field: bad}
        r = http.post("/api/bench/jobs", json={"kind": kind, "params": params})
        assert r.status_code == 422 and r.json()["detail"].startswith(field), (kind, params, r.status_code, r.text)
        tried += 1
        key = "".join(rng.choice("xyzq_") for _ in range(6))
        r = http.post("/api/bench/jobs", json={"kind": kind, "params": {**BASES[kind], key: 1}})
        assert r.status_code == 422 and r.json()["detail"].startswith(f"{key}:"), (kind, key, r.text)
    assert tried >= 40
