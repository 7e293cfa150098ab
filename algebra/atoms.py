"""``from algebra import atoms`` (CONTRACT §3b): the MMA and copy atoms of ``algebra.hw.atoms`` and the tiled copy /
tiled MMA of ``algebra.hw.atoms_tiled`` and Blackwell's tcgen05 atoms and UMMA descriptors
(``algebra.hw.sm100``), in the one namespace that callers have always used."""

from algebra.hw.atoms import (
    CopyAtom,
    MMAAtom,
    SM70_8x4_Col,
    SM70_8x4_Row,
    SM70_8x8_16b,
    SM70_8x8_32b,
    SM70_QuadPair,
    SM80_8x4,
    SM80_8x8_Row,
    SM80_16x8_Row,
    SM90_ALayout_64x16,
    copy_names,
    get,
    mma_names,
    names,
)
from algebra.hw.atoms_tiled import (
    TiledCopy,
    TiledMMA,
    make_fragment_like,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_impl,
    make_tiled_mma,
)
from algebra.hw.sm100 import UmmaAtom, decode_instr_desc, decode_umma_desc, umma, umma_desc
