"""Address tables and predictions from layouts (gpu_worker.patterns) and the runner's result checks."""

from __future__ import annotations

import sys

import pytest

from gpu_worker import patterns
from gpu_worker.run import RunError, parse_output, run_binary


def plan(**kw):
    base = {"element_bytes": 4, "rows": 32, "cols": 32, "variant": "naive", "access": {"kind": "column"}, "nacc": 4}
    return patterns.plan_smem({**base, **kw})


def test_column_read_naive_padded_swizzled():
    assert plan()["prediction"]["max_ways"] == 32
    assert plan(variant="padded", pad=1)["prediction"]["wavefronts_per_access"] == 1
    assert plan(variant="swizzle", swizzle="Sw<5,0,5>")["prediction"]["wavefronts_per_access"] == 1
    p = plan()
    assert p["addresses"][0] == [128 * t for t in range(32)]
    assert p["addresses"][1] == [128 * t + 4 for t in range(32)]


def test_swizzle_table_matches_the_kernel_formula():
    # the transpose kernel computes o ^ ((o >> S) & (((1 << B) - 1) << M)); the algebra must give the same offsets
    for b, m, s, tile in ((5, 0, 5, 32), (5, 1, 5, 64), (4, 1, 5, 32), (5, 0, 6, 64)):
        _, _, _, table = patterns.tile_offsets(patterns.layout_text("swizzle", tile, tile, swizzle=f"Sw<{b},{m},{s}>"))
        for r in range(tile):
            for c in range(tile):
                o = r * tile + c
                assert table[r][c] == o ^ ((o >> s) & (((1 << b) - 1) << m))


def test_ldmatrix_rows_and_refusals():
    p = plan(element_bytes=2, rows=64, cols=64, access={"kind": "ldmatrix", "num": 4})
    assert p["prediction"]["wavefronts_per_access"] == 32 and p["access_width_bytes"] == 16
    assert p["addresses"][0][:8] == [128 * i for i in range(8)]
    sw = plan(element_bytes=2, rows=64, cols=64, variant="swizzle", swizzle="Sw<3,3,3>",
              access={"kind": "ldmatrix", "num": 4})
    assert sw["prediction"]["wavefronts_per_access"] == 4
    with pytest.raises(patterns.PatternError, match="16-byte"):
        plan(element_bytes=2, rows=64, cols=64, variant="padded", pad=1, access={"kind": "ldmatrix"})
    with pytest.raises(patterns.PatternError, match="element_bytes must be 2"):
        plan(access={"kind": "ldmatrix"})


def test_offsets_thread_layout_and_caps():
    p = plan(access={"kind": "offsets", "offsets": [2 * t for t in range(32)]})
    assert p["prediction"]["wavefronts_per_access"] == 2
    p = plan(access={"kind": "thread_layout", "layout": "(4,8):(32,1)"})
    assert p["coords"][:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]  # T(t) is a column-major tile index
    assert p["prediction"]["wavefronts_per_access"] == 8
    with pytest.raises(patterns.PatternError, match="32 entries"):
        plan(access={"kind": "offsets", "offsets": [0, 1]})
    with pytest.raises(patterns.PatternError, match="cap"):
        plan(element_bytes=16, rows=256, cols=256)
    with pytest.raises(patterns.PatternError, match="S >= B"):
        patterns.parse_swizzle("Sw<3,0,2>")


def test_transpose_prediction_fixes_the_column_read():
    pred = patterns.transpose_prediction(32, 4, 1, "Sw<5,0,5>")
    assert pred["tiled"]["read"]["ways"] == 32
    assert pred["padded"]["read"]["ways"] == pred["swizzled"]["read"]["ways"] == 1


def test_fp16_transpose_prediction_models_word_accesses():
    # the fp16 kernels move 4-byte words: the naive 64x64 half tile's column read is 32-way (128-byte rows), the
    # 32x32 one 16-way (64-byte rows: two rows per bank line); padding by one word and the default swizzles fix both
    for tile, sw, naive in ((64, "Sw<5,1,5>", 32), (32, "Sw<4,1,5>", 16)):
        pred = patterns.transpose_prediction(tile, 2, 2, sw)
        assert pred["tiled"]["read"]["ways"] == naive and pred["tiled"]["access_bytes"] == 4
        assert pred["padded"]["read"]["ways"] == pred["swizzled"]["read"]["ways"] == 1
        assert pred["swizzled"]["write"]["ways"] == 1
    # the 32-wide padded tile's row write spans two rows of 17 words: lanes 0 and 31 meet in bank 0
    assert patterns.transpose_prediction(32, 2, 2, "Sw<4,1,5>")["padded"]["write"]["ways"] == 2


