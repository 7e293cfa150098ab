"""The core: CuTe's layout algebra itself, exact to CuTe's static semantics, in the standard library only: the HTuple
helpers, ``Layout`` and its stride kinds, the mode arithmetic (``modes``), the never-wrong layer (``checks``), the cache
(``memo``), swizzles, notation and C++ / DSL spellings, and the ops, each in its own module (``ops`` names them). It
imports nothing outside ``algebra.core``; inside it the floors point one way, from ``errors``, ``inttuple`` and
``recorder`` up through ``modes``, ``checks`` and ``layout`` to the ops (``tests/test_import_graph.py`` keeps it so).
"""
