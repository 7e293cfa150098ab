"""Hostile inputs to every output of ``layoutlab`` (None, numbers, bytes, broken notation, objects whose shape or
stride is wrong or raises, numpy arrays of every stride kind, pycute layouts, sizes at and past the caps): each line
is the output size or the one-line refusal, and the CPU seconds it took (a cap is met before the work).

    python bench/libface_hostile.py
"""
# ruff: noqa: E401, E402, E501, E701, E702, B018, B905, BLE001, N801, E731
import sys
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repository, not bench/ (bench/algebra.py)
import time

import numpy as np

import layoutlab
from algebra import LayoutError


class Obj:
    def __init__(s, shape, stride): s.shape, s.stride = shape, stride
class ShapeOnly:
    shape=(4,4)
class Boom:
    @property
    def shape(self): raise RuntimeError("boom")
    stride=(1,4)
class Weird:
    shape=(4,4); stride="1,4"
class Big:
    def __len__(self): return 10**9
    def __iter__(self): return iter(range(10**9))
    shape=property(lambda s: s); stride=property(lambda s: s)
import pycute

cases = [None, 5, 3.5, "", "   ", "garbage", "(4,8):(8,1", "(4,8):(8,1))", b"(4,8):(8,1)", "(4,8)", "Sw<3,3,3>",
 "<2:1, 4:2>", Obj((4,8),(8,1)), Obj((4,8),(1,)), Obj("4","8"), Obj((4,8.0),(1,4)), Obj((True,4),(1,4)), ShapeOnly(),
 Boom(), Weird(), Obj(10**30, 1), Obj((0,4),(1,4)), Obj((-4,4),(1,4)), Obj(((((((((2,),),),),),),),), 1),
 np.zeros((4,8)), np.zeros((4,8)).T, np.zeros((4,8))[:, ::-1], np.zeros((4,8))[::2, 1::3], np.broadcast_to(np.zeros(8),(4,8)),
 np.zeros(()), np.zeros((0,4)), np.zeros((256,257)), np.zeros((4,8), dtype=[("a","i4"),("b","i2")]),
 np.zeros(10)[::3], np.zeros((2,3,4)), np.int64(5),
 pycute.Layout((4,8),(8,1)), pycute.Layout((4,(2,4)),(2,(1,8))), pycute.Layout(4),
 "(128,128):(128,1)", "(256,256):(1,256)", "(257,256):(1,257)", "65537:1", "(1048576,1048576):(1,1048576)",
 "(2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2):(1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576)",
 "(4611686018427387904,4):(1,0)", "((((((((2,2),2),2),2),2),2),2),2):1",
 "(4,8):(8,1) extra", "(_4,_8):(_8,_1)", "Sw<3,4,3> o _0 o (8,64):(64,1)", "S<3,4,3> o 0 o (8,64):(64,1)",
 "(4,8):(9223372036854775807,1)", "(4,8):(-9223372036854775807,1)", "(4,(2,4)):(2,(1,8))",
 "ArithTuple(2,3) o (4,4):(1@0,1@1)", "#blocked", "(4,8):(8,1)\x00", "(４,8):(8,1)",
 ]
for x in cases:
    r = repr(x)[:70]
    for fn in ("text", "html", "svg", "latex"):
        t = time.process_time()
        try:
            out = getattr(layoutlab, fn)(x)
            res = f"ok {len(out)} chars"
            if fn == "text": res += " | " + out.split("\n")[0][:60] + " | " + (out.split("\n")[1][:80] if "\n" in out else "")
        except LayoutError as e:
            res = "LayoutError: " + str(e)[:230]
            if "\n" in str(e): res += "  [MULTILINE]"
        except Exception as e:
            res = f"!!! {type(e).__name__}: {str(e)[:200]}"
        dt = time.process_time() - t
        print(f"{fn:5} {dt:6.2f}s {r}: {res}")