def _half2_words(tile: int, block_rows: int, swizzle: str) -> tuple[list[int], list[int], list[int]]:
    """The swizzled fp16 kernel's shared-memory word indices (kernels/transpose.cu, transpose_half2), written the way
    the kernel computes them: a per-lane swizzled base, an XOR with a constant and an immediate offset per step.
    Returns (the kernel's words, the model's words, the first read's 32 word indices) over every access."""
    b, m, s = patterns.parse_swizzle(swizzle)
    _, _, _, table = patterns.tile_offsets(patterns.layout_text("swizzle", tile, tile, swizzle=swizzle), tile, tile)

    def swz(o: int) -> int:
        return o ^ ((o >> s) & (((1 << b) - 1) << m))

    words, groups = tile // 2, tile // 32
    loads, rstep = tile * words // (32 * block_rows), 32 * block_rows // words
    kcols = loads // groups
    got, want, first = [], [], []
    for warp in range(block_rows):
        for lane in range(32):
            r0, w0 = divmod(warp * 32 + lane, words)
            s0 = swz(r0 * tile + 2 * w0)
            for j in range(loads):
                d = j * rstep * tile
                got.append(((s0 ^ (swz(d) ^ d)) + d) >> 1)
                want.append(table[r0 + j * rstep][2 * w0] // 2)
            rs = swz(lane * tile + 2 * warp * kcols)
            for c in range(kcols):
                for g in range(groups):
                    dr = g * 32 * tile
                    got.append(((rs ^ swz(2 * c) ^ (swz(dr) ^ dr)) + dr) >> 1)
                    want.append(table[g * 32 + lane][2 * (warp * kcols + c)] // 2)
            first.append(got[-kcols * groups])
    return got, want, first[:32]


@pytest.mark.parametrize("tile,block_rows,swizzle", [(128, 16, "Sw<5,1,6>"), (128, 8, "Sw<5,1,6>"),
                                                     (64, 8, "Sw<5,1,5>"), (32, 8, "Sw<4,1,5>")])
def test_fp16_kernel_swizzle_arithmetic_is_the_model_layout(tile, block_rows, swizzle):
    got, want, first = _half2_words(tile, block_rows, swizzle)
    assert got == want and sorted(set(got)) == list(range(tile * tile // 2))
    assert len({w % 32 for w in first}) == 32  # warp 0's first column read: 32 rows, 32 banks


def test_fp16_tile128_params_and_prediction():
    from gpu_worker.schemas import TransposeParams

    p = TransposeParams(dtype="fp16", tile=128, block_rows=16, n=8192)
    assert p.swizzle == "Sw<5,1,6>" and p.pad == 2
    pred = patterns.transpose_prediction(128, 2, 2, p.swizzle)
    assert pred["tiled"]["read"]["ways"] == 32
    for v in ("padded", "swizzled"):
        assert pred[v]["read"]["ways"] == pred[v]["write"]["ways"] == 1
    with pytest.raises(ValueError, match="fp16 only"):
        TransposeParams(dtype="fp32", tile=128)
    with pytest.raises(ValueError, match="offset bits"):
        TransposeParams(dtype="fp16", tile=128, block_rows=4, swizzle="Sw<5,4,6>")


def test_bench_configs_validate():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "bench"))
    import transpose as transpose_bench

    from gpu_worker.schemas import TransposeParams

    for name, cfg in transpose_bench.CONFIGS.items():
        assert TransposeParams(**cfg).spec()["swizzle"] == cfg["swizzle"], name


def _py(code: str) -> list[str]:
    return ["-c", code]


def test_runner_parses_json_and_never_trusts_exit_code_alone():
    ok = run_binary(sys.executable, _py('print("noise"); print(\'{"ok": true, "check": {"passed": true}}\')'))
    assert ok["ok"] and ok["returncode"] == 0
    with pytest.raises(RunError, match="no JSON"):
        run_binary(sys.executable, _py("print('all good, promise')"))
    with pytest.raises(RunError, match="correctness check failed"):
        run_binary(sys.executable, _py('print(\'{"ok": true, "check": {"passed": false, "mismatches": 3}}\')'))
    with pytest.raises(RunError, match="despite"):
        run_binary(sys.executable, _py('import sys; print(\'{"ok": true}\'); sys.exit(2)'))
    with pytest.raises(RunError, match="timed out"):
        run_binary(sys.executable, _py("import time; time.sleep(10)"), timeout_s=0.5)
    seen = []
    run_binary(sys.executable, _py('import sys; sys.stderr.write("PROGRESS timing 3 20\\n"); print(\'{"ok": true}\')'),
               on_progress=lambda *a: seen.append(a))
    assert seen == [("timing", 3, 20)]
    assert parse_output('x\n{"a": 1}\n{"ok": true}\n') == {"ok": True}
