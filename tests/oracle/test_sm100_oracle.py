"""CuTe C++ as the oracle for Blackwell: one host-only program, built with ``nvcc -arch=sm_100a`` against the
``nvidia-cutlass`` wheel's headers, prints every configuration's MMA_Traits (ALayout, BLayout, CLayout, ThrID,
Shape_MNK, the instruction descriptor), every TMEM copy atom's Copy_Traits, and the canonical UMMA smem layouts tiled
to several shapes with their ``make_umma_desc``; each line is compared with ``algebra.hw.sm100``.

Nothing runs on a GPU: the descriptors and layouts are built and printed by host code (CuTe's traits and
``make_umma_desc`` are constexpr host/device functions; the smem pointer is address 0).

The draws (the N of each configuration, the smem tiles) come from seed 100; ``LAYOUTLAB_ORACLE_SEED=S`` draws fresh
ones (more N per configuration, random smem tile factors) and also checks each accumulator's TMEM addresses against
``UMMA::tmem_frg``::

    LAYOUTLAB_ORACLE_SEED=9700 python -m pytest -m oracle tests/oracle/test_sm100_oracle.py"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cute_cpp import cute_include  # noqa: E402

from algebra import atoms  # noqa: E402
from algebra.core.layout import Layout  # noqa: E402
from algebra.core.notation import parse  # noqa: E402
from algebra.core.ops import composition  # noqa: E402
from algebra.hw import sm100  # noqa: E402
from algebra.hw.sm100_tmem import a_operand_layout, accumulator_layout, tmem_copy_table, val_id  # noqa: E402

pytestmark = [pytest.mark.oracle, pytest.mark.nvcc, pytest.mark.timeout(3600)]

TYPE_BITS = {"half_t": 16, "uint8_t": 8, "float": 32}
SEED = int(os.environ.get("LAYOUTLAB_ORACLE_SEED", "100"))


def umma_configs() -> list[dict]:
    """Every kind x CTA group x A source, each valid M, several N (the smallest, the largest, and random ones), the
    majors each form allows and several element types; a fixed seed keeps the set stable."""
    rng = random.Random(SEED)
    types = {"tf32": [("tf32", "f32")], "f16": [("f16", "f32"), ("bf16", "f32"), ("f16", "f16")],
             "i8": [("s8", "s32"), ("u8", "s32"), (("s8", "u8"), "s32")],
             "f8f6f4": [("e4m3", "f32"), (("e5m2", "e4m3"), "f16"), ("e2m3", "f32"), (("e3m2", "e2m1"), "f32"),
                        ("float_e2m1_t", "f32"), (("float_e4m3_t", "float_e2m3_t"), "f16")]}
    out = []
    for kind, tlist in types.items():
        for cta in (1, 2):
            for src in ("smem", "tmem"):
                for m in ((64, 128) if cta == 1 else (128, 256)):
                    for ab, c in tlist:
                        for am, bm in (("K", "K"), ("K", "MN"), ("MN", "K"), ("MN", "MN")):
                            if src == "tmem" and am == "MN":
                                continue
                            try:
                                ns, _ = sm100.n_rule(sm100._KIND_ALIASES[kind], m, cta, src, bm)
                            except KeyError:
                                continue
                            pick = {rng.choice(ns)} | ({ns[0], ns[-1]} if ab == tlist[0][0] else set())
                            if SEED != 100:  # fresh draws: more N per configuration
                                pick |= {rng.choice(ns) for _ in range(2)}
                            for n in sorted(pick):
                                try:
                                    a = atoms.umma(kind, m, n, am, bm, cta, src, ab, c)
                                except ValueError:
                                    continue  # a major the type lacks (MN-major fp6 / fp4)
                                out.append({"args": (kind, m, n, am, bm, cta, src, ab, c), "atom": a})
    return out


SMEM_ATOMS = [f"Layout_{mj}_{sw}_Atom" for mj in ("K", "MN") for sw in ("INTER", "SW32", "SW64", "SW128")] + [
    "Layout_MN_SW128_32B_Atom"]


def smem_cases() -> list[dict]:
    """Each canonical atom for 16-, 8- and 32-bit elements, tiled to several (MN, K) tiles, whole and as the first
    MMA K-block (32 bytes of K; one swizzle atom of K for MN-major)."""
    out = []
    rng = random.Random(SEED)
    for name in SMEM_ATOMS:
        for t, bits in TYPE_BITS.items():
            atom = sm100.umma_smem_atom(name, bits)
            amn, ak = atom.shape
            factors = [(1, 1), (2, 1), (4, 2), (16, 1), (8, 4)]
            if SEED != 100:  # fresh draws: random tile factors
                factors = sorted({(rng.choice([1, 2, 3, 4, 6, 8, 16]), rng.choice([1, 2, 3, 4, 8])) for _ in range(5)})
            for fm, fk in factors:
                mn, k = amn * fm, ak * fk
                if mn > 512 or k > 512:
                    continue
                tiles = [(mn, k)]
                kb = 256 // bits if atom.major == "K" else ak
                if k > kb:
                    tiles.append((mn, kb))  # the first K-block: composition(L, (mn, kb))
                out.append({"atom": atom, "type": t, "bits": bits, "mn": mn, "k": k, "block": tiles[-1],
                            "layout": sm100.tile_atom(atom, mn, k)})
    return out


def tmem_shapes(cfgs: list[dict]) -> list[tuple[int, int, int]]:
    """The distinct (M, N, CTA group) of the configurations: their accumulators' TMEM layouts are compared."""
    return sorted({(c["args"][1], c["args"][2], c["args"][5]) for c in cfgs})


