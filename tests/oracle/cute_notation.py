"""CuTe notation for the oracles: int tuples, layouts and swizzled layouts as text, their offsets, and the verdict
on our answer against CuTe's. Independent of ``algebra`` (which is what is being judged), except ``run_ours``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# ------------------------------------------------------------------------------------------- int tuples


def parse_tuple(text: str) -> Any:
    """``"(4,(2,_8))"`` -> ``(4, (2, 8))``; a bare number -> int; ``"(4)"`` -> ``(4,)``; a lone ``_`` (CuTe's
    Underscore, in a slicing coordinate) -> None."""
    toks = re.findall(r"-?\d+@\d+|-?\d+|[(),_]", re.sub(r"_(?=-?\d)", "", text).replace(" ", ""))
    pos = 0

    def go() -> Any:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok == "_":
            return None
        if tok != "(":
            return tok if "@" in tok else int(tok)  # a scaled-basis stride k@i stays text
        out = []
        if toks[pos] == ")":  # the empty tuple
            pos += 1
            return ()
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
    if t is None:
        return "_"
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
    except (ValueError, IndexError, TypeError):  # (TypeError: a chain with no shape, or off its domain)
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
    """(shape, i -> offset) of a layout or a chain ``P0 o O0 o P1 o ... o Pn`` of swizzles and layouts (shape None
    when Pn is a swizzle), right to left; the offset is None where a layout before Pn is read outside ``[0, size)``."""
    parts = [x.strip() for x in text.split(" o ")]
    if parts[-1].startswith("Sw<"):
        bms = tuple(int(x) for x in re.findall(r"-?\d+", parts[-1]))
        return None, lambda i: _outer(parts, swizzle(bms, i))
    shape, stride = split_layout(parts[-1])
    return shape, lambda i: _outer(parts, offset_at(shape, stride, i))


def _outer(parts: list, v: int) -> int | None:
    """The value ``v`` of the chain's last part through the others, right to left (None: off a layout's domain)."""
    for k in range(len(parts) - 3, -1, -2):
        v += int(parts[k + 1].replace("_", ""))
        if parts[k].startswith("Sw<"):
            v = swizzle(tuple(int(x) for x in re.findall(r"-?\d+", parts[k])), v)
        elif not 0 <= v < prod((ls := split_layout(parts[k]))[0]):
            return None
        else:
            v = offset_at(*ls, v)
    return v


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
    if op in ("idx2crd", "crd2idx", "evaluate", "shape_div", "ceil_div", "prefix_product", "product"):  # an IntTuple
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


_INNER = re.compile(r"composition (\S+) o (Sw<[-\d,]+> o -?\d+ o \S+|\S+) is not a layout: .*?CuTe would print "
                    r"(.+?) here; at i = (\d+) that gives (-?\d+), "
                    r"but A\((?:B|Sw<[-\d,]+>)\((\d+)\)\) = A\((-?\d+)\) = (-?\d+)", re.S)
_WHOLE = re.compile(r"CuTe would print [a-z_]+\(.*\) = (\S+(?:(?: o \S+ o \S+)+| at offset -?\d+)?)$", re.S)


def confirm_not_a_function(case: dict) -> str:
    """"" when our refusal of a case CuTe answers is justified, else why not. Justified: the message's counterexample
    holds under this module's evaluator (an inner ``A o B`` where CuTe's layout R has ``R(i) != A(B(i))`` with
    ``0 <= B(i) < size(A)``), or CuTe's answer has a shape <= 0 (not a layout: the positive shape condition), and
    the layout the message says CuTe prints for the op is CuTe's answer."""
    msg = refusal_message(case)
    if case["op"] in ("local_tile", "local_partition") and not _THREAD.search(msg) and (
            why := _tile_agrees(case)) is not None:  # confirmed by a point of CuTe's tile, and the print shown
        w = _WHOLE.search(msg)
        return why or ("" if w and w.group(1).replace(" at offset ", " @ ") == case["cute"] else
                       f"the message does not show CuTe's answer {case['cute']}: {msg[-200:]}")
    m = _INNER.search(msg)
    if m is None and _SLICE.search(msg):
        return _confirm_slice(case, msg)
    if m is None:
        if _THREAD.search(msg):
            return _confirm_thread(case, msg)
        if _NOT_POSITIVE.search(msg):
            return _confirm_not_positive(case, msg)
        if _POST.search(msg):
            return _confirm_post(case, msg)
        if _RECAST.search(msg):
            return _confirm_recast(case, msg)
        if _UNSIGNED.search(msg):
            return _confirm_unsigned(case, msg)
        if (m := _OFF.search(msg)) is not None:  # a point off a chain's domain: CuTe's arithmetic goes on there
            chain, crd, val = m.groups()
            if case["op"] != "evaluate" or [chain, parse_tuple(crd), val] != [*case["args"][:1], parse_tuple(
                    case["args"][1]) if isinstance(case["args"][1], str) else case["args"][1], case["cute"]]:
                return f"the message does not show this case or CuTe's answer {case['cute']}: {msg[-200:]}"
            return "" if chain_at(chain, parse_tuple(crd)) is None else f"{chain} is defined at {crd}"
        return _confirm_product(case, msg)
    a, b, r, i, got, j, x, want = m.groups()
    i, got, x, want = int(i), int(got), int(x), int(want)
    (a_s, a_d) = split_layout(a)
    if " o " in b:  # a swizzled B, Sw o 0 o L: L's offset through the swizzle
        y = function(b)[1](i)
    elif b.startswith("Sw<"):
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


