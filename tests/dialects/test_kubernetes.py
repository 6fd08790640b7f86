"""Kubernetes dialects: NodeResourceTopology objects as CHDs, Pods and KubeVirt VMIs as VM
Descriptors, on the upstream examples (tests/data/kubernetes, see its README) and on hand-made
objects for what the examples do not show."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.conversion import convert as convert_file
from nfvplace.dialects import DialectError, convert, detect
from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.dialects.kubernetes import parse_quantity, pod_total
from nfvplace.errors import DescriptorError
from nfvplace.lint import lint_file
from nfvplace.models import ComputeHostDescriptor, VmDescriptor

_register()
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "kubernetes"
EXAMPLES = ROOT / "examples" / "kubernetes"


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4", 4),
        ("500m", Fraction(1, 2)),
        ("1Gi", 2**30),
        ("1G", 10**9),
        ("1e3", 1000),
        ("1.5Gi", 3 * 2**29),
        (".5", Fraction(1, 2)),
        (2, 2),
        ("0", 0),
    ],
)
def test_quantities(text: Any, value: Fraction) -> None:
    assert parse_quantity(text, "q", ()) == value


@pytest.mark.parametrize("text", ["", "1 Gi", "-1", "1Gb", "abc", None, True, "1e99"])
def test_bad_quantities_are_refused_with_the_field(text: Any) -> None:
    with pytest.raises(DialectError) as caught:
        parse_quantity(text, "memory", ("spec", "memory"))
    assert caught.value.path == ("spec", "memory")


# --- NodeResourceTopology ------------------------------------------------------------------


def test_upstream_worker_node_a() -> None:
    host = nfvplace.load(DATA / "worker-node-A.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    assert host.id == "worker-node-a"
    assert host.topology_manager is not None
    assert (host.topology_manager.policy, host.topology_manager.scope) == (
        "single-numa-node",
        "container",
    )
    for node in host.numa_nodes:  # capacity 4, allocatable 3, available 3
        assert [c.eligible for c in node.cpus] == [False, True, True, True]
        assert all(c.state == "free" for c in node.cpus if c.eligible)
        assert node.memory.total_mib == 0
    models = [[d.model for d in n.pci_devices] for n in host.numa_nodes]
    assert models[0].count("example.com/deviceA") == 1
    assert models[1].count("example.com/deviceA") == 2


def test_v1alpha1_example_reads_with_its_policy_word() -> None:
    host = nfvplace.load(DATA / "crd-instance-example.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    assert [n.id for n in host.numa_nodes] == [0, 1, 2, 3]
    assert host.topology_manager is not None
    assert host.topology_manager.policy == "single-numa-node"
    node0 = host.numa_nodes[0]  # cpu 20 / 15 / 10
    states = [(c.eligible, str(c.state)) for c in node0.cpus]
    assert states.count((False, "free")) == 5
    assert states.count((True, "dedicated")) == 5
    assert states.count((True, "free")) == 10


def test_exporter_style_object_with_attributes_costs_memory_pages_and_vfs() -> None:
    host = nfvplace.load(EXAMPLES / "nrt-worker-1.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    assert host.topology_manager is not None
    assert (host.topology_manager.policy, host.topology_manager.scope) == (
        "single-numa-node",
        "pod",
    )
    assert host.numa_distances == ((10, 21), (21, 10))
    node0 = host.numa_nodes[0]
    (pool,) = node0.memory.hugepages
    assert (pool.size_kib, pool.total, pool.used) == (1048576, 16, 4)
    assert node0.memory.normal_free_mib == 88046829568 // 2**20
    (port,) = node0.ports
    assert (port.physical_network, port.speed_gbps) == ("intel.com/intel_sriov_netdevice", 25)
    assert sum(not vf.in_use for vf in port.vfs) == 6
    assert sum(c.state == "free" and c.eligible for c in node0.cpus) == 22


def _nrt(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = _yaml(EXAMPLES / "nrt-worker-1.yaml")
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"zones": [{"name": "numa", "type": "Node"}]}, "names no NUMA node"),
        ({"zones": [{"name": "node-0", "type": "Socket"}]}, "no zone of type Node"),
        (
            {"attributes": [{"name": "topologyManagerPolicy", "value": "strict"}]},
            "must be one of none, best-effort",
        ),
        ({"topologyPolicies": ["Sometimes"]}, "unknown topology policy"),
        ({"metadata": {}}, "metadata.name"),
        (
            {
                "zones": [
                    {
                        "name": "node-0",
                        "type": "Node",
                        "resources": [
                            {"name": "cpu", "capacity": 2, "allocatable": 4, "available": 1}
                        ],
                    }
                ]
            },
            "capacity >= allocatable >= available",
        ),
        (
            {
                "zones": [
                    {
                        "name": f"node-{n}",
                        "type": "Node",
                        "resources": [
                            {"name": "cpu", "capacity": 3000, "allocatable": 1, "available": 1}
                        ],
                    }
                    for n in (0, 1)
                ]
            },
            "more than 4096 CPUs",
        ),
        (
            {
                "zones": [
                    {
                        "name": f"node-{n}",
                        "type": "Node",
                        "resources": [
                            {
                                "name": f"x.io/d{k}",
                                "capacity": 2048,
                                "allocatable": 2048,
                                "available": 0,
                            }
                            for k in range(8)
                        ],
                    }
                    for n in (0, 1)
                ]
            },
            "more than 16384 devices",
        ),
    ],
)
def test_bad_objects_are_refused_naming_the_field(change: dict[str, Any], words: str) -> None:
    with pytest.raises(DialectError, match=words):
        convert(_nrt(**change))


def test_what_is_not_carried_is_said() -> None:
    data = _nrt()
    data["zones"][0]["resources"].append(
        {"name": "ephemeral-storage", "capacity": "1Gi", "allocatable": "1Gi", "available": "1Gi"}
    )
    data["zones"].append({"name": "socket-0", "type": "Socket"})
    data["attributes"].append({"name": "topologyManagerOptionMaxAllowableNumaNodes", "value": "9"})
    notes = {json.dumps(n.path): n.message for n in convert(data).notes}
    assert "not placed per NUMA node" in notes['["zones", 0, "resources", 4]']
    assert "not a NUMA node" in notes['["zones", 2]']
    assert "not carried" in notes['["attributes", 2]']


def test_a_list_is_read_item_by_item(tmp_path: Path) -> None:
    objects = [_yaml(DATA / "worker-node-A.yaml"), _yaml(DATA / "worker-node-B.yaml")]
    path = tmp_path / "nrts.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    loaded = nfvplace.load(path)
    assert isinstance(loaded, list)
    assert [h.id for h in loaded if isinstance(h, ComputeHostDescriptor)] == [
        "worker-node-a",
        "worker-node-b",
    ]
    report = lint_file(path)
    assert report.dialect == "kubernetes-nrt"
    assert {f.path.split(".")[0] for f in report.findings if f.path} == {"items[0]", "items[1]"}
    converted = convert_file(path)
    assert [d["id"] for d in converted.data] == ["worker-node-a", "worker-node-b"]
    assert any(f.path.startswith("/items/1/zones/") for f in converted.findings)
    with pytest.raises(DescriptorError, match="List of 2 objects"):
        nfvplace.reader.load_file(path)
    exporter = _nrt()  # memory and hugepages per zone: the engine can place the CNF pod there
    other = {**exporter, "metadata": {**exporter["metadata"], "name": "worker-2"}}
    path.write_text(
        yaml.safe_dump({"kind": "NodeResourceTopologyList", "items": [exporter, other]})
    )
    result = CliRunner().invoke(
        app, ["place", "--hosts", str(path), "--vm", str(EXAMPLES / "cnf-pod.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert "host: worker-" in result.output


# --- Pods, workloads and KubeVirt ----------------------------------------------------------


def test_upstream_deployment_is_a_pinned_container_with_two_devices() -> None:
    vm = nfvplace.load(DATA / "test-deployment.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert (len(cpu_set.vcpus), cpu_set.memory_mib) == (1, 100)
    assert sorted((d.model, d.count, d.cpu_set) for d in vm.pci_devices) == [
        ("example.com/deviceA", 1, 0),
        ("example.com/deviceB", 1, 0),
    ]


def test_upstream_besteffort_sriov_pod_says_what_it_lacks() -> None:
    conversion = convert(_yaml(DATA / "pod-tc1.yaml"))
    assert conversion.data["interfaces"][0]["physical_network"] == (
        "intel.com/intel_sriov_netdevice"
    )
    kinds = {n.kind for n in conversion.notes}
    assert "missing" in kinds  # no memory: not a complete VM Descriptor


def test_cnf_pod_with_init_container_and_sidecar() -> None:
    data = _yaml(EXAMPLES / "cnf-pod.yaml")
    vm = nfvplace.load(EXAMPLES / "cnf-pod.yaml")
    assert isinstance(vm, VmDescriptor)
    assert [len(cs.vcpus) for cs in vm.cpu_sets] == [1, 8]  # the sidecar, then the data plane
    dataplane = vm.cpu_sets[1]
    assert dataplane.memory_mib == 4096 + 4096
    assert dataplane.hugepages is not None
    assert dataplane.hugepages.count == 4
    assert [i.mode for i in dataplane.interfaces] == ["sriov", "sriov"]
    pod, _ = read_pod(data)
    assert pod.qos == "Guaranteed"
    cpus = pod_total(pod, lambda c: {"cpu": int(c.requests.get("cpu", 0))})
    assert cpus == {"cpu": 9}  # max(init 1 + 2, app 8 + sidecar 1)


@pytest.mark.parametrize(
    ("limits", "requests", "qos"),
    [
        ({"cpu": "2", "memory": "1Gi"}, None, "Guaranteed"),
        ({"cpu": "2", "memory": "1Gi"}, {"cpu": "1"}, "Burstable"),
        ({"memory": "1Gi"}, None, "Burstable"),
        (None, None, "BestEffort"),
    ],
)
def test_qos_class(limits: Any, requests: Any, qos: str) -> None:
    resources = {k: v for k, v in (("limits", limits), ("requests", requests)) if v}
    pod, _ = read_pod(
        {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"resources": resources}]}}
    )
    assert pod.qos == qos


def test_burstable_pod_is_a_shared_vm_and_says_so() -> None:
    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web"},
        "spec": {
            "nodeSelector": {"zone": "a"},
            "containers": [{"resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}],
        },
    }
    assert detect(data) == "kubernetes-pod"
    conversion = convert(data)
    vm = VmDescriptor.model_validate(conversion.data)
    assert (vm.vcpus, vm.memory_mib, vm.cpu_oversubscription) == (2, 1024, True)
    messages = " ".join(n.message for n in conversion.notes)
    assert "Burstable" in messages
    assert "nodeSelector is for the Kubernetes scheduler" in messages


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("vmi-fedora-isolated.yaml", lambda vm: vm.emulator_threads == "isolate"),
        ("vmi-sriov.yaml", lambda vm: vm.interfaces[0].physical_network == "sriov/sriov-network"),
        ("vmi-gpu.yaml", lambda vm: vm.pci_devices[0].model == "nvidia.com/GP102GL_Tesla_P40"),
    ],
)
def test_upstream_kubevirt_examples(name: str, check: Any) -> None:
    vm = nfvplace.load(DATA / name)
    assert isinstance(vm, VmDescriptor)
    assert check(vm)


def test_dedicated_vmi_with_hugepages_threads_and_sriov() -> None:
    vm = nfvplace.load(EXAMPLES / "vmi-dpdk.yaml")
    assert isinstance(vm, VmDescriptor)
    (cpu_set,) = vm.cpu_sets
    assert len(cpu_set.vcpus) == 8
    assert cpu_set.howtogroup == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert cpu_set.hugepages is not None
    assert (cpu_set.hugepages.size_kib, cpu_set.hugepages.count) == (1048576, 8)
    assert [i.physical_network for i in cpu_set.interfaces] == ["sriov-access"]
    assert vm.emulator_threads == "isolate"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.yaml")) + sorted(EXAMPLES.glob("*.yaml")))
def test_every_file_lints_without_errors_and_converts(path: Path) -> None:
    report = lint_file(path)
    assert report.dialect in ("kubernetes-nrt", "kubernetes-pod", "kubevirt-vmi")
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    converted = convert_file(path)
    assert converted.findings  # every one of them reads something with an assumption


def test_a_request_converts_its_document_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service reads a dialect body through the lint gate once: detected, converted and
    validated in one pass down (the gate's model is the descriptor), not converted again."""
    from nfvplace.dialects import k8s_nrt
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.service.descriptors import parse_descriptor
    from tests.service.kube_api import nrt

    calls: list[object] = []
    real = k8s_nrt.convert

    def counted(data: Any) -> Any:
        calls.append(data)
        return real(data)

    monkeypatch.setattr(k8s_nrt, "convert", counted)
    document = SourceDocument(data=nrt("node-a"), source="body")
    host = parse_descriptor(document, ComputeHostDescriptor, "host")
    assert isinstance(host, ComputeHostDescriptor)
    assert host.id == "node-a"
    assert len(calls) == 1
