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

ALGEBRA: list[tuple[str, str, list[str]]] = [
    ("transpose by composition", "composition", ["(4,8):(8,1)", "(8,4):(4,1)"]),
    ("composition", "composition", ["(6,2):(8,2)", "(4,3):(3,1)"]),
    ("composition with a tiler", "composition", ["(12,(4,8)):(59,(13,1))", "<3:4, 8:2>"]),
    ("coalesce", "coalesce", ["(2,(1,6)):(1,(6,2))"]),
    ("complement", "complement", ["(2,2):(1,6)", "24"]),
    ("right inverse", "right_inverse", ["(4,(2,4)):(2,(1,8))"]),
    ("left inverse", "left_inverse", ["(4,8):(8,1)"]),
    ("logical divide", "logical_divide", ["(4,2,3):(2,1,8)", "4:2"]),
    ("zipped divide by tiler", "zipped_divide", ["(8,8):(1,8)", "<2:1, 4:1>"]),
    ("logical product", "logical_product", ["(2,2):(4,1)", "6:1"]),
    ("blocked product", "blocked_product", ["(2,2):(1,2)", "(3,4):(1,3)"]),
    ("raked product", "raked_product", ["(2,2):(1,2)", "(3,4):(1,3)"]),
    ("local_tile: tile (1,2) of 4x4 tiles", "local_tile", ["(16,16):(16,1)", "<4:1, 4:1>", "(1,2)"]),
    ("local_partition: thread 5 of (4,8)", "local_partition", ["(16,32):(32,1)", "(4,8):(8,1)", "5"]),
]
