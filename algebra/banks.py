"""``from algebra.banks import analyze`` (CONTRACT §3): the wavefront model of ``algebra.hw.banks``, the access
patterns of ``algebra.hw.bank_access`` and the padding / swizzle fixes of ``algebra.hw.bankfix``, in the one
namespace that callers have always used."""

from algebra.hw.bank_access import LaneOffsets, Offsets, bank_access, lane_bank_map, lane_offsets, lane_ways
from algebra.hw.bankfix import Fix, best_swizzle_fix, padding_fix, swizzle_candidates, swizzle_fixes
from algebra.hw.banks import (
    BANK_BYTES,
    LDMATRIX_ROW_BYTES,
    NUM_BANKS,
    WARP_SIZE,
    BankAnalysis,
    analyze,
    analyze_ldmatrix,
    bank_of,
)
