from __future__ import annotations

from pathlib import Path

import pytest
from hwloc_corpus import corpus_file


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_file("README.md").parent
