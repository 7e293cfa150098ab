"""Bad input against the kernel-vocabulary and Blackwell routes and pages (in-process): prints each status and
reason, and every 5xx at the end.  .venv/bin/python bench/vocab_api_probe.py"""

import json
import os
import random
import sys
import tempfile

os.environ["LAYOUTLAB_DATA"] = tempfile.mkdtemp()
os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver")
sys.path.insert(0, ".")
from fastapi.testclient import TestClient

from app.main import create_app

c = TestClient(create_app(), raise_server_exceptions=False)
rng = random.Random(16410)
bad = []


def chk(method, url, **kw):
    r = c.request(method, url, **kw)
    tag = f"{method} {url} {json.dumps(kw.get('json') or kw.get('params'))[:300]}"
    if r.status_code >= 500:
        bad.append(f"{r.status_code} {tag} :: {r.text[:300]}")
    return r


def post_each(url, bodies, shown=None):
    """POST each body to ``url``; print its status, the body and the refusal's detail (or the start of the text;
    on 200, the answer's field ``shown`` if given)."""
    for b in bodies:
        r = chk("POST", url, json=b)
        if not r.headers.get("content-type", "").startswith("application/json"):
            print(r.status_code, json.dumps(b)[:150], r.text[:100])
            continue
        said = r.json().get("detail") if r.status_code != 200 else str(r.json().get(shown)) if shown else ""
        print(r.status_code, json.dumps(b)[:150], said[:160])


