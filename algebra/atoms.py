"""``from algebra import atoms`` (CONTRACT §3b): the MMA and copy atoms of ``algebra.hw.atoms``, the tiled copy /
tiled MMA of ``algebra.hw.atoms_tiled`` and Blackwell's tcgen05 atoms (``algebra.hw.sm100``), in the one namespace
that callers have always used."""

from algebra.hw.atoms import MMAAtom, copy_names, get, mma_names, names
from algebra.hw.atoms_tiled import (
    TiledCopy,
    TiledMMA,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_mma,
)
from algebra.hw.sm100 import umma
