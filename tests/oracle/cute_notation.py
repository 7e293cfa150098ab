"""CuTe notation for the oracles: int tuples, layouts and swizzled layouts as text, their offsets, and the verdict
on our answer against CuTe's. Independent of ``algebra`` (which is what is being judged), except ``run_ours``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# ------------------------------------------------------------------------------------------- int tuples


def parse_tuple(text: str) -> Any:
    """``"(4,(2,_8))"`` -> ``(4, (2, 8))``; a bare number -> int; ``"(4)"`` -> ``(4,)``."""
    toks = re.findall(r"-?\d+@\d+|-?\d+|[(),]", text.replace("_", "").replace(" ", ""))
    pos = 0

    def go() -> Any:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok != "(":
            return tok if "@" in tok else int(tok)  # a scaled-basis stride k@i stays text
        out = []
        while True:
            out.append(go())
            tok = toks[pos]
            pos += 1
            if tok == ")":
                return tuple(out)

    val = go()
    if pos != len(toks):
        raise ValueError(f"trailing text in {text!r}")
    return val


def tstr(t: Any) -> str:
    return "(" + ",".join(tstr(x) for x in t) + ")" if isinstance(t, tuple) else str(t)


def flat(t: Any) -> list:
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


def unflat(vals: list, profile: Any) -> Any:
    it = iter(vals)

    def go(p: Any) -> Any:
        return tuple(go(x) for x in p) if isinstance(p, tuple) else next(it)

    return go(profile)


def prod(t: Any) -> int:
    out = 1
    for x in flat(t):
        out *= x
    return out


def split_layout(text: str) -> tuple[Any, Any]:
    """``"(4,2):(1,4)"`` -> (shape, stride), parsed by this module."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ":" and depth == 0:
            return parse_tuple(text[:i]), parse_tuple(text[i + 1:])
    raise ValueError(f"not a layout: {text!r}")


def offset_at(shape: Any, stride: Any, idx: int) -> int:
    """The offset of 1-D coordinate ``idx`` (colexicographic; past the end it extends along the last mode)."""
    fs, fd = flat(shape), flat(stride)
    out = 0
    for k, (s, d) in enumerate(zip(fs, fd, strict=True)):
        c = idx if k == len(fs) - 1 else idx % s
        idx //= s
        out += c * d
    return out


