"""``layoutlab show`` and ``layoutlab op``: the library face in a terminal (no web app is imported).

- ``layoutlab show "<layout>" [--svg [FILE]] [--html [FILE]] [--latex [FILE]] [--color bank|thread|offset]
  [--element-bytes N] [--tile M,N] [--shape R,C]`` prints the table as ``cute::print_layout`` prints it and writes
  the pictures asked for; the layout may be CuTe notation (the DSL's printed forms too), an atom's name
  (``SM80_16x8x16_F32F16F16F32_TN``) or a TTGIR attribute with ``--shape``.
- ``layoutlab op <op> <args...>`` runs any op of the op table (``algebra/teach/registry.py``) and prints its result
  and derivation (``algebra.explain``).

Bad input exits with status 2 and one line on stderr: ``layoutlab: <reason>``.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable
from pathlib import Path

COMMANDS = ("show", "op")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2 (argparse's own usage block is for --help)
        raise _Bad(message)


class _Bad(Exception):
    pass


def _ints(text: str, what: str) -> tuple[int, ...]:
    """``16,8`` (or ``16x8``, ``(16, 8)``) as integers: ASCII digits only, as in a typed layout (``int()`` would read
    other scripts' digits, ``'\uff15'`` as 5)."""
    parts = [p.strip() for p in text.replace("x", ",").strip("()[] ").split(",") if p.strip()]
    if not parts:
        raise _Bad(f"{what}: empty")
    if not all(re.fullmatch(r"[+-]?[0-9]+", p) for p in parts):
        raise _Bad(f"{what}: {text!r} is not a list of integers such as 16,8")
    return tuple(int(p) for p in parts)


def whole(what: str) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in ASCII digits (the range is checked where the number is used)."""
    def read(text: str) -> int:
        if not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
            raise argparse.ArgumentTypeError(f"{what}: {text!r} is not a whole number (digits 0-9)")
        return int(text)
    return read


PICTURES = ("svg", "html", "latex")


def _check_outputs(args: argparse.Namespace) -> None:
    """Each picture flag names a file or ``-``; at most one picture goes to standard output."""
    for name in PICTURES:
        path = getattr(args, name)
        if path is not None and not path.strip():
            raise _Bad(f"--{name}: an empty file name (give a path, or - for standard output)")
    piped = [f"--{n}" for n in PICTURES if getattr(args, n) == "-"]
    if len(piped) > 1:
        raise _Bad(f"{', '.join(piped)}: one picture at a time on standard output (give the others a FILE)")


def _object(text: str, shape: tuple[int, ...] | None) -> object:
    """CuTe notation, an atom's name, or TTGIR text (with ``--shape``)."""
    name = text.strip()
    if name and name[0].isalpha() and "(" not in name and ":" not in name:
        from algebra import atoms

        if name in set(atoms.names()):
            return atoms.get(name)
        if re.fullmatch(r"[A-Za-z]\w*", name):  # a name, not notation: say which atoms come close
            near = difflib.get_close_matches(name, atoms.names(), n=3)
            raise _Bad(f"{name!r} is neither CuTe notation nor an atom's name"
                       + (f"; did you mean {', '.join(near)}?" if near else " (algebra.atoms.names() lists them)"))
    return name


def _show(args: argparse.Namespace) -> int:
    import layoutlab

    _check_outputs(args)
    tile = _ints(args.tile, "--tile") if args.tile is not None else None
    shape = _ints(args.shape, "--shape") if args.shape is not None else None
    x = _object(args.layout, None)
    pic = layoutlab.Picture(x, args.color, args.element_bytes, tile, shape, args.element_bits)
    outputs = [(args.svg, pic.svg), (args.html, lambda: _page(pic._repr_html_())), (args.latex, pic.latex)]
    rendered = [(path, make()) for path, make in outputs if path]  # every picture made before any file is written
    piped = [content for path, content in rendered if path == "-"]  # at most one (_check_outputs)
    if piped:
        _picture_out(piped[0])
    else:
        sys.stdout.write(pic.text())
    over = [p for p in pic.panels if p.note is not None]
    if over:  # the notation and the reason are printed above; the status says nothing was drawn
        raise _Bad(f"{over[0].notation}: {over[0].note}")
    for path, content in rendered:
        if path == "-":
            continue
        try:
            Path(path).write_text(content, encoding="utf-8")
        except OSError as exc:
            raise _Bad(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _picture_out(content: str) -> None:
    """A picture on standard output as the UTF-8 its markup declares, whatever the terminal's encoding."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text stream with no bytes under it (a test's StringIO)
        sys.stdout.write(content)
        return
    sys.stdout.flush()
    buffer.write(content.encode("utf-8"))
    buffer.flush()


def _page(fragment: str) -> str:
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>LayoutLab</title></head>"
            f"<body>{fragment}</body></html>\n")


def _op(args: argparse.Namespace) -> int:
    from algebra.teach.explain import derive
    from algebra.teach.registry import get
    from layoutlab.caps import MAX_TEXT

    op = get(args.name)
    for a in args.args:
        if len(a) > MAX_TEXT:
            raise _Bad(f"argument: {len(a):,} characters exceeds the cap of {MAX_TEXT:,}")
    result, steps = derive(op.name, *args.args)
    from algebra.core.notation import show as notation

    print(f"{op.name}({', '.join(args.args)}) = {notation(result)}")
    print()
    for k, s in enumerate(steps, start=1):
        indent = "   " * int(s.get("depth") or 0)
        tail = f"   -> {s['layout']}" if s.get("layout") else ""
        print(f"{k:>3}. {indent}{s['text']}{tail}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="layoutlab", description="CuTe layouts in the terminal: print_layout's table, pictures, ops")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    s = sub.add_parser("show", help="print a layout's table (cute::print_layout) and write its pictures")
    s.add_argument("layout", help='CuTe notation ("(4,8):(8,1)", "Sw<3,4,3> o (8,64):(64,1)"), an atom\'s name, or a '
                                  "TTGIR attribute with --shape")
    out = " (no FILE, or -: to standard output in place of the table)"
    s.add_argument("--svg", metavar="FILE", nargs="?", const="-", help="an SVG picture" + out)
    s.add_argument("--html", metavar="FILE", nargs="?", const="-", help="a self-contained page (inline style and "
                                                                         "script)" + out)
    s.add_argument("--latex", metavar="FILE", nargs="?", const="-", help="TikZ as CuTe's print_latex writes it" + out)
    s.add_argument("--color", "--colour", dest="color", choices=("bank", "thread", "offset"), default=None)
    s.add_argument("--element-bytes", type=whole("--element-bytes"), default=4,
                   help="bytes per element for --color bank (default 4)")
    s.add_argument("--element-bits", type=whole("--element-bits"), default=16,
                   help="element width of a copy atom / TTGIR shared layout")
    s.add_argument("--tile", metavar="M,N", help="draw the layout as a (thread, value) layout over an M x N tile")
    s.add_argument("--shape", metavar="R,C", help="the tensor shape of a TTGIR layout attribute")
    o = sub.add_parser("op", help="run an op of the algebra and print its result and derivation")
    o.add_argument("name", help="an op of the op table: composition, complement, logical_divide, ...")
    o.add_argument("args", nargs="*", help="its arguments in CuTe notation")
    return p


def main(argv: list[str] | None = None) -> int:
    from algebra import LayoutError

    argv = sys.argv[1:] if argv is None else argv
    if hasattr(sys.stdout, "reconfigure"):  # a terminal that is not UTF-8 reads ? for a character it cannot show
        sys.stdout.reconfigure(errors="replace")
    try:
        args = parser().parse_args(argv)
        return _show(args) if args.cmd == "show" else _op(args)
    except (_Bad, LayoutError) as exc:  # one line; an echoed input cut in its middle, the reason kept
        from layoutlab.caps import clip

        print(f"layoutlab: {clip(' '.join(str(exc).split()))}", file=sys.stderr)
        return 2
    except RecursionError:
        print("layoutlab: input nested too deeply", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `layoutlab op ... | head`: the reader left; nothing more to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
