"""The hardware models: what a layout costs on an NVIDIA GPU. It holds the shared-memory bank and wavefront model
(``banks``, CONTRACT §3), access patterns from layouts (``bank_access``), the padding and swizzle fixes
(``bankfix``), 32-byte sectors and coalescing (``coalescing``), MMA and copy atoms as TV layouts (``atoms``), tiled
copy and tiled MMA (``atoms_tiled``), and Hopper's smem atoms, TMA and wgmma descriptors (``hopper``). It may import
``algebra.core`` and itself, never the doctor, the teaching aids or ``algebra`` itself; the doctor and the teaching
aids stand on it (``tests/test_import_graph.py`` keeps it so).
"""
