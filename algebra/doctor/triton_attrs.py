"""The pieces both conversions, distributed (``triton_layouts``) and shared (``triton_shared``), stand on: reading
the fields of a TTGIR layout attribute (integers, powers of two, orders, bases, each refused with the field's name),
the few LinearLayout builders Triton makes its layouts with (``lib/Tools/LinearLayout.cpp``,
``LinearLayoutConversions.cpp``), so that the conversions read like Triton's own, and combining a CTA's layout with
its CGA layout. The product ``*``, ``transpose_outs`` and ``compose`` are ``linear_layout.LinearLayout``'s (``TLL``
here), whose map is a core Layout with F2 strides.

Post-condition of every builder: a new ``TLL`` (they never mutate), whose out-dim sizes are powers of two and whose
basis values lie inside them.
"""

from __future__ import annotations

from typing import Any

from algebra.doctor import ttgir
from algebra.doctor.linear_layout import LinearLayout, log2
from algebra.doctor.ttgir import Attr, TTGIRError

TLL = LinearLayout  # Triton's LinearLayout, built unchecked (``LinearLayout.raw``)


def _fail(owner: str, key: str, msg: str) -> TTGIRError:
    return TTGIRError(f"{owner}.{key}: {msg}")


def _get(a: Attr, key: str, default: Any = ...) -> Any:
    if key not in a.fields:
        if default is ...:
            raise _fail(a.name, key, "missing")
        return default
    return a.fields[key]


def _int(a: Attr, key: str, allowed: tuple[int, ...] | None = None, default: Any = ..., pow2: bool = False) -> int:
    v = _get(a, key, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _fail(a.name, key, f"expected an integer, got {ttgir.value_text(v)}")
    if allowed is not None and v not in allowed:
        raise _fail(a.name, key, f"{v} is not one of {', '.join(map(str, allowed))}")
    if pow2:
        log2(v, f"{a.name}.{key}", TTGIRError)
    return v


def _pow2s(a: Attr, key: str, rank: int) -> list[int]:
    v = _get(a, key)
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise _fail(a.name, key, f"expected a list of integers, got {ttgir.value_text(v)}")
    if len(v) != rank:
        raise _fail(a.name, key, f"has {len(v)} entries, but the tensor has rank {rank}")
    for x in v:
        log2(x, f"{a.name}.{key}", TTGIRError)
    return list(v)


def _order(a: Attr, rank: int, key: str = "order") -> list[int]:
    v = _get(a, key)
    if not isinstance(v, list) or sorted(v) != list(range(rank)) or any(isinstance(x, bool) for x in v):
        raise _fail(a.name, key, f"{ttgir.value_text(v)} is not a permutation of 0..{rank - 1}")
    return list(v)


def _bases(a: Attr, key: str, rank: int | None, default: Any = ...) -> list[list[int]]:
    v = _get(a, key, default)
    if not isinstance(v, list) or not all(isinstance(b, list) for b in v):
        raise _fail(a.name, key, f"expected a list of bases (lists of integers), got {ttgir.value_text(v)}")
    for b in v:
        if rank is not None and len(b) != rank:
            raise _fail(a.name, key, f"basis {ttgir.value_text(b)} has {len(b)} entries, not the tensor rank {rank}")
        if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 20 for x in b):
            raise _fail(a.name, key, f"basis {ttgir.value_text(b)}: entries must be non-negative integers")
    return [list(b) for b in v]


# --------------------------------------------------------------------------- builders


def identity1d(size: int, in_dim: str, out_dim: str) -> TLL:
    return TLL.raw({in_dim: [[1 << i] for i in range(log2(size, f"{in_dim} size"))]}, {out_dim: size})


def zeros1d(size: int, in_dim: str, out_dim: str) -> TLL:
    return TLL.raw({in_dim: [[0] for _ in range(log2(size, f"{in_dim} size"))]}, {out_dim: 1})


def empty() -> TLL:
    return TLL.raw({}, {})


