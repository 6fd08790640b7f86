#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the project's checks: ruff, mypy --strict, the docs build
# (strict: broken links fail) and the test suite.
# Extra arguments go to pytest. The tests run on every core (pytest-xdist `-n auto`, work stealing
# so that the long schemathesis cases spread over the workers; `-n 0` for one
# process): schemathesis's 11,000 generated requests take half as long on two.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check nfvplace tests bench
.venv/bin/ruff format --check nfvplace tests bench
.venv/bin/mypy
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet -d "$(mktemp -d)"
.venv/bin/python -m pytest -q -p no:cacheprovider -n auto --dist worksteal "$@"