def sample(n: int, limit: int = 4096) -> list[int]:
    """Every index below n, or (for large n) a deterministic spread of them including both ends."""
    if n <= limit:
        return list(range(n))
    step = max(1, n // limit)
    return sorted({*range(0, n, step), *range(n - 64, n), *range(64)})


def judge(cute: str, ours: str) -> str:
    """``"exact"`` (same string), ``"shape"`` (same shape and offsets: only strides of size-1 modes differ),
    ``"function"`` (same size and offsets, another shape), ``"not-a-function"`` (we refuse because CuTe's printed
    layout is not the function the op names; the caller confirms it), or ``"mismatch"`` (including a refusal on one
    side)."""
    if cute == ours:
        return "exact"
    if ours == NOT_A_FUNCTION:
        return "exact" if cute == "refused" else "not-a-function"
    if "refused" in (cute, ours) or ours.startswith("error") or ":" not in cute or ":" not in ours:
        return "mismatch"
    try:
        (cs, cf), (os_, of) = function(cute), function(ours)
        n = prod(cs)
        if n != prod(os_) or any(cf(i) != of(i) for i in sample(n)):
            return "mismatch"
    except (ValueError, IndexError):
        return "mismatch"
    return "shape" if cs == os_ else "function"


def split_composed(text: str) -> tuple[tuple[int, int, int], int, str]:
    """``"Sw<3,4,3> o 0 o (8,64):(64,1)"`` -> ((3, 4, 3), 0, "(8,64):(64,1)")."""
    sw, off, lay_ = (x.strip() for x in text.split(" o ", 2))
    b, m, s = (int(x) for x in re.findall(r"-?\d+", sw))
    return (b, m, s), int(off.replace("_", "")), lay_


def swizzle(bms: tuple[int, int, int], x: int) -> int:
    """CuTe's Swizzle<B,M,S>: x ^ ((x & yyy_msk) >> S), yyy_msk = ((1<<B)-1) << (M + max(0,S))."""
    b, m, s = bms
    yyy = ((1 << b) - 1) << (m + max(0, s))
    return x ^ ((x & yyy) >> s if s >= 0 else (x & yyy) << -s)


def function(text: str) -> tuple[Any, Any]:
    """(shape, i -> offset) of a layout or a composed layout ``Sw<..> o O o L``."""
    if text.startswith("Sw<"):
        bms, off, lay_ = split_composed(text)
        shape, stride = split_layout(lay_)
        return shape, lambda i: swizzle(bms, off + offset_at(shape, stride, i))
    shape, stride = split_layout(text)
    return shape, lambda i: offset_at(shape, stride, i)


NOT_A_FUNCTION = "refused: CuTe's answer is not the function"


def run_ours(case: dict) -> str:
    """Our answer to ``case``: the result's string, ``"refused"`` (LayoutError) or ``"error: ..."`` (a crash)."""
    import algebra as A

    op = case["op"]
    args = [to_py(a) for a in case["args"]]
    fn = getattr(A, op, None) or A.registry.get(op).fn  # evaluate lives in the op table only
    try:
        res = fn(*args)
    except A.LayoutError as e:
        return NOT_A_FUNCTION if "CuTe would print" in str(e) else "refused"
    except Exception as e:  # noqa: BLE001 - a crash is a finding, not a test error
        return f"error: {type(e).__name__}: {e}"
    if op in ("idx2crd", "crd2idx", "evaluate"):  # a coordinate or an index, in CuTe's notation
        return tstr(res) if type(res) in (int, tuple) else str(res)
    if type(res) is tuple and len(res) == 2:  # local_tile / local_partition: (layout, offset of the first element)
        return f"{res[0]} @ {res[1]}"
    return str(res)


def refusal_message(case: dict) -> str:
    """Our LayoutError message for ``case`` ("" when we answer)."""
    import algebra as A

    try:
        (getattr(A, case["op"], None) or A.registry.get(case["op"]).fn)(*[to_py(a) for a in case["args"]])
    except A.LayoutError as e:
        return str(e)
    return ""


_INNER = re.compile(r"composition (\S+) o (\S+) is not a layout: .*?CuTe would print (.+?) here; at i = (\d+) that "
                    r"gives (-?\d+), but A\((?:B|Sw<[-\d,]+>)\((\d+)\)\) = A\((-?\d+)\) = (-?\d+)", re.S)
_WHOLE = re.compile(r"CuTe would print [a-z_]+\(.*\) = (\S+(?: o \S+ o \S+| at offset -?\d+)?)$", re.S)


def confirm_not_a_function(case: dict) -> str:
    """"" when our refusal of a case CuTe answers is justified, else why not. Justified: the message's counterexample
    holds under this module's evaluator (an inner ``A o B`` where CuTe's layout R has ``R(i) != A(B(i))`` with
    ``0 <= B(i) < size(A)``), or CuTe's answer has a shape <= 0 (not a layout: the positive shape condition), and
    the layout the message says CuTe prints for the op is CuTe's answer."""
    msg = refusal_message(case)
    m = _INNER.search(msg)
    if m is None:
        if _NOT_POSITIVE.search(msg):
            return _confirm_not_positive(case, msg)
        if _POST.search(msg):
            return _confirm_post(case, msg)
        return _confirm_product(case, msg)
    a, b, r, i, got, j, x, want = m.groups()
    i, got, x, want = int(i), int(got), int(x), int(want)
    (a_s, a_d) = split_layout(a)
    if b.startswith("Sw<"):
        y = swizzle(tuple(int(v) for v in re.findall(r"-?\d+", b)), i)
    else:
        b_s, b_d = split_layout(b)
        y = offset_at(b_s, b_d, i)
    r_val = function(r)[1](i)
    if not (int(j) == i and y == x and 0 <= x < prod(a_s) and offset_at(a_s, a_d, x) == want and r_val == got != want):
        return f"the counterexample does not hold: {m.group(0)[-160:]}"
    w = _WHOLE.search(msg)
    printed = w.group(1).replace(" at offset ", " @ ") if w else r
    if printed != case["cute"]:
        return f"the message says CuTe prints {printed}, CuTe printed {case['cute']}"
    return ""


_NOT_POSITIVE = re.compile(r" is not a layout: positive shape condition: .* the shape (-?\d+) ")


def _confirm_not_positive(case: dict, msg: str) -> str:
    """A refusal of CuTe's answer because a shape of it is <= 0: the message's shape is in CuTe's printed layout
    (read by this module), and the layout the message says CuTe prints is CuTe's answer."""
    w = _WHOLE.search(msg)
    if w is None or w.group(1) != case["cute"]:
        return f"the message does not show CuTe's answer {case['cute']}: {msg[-200:]}"
    parts = case["cute"].split(" o ")  # Sw o O o L, or L o O o Sw
    shape, _ = split_layout(parts[-1] if parts[0].startswith("Sw<") else parts[0])
    bad = int(_NOT_POSITIVE.search(msg).group(1))
    if bad > 0 or bad not in flat(shape) or min(flat(shape)) > 0:
        return f"CuTe's answer {case['cute']} has no shape {bad} <= 0"
    return ""


_POST = re.compile(r" is not a layout: (complement size|quasi-inverse|right inverse) condition: .*?CuTe would print "
                   r"(.+?) here[;,]", re.S)
_AT = re.compile(r"at i = (\d+)")
_SUBJECT = re.compile(r"(?:left|right)_inverse\((.+?)\) is not a layout: ")


def _confirm_post(case: dict, msg: str) -> str:
    """A refusal of CuTe's answer because it breaks the op's own post-condition (``cute/layout.hpp``), checked here
    with this module's evaluator: complement's ``size(R) >= cotarget / size(filter(A))``, left_inverse's quasi-inverse
    ``A(R(A(i))) == A(i)`` with ``R(A(i))`` in A's domain, right_inverse's ``A(R(i)) == i`` with ``R(i)`` in A's
    domain; and the layout the message says CuTe prints is CuTe's answer."""
    kind, printed = _POST.search(msg).groups()
    whole = _WHOLE.search(msg)  # an inner inverse (of L in Sw o O o L) that is not one: the message shows the whole
    if (whole.group(1) if whole else printed) != case["cute"]:
        return f"the message says CuTe prints {whole.group(1) if whole else printed}, CuTe printed {case['cute']}"
    inner = _SUBJECT.match(msg) if whole else None
    a_shape, a_f = function(inner.group(1) if inner else case["args"][0])
    r_shape, r_f = function(printed)
    n = prod(a_shape)
    if kind == "complement size":
        fs, fd = (flat(x) for x in split_layout(case["args"][0]))
        fsize = prod(tuple(s for s, d in zip(fs, fd, strict=True) if d != 0))
        cosize = sum((s - 1) * abs(d) for s, d in zip(fs, fd, strict=True)) + 1
        cot = case["args"][1] if len(case["args"]) > 1 else cosize
        if not isinstance(cot, int) or prod(r_shape) >= cot // fsize:
            return f"CuTe's complement {case['cute']} has the size the post-condition asks for"
        return ""
    m = _AT.search(msg)
    if m is None:
        return f"no counterexample in the message: {msg[:200]}"
    i = int(m.group(1))
    if kind == "quasi-inverse":
        y = a_f(i)
        x = r_f(y) if y >= 0 else None
        holds = i < n and x is not None and not (0 <= x < n and a_f(x) == y)
    else:
        x = r_f(i)
        holds = i < prod(r_shape) and not (0 <= x < n and a_f(x) == i)
    return "" if holds else f"the counterexample does not hold: {msg[-200:]}"


_PRODUCT = re.compile(r"logical_product\((\S+), (.+?)\) is not a layout: .*?CuTe would print (.+?) here; at \((\d+), "
                      r"(\d+)\) that gives (-?\d+), but .* = (-?\d+) \(A\* = (\S+)\)", re.S)


def _confirm_product(case: dict, msg: str) -> str:
    """The counterexample of a product with a swizzled tiler: R(a, j) != A(a) + A*(B(j))."""
    m = _PRODUCT.search(msg)
    if m is None:
        return f"no counterexample in the message: {msg[:200]}"
    a, b, r, i, j, got, want, comp = m.groups()
    i, j, got, want = int(i), int(j), int(got), int(want)
    (a_s, a_d), (c_s, c_d) = split_layout(a), split_layout(comp)
    n0 = prod(a_s)
    b_f = function(b)[1]
    expect = offset_at(a_s, a_d, i) + offset_at(c_s, c_d, b_f(j))
    if not (function(r)[1](i + j * n0) == got != want == expect):
        return f"the counterexample does not hold: {m.group(0)[-160:]}"
    w = _WHOLE.search(msg)
    printed = w.group(1) if w else r
    if printed != case["cute"]:
        return f"the message says CuTe prints {printed}, CuTe printed {case['cute']}"
    return ""


def to_py(a: Any) -> Any:
    import algebra as A

    if a is None or isinstance(a, int):
        return a
    if isinstance(a, list):
        return tuple(to_py(x) for x in a)
    if a.startswith("Sw<") or " o " in a:  # a swizzled layout, or a layout after a swizzle (L o O o Sw)
        return A.parse(a)
    if "@" in a:
        return A.parse(a)  # scaled-basis strides (an identity / coordinate layout)
    if ":" in a:
        shape, stride = split_layout(a)
        return A.Layout(shape, stride)
    return parse_tuple(a)


def key(case: dict) -> str:
    return case["op"] + " " + json.dumps(case["args"], separators=(",", ":"))


def fits_int32(case: dict) -> bool:
    """Inputs small enough that no result stride overflows CuTe's 32-bit static ints (it would wrap): products
    multiply sizes and cosizes, the other ops stay within the inputs' offsets."""
    lays = [split_layout(a) for a in _layout_args(case["args"]) if "@" not in a]
    span = [prod(s) + sum((x - 1) * abs(d) for x, d in zip(flat(s), flat(t), strict=True)) for s, t in lays]
    if case["op"].endswith("_product") or case["op"] == "tile_to_shape":
        total = 1
        for x in span:
            total *= x
        return total * 64 < 1 << 31
    return all(x < 1 << 30 for x in span)


def _layout_args(args: list) -> list[str]:
    out = []
    for a in args:
        if isinstance(a, list):
            out += _layout_args(a)
        elif isinstance(a, str) and ":" in a:
            out.append(split_composed(a)[2] if a.startswith("Sw<") else a)
    return out
