"""TMA atoms against CuTe C++ (host only, g++: the tensor-map encode is compiled out; what ``make_tma_atom`` decides
on the host is not): fresh rank-2 / rank-3 global tensors (any mode contiguous, padded leading strides), CTA tiles,
shared-memory layouts that walk the contiguous mode first (row- / column-major, GMMA atoms tiled to the tile,
swizzled, and modes in other orders) and clusters of 1-4 CTAs multicasting. One case in five has a global mode of
stride 0 (a broadcast; drawn from its own stream, ``seed + 2``, so the other cases of a seed are unchanged), mostly
one that shared memory does not walk first: CuTe compiles every such case and stops at run time where the stride-1
mode is gone (refused here as there).

Per case: ``get_tma_tensor(shape(g))`` (the TMA coordinate tensor), the elements of one instruction (the atom's
``NumValSrc``) and ``construct_tma_gbasis`` (the box and its dimensions' global modes) against
``algebra.hw.tma.make_tma_atom``. A case CuTe stops on (an assert at run time) must be refused here; global modes
that CuTe's ``coalesce_256`` merges share one TMA dimension here as there. ``--partition``: also ``tma_partition``
for every CTA of the cluster at a drawn CTA tile coordinate (its source and destination, as CuTe prints them) against
``TmaAtom.partition``.

    python tests/oracle/cute_tma.py --seed 10830 --n 40
    python tests/oracle/cute_tma.py --seed 12702 --n 60 --wide --partition
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cute_cpp import compile_and_resume, cvalue, oracle_cli, printed  # noqa: E402

import algebra as A  # noqa: E402
from algebra.hw import hopper, tma  # noqa: E402

TYPES = {16: ("half_t", "FLOAT16"), 32: ("float", "FLOAT32"), 8: ("uint8_t", "UINT8")}


def _smem(rng: random.Random, tile: tuple[int, ...], first: int, bits: int) -> str:
    """A shared-memory layout of ``tile`` whose stride-1 mode is ``first`` (the global contiguous mode)."""
    if len(tile) == 2 and rng.random() < 0.4:
        major = "K" if first == 1 else "MN"
        for span in rng.sample([128, 64, 32, 16], 4):
            atom = hopper.smem_atom(major, span, bits)
            if tile[0] % atom.shape[0] == 0 and tile[1] % atom.shape[1] == 0:
                lay = A.tile_to_shape(atom.layout if span != 16 else A.Layout(atom.shape, atom.stride), tile)
                return str(lay)
    order = [first] + rng.sample([j for j in range(len(tile)) if j != first], len(tile) - 1)
    stride, acc = [0] * len(tile), 1
    for j in order:
        stride[j], acc = acc, acc * tile[j]
    lay = A.Layout(tile, tuple(stride))
    if rng.random() < 0.3 and tile[first] * bits >= 1024:
        b = rng.choice([1, 2, 3])
        m = {8: 4, 16: 3, 32: 2}[bits]
        return f"Sw<{b},{m},3> o 0 o {lay}"
    return str(lay)


def gen_cases(seed: int, n: int, merge: bool = False, wide: bool = False, partition: bool = False) -> list[dict]:
    """``merge``: the contiguous mode's extent is its tile's, unpadded (global modes that coalesce_256 merges).
    ``wide``: see ``_wide_case``. ``partition``: each case gets a CTA tile coordinate (``coord``) and is compared
    with ``tma_partition`` for every CTA of its cluster as well."""
    out = _gen(random.Random(seed), n, merge, wide)
    bcast = random.Random(seed + 2)
    for c in out:
        if bcast.random() < 0.2:
            c["g"] = _broadcast(bcast, c["g"])
    rng = random.Random(seed + 1)
    for c in out if partition else ():
        shape = A.parse(c["g"]).shape
        shape = shape if isinstance(shape, tuple) else (shape,)
        c["coord"] = [rng.randrange(-(-s // t)) for s, t in zip(shape, c["tile"], strict=True)]
    return out


def _gen(rng: random.Random, n: int, merge: bool, wide: bool) -> list[dict]:
    out: list[dict] = []
    while wide and len(out) < n:
        out.append(_wide_case(rng))
    while len(out) < n:
        rank, bits = rng.choice([2, 2, 3]), rng.choice([16, 16, 32, 8])
        tile = tuple(rng.choice([8, 16, 32, 64, 128]) if j < 2 else rng.choice([1, 2, 4]) for j in range(rank))
        if A.inttuple.product(tile) > 16384:
            continue
        shape = tuple(t * rng.choice([1, 2, 4, 8]) for t in tile)
        first = rng.randrange(rank)
        if merge:
            tile = tuple(rng.choice([2, 4, 8, 16, 32]) if j == first else t for j, t in enumerate(tile))
            shape = tuple(t if j == first else s for j, (t, s) in enumerate(zip(tile, shape, strict=True)))
        order = [first] + rng.sample([j for j in range(rank) if j != first], rank - 1)
        stride, acc = [0] * rank, 1
        for j in order:
            stride[j] = acc
            acc *= shape[j] + (rng.choice([0, 0, 8, 64]) if j == first and not merge else 0)  # padded leading dim
        cluster = rng.choice([1, 1, 2, 4])
        out.append({"g": str(A.Layout(shape, tuple(stride))), "s": _smem(rng, tile, first, bits), "tile": list(tile),
                    "cluster": cluster, "bits": bits})
    return out


def _broadcast(rng: random.Random, g: str) -> str:
    """``g`` with one mode's stride 0: one that is not its stride-1 mode four times in five, else that one."""
    lay = A.parse(g)
    stride = list(lay.stride)
    ones = [j for j, d in enumerate(stride) if d == 1]
    others = [j for j in range(len(stride)) if j not in ones]
    j = rng.choice(others if others and (not ones or rng.random() < 0.8) else ones)
    stride[j] = 0
    return str(A.Layout(lay.shape, tuple(stride)))


