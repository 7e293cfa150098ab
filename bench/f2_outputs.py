#!/usr/bin/env python3
"""Every answer the F2 code gives users, dumped as JSON so two trees can be diffed byte for byte: the Triton API
(``/api/triton/layout``, ``/api/triton/conflicts``), the layout doctor's linear-layout and smem routes
(``/api/solve/linear``, ``/linear/import``, ``/linear/atom``, ``/smem``), the Triton pages (``/tv`` triton tab,
the explorer's TTGIR panel), the ``triton_layout`` drills, and the swizzle's F2 view. Inputs: the tests' TTGIR
attributes and seeded random ones.

Each answer is kept as its first 120 characters and the SHA-256 of the whole (the pages are large; a process holding
them all would pass the server's own memory budget and turn answers into refusals).

Usage:  python3 bench/f2_outputs.py OUT.json [--quick]
        python3 bench/f2_outputs.py --compare BEFORE.json AFTER.json   (summary to bench/results/f2_outputs_diff.json)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIXED = [
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>",
    "#ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>",
    "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>",
    "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
    "#ttg.nvidia_mma<{versionMajor = 1, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>",
    "#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], "
    "instrShape = [16, 8]}>, kWidth = 2}>",
    "#ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], "
    "instrShape = [16, 8]}>, kWidth = 4}>",
    "#ttg.slice<{dim = 0, parent = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
    "warpsPerCTA = [4, 1], order = [1, 0]}>}>",
    "#ttg.linear<{register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], block = []}>",
    "#ttg.linear<{register = [], lane = [[0, 1]], warp = [], block = []}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
    "#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>",
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 16}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 32, transposed = false, elementBitWidth = 8}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 96, transposed = false, elementBitWidth = 16}>",
    "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [16, 64]}>",
    "#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>",
    "#ttg.padded_shared<[32:+4, 64:+8] {order = [1, 0], shape = [64, 64]}>",
    "#ttg.padded_shared<[64:+16] {order = [0, 1], shape = [16, 16]}>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 16>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 3], [2, 0]], block = []}, alignment = 16>",
    "#ttg.amd_mfma<{versionMajor = 3}>",
    "#ttg.blocked<{}>",
]
SHAPES = [[16, 16], [32, 32], [16, 64], [64, 64], [128, 64], [64, 128], [128, 128], [4, 8], [256, 64]]


def pow2(rng: random.Random, lo: int, hi: int) -> int:
    return 1 << rng.randint(lo, hi)


def split32(rng: random.Random) -> list[int]:
    a = pow2(rng, 0, 5)
    return [a, 32 // a]


def random_attrs(rng: random.Random, n: int) -> tuple[list[str], list[str]]:
    dist, shared = [], []
    for _ in range(n):
        order = rng.choice([[1, 0], [0, 1]])
        w = pow2(rng, 0, 3)
        wa = pow2(rng, 0, w.bit_length() - 1)
        dist.append(f"#ttg.blocked<{{sizePerThread = [{pow2(rng, 0, 2)}, {pow2(rng, 0, 3)}], threadsPerWarp = "
                    f"{split32(rng)}, warpsPerCTA = [{wa}, {w // wa}], order = {order}}}>")
        mma = (f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [{wa}, {w // wa}], "
               f"instrShape = [16, 8]}}>")
        dist.append(mma)
        dist.append(f"#ttg.dot_op<{{opIdx = {rng.randint(0, 1)}, parent = {mma}, kWidth = {pow2(rng, 1, 3)}}}>")
        dist.append(f"#ttg.slice<{{dim = {rng.randint(0, 1)}, parent = {dist[-3]}}}>")
        lanes = [[0, 0]] * 0
        bits = [[0, 1 << i] for i in range(4)] + [[1 << i, 0] for i in range(4)]
        rng.shuffle(bits)
        lanes = bits[:5]
        regs = bits[5:5 + rng.randint(0, 3)]
        dist.append(f"#ttg.linear<{{register = {regs}, lane = {lanes}, warp = [], block = []}}>")
        maxp = pow2(rng, 0, 3)
        shared.append(f"#ttg.swizzled_shared<{{vec = {pow2(rng, 0, 3)}, perPhase = {pow2(rng, 0, 2)}, "
                      f"maxPhase = {maxp}, order = {order}}}>")
        shared.append(f"#ttg.nvmma_shared<{{swizzlingByteWidth = {rng.choice([0, 32, 64, 128])}, transposed = "
                      f"{rng.choice(['true', 'false'])}, elementBitWidth = {rng.choice([8, 16, 32])}}}>")
        shared.append(f"#ttg.padded_shared<[{pow2(rng, 2, 7)}:+{pow2(rng, 0, 3)}] {{order = {order}, "
                      f"shape = [64, 64]}}>")
        offs = [[0, 1 << i] for i in range(3)] + [[1 << i, rng.choice([0, 1, 2, 4])] for i in range(3)]
        shared.append(f"#ttg.shared_linear<{{offset = {offs}}}, alignment = 16>")
    return dist, shared


def random_layouts(rng: random.Random, n: int) -> list[str]:
    out = ["(8,8):(1,8)", "(8,8):(8,1)", "Sw<3,0,3> o (8,8):(8,1)", "Sw<3,4,3> o (64,64):(64,1)",
           "Sw<2,3,3> o (16,64):(64,1)", "(4,4):(1,5)", "(4,3):(1,4)", "(2,2):(3,4)", "Sw<1,0,1> o 4:1",
           "(8,(2,4)):(2,(1,16))", "ArithTuple(0,0) o (4,4):(1@0,1@1)", "(16,16):(16,1)", "((2,2),(2,2)):((1,4),(2,8))"]
    for _ in range(n):
        k = rng.randint(1, 3)
        shape = [pow2(rng, 0, 3) for _ in range(k)]
        perm = list(range(sum(s.bit_length() - 1 for s in shape)))
        rng.shuffle(perm)
        strides, i = [], 0
        for s in shape:
            strides.append(1 << perm[i] if s > 1 else 0)
            i += s.bit_length() - 1
        if rng.random() < 0.2 and strides:
            strides[0] += 1
        text = f"({','.join(map(str, shape))}):({','.join(map(str, strides))})"
        if rng.random() < 0.5:
            b = rng.randint(1, 3)
            text = f"Sw<{b},{rng.randint(0, 2)},{rng.randint(b, 4)}> o {text}"
        out.append(text)
    return out


def random_lls(rng: random.Random, n: int) -> list[dict]:
    out: list[dict] = [{"bases": {"offset": [[4, 0]]}, "out_dims": {"dim0": 4, "dim1": 4}},
                       {"bases": {"offset": []}, "out_dims": {"dim0": 6}},
                       {"bases": {"offset": [[1, 1], [2, 0], [0, 2], [0, 1]]}, "out_dims": {"dim0": 4, "dim1": 4}},
                       {"bases": {"lane": [[1, 0], [1, 1]], "register": [[0, 1]]}, "out_dims": {"dim0": 2, "dim1": 2}},
                       {"reg_bases": [[0, 1]], "lane_bases": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                        "warp_bases": [], "block_bases": [], "shape": [8, 8]}, "nope", {"bases": 3}]
    for _ in range(n):
        a, b = rng.randint(0, 3), rng.randint(0, 3)
        units = [[1 << i, 0] for i in range(a)] + [[0, 1 << i] for i in range(b)]
        rng.shuffle(units)
        for v in units:
            if rng.random() < 0.3:
                v[0] ^= rng.randrange(1 << a) if a else 0
        kind = rng.random()
        if kind < 0.4:
            bases = {"offset": units}
        elif kind < 0.8:
            k = rng.randint(0, len(units))
            bases = {"register": units[:k], "lane": units[k:], "warp": [], "block": []}
        else:
            bases = {"dim0": units[:1], "dim1": units[1:]}
        out.append({"bases": bases, "out_dims": {"dim0": 1 << a, "dim1": 1 << b}})
    return out


def compare(before: Path, after: Path) -> int:
    import collections
    import datetime as dt
    import platform

    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    doc = {"benchmark": "f2_outputs", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "command": "python3 bench/f2_outputs.py " + " ".join(sys.argv[1:]), "host": platform.node(),
           "answers": len(a), "by_kind": dict(collections.Counter(k.split()[0] for k in a)),
           "status": dict(collections.Counter(f"{k.split()[0]} {v[:3]}" for k, v in a.items())),
           "differ": len(differ), "differing": differ[:50]}
    out = ROOT / "bench" / "results" / "f2_outputs_diff.json"
    out.write_text(json.dumps(doc, indent=1))
    print(f"{len(a)} answers before, {len(b)} after, {len(differ)} differ; wrote {out}")
    return 0 if not differ else 1


def main() -> int:
    if sys.argv[1] == "--compare":
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    quick = "--quick" in sys.argv
    out_path = Path(sys.argv[1])
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp(prefix="f2out"))
    os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("LAYOUTLAB_RSS_BUDGET_MB", "16384")  # the harness's own memory is not the request's
    from fastapi.testclient import TestClient

    from app.drills.core import generate
    from app.main import create_app

    rng = random.Random(2026)
    c = TestClient(create_app(), raise_server_exceptions=False)
    res: dict[str, str] = {}

    def rec(key: str, r) -> None:  # noqa: ANN001
        keep(key, f"{r.status_code} {r.text}")

    def keep(key: str, text: str) -> None:
        res[key] = f"{text[:120]} sha256:{hashlib.sha256(text.encode()).hexdigest()}"

    rd, rs = random_attrs(rng, 6 if quick else 24)
    dists = [a for a in FIXED if "shared" not in a] + rd
    shareds = [a for a in FIXED if "shared" in a] + rs
    for a in dists + shareds:
        for shape in SHAPES[: 4 if quick else None]:
            for bits in (8, 16, 32):
                rec(f"layout {a} {shape} {bits}",
                    c.post("/api/triton/layout", json={"layout": a, "shape": shape, "element_bits": bits}))
    pairs = [(d, s) for d in dists for s in shareds if "slice" not in d]
    rng.shuffle(pairs)
    for d, s in pairs[: 40 if quick else 400]:
        shape = rng.choice(SHAPES[:7])
        if "shape = [" in s:
            shape = json.loads(s[s.index("shape = [") + 8: s.index("]", s.index("shape = [")) + 1])
        elif "shared_linear" in s:
            shape = [8, 8]
        bits = rng.choice([8, 16, 32])
        for op in ("store", "load"):
            body = {"distributed": d, "shared": s, "shape": shape, "element_bits": bits, "op": op,
                    "warp": rng.choice([0, 0, 1])}
            rec(f"conflicts {json.dumps(body)}", c.post("/api/triton/conflicts", json=body))
    for a in (dists + shareds)[: 10 if quick else None]:
        for shape in ("64,64", "16,16", "128,64"):
            for shared in ("", shareds[0], shareds[3]):
                q = {"tab": "triton", "tt_layout": a, "tt_shape": shape, "tt_bits": "16", "tt_shared": shared}
                rec(f"tv {json.dumps(q)}", c.get("/tv", params=q))
            rec(f"explorer {a} {shape}", c.get("/", params={"ttgir": a, "shape": shape, "bits": "16"}))
    for text in random_layouts(rng, 20 if quick else 200):
        rec(f"linear {text}", c.post("/api/solve/linear", json={"layout": text}))
    for obj in random_lls(rng, 20 if quick else 300):
        rec(f"import {json.dumps(obj)}", c.post("/api/solve/linear/import", json=obj))
    from algebra.hw import atoms

    names = sorted(atoms.names())
    for name in names[: 6 if quick else None]:
        for operand in ("A", "B", "C", "src", "dst"):
            for eb in (16, 8):
                rec(f"atom {name} {operand} {eb}", c.get("/api/solve/linear/atom",
                                                         params={"name": name, "operand": operand,
                                                                 "element_bits": eb}))
    for seed in range(10 if quick else 150):
        try:
            d = generate("triton_layout", seed)
            keep(f"drill {seed}", repr(sorted((k, v) for k, v in vars(d).items()
                                              if k != "mistakes" and not callable(v))))
        except Exception as e:  # noqa: BLE001
            keep(f"drill {seed}", f"error {type(e).__name__}: {e}")
    sys.path.insert(0, str(ROOT / "bench"))
    from solve_speed import CASES

    smem = list(CASES.values())
    for _ in range(4 if quick else 30):
        eb = rng.choice([1, 2, 4, 8])
        rows, cols = pow2(rng, 4, 7), pow2(rng, 4, 7)
        accs = [{"kind": "offsets", "offsets": [[rng.randrange(rows), rng.randrange(cols)] for _ in range(32)]},
                rng.choice([{"kind": "column", "index": rng.randrange(cols)}, {"kind": "row", "index": 1}])]
        smem.append((eb, f"({rows},{cols}):({cols},1)", accs))
    for eb, tile, accs in smem:
        body = {"element_bytes": eb, "tile": tile, "accesses": accs}
        r = c.post("/api/solve/smem", json=body)
        text = re.sub(r'"elapsed_ms":[0-9.]+', '"elapsed_ms":T', r.text)  # a timing, not an answer
        keep(f"smem {json.dumps(body)}", f"{r.status_code} {text}")
    import algebra as A

    for b in range(0, 4):
        for m in range(0, 4):
            for s in range(max(b, 1), 6):
                keep(f"swizzle {b},{m},{s}", json.dumps(A.describe_swizzle(A.Swizzle(b, m, s))))
    out_path.write_text(json.dumps(res, indent=0, sort_keys=True))
    print(f"{len(res)} answers -> {out_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
