"""Preset inputs for the pages (label, value). Values are CuTe notation understood by ``algebra.parse``."""

from __future__ import annotations

EXPLORER: list[tuple[str, str]] = [
    ("row-major 4x8", "(4,8):(8,1)"),
    ("column-major 4x8", "(4,8):(1,4)"),
    ("hierarchical", "(4,(2,4)):(2,(1,8))"),
    ("mma C fragment (TV)", "((4,8),(2,2)):((32,1),(16,8))"),
    ("4x4 tiles of 2x2", "((2,4),(2,4)):((1,4),(2,16))"),
    ("broadcast rows", "(4,8):(0,1)"),
    ("rank 3", "(4,2,3):(1,12,4)"),
    ("fp16 8x64, padded", "(8,64):(72,1)"),
    ("fp16 8x64, Sw<3,3,3>", "Sw<3,3,3> o (8,64):(64,1)"),
    ("64x64 row-major", "(64,64):(64,1)"),
]

#: The banks lab's access suggestions (value of ``access=``, label). ldmatrix's .xN and .trans are the form's own
#: controls (``num=``, ``trans=``); on a tile of 8 rows its matrices sit side by side, so .x4 fits the default 8x64.
BANKS_ACCESSES: list[tuple[str, str]] = [
    ("column:0", "column 0"),
    ("row:0", "row 0"),
    ("ldmatrix:0,0", "ldmatrix at (0,0): .xN and .trans beside"),
    ("offsets:0,64,128,192", "explicit offsets"),
    ("thread_layout:(8,4):(4,1)", "thread layout"),
]

# the workbench's examples live with their ops in algebra.registry (Op.examples); the banks lab's swizzle presets
# follow the element size (app.services.banks_access.swizzle_presets)
