#!/usr/bin/env bash
# Times steps 1 and 2 of docs/integrations/nova.md ("Turn it on") as written, the way an operator
# meets them: a fresh clone of this repository, an empty pip cache (every dependency downloaded
# from the package index), the plug-in into a Python 3.11 Nova virtualenv, then the service asked
# with the token. Run as root (the steps write /opt/nfvplace and /etc/nfvplace); the service listens
# on 127.0.0.1:18080 here instead of 0.0.0.0:8080.
#
#   bash bench/nova_turn_on.sh [NOVA_VENV]
#
# NOVA_VENV: the scheduler's virtualenv (default .bench/nova-venv-3.11, which
# tests/integrations/test_nova_plugin.py builds: NOVA_PYTHON=python3.11
# NOVA_VENV=.bench/nova-venv-3.11 bash bench/nova_venv.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
nova_venv="${1:-$root/.bench/nova-venv-3.11}"
work="$(mktemp -d -t nova-turn-on.XXXXXX)"
export PIP_CACHE_DIR="$work/pip-cache"
rm -rf /opt/nfvplace /etc/nfvplace
git clone -q "$root" "$work/nfvplace"
start=$(date +%s)
cd "$work/nfvplace"
# step 1
python3.12 -m venv /opt/nfvplace
/opt/nfvplace/bin/pip wheel -q --no-deps -w dist .
/opt/nfvplace/bin/pip install -q dist/nfvplace-0.1.0-py3-none-any.whl
python3 scripts/build_nova_plugin.py -o dist
mkdir -p /etc/nfvplace
token=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')
printf 'reader: [%s]\n' "$token" > /etc/nfvplace/tokens.yaml
chmod 600 /etc/nfvplace/tokens.yaml
/opt/nfvplace/bin/nfvplace serve --host 127.0.0.1 --port 18080 --tokens /etc/nfvplace/tokens.yaml \
    > "$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
step1=$(date +%s)
# step 2
"$nova_venv/bin/pip" install -q --no-deps --force-reinstall dist/nfvplace_nova-0.1.0-py3-none-any.whl
"$nova_venv/bin/python" -c "import nfvplace.integrations.nova.scheduler"
code=000
for _ in $(seq 60); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
        http://127.0.0.1:18080/v1/hosts) && [ "$code" = 200 ] && break
    sleep 1
done
end=$(date +%s)
[ "$code" = 200 ] || { echo "the service did not answer the token (HTTP $code)" >&2; exit 1; }
echo "step 1: $((step1 - start)) s; steps 1 and 2, the service answering: $((end - start)) s" \
    "(load average $(cut -d' ' -f1-3 /proc/loadavg))"