def tmem_a_cases(cfgs: list[dict]) -> list[int]:
    """The TS configurations whose A the page draws in TMEM (8-, 16- and 32-bit A), one per (M, CTA group, A type):
    their ``FrgTypeA`` fragments are compared."""
    seen: dict[tuple, int] = {}
    for i, c in enumerate(cfgs):
        a = c["atom"]
        if "a" in a.tmem():
            seen.setdefault((a.shape_mnk[0], a.cta_group, a.types[1]), i)
    return sorted(seen.values())


def program(cfgs: list[dict], smem: list[dict], skip: frozenset = frozenset()) -> tuple[str, dict[int, str]]:
    """The translation unit, and line number -> the smem case key ("s<i>" whole tile, "b<i>" first K-block) whose
    lines those are (a static_assert CuTe fires is traced back to its case); ``skip``: keys left out."""
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_traits_sm100.hpp>",
             "#include <cute/atom/copy_traits_sm100.hpp>", "using namespace cute;",
             'template <class T> void show(const char* k, T const& x) { printf("%s\\t", k); print(x); '
             'printf("\\n"); }', "int main() {"]
    for i, c in enumerate(cfgs):
        tr = f"MMA_Traits<{c['atom'].cpp()}>"
        lines.append(f"  {{ using Tr = {tr};")
        for op in ("ALayout", "BLayout", "CLayout", "ThrID", "Shape_MNK"):
            lines.append(f'    show("u{i}.{op}", typename Tr::{op}{{}});')
        lines.append(f'    Tr tr{{}}; printf("u{i}.idesc\\t%u\\n", uint32_t(tr.idesc_)); }}')
    for m, n, cta in tmem_shapes(cfgs):
        lines.append(f'  show("t{m}.{n}.{cta}", UMMA::tmem_frg<float, uint32_t, {cta}>::make('
                     f'Shape<Shape<Int<{m // cta}>,Int<{n}>>,_1,_1>{{}}).layout());')
    for i in tmem_a_cases(cfgs):
        a = cfgs[i]["atom"]
        m, _, k = a.shape_mnk
        lines.append(f'  show("u{i}.FrgA", MMA_Traits<{a.cpp()}>::FrgTypeA::make('
                     f'Shape<Shape<Int<{m // a.cta_group}>,Int<{k}>>,_1,_1>{{}}).layout());')
    for name in tmem_copy_table() if cfgs else ():
        for op in ("SrcLayout", "DstLayout", "RefLayout", "ThrID", "ValID"):
            lines.append(f'  show("{name}.{op}", typename Copy_Traits<{name}>::{op}{{}});')
    where: dict[int, str] = {}
    if smem:
        for name in SMEM_ATOMS:
            for t, bits in TYPE_BITS.items():
                lines.append(f'  show("atom.{name}.{bits}", UMMA::{name}<{t}>{{}});')
    for i, s in enumerate(smem):
        a = s["atom"]
        tile = f"tile_to_shape(UMMA::{a.name}<{s['type']}>{{}}, Shape<Int<{s['mn']}>,Int<{s['k']}>>{{}})"
        bm, bk = s["block"]
        for key, expr in ((f"s{i}", tile), (f"b{i}", f"composition({tile}, make_tile(Layout<Int<{bm}>>{{}}, "
                                                      f"Layout<Int<{bk}>>{{}}))")):
            if key in skip:
                continue
            first = len(lines) + 1
            lines += [f"  {{ auto L = {expr};", f'    show("{key}.layout", L);',
                      f"    auto t = make_tensor(make_smem_ptr<{s['type']}>(nullptr), L);",
                      f"    printf(\"{key}.desc\\t%llu\\n\", (unsigned long long)uint64_t("
                      f"UMMA::make_umma_desc<UMMA::Major::{a.major}>(t))); }}"]
            where.update({n: key for n in range(first, len(lines) + 1)})
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n", where


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> dict:
    nvcc, inc = shutil.which(os.environ.get("NVCC", "nvcc")), cute_include()
    if nvcc is None or inc is None or not (inc / "cute" / "atom" / "mma_traits_sm100.hpp").is_file():
        pytest.skip("needs nvcc and the nvidia-cutlass wheel with CuTe's SM100 headers")
    cfgs, smem = umma_configs(), smem_cases()
    d = tmp_path_factory.mktemp("sm100_oracle")
    src, exe = d / "sm100.cu", d / "sm100"
    cmd = [nvcc, "-std=c++17", "-arch=sm_100a", "-O0", "-w", f"-I{inc}"]
    text, _ = program(cfgs, [])  # the MMA and TMEM traits: one compile
    src.write_text(text)
    r = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-4000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, check=True).stdout
    src, exe = d / "sm100_smem.cu", d / "sm100_smem"
    refused: dict[str, str] = {}
    for _ in range(3):  # the smem descriptors; the cases whose static_asserts fire are recorded as refused, left out
        text, where = program([], smem, frozenset(refused))
        src.write_text(text)
        r = subprocess.run(cmd + [str(src), "-o", str(exe)], capture_output=True, text=True, timeout=1800)
        if r.returncode == 0:
            break
        new = {}
        for block in r.stderr.split("error:")[1:]:
            m = re.search(r"at line (\d+) of", block)
            msg = re.search(r'"([^"]*)"', block)
            if m and int(m.group(1)) in where:
                new.setdefault(where[int(m.group(1))], msg.group(1) if msg else block[:200])
        assert new, r.stderr[-4000:]
        refused.update(new)
    assert r.returncode == 0, r.stderr[-4000:]
    out += subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, check=True).stdout
    return {"cfgs": cfgs, "smem": smem, "refused": refused,
            "out": dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)}


