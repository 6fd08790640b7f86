from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS_REL = Path("shared/data/hwloc-xml")


def find_corpus() -> Path:
    """The hwloc XML corpus: $NFVPLACE_HWLOC_CORPUS, else `shared/` beside the repo or higher up.

    The repo sits beside `shared/` (in CI the clone has `../shared`); a worktree may sit one level
    deeper, so every ancestor is tried. Missing corpus = a loud failure, never a skip.
    """
    env = os.environ.get("NFVPLACE_HWLOC_CORPUS")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    for ancestor in [repo, *repo.parents]:
        candidate = ancestor / CORPUS_REL
        if candidate.is_dir():
            return candidate
    return repo.parent / CORPUS_REL


CORPUS = find_corpus()


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "README.md").is_file():
        pytest.fail(
            f"hwloc XML corpus not found at {CORPUS}: clone `shared/` beside the repository "
            "or set NFVPLACE_HWLOC_CORPUS",
            pytrace=False,
        )
    return CORPUS
