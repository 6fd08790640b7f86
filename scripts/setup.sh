#!/usr/bin/env bash
# Set up nfvplace on a fresh machine: a virtualenv in .venv with the package and its dev tools.
# System packages that the tests use (libvirt's XML validator, PostgreSQL) are installed when missing
# and we are root with apt-get; otherwise the tests that need them say what to install.
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

# apt-get that waits (up to 10 minutes) for another package manager run to finish instead of
# failing with "Could not get lock /var/lib/dpkg/lock-frontend": apt's own lock timeout for dpkg's
# locks, and a retry for the package lists' lock (`apt-get update`), which that option does not cover
apt_get() {
  local deadline=$((SECONDS + 600)) out
  while true; do
    if out=$(apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1); then return 0; fi
    if ! grep -q "Could not get lock\|Unable to lock\|is another process using it" <<<"$out" ||
       [ "$SECONDS" -ge "$deadline" ]; then
      echo "$out" >&2; return 1
    fi
    [ -n "${waited:-}" ] || { echo "waiting for another package manager to finish..." >&2; waited=1; }
    sleep 5
  done
}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  command -v virt-xml-validate >/dev/null 2>&1 || missing+=(libvirt-clients)
  command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  # pictures (PNG through cairo, with a font) and the web view's headless-browser test
  ls /usr/lib/*/libcairo.so.2 >/dev/null 2>&1 || missing+=(libcairo2)
  [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  # the service bench's load generator (a second process in C: Python clients would be the bottleneck)
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing Debian packages: ${missing[*]}"
    apt_get update -qq
    DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

PYTHON=$(find_python)
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
echo "nfvplace is set up in .venv ($(.venv/bin/python --version))"
