#!/usr/bin/env bash
# Build a virtualenv with OpenStack Nova (from the package index) so that the benches run Nova's own
# NUMA fitter (nova.virt.hardware.numa_fit_instance_to_host, via bench/nova_fit.py) instead of
# falling back to the written-down 0.16 ms per host.
#
#   bash bench/nova_venv.sh            # builds .bench/nova-venv (about 3 minutes on a quiet machine)
#   bash bench/nova_venv.sh --harness  # also Nova's functional-test harness (bench/nova_harness.py):
#                                      # openstack-placement, oslotest... and api-paste.ini where
#                                      # the harness reads it (about 1 more minute)
#   export NFVPLACE_NOVA_PYTHON=...    # the line it prints last
#
# NOVA_VERSION (default 34.0.0), NOVA_VENV (default .bench/nova-venv) and NOVA_PYTHON (the Python
# it is built with; default python3.12) can be set.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NOVA_VENV:-.bench/nova-venv}
version=${NOVA_VERSION:-34.0.0}
python=${NOVA_PYTHON:-$(command -v python3.12 || command -v python3)}
if ! "$venv/bin/python" -c 'import nova.virt.hardware' >/dev/null 2>&1; then
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "nova==$version"
fi
if [ "${1:-}" = "--harness" ]; then
  # Nova's functional harness (nova/tests, shipped in the wheel) needs these; SQLAlchemy 2.1's
  # warnings fail Nova's fixtures
  if ! "$venv/bin/python" - >/dev/null 2>&1 <<'PY'
import importlib.metadata as m
import placement, oslotest, testtools, stestr, requests_mock, wsgi_intercept, osprofiler, ddt
import testscenarios, testresources
assert tuple(int(p) for p in m.version("SQLAlchemy").split(".")[:2]) < (2, 1)
PY
  then
    "$venv/bin/python" -m pip install -q openstack-placement oslotest testtools stestr \
      requests-mock wsgi-intercept osprofiler ddt testscenarios testresources 'SQLAlchemy<2.1'
  fi
  # the wheel installs api-paste.ini under the venv's etc/nova; the harness reads it from
  # $state_path/etc/nova (state_path defaults to the directory holding the nova package)
  site=$("$venv/bin/python" -c 'import os, nova; print(os.path.dirname(os.path.dirname(nova.__file__)))')
  mkdir -p "$site/etc/nova"
  cp "$venv/etc/nova/api-paste.ini" "$site/etc/nova/api-paste.ini"
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
