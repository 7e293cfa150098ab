"""The core: CuTe's layout algebra itself, exact to CuTe's static semantics, in the standard library only. It holds the
HTuple helpers (``inttuple``), ``ScaledBasis`` / ``ArithTuple`` strides (``arith``), the mode arithmetic on raw
(shape, stride) pairs (``modes``: offsets, coalesce, composition's walk), the never-wrong layer (``checks``: each op's
post-condition, applied to its result in one place), ``Layout`` (``layout``), the plain cache in front of each op
(``memo``), ``Swizzle`` and ``ComposedLayout`` (``swizzle``), CuTe notation in and out (``notation``) and CuTe C++ /
DSL spellings (``emit``), the ops, each written once in its own module (``coalesce``, ``composition``,
``complement``, ``inverses``, ``products`` (with ``local_tile``), ``recast``, ``refine``; ``ops`` names them in
one namespace), and the derivation recorder the ops write their steps to (``recorder``). The core imports nothing
outside ``algebra.core``: not the hardware models, the doctor or the teaching aids, and not ``algebra`` itself. Inside
it the floors point one way, from ``errors``, ``inttuple`` and ``recorder`` (which imports nothing of the algebra: it
records what it is given) up through ``modes``, ``checks`` and ``layout`` to the ops; ``tests/test_import_graph.py``
keeps it so.
"""