def plain(s: str) -> str:
    return s.replace("_", "")


def test_umma_atoms(oracle):
    out = oracle["out"]
    assert len(oracle["cfgs"]) > 150
    for i, c in enumerate(oracle["cfgs"]):
        a = c["atom"]
        mnk = "(" + ",".join(map(str, a.shape_mnk)) + ")"
        ours = {"ALayout": str(a.A), "BLayout": str(a.B), "CLayout": str(a.C), "ThrID": str(a.thr_id),
                "Shape_MNK": mnk}
        for op, v in ours.items():
            assert v == plain(out[f"u{i}.{op}"]), (c["args"], a.name, op)
        assert a.instr_desc == int(out[f"u{i}.idesc"]), (c["args"], a.name, hex(a.instr_desc))


def test_tmem_accumulator_addresses(oracle):
    """Each accumulator's TMEM addresses (lane << 16 | column) per CTA: ``sm100_tmem.accumulator_layout`` (CTA in
    bit 32) against CuTe's ``UMMA::tmem_frg<float, uint32_t, CTAs>::make(((M/CTAs, N), 1, 1))`` (one CTA's share)."""
    out = oracle["out"]
    for m, n, cta in tmem_shapes(oracle["cfgs"]):
        theirs = parse(plain(out[f"t{m}.{n}.{cta}"]))
        ours = accumulator_layout(m, n, cta)
        rows = m // cta
        for c in range(cta):
            got = [ours((c * rows + i, j)) for j in range(n) for i in range(rows)]
            assert all(g >> 32 == c for g in got), (m, n, cta)
            assert [g & 0xFFFFFFFF for g in got] == [theirs(k) for k in range(rows * n)], (m, n, cta, str(ours),
                                                                                            str(theirs))


