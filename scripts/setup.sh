#!/usr/bin/env bash
# Set up nfvplace on a fresh machine: a virtualenv in .venv with the package and its dev tools.
# System packages that the tests use (libvirt's XML validator, PostgreSQL, cairo, a browser...) are
# listed with why, and installed when missing and we are root with apt-get, unless
# NFVPLACE_SYSTEM_PACKAGES=0 or --no-system-packages (at a terminal it asks first); otherwise the
# tests that need them say what to install. Each step is announced as it starts.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  for candidate in "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
    [ -x "$candidate" ] && { echo "$candidate"; return 0; }
  done
  echo "nfvplace needs Python >= 3.12 (pyenv install 3.12, or your distribution's python3.12)" >&2
  return 1
}

step() { echo "[setup $(date +%H:%M:%S)] $*"; }

case "${1:-}" in -h|--help) bash scripts/system-packages.sh --help; exit 0 ;; esac
bash scripts/system-packages.sh "$@"

PYTHON=$(find_python)
if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
step "upgrading pip in .venv"
.venv/bin/python -m pip install -q --upgrade pip
step "installing nfvplace (editable) with its development tools into .venv (a few minutes the first time)"
.venv/bin/python -m pip install -q -e '.[dev]'
step "nfvplace is set up in .venv ($(.venv/bin/python --version))"
