"""Fix hints in a vendor's own terms, for lint findings about a dialect document.

Lint checks a vendor's file as the nfvplace descriptor it converts to, so its rules' fixes name
nfvplace's fields ("add speed_gbps"), which the vendor's file does not have. For the rules a
vendor's file can break, each dialect says the fix in its own fields here; any other fix that
names nfvplace's fields is kept, marked as written in nfvplace's terms, with the command that
shows them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

_NFVPLACE_NAME = re.compile(r"'[a-z][a-z0-9_.]*'|\b[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+\b")
"""A quoted word or a snake_case one: how rule fixes name nfvplace's fields and values."""

_NOVA: Final = {
    "NFV101": "list each vCPU in exactly one hw:numa_cpus.N",
    "NFV104": "number the vCPUs of hw:numa_cpus.N from 0 to the flavor's vcpus - 1",
    "NFV105": "make the hw:numa_cpus.N list exactly the flavor's vcpus",
    "NFV202": "make the hw:numa_mem.N add up to the flavor's ram",
    "NFV115": "keep at least one vCPU out of hw:cpu_realtime_mask's realtime vCPUs",
    "NFV117": "use hw:cpu_thread_policy=isolate with hw:cpu_realtime",
}
_NO_PORT_SPEED: Final = (
    "{} says no port speed, so nfvplace takes any port or VF of the right kind; to ask for one, "
    "write the VM in nfvplace's own format (speed_gbps)"
)

VENDOR_HINTS: Final[Mapping[str, Mapping[str, str]]] = {
    "osm-sol006": {
        "NFV101": "list each vCPU id in the vcpu list of one numa-node-policy node only",
        "NFV102": "pair in paired-thread-ids only vCPUs of the node's own vcpu list",
        "NFV103": "put each vCPU in at most one paired-thread-ids entry, thread-a and thread-b "
        "different",
        "NFV104": "number the nodes' vcpu ids from 0 to vcpu-count - 1",
        "NFV105": "make vm-flavor vcpu-count (num-virtual-cpu in SOL006) equal to the vCPUs of "
        "the numa-node-policy nodes",
        "NFV110": "give every numa-node-policy node its own id",
        "NFV202": "make the numa-node-policy nodes' memory-mb add up to vm-flavor memory-mb "
        "(virtual-memory size in SOL006)",
        "NFV204": "give the VDU a positive memory size (vm-flavor memory-mb)",
        "NFV206": "give each node at least one page of mempage-size in memory-mb, or a smaller "
        "mempage-size",
        "NFV303": "give the interface a virtual-interface bandwidth (bit/s): the speed of the "
        "port or VF it needs",
    },
    "openvim": {
        "NFV101": "give each vCPU id once in paired-threads-id",
        "NFV102": "list in paired-threads-id pairs [a, b] of the entry's own vCPUs",
        "NFV103": "put each vCPU in at most one paired-threads-id pair, of two different ids",
        "NFV104": "number paired-threads-id from 0",
        "NFV303": "give the interface a bandwidth, e.g. 'bandwidth: 10 Gbps'",
    },
    "openstack-flavor": _NOVA,
    "heat": {**_NOVA, "NFV303": _NO_PORT_SPEED.format("A Neutron port")},
    "sol001-tosca": {
        **_NOVA,
        "NFV303": _NO_PORT_SPEED.format("A VduCp (bitrate_requirement is its bandwidth)"),
    },
    "tacker-tosca-nfv": {
        "NFV101": "list each vCPU in the vcpus of one numa_nodes entry",
        "NFV105": "make num_cpus equal to the vCPUs the numa_nodes list",
        "NFV202": "make the numa_nodes' mem_size add up to mem_size",
        "NFV303": _NO_PORT_SPEED.format("A Tacker CP"),
    },
}


def vendor_hint(dialect: str, rule: str, hint: str | None) -> str | None:
    """The fix for a finding of `rule` about a `dialect` document, in the vendor's terms."""
    vendor = VENDOR_HINTS.get(dialect, {}).get(rule)
    if vendor is not None:
        return vendor
    if not hint or not _NFVPLACE_NAME.search(hint):
        return hint
    return f"{hint} (in nfvplace's field names: 'nfvplace convert FILE' shows the file as read)"
