"""The tour notebook (docs/notebooks/tour.ipynb) executed once per test session with a real Jupyter kernel
(nbclient + ipykernel), and its outputs by cell."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOUR = ROOT / "docs" / "notebooks" / "tour.ipynb"


@functools.cache
def executed() -> Any:
    """The executed notebook (nbformat NotebookNode); skips the test where nbclient / ipykernel are missing."""
    import pytest

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(TOUR, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return nb


def cell(nb: Any, needle: str) -> Any:
    """The first code cell whose source holds ``needle``."""
    return next(c for c in nb.cells if c.cell_type == "code" and needle in c.source)


def html_of(c: Any) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in c.outputs)


def run_cells(sources: list[str]) -> Any:
    """A fresh notebook of ``sources`` (one code cell each) executed with a real kernel, errors kept as outputs."""
    import pytest

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb
