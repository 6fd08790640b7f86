#!/usr/bin/env bash
# The Debian packages nfvplace's tests use: each missing one is listed with why, then installed
# (one at a time, each announced) when we are root with apt-get, unless NFVPLACE_SYSTEM_PACKAGES=0
# or --no-system-packages; at a terminal it asks first. Called by scripts/setup.sh.
set -euo pipefail

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

# Debian packages the tests use, each with why: "package|command or file that shows it is there|why"
SYSTEM_PACKAGES=(
  "libvirt-clients|virt-xml-validate|libvirt's XML validator (the rendered domains are checked by it)"
  "libxml2-utils|xmllint|the XML linter virt-xml-validate calls"
  "postgresql|/usr/lib/postgresql/*/bin/initdb|the service tests' throwaway PostgreSQL cluster"
  "libcairo2|/usr/lib/*/libcairo.so.2|PNG pictures (nfvplace show -o host.png)"
  "fonts-dejavu-core|/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf|the font the pictures use"
  "chromium|chromium|the web view's headless-browser test (about 300 MB)"
  "chromium-driver|chromedriver|the driver of that browser test"
  "wrk|wrk|the service benchmark's load generator"
)

present() {  # a command on the PATH, or a file (glob) that exists
  case "$1" in
    /*) compgen -G "$1" >/dev/null ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

# Whether to install the missing system packages: NFVPLACE_SYSTEM_PACKAGES=0 (or --no-system-packages)
# never, =1 always; unset: yes, after asking when a person is at the terminal (CI has none).
want_system_packages() {
  case "${NFVPLACE_SYSTEM_PACKAGES:-}" in
    0|no|false) return 1 ;;
    1|yes|true) return 0 ;;
  esac
  [ -t 0 ] || return 0
  local answer
  read -r -t 60 -p "install them with apt-get? [Y/n] (60 s, then yes) " answer || echo
  case "$answer" in [nN]*) return 1 ;; esac
}

step() { echo "[setup $(date +%H:%M:%S)] $*"; }

for arg in "$@"; do
  case "$arg" in
    --no-system-packages) NFVPLACE_SYSTEM_PACKAGES=0 ;;
    -h|--help)
      echo "usage: bash scripts/setup.sh [--no-system-packages]"
      echo "  creates .venv with nfvplace and its development tools; as root on Debian it also"
      echo "  installs the system packages the tests use (NFVPLACE_SYSTEM_PACKAGES=0: never)"
      exit 0 ;;
    *) echo "unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

missing=()
for entry in "${SYSTEM_PACKAGES[@]}"; do
  IFS='|' read -r package probe why <<<"$entry"
  present "$probe" || missing+=("$package|$why")
done
if [ "${#missing[@]}" -gt 0 ]; then
  step "system packages the tests use that are missing:"
  for entry in "${missing[@]}"; do echo "    ${entry%%|*}: ${entry#*|}"; done
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    step "not installed (that needs root and apt-get); the tests that need them say what to install"
  elif ! want_system_packages; then
    step "skipped (NFVPLACE_SYSTEM_PACKAGES=0 or your answer); the tests that need them say so"
  else
    step "apt-get update (NFVPLACE_SYSTEM_PACKAGES=0 or --no-system-packages skips this)"
    apt_get update -qq
    total=${#missing[@]} done_count=0
    for entry in "${missing[@]}"; do
      done_count=$((done_count + 1))
      step "installing ${entry%%|*} ($done_count of $total)"
      DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends "${entry%%|*}"
    done
  fi
fi