def _wide_case(rng: random.Random) -> dict:
    """Tiles that do not divide the global shape, clusters of 1-16 CTAs (not only powers of 2), boxes over 256 that
    the multicast cut brings under it, and rank 4-7 tensors (CuTe groups TMA dimensions 4.. into one)."""
    rank, bits = rng.choice([2, 3, 4, 5, 6, 7]), rng.choice([16, 32, 8])
    while True:
        tile = [rng.choice([8, 16, 32, 64, 128, 256, 512, 24, 48, 96, 192]) if j == 0 else rng.choice(
            [1, 2, 4, 8, 16, 32, 64, 3, 6, 12, 24, 48]) if j == 1 else rng.choice([1, 1, 2, 4, 3]) for j in range(rank)]
        if A.inttuple.product(tuple(tile)) <= 16384:
            break
    shape = [t * rng.choice([1, 2, 3]) + (rng.choice([0, 1, 3, 8, 24]) if rng.random() < 0.5 else 0) for t in tile]
    order = list(range(rank))
    if rng.random() < 0.3:
        order = [0] + rng.sample(order[1:], rank - 1)
    stride, acc, unit = [0] * rank, 1, 128 // bits  # 16-byte multiples past the contiguous mode
    for j in order:
        stride[j] = acc
        acc *= shape[j]
        if j == 0 or rng.random() < 0.5:
            acc = -(-acc // unit) * unit + (unit * rng.choice([0, 0, 1, 2]) if rng.random() < 0.5 else 0)
    smem = A.Layout(tuple(tile))
    s = str(smem)
    if rng.random() < 0.2 and tile[0] * bits >= 1024:
        s = f"Sw<{rng.choice([1, 2, 3])},{ {8: 4, 16: 3, 32: 2}[bits]},3> o 0 o {smem}"
    if A.cosize(A.Layout(tuple(shape), tuple(stride))) > 1 << 25:
        return _wide_case(rng)
    return {"g": str(A.Layout(tuple(shape), tuple(stride))), "s": s, "tile": tile,
            "cluster": rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 16]), "bits": bits}


def _plain(s: object) -> A.Layout:
    return s.layout_b if hasattr(s, "layout_b") else s


def _atom(c: dict) -> tma.TmaAtom:
    op = "SM90_TMA_LOAD_MULTICAST" if c["cluster"] > 1 else "SM90_TMA_LOAD"
    return tma.make_tma_atom(op, A.parse(c["g"]), A.parse(c["s"]), tuple(c["tile"]), c["cluster"],
                             TYPES[c["bits"]][1])


def program(cases: list[dict]) -> list[str]:
    """Case ``i`` is ``void c<i>()``."""
    lines = ["#include <cstdio>", "#include <cute/tensor.hpp>",
             "#include <cute/atom/copy_traits_sm90_tma.hpp>", "using namespace cute;"]
    for i, c in enumerate(cases):
        t = TYPES[c["bits"]][0]
        plain = c["s"].split(" o ")[-1]
        tile = "make_shape(" + ", ".join(f"Int<{x}>{{}}" for x in c["tile"]) + ")"
        op = "SM90_TMA_LOAD_MULTICAST" if c["cluster"] > 1 else "SM90_TMA_LOAD"
        lines += [f"void c{i}() {{", f"  {{ alignas(128) static {t} buf[{A.cosize(A.parse(c['g']))}];",
                  f"    auto g = make_tensor(make_gmem_ptr(buf), {cvalue(c['g'])});",
                  f"    auto s = {cvalue(c['s'])};",
                  f"    auto atom = make_tma_atom({op}{{}}, g, s, {tile}, Int<{c['cluster']}>{{}});",
                  f'    printf("{i}.tensor\\t"); print(atom.get_tma_tensor(shape(g))); printf("\\n");',
                  f'    printf("{i}.vals\\t%d\\n", int(size<1>(typename decltype(atom)::ValLayoutSrc{{}})));',
                  f"    auto v = make_identity_layout(shape(g)).compose({tile});",
                  f'    printf("{i}.gbasis\\t"); print(detail::construct_tma_gbasis<{t}>(g, {cvalue(plain)}, v));'
                  ' printf("\\n"); fflush(stdout);']
        lines += _partition_lines(i, c, t, tile) + [f'    printf("{i}.done\\t1\\n"); fflush(stdout); }}', "}"]
    return lines


