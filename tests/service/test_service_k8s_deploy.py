"""deploy/ against the upstream Go types: `go test ./deploy` in tests/k8s_loop (its own go.mod:
k8s.io/kubernetes v1.34.2 with its staging modules at v0.34.2, helm.sh/helm/v3 v3.19.5) renders the
Helm chart with Helm's engine, decodes every document of it and of deploy/kubernetes strictly into
the k8s.io/api types, loads and validates the KubeSchedulerConfiguration with kube-scheduler's own
scheme and validation, and asks the API server's RBAC authorizer what the ServiceAccount may do
(docs/integrations/kubernetes-deploy.md).

The module shares its build with the real loop (test_service_k8s_loop.py): with empty Go caches the
first build compiles much of Kubernetes (34 minutes on this loaded 2-core machine, for both); then
the deploy tests build in about 7 s and run in under a second."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[1] / "k8s_loop"


def go_binary() -> str:
    found = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(found).exists():
        pytest.fail("the Go toolchain is needed for the deploy tests: put `go` on the PATH")
    return found


def go_env() -> dict[str, str]:
    return {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}


@pytest.mark.slow
def test_manifests_and_chart_decode_and_the_scheduler_configuration_validates() -> None:
    run = subprocess.run(
        [go_binary(), "test", "-count=1", "-v", "./deploy"],
        cwd=MODULE,
        env=go_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    for name in (
        "TestChartRendersToValidObjects/defaults",
        "TestChartRendersToValidObjects/only_scheduler",
        "TestChartRefusesBadValues",
        "TestPlainManifestsAreTheChartRendered",
        "TestPlainManifestsDecodeAndValidate",
    ):
        assert f"--- PASS: {name}" in run.stdout
