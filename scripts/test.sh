#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the project's checks: ruff, mypy --strict, the docs build
# (strict: broken links fail) and the test suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check nfvplace tests bench
.venv/bin/ruff format --check nfvplace tests bench
.venv/bin/mypy
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet -d "$(mktemp -d)"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
