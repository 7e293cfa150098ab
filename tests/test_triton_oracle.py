"""Triton is the oracle: random blocked, MMA, dot-operand, slice, linear and shared layouts, printed by Triton itself,
read by ``algebra.doctor.triton_layouts`` and compared with Triton's own ``to_linear_layout``; and blocked / MMA
stores into shared layouts compared with Gluon's ``bank_conflicts``. Needs ``pip install triton`` (CPU is enough);
behind the ``oracle`` marker: ``pytest -m oracle tests/test_triton_oracle.py``."""

from __future__ import annotations

import random
from typing import Any

import pytest

from algebra.doctor import triton_conflicts as C
from algebra.doctor import triton_layouts as T

pytestmark = pytest.mark.oracle
ttgl: Any = None  # Gluon's layout classes and the oracle helpers, imported only when these tests run (the default
O: Any = None     # suite deselects them and never imports triton)


@pytest.fixture(autouse=True, scope="module")
def _triton() -> None:
    global ttgl, O
    ttgl = pytest.importorskip("triton.experimental.gluon.language")
    import triton_oracle  # tests/ is on sys.path

    O = triton_oracle
CASES = 150


def _split(rng: random.Random, total: int, rank: int) -> list[int]:
    out = [1] * rank
    while total > 1:
        out[rng.randrange(rank)] *= 2
        total //= 2
    return out


def _perm(rng: random.Random, rank: int) -> list[int]:
    p = list(range(rank))
    rng.shuffle(p)
    return p


def _shape(rng: random.Random, rank: int, lo: int = 0, cap: int = 1 << 14) -> list[int]:
    while True:
        s = [1 << rng.randint(lo, 8) for _ in range(rank)]
        n = 1
        for x in s:
            n *= x
        if n <= cap:
            return s


def blocked(rng: random.Random, rank: int):
    return ttgl.BlockedLayout([1 << rng.randint(0, 3) for _ in range(rank)], _split(rng, 32, rank),
                              _split(rng, 1 << rng.randint(0, 3), rank), _perm(rng, rank))


def mma(rng: random.Random):
    if rng.random() < 0.5:
        return ttgl.NVMMADistributedLayout([2, 0], _split(rng, 1 << rng.randint(0, 3), 2), [16, 8])
    return ttgl.NVMMADistributedLayout([3, 0], [1 << rng.randint(0, 3), 1], [16, 1 << rng.randint(3, 8), 16])


def distributed(rng: random.Random):
    """A random distributed layout and a shape it is read for."""
    pick = rng.randrange(5)
    if pick == 0:
        rank = rng.choice((1, 2, 2, 3))
        return blocked(rng, rank), _shape(rng, rank)
    if pick == 1:
        return mma(rng), _shape(rng, 2, 3)
    if pick == 2 and rng.random() < 0.25:
        return ttgl.DotOperandLayout(rng.randrange(2), blocked(rng, 2), 0), _shape(rng, 2)
    if pick == 2:
        parent = mma(rng)
        op = 0 if parent.version[0] == 3 else rng.randrange(2)
        return ttgl.DotOperandLayout(op, parent, 1 << rng.randint(0, 3)), _shape(rng, 2, 3)
    if pick == 3:
        rank = rng.choice((2, 3))
        parent = blocked(rng, rank) if rank == 3 or rng.random() < 0.6 else mma(rng)
        d = rng.randrange(rank)
        return ttgl.SliceLayout(d, parent), _shape(rng, rank - 1)
    layout, shape = blocked(rng, 2), _shape(rng, 2)
    b = O.linear(layout, shape)
    return ttgl.DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], shape), shape