MMA = "SM80_16x8x16_F32F16F16F32_TN"
tiled = [
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "_,_,_,_"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "0"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "(4,2):(1,4),_,_"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "-32,_,_"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "3,_,_"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "(8,4):(0,1),_,_"},
    {"atom": MMA, "atom_layout": "(2,2,1)", "permutation": "Sw<1,1,1> o 32:1,_,_"},
    {"atom": MMA, "atom_layout": "(0,2,1)"},
    {"atom": MMA, "atom_layout": "(2,2)"},
    {"atom": MMA, "atom_layout": "(2,2,1,2)"},
    {"atom": MMA, "atom_layout": "(2,2,1):(1,1,0)"},
    {"atom": MMA, "atom_layout": "(2,2,1):(1@0,1@1,0)"},
    {"atom": MMA, "atom_layout": "(4096,4096,1)"},
    {"atom": MMA, "atom_layout": "((2,2),1,1)"},
    {"atom": MMA, "atom_layout": "(2,2,1):(-1,2,0)"},
    {"atom": MMA, "operand": "D"},
    {"atom": MMA, "operand": ""},
    {"atom": "SM75_U32x4_LDSM_N", "mma": MMA, "operand": "C", "element_bits": 16},
    {"atom": "SM75_U32x4_LDSM_N", "mma": MMA, "operand": "A", "element_bits": 32},
    {"atom": "SM75_U32x4_LDSM_N", "mma": "nope", "operand": "A"},
    {"atom": "SM75_U32x4_LDSM_N", "mma": "SM75_U32x4_LDSM_N", "operand": "A"},
    {"atom": "SM75_U32x4_LDSM_N", "mma": "SM90_64x64x16_F32F16F16_SS", "operand": "A"},
    {"atom": "SM75_U32x4_LDSM_N", "mma": "SM90_64x64x16_F32F16F16_SS", "operand": "B"},
    {"atom": "SM90_U32x4_STSM_N", "mma": "SM90_64x64x16_F32F16F16_SS", "operand": "C"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "16,64"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "16"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "0,64"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "-16,64"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "16,64,2"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "(7,3):(3,1)", "tiler": "7,3"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "(32,8):(0,1)", "tiler": "16,16"},
    {"atom": "SM75_U32x4_LDSM_N", "layout_tv": "((8,16),8):((128,1),16)", "tiler": "99999999,99999999"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "layout_tv": "(128,8):(8,1)", "tiler": "(16,64)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "layout_tv": "(128,8):(8,1)", "tiler": "16,64", "element_bits": 128},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "layout_tv": "(128,8):(8,1)", "tiler": "16,64", "element_bits": 24},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,0)", "val_layout": "(1,8)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,-1)", "val_layout": "(1,8)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,1)", "val_layout": "(1,8):(0,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "Sw<2,0,2> o (16,8):(8,1)", "val_layout": "(1,8)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,1)", "val_layout": "(1,7)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(1@0,1@1)", "val_layout": "(1,8)"},
    {"atom": "SM100_TMEM_LOAD_32dp32b4x", "thr_layout": "(32,1)", "val_layout": "(1,4)", "element_bits": 32},
    {"atom": "SM100_TMEM_LOAD_32dp32b4x", "mma": MMA, "operand": "C", "element_bits": 32},
    {"atom": "SM75_U32x1_LDSM_N", "mma": "SM70_8x8x4_F32F16F16F32_TN", "operand": "A", "element_bits": 16},
    {"atom": "UniversalCopy_128b", "mma": "SM80_8x8x4_F64F64F64F64_TN", "operand": "C", "element_bits": 64},
    {
        "atom": "SM75_U16x8_LDSM_T",
        "mma": MMA,
        "operand": "B",
        "element_bits": 16,
        "atom_layout": "(2,2,1)",
        "permutation": "_,(8,2,2):(2,1,16),_",
    },
]
post_each("/api/tiled", tiled)
part = [
    {"atom": MMA, "thread": 128},
    {"atom": MMA, "thread": 127},
    {"atom": MMA, "tile": "32,32"},
    {"atom": MMA, "tile": "33,32,16"},
    {"atom": MMA, "tile": "0,32,16"},
    {"atom": MMA, "tile": "32,32,16,1"},
    {"atom": MMA, "tile": "a,b,c"},
    {"atom": MMA, "tile": "-32,32,16"},
    {"atom": MMA, "tile": "100000,100000,100000"},
    {"atom": "SM70_8x8x4_F32F16F16F32_TN", "atom_layout": "(1,2,1)", "thread": 8},
    {"atom": "SM70_8x8x4_F32F16F16F32_TN", "atom_layout": "(1,2,1)", "thread": 16},
    {"atom": "SM90_64x64x16_F32F16F16_SS", "atom_layout": "(2,1,1)", "thread": 255, "tile": "128,64,16"},
    {"atom": "SM90_64x64x16_F32F16F16_SS", "atom_layout": "(2,1,1)", "thread": 256},
    {"atom": MMA, "permutation": "_,(8,2):(2,1),_", "tile": "32,32,16"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thread": 128},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(16,63):(63,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(8,64):(64,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "dst": "Sw<3,3,3> o (16,64):(64,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "dst": "Sw<3,3,3> o 5 o (16,64):(64,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "ArithTuple(0,0) o (16,64):(1@0,1@1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(16,64):(1@0,1@1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,0)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,1)", "val_layout": "(1,8):(0,1)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "element_bits": 64},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(16,64,2):(64,1,1024)", "dst": "(16,64,2):(64,1,1024)"},
    {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "((4,4),64):((64,256),1)"},
    {
        "atom": "SM75_U32x4_LDSM_N",
        "thr_layout": "(32,1)",
        "val_layout": "(1,8)",
        "src": "(32,8):(8,1)",
        "dst": "(32,8):(8,1)",
    },
    {
        "atom": "SM100_TMEM_LOAD_32dp32b4x",
        "thr_layout": "(32,1)",
        "val_layout": "(1,4)",
        "element_bits": 32,
        "src": "(32,4)",
        "dst": "(32,4)",
    },
    {"atom": "nope"},
]
post_each("/api/partition", part)
tma = [
    {
        "tensor": "(4096,4096):(4096,1)",
        "smem": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))",
        "tile": "128,64",
        "cluster_size": 3,
    },
    {
        "tensor": "(4096,4096):(4096,1)",
        "smem": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))",
        "tile": "128,64",
        "cluster_size": 2,
        "cta_coord": "99,99",
    },
    {
        "tensor": "(4096,4096):(4096,1)",
        "smem": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))",
        "tile": "128,64",
        "cluster_size": 2,
        "cta_coord": "-1,0",
    },
    {
        "tensor": "(4096,4096):(4096,1)",
        "smem": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))",
        "tile": "128,64",
        "cluster_size": 2,
        "cta_coord": "1,2,3",
    },
    {"tensor": "(4096,4096):(4096,1)", "smem": "(128,64):(64,1)", "tile": "64,64"},
    {"tensor": "(4096,4096):(0,1)", "smem": "(128,64):(64,1)", "tile": "128,64"},
    {"tensor": "(4096,4096):(4096,2)", "smem": "(128,64):(64,1)", "tile": "128,64"},
    {"tensor": "(100,100):(100,1)", "smem": "(128,64):(64,1)", "tile": "128,64"},
    {"tensor": "(4096,4096,8):(4096,1,16777216)", "smem": "(128,64):(64,1)", "tile": "128,64"},
    {"tensor": "(4096,4096):(4096,1)", "smem": "(128,64):(64,1)", "tile": "128,64", "dtype": "FLOAT7"},
    {"tensor": "(4096,4096):(4096,1)", "smem": "(128,64):(0,1)", "tile": "128,64"},
    {"tensor": "(4096,4096):(4096,1)", "smem": "(128,64):(64,1)", "tile": "128,0"},
    {"tensor": "(4096,4096):(4096,1)", "smem": "Sw<3,4,3> o (128,64):(64,1)", "tile": "128,64", "cluster_size": 16},
    {"tensor": "4096:1", "smem": "64:1", "tile": "64", "cluster_size": 2},
    {"tensor": "(4096,4096):(1@0,1@1)", "smem": "(128,64):(64,1)", "tile": "128,64"},
]
post_each("/api/tma/partition", tma)
desc = [
    {"descriptor": "0x4000004000010000", "arch": "sm100"},
    {"descriptor": "0xffffffffffffffff", "arch": "sm100"},
    {"descriptor": "0xffffffffffffffff", "arch": "auto"},
    {"descriptor": -1, "arch": "sm100"},
    {"descriptor": "0x" + "f" * 17, "arch": "sm100"},
    {"descriptor": "0x0", "arch": "sm100", "major": "MN"},
    {"descriptor": 1 << 46, "arch": "sm100", "element_bytes": 4, "major": "MN", "mn": 8},
    {"descriptor": (1 << 46) | (6 << 61), "arch": "sm100"},
    {"descriptor": (1 << 46) | (1 << 61), "arch": "sm100"},
    {"descriptor": (1 << 46) | (3 << 61), "arch": "sm100"},
    {"descriptor": (1 << 46) | (7 << 61) | (1 << 52), "arch": "sm100"},
    {"descriptor": (1 << 46) | (2 << 61) | (1 << 52), "arch": "sm100", "major": "MN"},
    {"descriptor": (1 << 46) | (2 << 61) | (5 << 49), "arch": "sm100", "tile": "(64,64)"},
    {"descriptor": (1 << 46) | (2 << 61), "arch": "sm100", "tile": "Sw<3,4,3> o (64,64):(64,1)"},
    {"descriptor": (1 << 46) | (2 << 61), "arch": "sm100", "k": 256, "mn": 256},
]
post_each("/api/solve/descriptor", desc)
enc = [
    {"tile": "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))", "arch": "sm100"},
    {"tile": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100"},
    {"tile": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100", "major": "MN"},
    {"tile": "Sw<2,4,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100"},
    {"tile": "Sw<3,4,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100", "element_bytes": 1},
    {"tile": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100", "start_address": 8},
    {"tile": "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "arch": "sm100", "start_address": 262000},
    {"tile": "Sw<2,5,2> o ((32,2),(8,4)):((1,256),(32,512))", "arch": "sm100", "major": "MN", "element_bytes": 4},
    {"tile": "Sw<2,5,2> o ((32,2),(8,4)):((1,256),(32,512))", "arch": "sm90", "major": "MN", "element_bytes": 4},
    {"tile": "(64,64):(1,64)", "arch": "sm100", "major": "MN"},
    {"tile": "(64,64,2):(64,1,4096)", "arch": "sm100"},
    {"tile": "(64,64):(0,1)", "arch": "sm100"},
    {"tile": "(64,64):(1@0,1@1)", "arch": "sm100"},
    {"tile": "Sw<3,4,3> o 8 o (64,64):(64,1)", "arch": "sm100"},
    {"tile": "((8,8),(8,8)):((8,64),(1,512))", "arch": "sm100"},
    {"tile": "((8,8),(8,8)):((8,64),(1,512))", "arch": "sm100", "major": "MN"},
    {"tile": "((8,8),(8,8)):((8,64),(1,-512))", "arch": "sm100"},
]
post_each("/api/solve/descriptor/encode", enc, shown="descriptor")
pages = [
    {"panel": "blackwell", "bw_kind": "f16", "bw_m": "96"},
    {"panel": "blackwell", "bw_n": "250"},
    {"panel": "blackwell", "bw_n": "1e9"},
    {"panel": "blackwell", "bw_n": "-8"},
    {"panel": "blackwell", "bw_n": "٢٥٦"},
    {"panel": "blackwell", "bw_ab": "e2m1", "bw_kind": "f8f6f4", "bw_am": "MN"},
    {"panel": "blackwell", "bw_ab": "e2m1", "bw_kind": "f8f6f4", "bw_src": "tmem"},
    {"panel": "blackwell", "bw_ab": "s8", "bw_kind": "f16"},
    {"panel": "blackwell", "bw_c": "f64"},
    {"panel": "blackwell", "bw_ab": "e4m3,e5m2", "bw_kind": "f8f6f4"},
    {"panel": "blackwell", "bw_ab": "(e4m3,e5m2)", "bw_kind": "f8f6f4"},
    {"panel": "blackwell", "bw_ld": "SM100_TMEM_LOAD_32dp32b3x"},
    {"panel": "blackwell", "bw_warp": "4"},
    {"panel": "blackwell", "bw_warp": "-1"},
    {"panel": "blackwell", "bw_cta": "2", "bw_m": "64"},
    {"panel": "blackwell", "bw_cta": "2", "bw_m": "256", "bw_src": "tmem", "bw_n": "48"},
    {"panel": "blackwell", "bw_kind": "i8", "bw_c": "f16"},
    {"panel": "blackwell", "bw_kind": "tf32", "bw_c": "f16"},
    {"panel": "blackwell", "bw_kind": "i8", "bw_ab": "u8", "bw_bm": "MN", "bw_cta": "2", "bw_m": "256", "bw_n": "32"},
    {"panel": "tiled", "tatom": MMA, "tlayout": "(2,2,1)", "top": "A", "tperm": "_,_,_,_"},
    {"panel": "tiled", "tatom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "tthr": "(16,8):(8,0)"},
    {"panel": "tiled", "tatom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "tthr": "(16,8):(8,-1)"},
    {"panel": "tiled", "tatom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "tthr": "(4096,4096)"},
    {"panel": "kernel", "kp_atom": MMA, "kp_layout": "(2,2,1)", "kp_a": "SM75_U32x4_LDSM_N", "kp_t": "500"},
    {"panel": "kernel", "kp_atom": MMA, "kp_layout": "(2,2,1)", "kp_cta": "33,32,16"},
    {"panel": "kernel", "kp_atom": MMA, "kp_perm": "_,(8,2):(2,1),_"},
    {"panel": "kernel", "kp_atom": "SM90_64x64x16_F32F16F16_SS", "kp_a": "SM75_U32x4_LDSM_N"},
    {"panel": "kernel", "kp_atom": "SM75_U32x4_LDSM_N"},
    {"panel": "mmawalk", "mw_atom": MMA, "mw_t": "999", "mw_tile": "1,1,1"},
    {"panel": "tmac", "tm_cluster": "3"},
    {"panel": "tmac", "tm_coord": "999,999"},
    {"atom": "SM100_TMEM_LOAD_16dp256b1x", "operand": "src"},
    {"atom": "SM100_MMA_F16BF16_SS", "operand": "C"},
    {"atom": MMA, "operand": "Q"},
]
for p in pages:
    r = chk("GET", "/tv", params=p)
    import re

    errs = re.findall(r'class="[^"]*error[^"]*"[^>]*>([^<]{0,160})', r.text)
    print(r.status_code, json.dumps(p, ensure_ascii=False)[:150], errs[:2])
print("5xx:", len(bad))
print("\n".join(bad))