def dims(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def identity_nd(in_dim: str, shape: list[int], order: list[int], broadcast: int | None = None) -> TLL:
    """Triton's identityStandardND: identity1D per dimension, the most minor (order[0]) first; dimension
    ``broadcast`` (the K of a dot operand) zeros1D instead (Triton's broadcastedDotOperandLayout)."""
    names = dims(len(shape))
    out = empty()
    for d in order:
        out = out * (zeros1d if d == broadcast else identity1d)(shape[d], in_dim, names[d])
    return out


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's getMatrixOrder: [rank-1, ..., 0], the two innermost swapped when not row-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def ensure_not_smaller(ll: TLL, shape: dict[str, int], in_dim: str) -> TLL:
    """Repeat ``ll`` over ``in_dim`` (register or offset) until each out-dim covers ``shape`` (out-dims in the
    layout's own order)."""
    out = ll
    for name in list(ll.outs):
        have, want = ll.outs[name], shape[name]
        if have < want:
            out = out * identity1d(want // have, in_dim, name)
    return out


def ensure_not_larger(ll: TLL, shape: dict[str, int], broadcast_registers: bool = True) -> TLL:
    """Zero the largest bases of each out-dim larger than ``shape`` (they broadcast) until it fits; without
    ``broadcast_registers`` such register bases are dropped instead. Post: each out-dim's size is
    ``min(size, shape)``."""
    bases = {k: [list(v) for v in b] for k, b in ll.bases.items()}
    names = list(ll.outs)
    dropped: set[int] = set()
    for j, name in enumerate(names):
        have, want = ll.outs[name], shape[name]
        if have <= want:
            continue
        found = [(v[j], k, i) for k, b in bases.items() for i, v in enumerate(b) if v[j] != 0]
        found.sort(key=lambda t: -t[0])
        for _, k, i in found:
            if have <= want:
                break
            if not broadcast_registers and k == "register":
                dropped.add(i)
            else:
                bases[k][i][j] = 0
            have >>= 1
    if not broadcast_registers and "register" in bases:
        bases["register"] = [v for i, v in enumerate(bases["register"]) if i not in dropped]
    return TLL.raw(bases, {n: min(ll.outs[n], shape[n]) for n in names})


# --------------------------------------------------------------------------- CTAs of a cluster


def _cga(a: Attr, rank: int) -> TLL:
    names = dims(rank)
    if "CGALayout" in a.fields:
        cga = TLL.inferred({"block": _bases(a, "CGALayout", rank)}, names)
        reach, nbits = cga.to_linear(("block",), names).rank(), sum(cga.out_bits)
        if reach != nbits:  # Triton aborts on such a layout ([[0, 2]]: 4 CTA tiles along dim 1 from one basis)
            raise _fail(a.name, "CGALayout", f"the bases reach {reach} of the {nbits} bits of the "
                                             f"{list(cga.outs.values())} CTA tiles they span: Triton requires every "
                                             "tile to have a CTA (surjective)")
        return cga
    if "CTAsPerCGA" in a.fields:
        ctas, split = _pow2s(a, "CTAsPerCGA", rank), _pow2s(a, "CTASplitNum", rank)
        out = empty()
        for d in _order(a, rank, "CTAOrder"):
            if ctas[d] % split[d]:
                raise _fail(a.name, "CTASplitNum", f"{split[d]} does not divide CTAsPerCGA {ctas[d]}")
            out = out * identity1d(split[d], "block", names[d]) * zeros1d(ctas[d] // split[d], "block", names[d])
        return out.transpose_outs(names)
    return TLL.raw({"block": []}, {n: 1 for n in names})


def _combine(cta: TLL, cga: TLL, shape: list[int], owner: str) -> TLL:
    """Triton's combineCtaCgaWithShape: fit the CTA's layout to shape / CTAs (repeating it over registers; past the
    shape, registers are kept as zero bases -- broadcasts -- as Triton 3.6 and 3.8 keep them for every distributed
    layout; Triton 3.9 drops a blocked layout's) and put the CTAs outside."""
    names = dims(len(shape))
    for n in names:
        if n not in cta.outs:
            cta = cta * identity1d(1, next(iter(cta.bases), "register"), n)
    cga = ensure_not_larger(cga, dict(zip(names, shape, strict=True))).transpose_outs(list(cta.outs))
    cta_shape = {n: max(1, s // cga.outs[n]) for n, s in zip(names, shape, strict=True)}
    in_dim = next(iter(cta.bases))
    cta = ensure_not_larger(ensure_not_smaller(cta, cta_shape, in_dim), cta_shape)
    out = (cta * cga).transpose_outs(names)
    got = [out.outs[n] for n in names]
    if got != list(shape):
        raise TTGIRError(f"{owner}: the layout covers {got}, which does not fit the shape {list(shape)}")
    return out