def test_tmem_a_operand(oracle):
    """TS forms: each element of A in TMEM (lane, 32-bit column) per CTA, ``sm100_tmem.a_operand_layout`` against
    CuTe's ``FrgTypeA::make(((M/CTAs, K), 1, 1))`` (A's units: lane * DP<A> + k). A Duplicated fragment (2 CTAs,
    M = 128) has 128 rows: the second 64 are the copy."""
    out, cases = oracle["out"], tmem_a_cases(oracle["cfgs"])
    assert len(cases) >= 8
    for i in cases:
        a = oracle["cfgs"][i]["atom"]
        m, _, k = a.shape_mnk
        bits, rows = sm100.TYPES[a.types[1]][1], m // a.cta_group
        theirs, ours = parse(plain(out[f"u{i}.FrgA"])), a_operand_layout(m, a.cta_group)
        dp, cute_rows = (1 << 16) * (32 // bits), theirs.size() // k
        for c in range(a.cta_group):
            got = [ours((c * rows + r % rows, kk * bits // 32, r // rows)) for kk in range(k) for r in range(cute_rows)]
            want = [theirs(r + cute_rows * kk) for kk in range(k) for r in range(cute_rows)]
            assert [g >> 32 for g in got] == [c] * len(got), (a.name, m, c)
            assert [(g >> 16 & 0xFFFF, g & 0xFFFF) for g in got] == [(o // dp, o % dp * bits // 32) for o in want], (
                a.name, m, a.types[1], str(ours), str(theirs))


def test_tmem_copy_atoms(oracle):
    out = oracle["out"]
    assert len(tmem_copy_table()) == 148
    for name in tmem_copy_table():
        c = atoms.get(name)
        for op, ours in (("SrcLayout", c.src), ("DstLayout", c.dst), ("RefLayout", c.ref), ("ThrID", c.thr_id),
                         ("ValID", val_id(name))):
            assert str(ours) == plain(out[f"{name}.{op}"]), (name, op)


def test_umma_smem_descriptors(oracle):
    out, refused = oracle["out"], oracle["refused"]
    checked = 0
    for i, s in enumerate(oracle["smem"]):
        bits, major, name = s["bits"], s["atom"].major, s["atom"].name
        for key in (f"s{i}", f"b{i}"):
            if key in refused:  # CuTe's static_assert fired: we refuse too, naming the canonical-form rule
                lay = s["layout"] if key[0] == "s" else composition(s["layout"], tuple(Layout(x) for x in s["block"]))
                with pytest.raises(ValueError, match="canonical|UMMA"):
                    sm100.umma_desc(lay, bits, major)
                continue
            printed, want = out[f"{key}.layout"], int(out[f"{key}.desc"])
            # CuTe's own print parses, and gives the descriptor CuTe builds
            assert sm100.umma_desc(printed, bits, major) == want, (name, bits, key, printed)
            if key[0] == "s":  # element units (our tile_to_shape) give the same
                assert sm100.umma_desc(s["layout"], bits, major) == want, (name, bits, str(s["layout"]))
            d = sm100.decode_umma_desc(want)
            assert sm100.encode_fields(d["start_address"], d["leading_byte_offset"], d["stride_byte_offset"],
                                       d["layout_type"], d["base_offset"], d["lbo_mode"], d["version"]) == want
            assert d["version"] == 1 and d["reserved_bits"] == 0
            checked += 1
    assert checked > 150


def test_smem_atoms_print(oracle):
    """The canonical atoms as CuTe prints them (the byte swizzle, smem_ptr[Nb], the element layout)."""
    for name in SMEM_ATOMS:
        for bits in TYPE_BITS.values():
            assert sm100.umma_smem_atom(name, bits).cute_print() == oracle["out"][f"atom.{name}.{bits}"], (name, bits)


def test_refusals_are_clear():
    """Shapes CuTe's static_asserts refuse are refused here with the rule (not compiled: one failing instantiation
    per case would cost a compile each; the rules are read from the same static_asserts)."""
    for args, words in ((("f16", 96, 64), "M must be 64 or 128"), (("f16", 128, 12), "multiple of 8"),
                        (("f16", 128, 24, "K", "K", 1, "tmem"), "multiple of 16"),
                        (("tf32", 128, 48, "K", "K", 2, "tmem"), "multiple of 32"),
                        (("i8", 128, 24), "8 or a multiple of 16"), (("f16", 64, 64, "K", "K", 2), "128 or 256")):
        with pytest.raises(ValueError, match=words):
            atoms.umma(*args)
    with pytest.raises(ValueError, match="canonical"):
        sm100.umma_desc(Layout((8, 64), (1, 8)), 16, "K")
