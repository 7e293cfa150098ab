"""Read a page's drawn grids and the CuTe layouts they claim, independently of the app: a small parser of CuTe
notation (ints, nested tuples, ``Sw<B,M,S> o [offset o]``), evaluation from the definition (colexicographic
coordinates, dot product with the strides, the swizzle's XOR on the offset), and the cells as the HTML (or its
grid-data JSON) carries them. Used by tests/test_pages_equal_algebra.py."""

from __future__ import annotations

import html
import json
import re


def parse(text: str):
    """(swizzle (B, M, S) or None, offset, shape, stride) of ``text``."""
    text = text.replace(" ", "")
    sw, off = None, 0
    m = re.match(r"Sw<(-?\d+),(-?\d+),(-?\d+)>o", text)
    if m:
        sw = tuple(int(g) for g in m.groups())
        text = text[m.end():]
        m2 = re.match(r"(-?\d+)o", text)
        if m2:
            off, text = int(m2.group(1)), text[m2.end():]
    pos = 0

    def item():
        nonlocal pos
        if text[pos] == "(":
            pos += 1
            out = [item()]
            while text[pos] == ",":
                pos += 1
                out.append(item())
            assert text[pos] == ")", text
            pos += 1
            return tuple(out)
        m3 = re.compile(r"(-?\d+)(?:@(\d+))?").match(text, pos)
        assert m3, text
        pos = m3.end()
        return int(m3.group(1)) if m3.group(2) is None else Basis(int(m3.group(1)), int(m3.group(2)))

    shape = item()
    assert text[pos] == ":", text
    pos += 1
    stride = item()
    assert pos == len(text), text
    return sw, off, shape, stride


class Basis(tuple):
    """A scaled basis stride ``k@m``: k along coordinate m."""

    def __new__(cls, k: int, m: int):
        return super().__new__(cls, (k, m))


def size(s) -> int:
    if isinstance(s, int):
        return s
    out = 1
    for x in s:
        out *= size(x)
    return out


def leaves(s) -> list:
    return [s] if isinstance(s, int | Basis) else [y for x in s for y in leaves(x)]


def depth(s) -> int:
    return 0 if isinstance(s, int) else 1 + max(depth(x) for x in s)


def value(shape, stride, i: int):
    """The offset at 1-D index i: colexicographic over the leaves; a tuple where the strides are scaled bases."""
    ds = leaves(stride)
    width = 1 + max((d[1] for d in ds if isinstance(d, Basis)), default=-1)
    out = [0] * max(width, 1)
    for n, d in zip(leaves(shape), ds, strict=True):
        c = i % n
        if isinstance(d, Basis):
            out[d[1]] += c * d[0]
        else:
            out[0] += c * d
        i //= n
    return tuple(out) if width else out[0]


def label(v) -> str:
    """A cell's label as the pages print it: an int, or a coordinate ``(a,b)``."""
    return str(v) if isinstance(v, int) else "(" + ",".join(map(str, v)) + ")"


def swizzle(sw, x):
    if sw is None:
        return x
    b, m, s = sw
    mask = ((1 << b) - 1) << (m + max(s, 0))
    return x ^ ((x & mask) >> s) if s >= 0 else x ^ ((x & mask) << -s)


def _plus(off: int, v):
    return v if not off else off + v


def evaluate(text: str, i: int) -> int:
    sw, off, shape, stride = parse(text)
    return swizzle(sw, _plus(off, value(shape, stride, i)))


def view(text: str) -> list[list[int]]:
    """The rank-2 view: rows = mode 0, columns = the modes after it folded (a rank-1 layout: one row)."""
    sw, off, shape, stride = parse(text)
    if isinstance(shape, int) or len(shape) == 1:
        n = size(shape)
        return [[swizzle(sw, _plus(off, value(shape, stride, j))) for j in range(n)]]
    rows = size(shape[0])
    cols = size(shape) // rows
    return [[swizzle(sw, _plus(off, value(shape, stride, i + rows * j))) for j in range(cols)] for i in range(rows)]


def grid_cells(page: str, grid_id: str) -> list[list[str]]:
    """The labels of grid ``grid_id`` by row, from its server-written tiles, or its grid-data JSON where it has one."""
    m = re.search(rf'<script type="application/json" class="grid-data" data-for="{grid_id}">(.*?)</script>', page,
                  re.S)
    if m:
        data = json.loads(m.group(1))
        assert isinstance(data["t"], list), grid_id
        return [[str(x) for x in row] for row in data["t"]]
    start = page.index(f'<div class="grid " id="{grid_id}"') if f'<div class="grid " id="{grid_id}"' in page else \
        re.search(rf'<div class="grid[^"]*" id="{grid_id}"', page).start()
    end = page.index('<script type="application/json" class="grid-meta"', start)
    body = page[start:end]
    head = re.search(r'data-rows="(\d+)" data-cols="(\d+)"', body)
    rows, cols = int(head.group(1)), int(head.group(2))
    cells: list[list[str | None]] = [[None] * cols for _ in range(rows)]
    body = body[body.index('<div class="gk"'):]
    for tile in re.finditer(r'<div class="gt[^"]*" data-j="(\d+)"[^>]*>(.*?)(?=<div class="gt|</div></div></div>$|$)',
                            body, re.S):
        j0 = int(tile.group(1))
        for row in re.finditer(r'<div class="gr[^"]*" data-i="(\d+)">(.*?)</div>', tile.group(2), re.S):
            for k, cell in enumerate(re.findall(r"<span[^>]*>(.*?)</span>", row.group(2), re.S)):
                cells[int(row.group(1))][j0 + k] = html.unescape(cell)
    assert all(c is not None for row in cells for c in row), (grid_id, "cells missing")
    return cells  # type: ignore[return-value]
