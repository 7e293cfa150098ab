#!/usr/bin/env python3
"""The explorer's injective / compact facts for 2^20 offsets: the set of offsets as gathered before (plain) and now
(layoutlab.model.finish, shifted right by the bits they share), best of 3, process CPU seconds.

    LAYOUTLAB_DATA=/tmp/x python bench/explorer_facts.py

Prints a row per layout and one JSON line (copy it to bench/results/explorer_facts_<date>.json)."""

from __future__ import annotations

import copy
import itertools
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the package, not bench/algebra.py
from app.services.layouts import describe_layout  # noqa: E402
from layoutlab import model  # noqa: E402


def plain(view):
    flat = set(itertools.chain.from_iterable(view.offsets or ()))
    view.injective = len(flat) == view.size
    view.compact = view.injective and min(flat, default=0) == 0 and max(flat, default=-1) == view.size - 1


rows = []
for text in ["1048576:1048576", "(1024,1024):(1024,1048576)", "1048576:1048577", "(1024,1024):(1,1024)"]:
    view = describe_layout(text)
    row = {"layout": text}
    for name, f in (("before", plain), ("after", model.finish)):
        best = 9e9
        for _ in range(3):
            v = copy.copy(view)
            t = time.process_time()
            f(v)
            best = min(best, time.process_time() - t)
        row[name + "_s"] = round(best, 3)
    rows.append(row)
    print(row)
print(json.dumps({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "loadavg": os.getloadavg(),
                  "python": platform.python_version(), "rows": rows}))
