"""The layout doctor: given a tile and the accesses that touch it, which layout to use. It holds the search over
swizzles, paddings and F2-linear XOR maps (``solver``, the accesses, the candidates and their fast cost in
``solver_access``, the explanation of each fix in ``solver_explain``), the wgmma and UMMA descriptor doctor
(``solver_desc``), Triton's LinearLayout as a core Layout with F2 strides and the F2 view of a swizzle
(``linear_layout``; the F2 arithmetic itself is ``algebra.core.arith``'s) and Triton's TTGIR layouts (``ttgir``,
``triton_attrs``, ``triton_layouts``, ``triton_shared``). It may import ``algebra.core`` and the hardware models of
``algebra.hw`` (the bank model prices every candidate; Hopper's rules say which hardware mode accepts it), never the
teaching aids or ``algebra`` itself (``tests/test_import_graph.py`` keeps it so).
"""
