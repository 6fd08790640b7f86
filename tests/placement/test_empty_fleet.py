"""No hosts at all is an answer (0/0 fit, exit 3 over REST's 409), never an exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nfvplace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _vm() -> Any:
    return nfvplace.load(EXAMPLES / "vms" / "sriov-small.yaml")


@pytest.mark.parametrize(
    "call",
    [
        lambda: nfvplace.place([], _vm()),
        lambda: nfvplace.place({}, _vm()),
        lambda: nfvplace.Fleet([]).place(_vm()),
        lambda: nfvplace.place([], nfvplace.load(EXAMPLES / "vnf" / "ran-site.yaml")),
        lambda: nfvplace.place([], [_vm(), _vm()]),
    ],
    ids=["list", "mapping", "fleet", "vnf", "batch"],
)
def test_placing_on_no_hosts_says_so(call: Any) -> None:
    result = call()
    assert not result.ok
    assert result.diagnosis is not None
    assert result.diagnosis.hosts_considered == 0
    assert "0/0 hosts fit" in result.diagnosis.summary


def test_capacity_of_no_hosts_is_zero() -> None:
    report = nfvplace.capacity([], _vm())
    assert report.count == 0
    assert report.hosts == ()