def shared(rng: random.Random, bits: int):
    if rng.random() < 0.6:
        rank = rng.choice((1, 2, 2, 3))
        v, mp = 1 << rng.randint(0, 3), 1 << rng.randint(0, 3)
        return ttgl.SwizzledSharedLayout(v, 1 << rng.randint(0, 2), mp, _perm(rng, rank)), _shape(rng, rank, 1)
    width = rng.choice((0, 32, 64, 128))
    transposed = rng.random() < 0.3
    span = max(8, 8 * width // bits)
    shape = [max(s, span if (transposed and i == 0) or (not transposed and i == 1) else 8)
             for i, s in enumerate(_shape(rng, 2))]
    return ttgl.NVMMASharedLayout(width, bits, transposed=transposed), shape


@pytest.mark.parametrize("seed", range(CASES))
def test_distributed_layouts_equal_tritons(seed: int) -> None:
    rng = random.Random(seed)
    layout, shape = distributed(rng)
    text = O.printed(layout, shape)
    assert T.convert(text, shape).bases() == O.linear(layout, shape), text


@pytest.mark.parametrize("seed", range(CASES))
def test_shared_layouts_equal_tritons(seed: int) -> None:
    rng = random.Random(1000 + seed)
    bits = rng.choice((8, 16, 32))
    layout, shape = shared(rng, bits)
    text = O.printed(layout, shape, bits)
    assert T.convert(text, shape, bits).bases() == O.linear(layout, shape), text


def test_linear_round_trip_through_triton() -> None:
    """A #ttg.linear printed by Triton reads back to the same bases, and to those of the layout it was made from."""
    rng = random.Random(7)
    for _ in range(20):
        layout, shape = blocked(rng, 2), _shape(rng, 2, 2)
        b = O.linear(layout, shape)
        lin = ttgl.DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], shape)
        assert T.convert(O.printed(lin, shape), shape).bases() == b


@pytest.mark.parametrize("seed", range(CASES))
def test_store_conflicts_equal_gluons(seed: int) -> None:
    """Gluon's bank_conflicts is the excess wavefronts per wavefront of ld/st.shared: total / phases - 1, over
    every warp (the model's count of warp 0 gives the same, the layouts being homogeneous)."""
    rng = random.Random(2000 + seed)
    bits = rng.choice((8, 16, 16, 32))
    dist = blocked(rng, 2) if rng.random() < 0.6 else mma(rng)
    sh, shape = shared(rng, bits)
    if len(shape) != 2:
        sh, shape = ttgl.SwizzledSharedLayout(sh.vec, sh.per_phase, sh.max_phase, _perm(rng, 2)), _shape(rng, 2, 3)
    shape = [max(s, 16) for s in shape]
    d, s = T.convert(O.printed(dist, shape, bits), shape), T.convert(O.printed(sh, shape, bits), shape, bits)
    total = phases = 0
    for w in range(1 << len(d.bases()["warp"])):
        p = C.plan(d, s, bits, "store", warp=w, matrix=False)
        total, phases = total + p["wavefronts"], phases + p["ideal"]
    assert total % phases == 0
    theirs = O.bank_conflicts(dist, sh, shape, bits)
    m = C.mapping(d, s, bits)
    if all(c * bits % 32 == 0 for c in m.lane):
        assert total // phases - 1 == theirs, (O.printed(dist, shape), O.printed(sh, shape))
    else:
        # a lane moves within a 4-byte word: Gluon's closed form counts such a lane as its own bank, the bank
        # model (and the hardware) as the word's bank, so the model counts at least as many
        assert total // phases - 1 >= theirs


def test_sub_word_lanes_where_gluon_counts_fewer() -> None:
    """8-bit elements, a lane that moves one byte and a segment: Gluon's formula counts 1 conflict, the bank model
    4 wavefronts per phase (lanes 0 and 1 write four different words of bank 0)."""
    dist = ttgl.BlockedLayout([4, 2], [8, 4], [1, 1], [1, 0])
    sh = ttgl.SwizzledSharedLayout(1, 4, 8, [0, 1])
    d, s = T.convert(O.printed(dist, [128, 16], 8), [128, 16]), T.convert(O.printed(sh, [128, 16], 8), [128, 16], 8)
    p = C.plan(d, s, 8, "store", matrix=False)
    assert {i["wavefronts"] for i in p["instructions"]} == {4} and p["kind"] == "st.shared.b8"
    assert O.bank_conflicts(dist, sh, [128, 16], 8) == 1
