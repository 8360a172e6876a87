"""Fixtures of the cuda_p2p tests: the arrow_bridge tests' CSV generator, and what runs kernels here."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cuda_p2p import runtime

sys.path.insert(0, str(Path(__file__).parents[1] / "arrow_bridge"))  # csvgen: the host tests' generated files


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``gpu`` (CuPy, DLPack: a real GPU) skip where kernels run on the simulator."""
    if runtime.available() and not runtime.simulator_requested() and runtime.cupy() is not None:
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU with CuPy (here: " + runtime.describe() +
                            "); `make gpu` runs these on the GPU machine")
    for item in items:
        if item.get_closest_marker("gpu") is not None:  # the marker: "gpu" in item.keywords is any id too
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _kernels_can_run() -> None:
    if not runtime.available():
        pytest.skip(f"no GPU and no simulator: {runtime.describe()}")