def _partition_lines(i: int, c: dict, t: str, tile: str) -> list[str]:
    """``tma_partition(atom, r, Layout<N>{}, group_modes<0,R>(sA), group_modes<0,R>(gA))`` for every CTA ``r`` of
    the cluster, ``gA = local_tile(get_tma_tensor(shape(g)), tile, coord)``: the source (gmem) view and the
    destination's layout (smem, the pointer left out)."""
    if "coord" not in c:
        return []
    r, n = len(c["tile"]), c["cluster"]
    coord = "make_coord(" + ", ".join(map(str, c["coord"])) + ")"
    return [f"    static {t} sbuf[{A.cosize(_plain(A.parse(c['s'])))}];",
            "    auto sA = make_tensor(make_smem_ptr(sbuf), s);",
            f"    auto gA = local_tile(atom.get_tma_tensor(shape(g)), {tile}, {coord});",
            f"    for (int r = 0; r < {n}; ++r) {{",
            f"      auto [tAgA, tAsA] = tma_partition(atom, r, Layout<Int<{n}>>{{}}, group_modes<0,{r}>(sA), "
            f"group_modes<0,{r}>(gA));",
            f'      printf("{i}.src%d\\t", r); print(tAgA); printf("\\n");',
            f'      printf("{i}.dst%d\\t", r); print(tAsA.layout());',
            '      printf(" + %d\\n", int(raw_pointer_cast(tAsA.data()) - raw_pointer_cast(sA.data())));',
            "      fflush(stdout); }"]


def run_cpp(cases: list[dict], timeout: int = 1800) -> dict[str, str]:
    """CuTe's values; a case that stops the program (a CuTe assert at run time) is ``<i>.refused``: its message."""
    got: dict[str, str] = {}
    died = compile_and_resume(program(cases), len(cases), lambda out: got.update(printed(out)),
                              lambda i: f"{i}.done" in got, timeout)
    got.update({f"{i}.refused": msg for i, (_, msg) in died.items()})
    return {a: b.replace("_", "") if not a.endswith("refused") else b for a, b in got.items()}


def compare(cases: list[dict], cute: dict[str, str]) -> list[str]:
    bad: list[str] = []
    for i, c in enumerate(cases):
        try:
            a = _atom(c)
        except A.LayoutError as exc:  # both refuse, or we refuse CuTe's print (named in the message) as wrong
            if f"{i}.refused" not in cute and f"CuTe prints {cute.get(f'{i}.tensor')} " not in str(exc):
                bad.append(f"{i} {c}: we refuse ({exc}) where CuTe prints {cute.get(f'{i}.tensor')}")
            continue
        if f"{i}.refused" in cute:
            bad.append(f"{i} {c}: CuTe stops ({cute[f'{i}.refused'][-200:]}) where we give {a.tma_tensor()}")
            continue
        try:
            mine = {"tensor": str(a.tma_tensor()), "vals": str(a.vector),
                    "gbasis": str(a.gbasis())}
            for r in range(c["cluster"]) if "coord" in c else ():
                p = a.partition(r, tuple(c["coord"]))
                mine[f"src{r}"] = str(p["source"])
                mine[f"dst{r}"] = f"{p['destination']} + {p['smem_offset']}"
            for k, v in mine.items():
                if cute.get(f"{i}.{k}") != v:
                    bad.append(f"{i}.{k} {c}: cute={cute.get(f'{i}.{k}')} ours={v}")
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            bad.append(f"{i} {c}: ours raised {exc!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    return oracle_cli(__doc__, 40, lambda a: gen_cases(a.seed, a.n, a.merge, a.wide, a.partition), run_cpp, compare,
                      argv,
                      {"--merge": "cases whose global modes coalesce_256 merges",
                       "--wide": "tiles that do not divide, clusters of 1-16, rank 4-7 (_wide_case)",
                       "--partition": "tma_partition's source and destination views, every CTA of the cluster"})


if __name__ == "__main__":
    sys.exit(main())
