#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the project's checks: ruff, mypy --strict, the docs build
# (strict: broken links fail) and the test suite.
#   bash scripts/test.sh            everything (what CI runs)
#   bash scripts/test.sh --quick    the same checks, without the tests marked slow (real servers
#                                   and their fault scenarios, the plain install, schemathesis,
#                                   the browser)
# Extra arguments go to pytest. The tests run on every core (pytest-xdist `-n auto`, work stealing
# so that the long cases spread over the workers; `-n 0` for one process). Throwaway PostgreSQL
# clusters and servers started by the tests stop with them, also when the run is interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
subset=()
if [ "${1:-}" = "--quick" ]; then
  shift
  subset=(-m "not slow")
fi
bash scripts/setup.sh
.venv/bin/ruff check nfvplace tests bench
.venv/bin/ruff format --check nfvplace tests bench
.venv/bin/mypy
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet -d "$(mktemp -d)"
.venv/bin/python -m pytest -q -p no:cacheprovider -n auto --dist worksteal "${subset[@]}" "$@"
