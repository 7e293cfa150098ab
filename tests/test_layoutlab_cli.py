"""``layoutlab show`` and ``layoutlab op`` through the installed console script: output, files, exit codes."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import algebra as A
from tests.test_layoutlab import Cells, PRINT_LAYOUT_4x8

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> SimpleNamespace:
    """``layoutlab <args>`` in this process (app.cli.main, the console script's entry): exit code and output."""
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's --help
            code = exc.code
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def console(*args: str) -> subprocess.CompletedProcess:
    """The installed ``layoutlab`` console script itself."""
    exe = shutil.which("layoutlab", path=str(Path(sys.executable).parent))
    cmd = [exe, *args] if exe else [sys.executable, "-m", "app.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_console_script_shows_and_refuses_without_the_web_app():
    r = console("show", "(4,8):(8,1)")
    assert r.returncode == 0 and r.stdout == PRINT_LAYOUT_4x8
    r = console("show", "(4,8:(8,1)")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("layoutlab: layout:")


def test_show_prints_print_layouts_table_and_writes_the_pictures(tmp_path):
    svg, html, tex = tmp_path / "a.svg", tmp_path / "a.html", tmp_path / "a.tex"
    r = run("show", "(4,8):(8,1)", "--svg", str(svg), "--html", str(html), "--latex", str(tex))
    assert r.returncode == 0, r.stderr
    assert r.stdout == PRINT_LAYOUT_4x8
    assert len(Cells(svg.read_text()).cells) == len(Cells(html.read_text()).cells) == 32
    assert html.read_text().startswith("<!doctype html>") and "\\node[fill=" in tex.read_text()


def test_colour_and_element_bytes(tmp_path):
    out = tmp_path / "b.html"
    r = run("show", "(8,64):(64,1)", "--color", "bank", "--element-bytes", "2", "--html", str(out))
    assert r.returncode == 0, r.stderr
    cells = Cells(out.read_text()).cells
    assert len(cells) == 512
    assert 'class="p1" data-offset="2"' in out.read_text()  # offset 2 of 2-byte elements: byte 4, bank 1


def test_swizzled_dsl_text_atoms_and_tv():
    r = run("show", "Sw<1,0,1> o _0 o (2,4):(4,1)")
    assert r.returncode == 0 and "| 0 | 1 | 3 | 2 |" in r.stdout
    r = run("show", "SM80_16x8x16_F32F16F16F32_TN")
    assert r.returncode == 0 and "T0V0" in r.stdout and "T31V3" in r.stdout
    r = run("show", "((4,8),(2,2)):((32,1),(16,8))", "--tile", "16,8")
    assert r.returncode == 0 and "T0V0" in r.stdout


def test_op_prints_the_result_and_the_derivation():
    r = run("op", "composition", "(6,2):(8,2)", "(4,3):(3,1)")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.endswith("= " + str(A.composition(A.parse("(6,2):(8,2)"), A.parse("(4,3):(3,1)"))))
    assert "  1. " in r.stdout and len(r.stdout.splitlines()) > 4


@pytest.mark.parametrize("args", [("show", "(4,8:(8,1)"), ("show", "(4,8):(8,1)", "--color", "red"),
                                  ("show", "(1024,1024):(1024,1)"), ("op", "nope", "4:1"),
                                  ("op", "composition", "4:1"), ("show", "#ttg.blocked<{}>"),
                                  ("show", "(4,8):(8,1)", "--svg", "/nonexistent/dir/a.svg"), ("show",)])
def test_bad_input_exits_2_with_one_line(args):
    r = run(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("layoutlab: ") and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, reason", [
    (("show", "(4,8):(8,1)", "--element-bytes", "9" * 400), "is not a whole number of bytes from 1 to 64"),
    (("show", "(" * 1000 + "4" + ")" * 1000), "over the nesting cap of 32"),
    (("op", "composition", "(" + ",".join(["2"] * 2100) + ")", "4:1"), "exceeds the cap of 4,000"),
])
def test_a_long_echoed_input_keeps_the_reason_on_its_one_line(args, reason):
    r = run(*args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].endswith(reason) and len(lines[0]) < 480, r.stderr


def test_a_name_that_is_no_atom_is_named_as_such():
    r = run("show", "SM80_16x8x16_F32F16F16F32_NT")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "neither CuTe notation nor an atom's name" in r.stderr
    assert "did you mean SM80_16x8x16_F32F16F16F32_TN" in r.stderr
    r = run("show", "Layout")
    assert r.returncode == 2 and "algebra.atoms.names() lists them" in r.stderr
    assert run("show", "Sw<3,3,3> o 64").returncode == 0  # notation that starts with a letter is still notation


def test_over_the_cap_still_shows_the_notation():
    r = run("show", "(1024,1024):(1024,1)")
    assert r.returncode == 2 and "(1024,1024):(1024,1)" in r.stdout and "render cap" in r.stdout


def test_serve_and_worker_remain():
    r = run("--help")
    assert r.returncode == 0 and "serve" in r.stdout and "worker" in r.stdout and "layoutlab show" in r.stdout
    r = run("show", "--help")
    assert r.returncode == 0 and "--element-bytes" in r.stdout


def test_contract_picture_flags_without_a_file_write_to_stdout(tmp_path):
    """CONTRACT §7: ``layoutlab show "<layout>" [--svg|--html|--latex FILE]``: a flag without FILE (or with -) puts
    that picture on standard output in place of the table; with FILE it is written there as before."""
    r = run("show", "(4,8):(8,1)", "--svg")
    assert r.returncode == 0 and r.stdout.startswith("<svg") and len(Cells(r.stdout).cells) == 32, r.stderr
    r = run("show", "(4,8):(8,1)", "--html")
    assert r.returncode == 0 and r.stdout.startswith("<!doctype html>") and len(Cells(r.stdout).cells) == 32
    r = run("show", "(4,8):(8,1)", "--latex", "-")
    assert r.returncode == 0 and "\\node[fill=" in r.stdout and PRINT_LAYOUT_4x8 not in r.stdout
    r = run("show", "(4,8):(8,1)", "--svg", str(tmp_path / "c.svg"))
    assert r.returncode == 0 and r.stdout == PRINT_LAYOUT_4x8 and (tmp_path / "c.svg").read_text().startswith("<svg")
    r = run("show", "(4,8:(8,1)", "--svg")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == ""


def test_contract_python_m_layoutlab_and_every_command_named():
    """``python -m layoutlab`` is the ``layoutlab`` command; an unknown command names all four."""
    r = subprocess.run([sys.executable, "-m", "layoutlab", "show", "(4,8):(8,1)"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0 and r.stdout == PRINT_LAYOUT_4x8, r.stderr
    r = run("nope")
    assert r.returncode == 2 and all(f"'{c}'" in r.stderr for c in ("show", "op", "serve", "worker"))


@pytest.mark.parametrize("args, reason", [
    (("show", "4:1", "--latex", ""), "--latex: an empty file name"),
    (("show", "4:1", "--svg", ""), "--svg: an empty file name"),
    (("show", "4:1", "--html", "  "), "--html: an empty file name"),
    (("show", "(4,8):(8,1)", "--tile", ""), "--tile: empty"),
    (("show", "#ttg.blocked<{}>", "--shape", ""), "--shape: empty"),
    (("show", "4:1", "--element-bytes", "\uff15"), "--element-bytes: '\uff15' is not a whole number"),
    (("show", "4:1", "--element-bits", "\u0661\u0666"), "--element-bits: '\u0661\u0666' is not a whole number"),
    (("show", "(4,8):(8,1)", "--tile", "\u0664,8"), "--tile: '\u0664,8' is not a list of integers"),
    (("show", "(4,8):(8,1)", "--svg", "--html"), "one picture at a time on standard output"),
    (("show", "(4,8):(8,1)", "--shape", "4,8"), "only a TTGIR layout attribute (text starting with #) takes"),
    (("show", "SM80_16x8x16_F32F16F16F32_TN", "--tile", "4,8"), "an atom, a tiled copy or a tiled MMA draws its own"),
])
def test_hostile_options_exit_2_naming_the_option(args, reason):
    """An empty FILE, --tile or --shape was ignored (status 0, nothing written), and so were --shape beside notation
    and --tile beside an atom; digits of other scripts were read as
    numbers (``int('\uff15') == 5``) where the layout itself refuses them; two pictures went to standard output run
    together. Each is now refused in one line that names the option."""
    r = run(*args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and reason in lines[0], (r.stdout[:200], r.stderr)
    assert r.stdout == ""


def test_a_terminal_that_is_not_utf8_gets_the_table_and_utf8_pictures():
    """With an ASCII standard output (``PYTHONIOENCODING=ascii``, a C locale without UTF-8), ``show`` died with a
    UnicodeEncodeError traceback on a TV table's title (``·``) and on the pictures (``−`` in the zoom button). The
    table now writes what it cannot encode as ``?``, and a picture goes out as the UTF-8 its markup declares."""
    import os

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    exe = shutil.which("layoutlab", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "app.cli"]
    r = subprocess.run([*cmd, "show", "SM80_16x8x16_F32F16F16F32_TN"], capture_output=True, timeout=120, cwd=ROOT,
                       env=env)
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"T31V3" in r.stdout, r.stderr[-600:]
    r = subprocess.run([*cmd, "show", "(4,8):(8,1)", "--html"], capture_output=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-600:]
    assert len(Cells(r.stdout.decode("utf-8")).cells) == 32 and "\u2212" in r.stdout.decode("utf-8")


@pytest.mark.parametrize("args", [(), ("nope",), ("--colour", "bank"), ("serve", "--port", "http")])
def test_a_bad_command_line_is_one_line_too(args):
    """``layoutlab`` with no command, an unknown one or a bad option printed argparse's usage block above the
    reason (two lines and more); like ``show`` and ``op``, it now answers in one line and status 2."""
    r = run(*args)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("layoutlab: "), r.stderr


@pytest.mark.parametrize("args", [["serve", "--port", "\uff18\uff10"], ["serve", "--port", "\u0668\u0660\u0668\u0660"],
                                  ["serve", "--workers", "\uff12"], ["serve", "--port", "80.0"]])
def test_serve_reads_its_numbers_in_ascii_digits_only(args, capsys):
    """``int()`` reads other scripts' digits (full-width 80 as port 80): the serve command's numbers are refused
    with one line naming the option, before any server starts, as ``show``'s are."""
    from app.cli import main as cli

    with pytest.raises(SystemExit) as exc:
        cli(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and args[1] in err, err


def test_a_ttgir_attribute_without_its_shape_names_the_flag_that_gives_it():
    """In the terminal the tensor's shape is ``--shape R,C``; the refusal named the notebook's keyword only."""
    r = run("show", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
                    "order = [1, 0]}>")
    assert r.returncode == 2 and "--shape R,C" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    ok = run("show", "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], "
                     "order = [1, 0]}>", "--shape", "32,16")
    assert ok.returncode == 0 and "T0V0" in ok.stdout
