"""The extender against the upstream Go types: `go test` in tests/k8s_contract (its own go.mod:
k8s.io/kube-scheduler v0.34.2, k8s.io/api, the noderesourcetopology-api types) posts
NodeResourceTopology objects, `ExtenderArgs` and decodes `ExtenderFilterResult` and
`HostPriorityList` with encoding/json, as kube-scheduler does, against a real `nfvplace serve`.

The first run downloads the Go modules (go.sum pins them) and compiles k8s.io/api: about 70 s on
two loaded cores with empty caches, under a second after (docs/integrations/kubernetes.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from service_support import TOKENS, Server

MODULE = Path(__file__).resolve().parents[1] / "k8s_contract"


def go_binary() -> str:
    found = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(found).exists():
        pytest.fail("the Go toolchain is needed for the contract test: put `go` on the PATH")
    return found


def test_upstream_go_types_talk_to_the_extender(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    server = serve(sqlite_url, workers=2)
    env = {
        **os.environ,
        "NFVPLACE_URL": server.url,
        "NFVPLACE_TOKEN": TOKENS["admin"][0],
        "GOFLAGS": "-mod=readonly",  # the versions go.sum pins, nothing else
        "GOTOOLCHAIN": "local",
    }
    run = subprocess.run(
        [go_binary(), "test", "-count=1", "-v", "."],
        cwd=MODULE,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    for name in (
        "TestFilterWithNodeNames",
        "TestFilterWithNodeObjects",
        "TestFilterAssumesNothing",
        "TestBindWithoutACluster",
        "TestPrioritize",
    ):
        assert f"--- PASS: {name}" in run.stdout
