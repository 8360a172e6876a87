"""The notebooks in ``docs/notebooks/`` run top to bottom and show what they promise.

Each notebook is executed by ``nbclient`` in a fresh kernel of this interpreter
(a kernelspec written into a temporary Jupyter path, so a user's own
``python3`` kernel cannot stand in), with a temporary working directory; any
cell error fails the test. The notebooks generate their own small data. The
committed files carry no outputs (``build_notebooks.py`` writes them).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
KERNEL = "ndp-notebook-tests"
CELL_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory):
    """A kernelspec that starts ``sys.executable -m ipykernel_launcher``."""
    from ipykernel.kernelspec import install

    prefix = tmp_path_factory.mktemp("jupyter")
    install(kernel_name=KERNEL, display_name="ndp tests", prefix=str(prefix))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"), prepend=os.pathsep)
        mp.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiets a debugger warning on stderr
        yield KERNEL


def _run(name: str, kernel: str, cwd: Path):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT_S, allow_errors=False,
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    return nb


def _outputs(nb, output_type: str | None = None) -> list:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
            if output_type is None or out.output_type == output_type]


def _html(nb) -> list[str]:
    return [out.data["text/html"] for out in _outputs(nb) if "text/html" in out.get("data", {})]


def _pngs(nb) -> int:
    return sum("image/png" in out.get("data", {}) for out in _outputs(nb))


def _text(nb) -> str:
    parts = [out.get("text", "") for out in _outputs(nb, "stream")]
    parts += [out.data["text/plain"] for out in _outputs(nb) if "text/plain" in out.get("data", {})]
    return "\n".join(parts)


def test_committed_notebooks_have_no_outputs():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == ["01-quick-start.ipynb", "02-computational-ssd-what-if.ipynb", "03-dask.ipynb"]
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{name}: commit without outputs"


def test_quick_start(kernel_name, tmp_path):
    nb = _run("01-quick-start.ipynb", kernel_name, tmp_path)
    text = _text(nb)
    assert "equal to pyarrow's Table and to pandas' DataFrame" in text
    assert "equal to read_csv: True" in text
    assert "orders.csv:3: column 'name': expected 3 fields, got 2" in text  # the CsvParseError, located
    assert "line=4 column='qty' byte_offset=" in text
    assert "CsvBadLineWarning: skipping bad line" in text
    assert any("SniffedDialect" in html for html in _html(nb))  # the sniffed dialect's HTML table
    assert not list(tmp_path.iterdir()), "the notebook writes only into its own scratch folder"


def test_computational_ssd_what_if(kernel_name, tmp_path):
    nb = _run("02-computational-ssd-what-if.ipynb", kernel_name, tmp_path)
    html = _html(nb)
    assert any(h.startswith("<div><b>ComputationalSSD</b> summarizer-board") for h in html)
    assert any(h.startswith("<div><b>Report</b>: summarizer-board [dynamic]") for h in html)
    assert _pngs(nb) >= 4  # timeline, sweep speedup, energy, the Summarizer figure
    text = _text(nb)
    assert "best static split (static:" in text and "Caveats:" in text


def test_dask(kernel_name, tmp_path):
    nb = _run("03-dask.ipynb", kernel_name, tmp_path)
    assert any(h.startswith("<div><b>Report</b>: summarizer-board [dynamic]") for h in _html(nb))
    assert _pngs(nb) >= 1  # the job's timeline, one group of rows per worker
    assert "on 2 workers" in _text(nb)  # JobReport(... partitions on 2 workers)


def test_the_kernel_is_this_interpreter(kernel_name):
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    assert spec.argv[0] == sys.executable