def _tile_agrees(case: dict) -> str:
    """Why a refusal of CuTe's tile or partition of a plain A is not justified: CuTe's print W @ w0 is A at each point
    of the tile's coordinates (Z @ z0, CuTe's same op on A's compact layout, whose compositions are right) read inside
    A's domain, ``W(i) + w0 == A(Z(i) + z0)`` for every i (a tiler by mode: each mode's coordinate in its range); ""
    when some point differs; None when A is not plain or Z is not CuTe's tile's size."""
    import algebra as A
    from algebra import Layout
    from algebra.core.checks import cute_would_print

    if case["cute"] in ("refused", "") or " @ " not in case["cute"] or any(
            t in case["args"][0] for t in ("Sw<", "@", " o ")):
        return None
    a_s, a_d = split_layout(case["args"][0])
    z = cute_would_print(getattr(A, case["op"]), Layout(a_s), *[to_py(x) for x in case["args"][1:]])
    w_text, w0 = case["cute"].split(" @ ")
    w_s, f_w = function(w_text)
    n = prod(w_s)
    if type(z) is not tuple or n > 1 << 16 or not 0 <= z[1] < prod(a_s):
        return None
    if prod(z[0].shape) != n:  # CuTe's tile has not the tile's size
        return ""
    modes = list(zip(a_s, a_d, strict=True)) if isinstance(a_s, tuple) else [(a_s, a_d)]
    tiler, base = case["args"][1], [prod(tuple(m[0] for m in modes[:k])) for k in range(len(modes))]
    by_mode = isinstance(tiler, list) and case["op"] == "local_tile" and len(z[0].shape) == len(tiler) <= len(modes)
    if by_mode:  # each mode's coordinate in its own range
        z_modes = [z[0][k] for k in range(len(tiler))]
        c0 = [z[1] // b % prod(m[0]) for b, m in zip(base, modes, strict=True)]
        if sum(c * b for c, b in zip(c0, base, strict=True)) != z[1]:
            return None
    for i in range(n):
        if by_mode:
            crd, rest = list(c0), i
            for k, zk in enumerate(z_modes):
                sz = prod(zk.shape)
                crd[k] += zk(rest % sz) // base[k]
                rest //= sz
            if all(0 <= c < prod(m[0]) for c, m in zip(crd, modes, strict=True)) and f_w(i) + int(w0) != sum(
                    offset_at(m[0], m[1], c) for c, m in zip(crd, modes, strict=True)):
                return ""
            continue
        x = z[0](i) + z[1]
        if 0 <= x < prod(a_s) and offset_at(a_s, a_d, x) != f_w(i) + int(w0):
            return ""
    return f"CuTe's {case['cute']} is A at each point of the tile's coordinates {z[0]} @ {z[1]}"


_THREAD = re.compile(r"local_partition\(.*\) is not a layout: thread coordinate condition: .*?at c = (\S+) the thread "
                     r"layout gives (-?\d+)", re.S)


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _confirm_thread(case: dict, msg: str) -> str:
    """A refusal of CuTe's ``local_partition(A, T, i)`` because the thread's coordinate c, CuTe's
    ``T.get_flat_coord(i)`` (each leaf ``(i / stride) % shape`` in C++, recomputed here), lies outside T's shape or
    ``T(c) != i``: CuTe partitions for another thread; and the message shows CuTe's answer."""
    w = re.search(r"CuTe would print local_partition\(.*\) = (.+) at offset (-?\d+)$", msg)
    if w is None or f"{w.group(1)} @ {w.group(2)}" != case["cute"]:
        return f"the message does not show CuTe's answer {case['cute']}: {msg[-200:]}"
    shape, stride = split_layout(case["args"][1])
    i = case["args"][2]
    c = [0 if n == 1 else _cdiv(i, d) - n * _cdiv(_cdiv(i, d), n) for n, d in zip(flat(shape), flat(stride),
                                                                                 strict=True)]
    at = sum(x * d for x, d in zip(c, flat(stride), strict=True))
    c_msg, at_msg = _THREAD.search(msg).groups()
    if flat(parse_tuple(c_msg)) != c or int(at_msg) != at:
        return f"CuTe's coordinate of thread {i} is {c}, giving {at}, not the message's {c_msg}, {at_msg}"
    if at == i and all(0 <= x < n for x, n in zip(c, flat(shape), strict=True)):
        return f"CuTe's coordinate {c} of thread {i} is right"
    return ""


_NOT_POSITIVE = re.compile(r" is not a layout: positive shape condition: .* the shape (-?\d+) ")


def _confirm_not_positive(case: dict, msg: str) -> str:
    """A refusal of CuTe's answer because a shape of it is <= 0: the message's shape is in CuTe's printed layout
    (read by this module), and the layout the message says CuTe prints is CuTe's answer."""
    w = _WHOLE.search(msg)
    if w is None or w.group(1).replace(" at offset ", " @ ") != case["cute"]:
        return f"the message does not show CuTe's answer {case['cute']}: {msg[-200:]}"
    if case["op"] == "local_tile" and msg.startswith("zipped_divide("):
        return _confirm_tile_rest(case, msg)
    parts = case["cute"].split(" o ")  # Sw o O o L, or L o O o Sw
    shape, _ = split_layout(parts[-1] if parts[0].startswith("Sw<") else parts[0])
    bad = int(_NOT_POSITIVE.search(msg).group(1))
    if bad > 0 or bad not in flat(shape) or min(flat(shape)) > 0:
        return f"CuTe's answer {case['cute']} has no shape {bad} <= 0"
    return ""


def _confirm_tile_rest(case: dict, msg: str) -> str:
    """local_tile refused because CuTe's divide ``zipped_divide(A, tiler)`` has a rest mode of shape <= 0: that
    shape is in CuTe's divide (the same code with the checks off) at the mode the message names, a rest mode (1...),
    and the tile coordinate is not 0 there (a coordinate 0 indexes nothing: that tile is answered)."""
    import algebra as A
    from algebra.core.checks import cute_would_print

    m = re.search(r"gives mode (1(?:\.\d+)*) of the result the shape (-?\d+) ", msg)
    if m is None:
        return f"the message names no rest mode of the divide: {msg[:200]}"
    z = cute_would_print(A.zipped_divide, *[to_py(x) for x in case["args"][:2]])
    sub = z.shape if z is not None else None
    for k in m.group(1).split("."):
        sub = sub[int(k)] if isinstance(sub, tuple) and int(k) < len(sub) else None
    if sub != int(m.group(2)) or sub > 0:
        return f"CuTe's divide {z} has no shape {m.group(2)} at mode {m.group(1)}"
    if not any(flat(to_py(case["args"][2]))):
        return "the tile coordinate is 0: no coordinate indexes the rest mode"
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
    n = prod(a_shape) if a_shape is not None else 0
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
    in_a = (lambda k: 0 <= k < n and a_f(k) is not None) if a_shape is not None else (lambda k: a_f(k) is not None)
    if kind == "quasi-inverse":  # (a chain: None off its domain, where no layout of it is read)
        y = a_f(i) if in_a(i) else None
        x = r_f(y) if y is not None and y >= 0 else None
        holds = y is not None and y >= 0 and (x is None or not (in_a(x) and a_f(x) == y))
    else:
        x = r_f(i)
        holds = (i < prod(r_shape) if r_shape is not None else x is not None) and not (
            x is not None and in_a(x) and a_f(x) == i)
    return "" if holds else f"the counterexample does not hold: {msg[-200:]}"


def chain_at(text: str, crd: Any) -> int | None:
    """A chain ``P0 o O0 o P1 o ... o Pn`` (swizzles and layouts, Pn a layout) at the natural coordinate ``crd`` of Pn,
    right to left; None where a layout before Pn is read outside ``[0, its size)``."""
    parts = [x.strip() for x in text.split(" o ")]
    return _outer(parts, _nat_offset(crd, *split_layout(parts[-1])))


_OFF = re.compile(r"^(.+?) is not defined at x = .*CuTe would print evaluate\(\1, (\S+)\) = (-?\d+)$", re.S)
_RECAST = re.compile(r"^(upcast|downcast)<(\d+)>\((.+?)\) is not a layout: recast condition: .*CuTe would print "
                     r"\1<\2>\(\3\) = (.+)$", re.S)


def _confirm_recast(case: dict, msg: str) -> str:
    """A refusal of CuTe's upcast / downcast of ``L o O o ...`` (a layout first: its values are coordinates of L, not
    offsets) or of a negative offset (CuTe recasts it as an unsigned 32-bit int): the message's argument and printed
    answer are the case's, and CuTe's printed offset is the unsigned one (read from both prints here)."""
    op, n, arg, printed = _RECAST.search(msg).groups()
    if arg != case["args"][0] or printed != case["cute"] or int(n) != case["args"][1]:
        return f"the message does not show this case or CuTe's answer {case['cute']}: {msg[-200:]}"
    first, off = (x.strip() for x in arg.split(" o ")[:2])
    got, u = int(printed.split(" o ")[1]), int(off) % (1 << 32)
    if not first.startswith("Sw<"):
        return ""  # a layout after a swizzle: its values are coordinates, the refusal is of the argument's kind
    want = u // int(n) if op == "upcast" else u * int(n) % (1 << 32)
    return "" if int(off) < 0 and got == want else f"CuTe's offset {got} is not the unsigned recast of {off}"


_UNSIGNED = re.compile(r"slice of (.+?) at (\S+) is not a layout: unsigned offset condition: .*?CuTe would print (.+?) "
                       r"here; at j = (\d+), c_j = (\S+), R reads .*CuTe would print [a-z_]+\(.*\) = (.+)$", re.S)


def _confirm_unsigned(case: dict, msg: str) -> str:
    """A refusal of CuTe's slice ``A o O' o S`` whose offset O' wrapped as an unsigned int: at the message's j, CuTe's
    R reads A at ``O' + S(j)``, past A's size, while the sliced layout is defined at c_j (c with the kept modes at
    the natural coordinate of j, checked here), by this module's evaluator."""
    a, c, r, j, cj, whole = _UNSIGNED.search(msg).groups()
    if whole != case["cute"] or r != whole or [a, parse_tuple(c)] != [case["args"][0], parse_tuple(case["args"][1])]:
        return f"the message does not show this case or CuTe's answer {case['cute']}: {msg[-200:]}"
    first, off, sub = (x.strip() for x in r.split(" o ", 2))
    (ss, sd), crd, full = split_layout(sub), parse_tuple(c), parse_tuple(cj)
    if _c0_at(crd, full, split_layout(a.split(" o ")[-1])[0], int(j)) is None or first.startswith("Sw<"):
        return f"c_j = {cj} is not the coordinate of j = {j}, or R is not a layout after an offset"
    past = int(off) + offset_at(ss, sd, int(j)) >= prod(split_layout(first)[0])
    if "A is defined at no c_j" in msg:  # every coordinate that agrees with c on its fixed entries is off A's domain
        shape = split_layout(a.split(" o ")[-1])[0]
        every = [unflat(_crd(i, flat(shape)), shape) for i in range(prod(shape))]
        holds = all(chain_at(a, f) is None for f in every if _agrees(crd, f, shape))
    else:
        holds = chain_at(a, full) is not None
    return "" if past and holds else f"the counterexample does not hold: {msg[-200:]}"


def _crd(i: int, shape: list) -> list:
    """The colexicographic coordinate of ``i`` in the flat ``shape``."""
    out = []
    for s in shape:
        out.append(i % s)
        i //= s
    return out


def _agrees(c: Any, f: Any, shape: Any) -> bool:
    """The natural coordinate ``f`` of ``shape`` equals ``c`` at its fixed entries (``_`` keeps a whole mode; an int
    over a nested mode is its colexicographic index)."""
    if c is None:
        return True
    if isinstance(c, tuple):
        return all(_agrees(x, y, z) for x, y, z in zip(c, f, shape, strict=True))
    idx, mul = 0, 1
    for x, s in zip(flat(f), flat(shape), strict=True):
        idx, mul = idx + x * mul, mul * s
    return c == idx


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


_SLICE = re.compile(r"slice of (.+?) at (\S+) is not a layout: slice condition: .*?CuTe would print "
                    r"(\S+(?: o \S+ o \S+)?) here; at j = (\d+), c_j = (\S+), that gives (-?\d+), but "
                    r"A\(c_j\) - A\(c_0\) = (-?\d+)\. CuTe would print "
                    r"[a-z_]+\(.*\) = (\S+(?: o \S+ o \S+)?(?: at offset -?\d+)?)$", re.S)


def _nat_offset(crd: Any, shape: Any, stride: Any) -> int:
    """The offset of a coordinate (an int over a tuple mode splits colexicographically, the last sub-mode extends)."""
    if isinstance(crd, tuple):
        return sum(_nat_offset(c, s, d) for c, s, d in zip(crd, shape, stride, strict=True))
    if isinstance(shape, tuple):
        return offset_at(shape, stride, crd)
    return crd * stride


def _confirm_slice(case: dict, msg: str) -> str:
    """A refusal of CuTe's slice ``A(c)`` (``c`` with ``_``) of a swizzled layout: at the message's j and coordinate
    c_j (``c`` with the kept modes at the natural coordinate of j, checked here), CuTe's printed R gives
    ``R(j) - R(0) != A(c_j) - A(c_0)``, by this module's evaluator; and the message shows CuTe's answer."""
    a, c, r, j, cj, got, want, whole = _SLICE.search(msg).groups()
    crd, full = parse_tuple(c), parse_tuple(cj)
    if case["op"] == "evaluate":
        why = "" if a == case["args"][0] and crd == parse_tuple(case["args"][1]) else "another layout or coordinate"
    else:  # local_tile / local_partition: the slice of T = zipped_divide(A, tiler) at (tile crd, rest crd)
        why = _confirm_tiled(case, a, crd)
    if why or r != case["cute"].split(" @ ")[0] or whole.replace(" at offset ", " @ ") != case["cute"]:
        return f"the message does not show this case or CuTe's answer {case['cute']}: {why or msg[-200:]}"
    bms, off, lay_ = split_composed(a) if a.startswith("Sw<") else ((0, 0, 0), 0, a)
    shape, stride = split_layout(lay_)
    c0 = _c0_at(crd, full, shape, int(j))
    if c0 is None:
        return f"c_j = {cj} is not the case's coordinate with the kept modes at j = {j}"
    f_a = lambda x: swizzle(bms, off + _nat_offset(x, shape, stride))  # noqa: E731
    f_r = function(r)[1]
    d_r, d_a = f_r(int(j)) - f_r(0), f_a(full) - f_a(c0)
    if not (d_r == int(got) != d_a == int(want)):
        return f"the counterexample does not hold: R gives {d_r}, A gives {d_a}"
    return ""


def _c0_at(crd: Any, full: Any, shape: Any, j: int) -> Any:
    """c_0 (``crd`` with its ``_`` at 0) when ``full`` is ``crd`` with the kept modes at the natural coordinate of
    j, else None."""
    kept: list = []

    def walk(c_: Any, f: Any, s: Any) -> Any:  # c_0, collecting the kept (shape, coordinate) pairs in order
        if c_ is None:
            kept.append((s, f))
            return 0
        if isinstance(c_, tuple):
            return tuple(walk(x, y, z) for x, y, z in zip(c_, f, s, strict=True))
        return c_ if c_ == f else None

    try:
        c0 = walk(crd, full, shape)
        leaves = [(s, x) for s, f in kept for s, x in zip(flat(s), flat(f), strict=True)]
    except ValueError:  # (c_j is not shaped like the coordinate)
        return None
    idx, mul = 0, 1
    for s, x in leaves:
        idx, mul = idx + x * mul, mul * s
    return None if None in flat(c0) or idx != j or any(not 0 <= x < s for s, x in leaves) else c0


def _confirm_tiled(case: dict, t_text: str, crd: Any) -> str:
    """"" when ``t_text`` is ``zipped_divide(A, tiler)`` of a tensor op's case as a function (each mode k of A read at
    ``a_k + t_k * r_k``, a_k its tile index and r_k its rest index) and ``crd`` fixes what the op fixes (local_tile:
    the rest at the tile coordinate; local_partition: the tile at the thread's coordinate), else why not."""
    A, arg, *rest = case["args"]
    bms, off, lay_ = split_composed(A) if A.startswith("Sw<") else ((0, 0, 0), 0, A)
    shape, stride = split_layout(lay_)
    modes = list(zip(shape, stride, strict=True)) if isinstance(shape, tuple) else [(shape, stride)]
    if case["op"] == "local_partition":
        ts, td = split_layout(arg)
        tiles = [prod(m) for m in (ts if isinstance(ts, tuple) else (ts,))]
        if not isinstance(crd[0], tuple) and len(tiles) > 1 or _nat_offset(crd[0], ts, td) != rest[0]:
            return f"the tile coordinate {crd[0]} is not thread {rest[0]}'s in {arg}"
        if any(x is not None for x in flat(crd[1])):
            return "local_partition keeps every rest mode"
    else:
        if not all(isinstance(x, int) or x is None for x in arg):
            return "a tiler of ints and _ only"
        tiles = [prod(modes[k][0]) if x is None else x for k, x in enumerate(arg)]
        want = parse_tuple(rest[0]) if isinstance(rest[0], str) else rest[0]
        pad = tuple(want) + (None,) * (len(modes) - len(want)) if isinstance(want, tuple) else want
        if any(x is not None for x in flat(crd[0])) or (crd[1] != pad and not (len(modes) == 1 and crd[1] == want)):
            return f"the rest coordinate {crd[1]} is not the tile coordinate {rest[0]}"
    sizes = [(t, prod(m[0]) // t) for t, m in zip(tiles, modes, strict=False)]
    sizes += [(1, prod(m[0])) for m in modes[len(tiles):]]
    t_bms, t_off, t_lay = split_composed(t_text) if t_text.startswith("Sw<") else ((0, 0, 0), 0, t_text)
    t_shape, _ = split_layout(t_lay)
    if (t_bms, t_off) != (bms, off) or prod(t_shape) != prod(shape) or prod(t_shape[0]) != prod(tuple(tiles)):
        return f"{t_text} is not a tiling of {A}"
    f_t, n0 = function(t_text)[1], prod(tuple(tiles))
    for i in sample(prod(shape), 2048):
        i0, i1, total = i % n0, i // n0, off
        for (t, r), (s_, d_) in zip(sizes, modes, strict=True):
            total += offset_at(s_, d_, i0 % t + t * (i1 % r))
            i0, i1 = i0 // t, i1 // r
        if f_t(i) != swizzle(bms, total):
            return f"{t_text} is not zipped_divide({A}, {arg}) at {i}"
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
            out += [part for part in a.split(" o ") if ":" in part]  # the layouts of a (nested) composed layout
    return out
