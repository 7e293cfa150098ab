"""The teaching aids: the op table (``registry``, read by the API, the workbench, explain, codegen and the drills),
derivations recorded from the ops' own runs (``explain``; ``algebra.explain`` is this module, and callable), index
formulas (``formula``), CuTe C++ / DSL programs for op calls (``codegen``) and the narrated coordinate ops (``coords``).
It may import ``algebra.core``, ``algebra.hw`` and ``algebra.doctor``; nothing under ``algebra`` imports it but
``algebra`` itself (``tests/test_import_graph.py`` keeps it so).
"""
