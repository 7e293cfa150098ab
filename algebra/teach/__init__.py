"""The teaching aids: how the product explains the algebra. It holds the op table (``registry``: every op, its
arguments, examples and emitters, read by the API, the workbench, explain, codegen and the drills), step-by-step
derivations recorded from the ops' own runs (``explain``; ``algebra.explain`` is this module, and callable), index
formulas and symbolic layouts (``formula``), CuTe C++ / DSL programs for op calls (``codegen``) and the op table's
narrated ``evaluate`` / ``idx2crd`` / ``crd2idx`` (``coords``). It may import ``algebra.core``, the hardware models
(``algebra.hw``) and the doctor (``algebra.doctor``); nothing under ``algebra`` imports it but ``algebra`` itself and
its thin ``algebra.registry`` (``tests/test_import_graph.py`` keeps it so).
"""
