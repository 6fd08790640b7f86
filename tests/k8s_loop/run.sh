#!/usr/bin/env bash
# The real loop (issue 34): kube-scheduler v1.34.2 built from the upstream modules, against a real
# kube-apiserver with embedded etcd, deploy/kubernetes applied (kube-scheduler and nfvplace run as
# its ServiceAccount), simulated kubelets (single-numa-node, container and pod scope) and a
# simulated NodeResourceTopology exporter, with `nfvplace serve --kubeconfig` as the extender.
# Prints one row per run and a table; exits non-zero when a "Done when" of the issue fails.
#
#   bash tests/k8s_loop/run.sh                   every run: 5 and 50 nodes; bursts, a stream, churn
#   LOOP_RUNS=5:burst-half,50:stream LOOP_MODES=control,pack bash tests/k8s_loop/run.sh
#
# LOOP_RUNS: nodes:workload,... (burst-half, burst-full, stream, churn); LOOP_MODES: control (no
# extender), pack, spread; LOOP_QUIET_S: how long nothing may move before a run is settled (12);
# LOOP_EXPORTER_LAG_S: how long the simulated exporter takes to write the counts it read (0; a
# loaded machine's late NRT updates);
# LOOP_RESULTS: a file for the outcomes as JSON. kube-apiserver's and kube-scheduler's logs go to
# $LOOP_LOG (default: a temporary file, named at the end). NFVPLACE: the nfvplace command (default:
# the worktree's .venv/bin/nfvplace, from bash scripts/setup.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export NFVPLACE="${NFVPLACE:-$root/.venv/bin/nfvplace}"
export GOFLAGS=-mod=readonly GOTOOLCHAIN=local
log="${LOOP_LOG:-$(mktemp -t k8s-loop.XXXXXX.log)}"
cd "$here"
status=0
LOOP_LOG="$log" go test -vet=off -count=1 -timeout 90m -run "^(TestJudge|TestLoop)\$" -v . || status=$?
echo "kube-apiserver and kube-scheduler logs: $log" >&2
exit "$status"
