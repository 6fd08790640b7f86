#!/usr/bin/env bash
# Build a virtualenv with OpenStack Nova (from the package index) so that the benches run Nova's own
# NUMA fitter (nova.virt.hardware.numa_fit_instance_to_host, via bench/nova_fit.py) instead of
# falling back to the written-down 0.16 ms per host.
#
#   bash bench/nova_venv.sh            # builds .bench/nova-venv (about 3 minutes on a quiet machine)
#   export NFVPLACE_NOVA_PYTHON=...    # the line it prints last
#
# NOVA_VERSION (default 34.0.0) and NOVA_VENV (default .bench/nova-venv) can be set.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NOVA_VENV:-.bench/nova-venv}
version=${NOVA_VERSION:-34.0.0}
python=$(command -v python3.12 || command -v python3)
if ! "$venv/bin/python" -c 'import nova.virt.hardware' >/dev/null 2>&1; then
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "nova==$version"
fi
"$venv/bin/python" - <<'PY'
import warnings

warnings.simplefilter("ignore")
from nova import objects

objects.register_all()
from nova.virt import hardware

assert callable(hardware.numa_fit_instance_to_host)
PY
echo "NFVPLACE_NOVA_PYTHON=$(cd "$venv/bin" && pwd)/python"
