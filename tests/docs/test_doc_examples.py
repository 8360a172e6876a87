"""The complete examples in docs/*.md run as doctests."""
import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize("page", ["ssdlets.md", "gpu.md"])
def test_the_pages_example_runs(page):
    failures, tried = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried >= 10 and failures == 0
