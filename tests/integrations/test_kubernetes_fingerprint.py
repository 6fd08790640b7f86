"""The exporters' pod fingerprint (`fingerprint.py`) and the pods the pod watch knows on each
node (`node_pods.py`): which set of pods an object's counts were read with.

The expected fingerprints were computed by the upstream Go module
(github.com/k8stopologyawareschedwg/podfingerprint v0.2.2, `Sign`); `data/podfingerprint_pods.json`
is that module's testdata/pods.json (Apache-2.0), whose fingerprint its own test states.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nfvplace.integrations.kubernetes import fingerprint
from nfvplace.integrations.kubernetes.fingerprint import read, shown, sign
from nfvplace.integrations.kubernetes.node_pods import DEPARTED_KEPT, NodePods

GO_SIGNED = {  # the Go module's Sign
    "": "pfp0v001ef46db3751d8e999",
    "cnf/p0": "pfp0v001c631eb5e9d5a3455",
    "cnf/p1": "pfp0v0013e7fcb19878f2c42",
    "cnf/p0,cnf/p1": "pfp0v001e41bc711d1f86c86",
    "cnf/p1,cnf/p2": "pfp0v001e16884b96d2cd5bf",
    "cnf/p2": "pfp0v001a336380d034ff589",
    "cnf/p0,cnf/p1,cnf/p2": "pfp0v00180e37733fd4fbd2a",
    "ns/a,ns/b,kube-system/c": "pfp0v001362369a1778c3e3a",
}


@pytest.mark.parametrize(("pods", "expected"), GO_SIGNED.items())
def test_the_fingerprint_is_the_go_modules(pods: str, expected: str) -> None:
    names = [p for p in pods.split(",") if p]
    assert sign(names) == expected
    assert sign(reversed(names)) == expected  # a set: the order does not matter


def test_the_upstream_test_datas_fingerprint() -> None:
    pods = json.loads((Path(__file__).parent / "data" / "podfingerprint_pods.json").read_text())
    assert len(pods) == 259
    assert sign(f"{p['namespace']}/{p['name']}" for p in pods) == "pfp0v001e477a4e3b2fc0ec6"


def test_xxhash64_reference_values() -> None:
    assert fingerprint.xxh64(b"") == 0xEF46DB3751D8E999
    assert fingerprint.xxh64(b"abc") == 0x44BC2CF5AD770999
    assert fingerprint.xxh64(b"a" * 100, 7) != fingerprint.xxh64(b"a" * 100)


def nrt(*attributes: tuple[str, str]) -> dict[str, object]:
    return {"attributes": [{"name": n, "value": v} for n, v in attributes]}


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ((), None),
        ((("nodeTopologyPodsFingerprint", GO_SIGNED["cnf/p0"]),), GO_SIGNED["cnf/p0"]),
        (
            (
                ("nodeTopologyPodsFingerprint", GO_SIGNED["cnf/p0"]),
                ("nodeTopologyPodsFingerprintMethod", "all"),
            ),
            GO_SIGNED["cnf/p0"],
        ),
        (  # only the pods with exclusive resources: nfvplace does not tell them apart
            (
                ("nodeTopologyPodsFingerprint", GO_SIGNED["cnf/p0"]),
                ("nodeTopologyPodsFingerprintMethod", "with-exclusive-resources"),
            ),
            None,
        ),
        ((("nodeTopologyPodsFingerprint", "pfp0v000c631eb5e9d5a3455"),), None),  # version
        ((("nodeTopologyPodsFingerprint", ""),), None),
    ],
)
def test_which_fingerprints_are_read(
    attributes: tuple[tuple[str, str], ...], expected: str | None
) -> None:
    assert read(nrt(*attributes)) == expected


def test_the_arrivals_shown_are_told_apart() -> None:
    """p0 runs; p1 and p2 bound. An object read after p1 was admitted names p0 and p1."""
    found = shown(GO_SIGNED["cnf/p0,cnf/p1"], {"cnf/p0"}, ["cnf/p1", "cnf/p2"], [])
    assert found == {"cnf/p0", "cnf/p1"}
    assert shown(GO_SIGNED["cnf/p0"], {"cnf/p0"}, ["cnf/p1", "cnf/p2"], []) == {"cnf/p0"}


def test_an_arrival_admitted_out_of_order_is_found() -> None:
    """p2 admitted before p1 (not the likely order): every set is tried."""
    found = shown(GO_SIGNED["cnf/p0,cnf/p1,cnf/p2"], set(), ["cnf/p1", "cnf/p0", "cnf/p2"], [])
    assert found == {"cnf/p0", "cnf/p1", "cnf/p2"}
    assert shown(GO_SIGNED["cnf/p2"], set(), ["cnf/p1", "cnf/p2"], []) == {"cnf/p2"}


def test_a_departure_still_counted_hides_no_arrival() -> None:
    """p0 left (the pod watch saw it), p1 arrived; the counts were read before the kubelet
    released p0: the object names both, and p1 is shown."""
    assert shown(GO_SIGNED["cnf/p0,cnf/p1"], set(), ["cnf/p1"], ["cnf/p0"]) == {
        "cnf/p0",
        "cnf/p1",
    }
    assert shown(GO_SIGNED["cnf/p1"], set(), ["cnf/p1"], ["cnf/p0"]) == {"cnf/p1"}


def test_a_pod_the_watch_does_not_know_matches_nothing() -> None:
    assert shown(GO_SIGNED["cnf/p0,cnf/p1"], set(), ["cnf/p1"], []) is None
    many = [f"cnf/q{i}" for i in range(fingerprint.SEARCHED + 1)]
    assert shown(GO_SIGNED["cnf/p0"], set(), many, []) is None


def raw(name: str, node: str, phase: str = "Pending") -> dict[str, object]:
    return {
        "metadata": {"namespace": "cnf", "name": name},
        "spec": {"nodeName": node},
        "status": {"phase": phase},
    }


def test_the_pods_the_watch_knows_on_a_node() -> None:
    pods = NodePods()
    pods.saw("u0", raw("p0", "n1", "Running"))
    pods.saw("u1", raw("p1", "n1"))
    pods.saw("u2", {"metadata": {"namespace": "cnf", "name": "p2"}, "spec": {}})  # unbound
    known = pods.known("n1")
    assert (known.certain, known.arrivals, known.departures) == ({"cnf/p0"}, ("cnf/p1",), ())
    assert known.shown(GO_SIGNED["cnf/p0,cnf/p1"], ["cnf/p1"]) == {"cnf/p0", "cnf/p1"}
    pods.saw("u0", raw("p0", "n1", "Running"), gone=True)
    pods.saw("u1", raw("p1", "n1", "Running"))
    known = pods.known("n1")
    assert (known.certain, known.arrivals, known.departures) == ({"cnf/p1"}, (), ("cnf/p0",))
    assert known.shown(GO_SIGNED["cnf/p0,cnf/p1"], []) == {"cnf/p0", "cnf/p1"}
    pods.matched("n1", frozenset({"cnf/p1"}))  # an object no longer names p0: its leaving is over
    assert pods.known("n1").departures == ()


def test_listing_again_turns_the_pods_missing_into_departures() -> None:
    pods = NodePods()
    for i in range(DEPARTED_KEPT + 2):
        pods.saw(f"u{i}", raw(f"p{i}", "n1", "Running"))
    pods.listed({"u0"})
    known = pods.known("n1")
    assert known.certain == {"cnf/p0"}
    assert len(known.departures) == DEPARTED_KEPT  # the oldest go first
    assert "cnf/p1" not in known.departures
