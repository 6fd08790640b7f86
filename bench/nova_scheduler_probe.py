"""Nova's own filter handler with NUMATopologyFilter + PciPassthroughFilter, then with
NfvplaceFilter against a live nfvplace service, on real Nova objects; and NfvplaceWeigher's order.
Runs in the Nova virtualenv with the worktree on PYTHONPATH; reads JSON on stdin, prints JSON.

Input: {"url", "token_file", "pci_alias", "cases": [{"flavor", "image"?, "hosts": [host view]}],
"failure_mode"?}. Each host view becomes a `HostState` through `HostState.update(compute=...)` with
a `ComputeNode` (its NUMA topology serialised as Nova stores it, its PCI device pools), each flavor a
`RequestSpec` from `RequestSpec.from_components` with the topology from `numa_get_constraints` and
the PCI requests from the flavor's alias, as nova-api builds them. Output per case: the hosts each
filter set passed, the weigher's order with its weights, and the log lines the plug-ins wrote.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys
import warnings
from typing import Any


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += " [traceback]"
        self.lines.append(f"{record.levelname} {text}")


def main() -> None:
    warnings.simplefilter("ignore")
    from nova import conf, context, objects

    objects.register_all()
    data = json.load(sys.stdin)
    settings = conf.CONF
    settings.set_override("alias", [json.dumps(a) for a in data["pci_alias"]], group="pci")
    lines = Lines()
    plugin_log = logging.getLogger("nfvplace.integrations.nova.scheduler")
    plugin_log.addHandler(lines)
    plugin_log.setLevel(logging.INFO)
    logging.getLogger("nova").setLevel(logging.ERROR)
    from nfvplace.integrations.nova import NfvplaceFilter, NfvplaceWeigher
    from nfvplace.integrations.nova.scheduler import LAST

    settings.set_override("url", data["url"], group="nfvplace")
    settings.set_override("token_file", data.get("token_file"), group="nfvplace")
    settings.set_override("failure_mode", data.get("failure_mode", "reject"), group="nfvplace")
    settings.set_override("timeout", data.get("timeout", 30.0), group="nfvplace")
    from nova.scheduler.filters import HostFilterHandler
    from nova.scheduler.filters.numa_topology_filter import NUMATopologyFilter
    from nova.scheduler.filters.pci_passthrough_filter import PciPassthroughFilter
    from nova.scheduler.weights import HostWeightHandler

    ctx = context.get_admin_context()
    handler, weigher = HostFilterHandler(), HostWeightHandler()
    out = []
    for case in data["cases"]:
        spec = _spec(ctx, case)
        if isinstance(spec, str):
            out.append({"refused": spec})
            continue
        nova_hosts = handler.get_filtered_objects(
            [NUMATopologyFilter(), PciPassthroughFilter()], _states(case["hosts"]), spec
        )
        del lines.lines[:]
        states = _states(case["hosts"])
        ours = handler.get_filtered_objects([NfvplaceFilter()], states, spec) or []
        weighed = weigher.get_weighed_objects([NfvplaceWeigher()], ours, spec)
        out.append(
            {
                "refused": None,
                "nova": [h.host for h in nova_hosts or []],
                "nfvplace": [h.host for h in ours],
                "weighed": [[w.obj.host, w.weight] for w in weighed],
                "scores": {h.host: getattr(LAST.get(spec, h), "score", None) for h in ours},
                "log": list(lines.lines),
            }
        )
    json.dump({"results": out}, sys.stdout)


def _spec(ctx: Any, case: dict[str, Any]) -> Any:
    """The RequestSpec nova-api builds for a flavor (and image), or why Nova refuses it."""
    from nova import objects
    from nova.pci import request as pci_request
    from nova.virt import hardware
    from oslo_utils import uuidutils

    spec = case["flavor"]
    flavor = objects.Flavor(
        name=spec["name"],
        flavorid=spec["name"],
        vcpus=spec["vcpus"],
        memory_mb=spec["ram"],
        root_gb=spec.get("disk", 0),
        ephemeral_gb=0,
        swap=0,
        extra_specs=dict(spec["extra_specs"]),
    )
    image = case.get("image") or {"properties": {}}
    try:
        meta = objects.ImageMeta.from_dict(image)
        topology = hardware.numa_get_constraints(flavor, meta)
        policy = hardware.get_pci_numa_policy_constraint(flavor, meta)
        requests = pci_request.get_pci_requests_from_flavor(flavor, affinity_policy=policy)
    except Exception as exc:  # nova-api refuses the flavor before scheduling
        return type(exc).__name__
    return objects.RequestSpec.from_components(
        ctx,
        uuidutils.generate_uuid(),
        image,
        flavor,
        topology,
        requests,
        {},
        None,
        None,
    )


def _states(views: list[dict[str, Any]]) -> list[Any]:
    """HostStates updated from ComputeNodes, as the scheduler's host manager builds them."""
    from nova import objects
    from nova.scheduler.host_manager import HostState

    from bench.nova_side import pools, topology

    states = []
    for view in views:
        cells = topology(view)
        memory = sum(c["memory"] for c in view["cells"])
        vcpus = sum(len(set(c["cpuset"]) | set(c["pcpuset"])) for c in view["cells"])
        compute = objects.ComputeNode(
            uuid=f"00000000-0000-0000-0000-{len(states):012d}",
            host=view["host"],
            hypervisor_hostname=view["nodename"],
            hypervisor_type="QEMU",
            hypervisor_version=8002000,
            host_ip="192.0.2.1",
            vcpus=vcpus,
            vcpus_used=0,
            memory_mb=memory,
            free_ram_mb=memory,
            local_gb=1000,
            local_gb_used=0,
            free_disk_gb=1000,
            disk_available_least=1000,
            cpu_info=json.dumps(view.get("cpu_info") or {}),
            numa_topology=cells._to_json(),
            pci_device_pools=pools(view),
            supported_hv_specs=[],
            stats={},
            metrics="[]",
            updated_at=datetime.datetime.now(datetime.UTC),
            cpu_allocation_ratio=view["cpu_allocation_ratio"],
            ram_allocation_ratio=view["ram_allocation_ratio"],
            disk_allocation_ratio=1.0,
        )
        state = HostState(view["host"], view["nodename"], "cell1")
        state.update(compute=compute)
        state.allocation_candidates = [{"mappings": {}}]  # what placement returned for the host
        states.append(state)
    return states


if __name__ == "__main__":
    main()
