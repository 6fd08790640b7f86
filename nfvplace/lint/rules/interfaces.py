"""Network interface rules for VM Descriptors and host ports (clauses 8.1.1.4, 8.2.2.4) (NFV301-NFV319)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.chd import ComputeHostDescriptor, PortUsage
from ...models.loading import format_path
from ...models.vmd import Interface, InterfaceMode, VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "interfaces"

BANDWIDTH_OVER_SPEED = Rule(
    "NFV301",
    Severity.error,
    FAMILY,
    "An interface asks for more bandwidth than its speed",
    "lower bandwidth_gbps to at most speed_gbps, or ask for a faster port",
    "8.2.2.4",
)
NAME_DUPLICATE = Rule(
    "NFV302",
    Severity.error,
    FAMILY,
    "Two interfaces of the VM have the same name",
    "give every interface its own name",
    "8.2.2.4",
)
DEDICATED_NO_SPEED = Rule(
    "NFV303",
    Severity.warning,
    FAMILY,
    "A dedicated or SR-IOV interface gives no speed, so any port will do",
    "add speed_gbps (the port speed the interface needs)",
    "8.2.2.4",
)
UNRESTRICTED_IN_SET = Rule(
    "NFV304",
    Severity.warning,
    FAMILY,
    "An interface inside a cpu-set says restricted_to_topology: false",
    "move the interface to the top-level 'interfaces' to leave it unrestricted",
    "8.2.2.4",
)
PORT_OVERUSED = Rule(
    "NFV310",
    Severity.error,
    FAMILY,
    "A host port uses more bandwidth than its speed",
    "make bandwidth_used_gbps at most speed_gbps",
    "8.1.1.4",
)
TOO_MANY_VFS = Rule(
    "NFV311",
    Severity.error,
    FAMILY,
    "A port lists more SR-IOV VFs than the device supports",
    "list at most sriov_total_vfs VFs",
    "8.1.1.4",
)
PORT_DEDICATED_NO_OWNER = Rule(
    "NFV312",
    Severity.error,
    FAMILY,
    "A port dedicated to a VM does not name its owner",
    "add owner: <VM instance> to the port",
    "8.1.1.4",
)
VF_ON_NON_SRIOV_PORT = Rule(
    "NFV313",
    Severity.warning,
    FAMILY,
    "A VF is in use on a port whose usage is not 'sriov'",
    "set the port's usage to 'sriov'",
    "8.1.1.4",
)
VF_RATE_OVER_SPEED = Rule(
    "NFV314",
    Severity.error,
    FAMILY,
    "A VF's pacing rate is above its port's speed",
    "lower rate_gbps to at most the port's speed",
    "8.1.1.4",
)
VF_IN_USE_NO_OWNER = Rule(
    "NFV315",
    Severity.warning,
    FAMILY,
    "A VF in use does not name its owner",
    "add owner: <VM instance> so that the VF can be released",
    "8.1.1.4",
)
VSWITCH_OVERUSED = Rule(
    "NFV316",
    Severity.error,
    FAMILY,
    "The vSwitch carries more bandwidth than it can",
    "make bandwidth_used_gbps at most bandwidth_gbps",
    "8.1.1.3",
)

RULES = (
    BANDWIDTH_OVER_SPEED,
    NAME_DUPLICATE,
    DEDICATED_NO_SPEED,
    UNRESTRICTED_IN_SET,
    PORT_OVERUSED,
    TOO_MANY_VFS,
    PORT_DEDICATED_NO_OWNER,
    VF_ON_NON_SRIOV_PORT,
    VF_RATE_OVER_SPEED,
    VF_IN_USE_NO_OWNER,
    VSWITCH_OVERUSED,
)


def _interfaces(vm: VmDescriptor) -> Iterator[tuple[tuple[str | int, ...], Interface, bool]]:
    for index, cs in enumerate(vm.cpu_sets):
        for i, interface in enumerate(cs.interfaces):
            yield ("cpu_sets", index, "interfaces", i), interface, True
    for i, interface in enumerate(vm.interfaces):
        yield ("interfaces", i), interface, False


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    names: dict[str, str] = {}
    for path, interface, in_set in _interfaces(vm):
        if interface.name in names:
            yield NAME_DUPLICATE.hit(
                (*path, "name"),
                f"interface '{interface.name}' is also defined at {names[interface.name]}",
            )
        else:
            names[interface.name] = format_path(path)
        speed, bandwidth = interface.speed_gbps, interface.bandwidth_gbps
        if speed is not None and bandwidth is not None and bandwidth > speed:
            yield BANDWIDTH_OVER_SPEED.hit(
                (*path, "bandwidth_gbps"),
                f"interface '{interface.name}' asks for {bandwidth:g} Gbps on a {speed:g} Gbps port",
            )
        if speed is None and interface.mode in (InterfaceMode.dedicated, InterfaceMode.sriov):
            yield DEDICATED_NO_SPEED.hit(
                path, f"{interface.mode.value} interface '{interface.name}' gives no speed_gbps"
            )
        if in_set and not interface.restricted_to_topology:
            yield UNRESTRICTED_IN_SET.hit(
                (*path, "restricted_to_topology"),
                f"interface '{interface.name}' is in cpu-set {path[1]} but says it is unrestricted",
            )


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    if host.hypervisor is not None and host.hypervisor.vswitch is not None:
        vswitch = host.hypervisor.vswitch
        if (
            vswitch.bandwidth_gbps is not None
            and vswitch.bandwidth_used_gbps > vswitch.bandwidth_gbps
        ):
            yield VSWITCH_OVERUSED.hit(
                ("hypervisor", "vswitch", "bandwidth_used_gbps"),
                f"{vswitch.bandwidth_used_gbps:g} Gbps used of {vswitch.bandwidth_gbps:g}",
            )
    for n, node in enumerate(host.numa_nodes):
        for c, nic in enumerate(node.nics):
            for p, port in enumerate(nic.ports):
                path = ("numa_nodes", n, "nics", c, "ports", p)
                label = f"port {port.pci_address}"
                if port.bandwidth_used_gbps > port.speed_gbps:
                    yield PORT_OVERUSED.hit(
                        (*path, "bandwidth_used_gbps"),
                        f"{label}: {port.bandwidth_used_gbps:g} Gbps used on a "
                        f"{port.speed_gbps:g} Gbps port",
                    )
                if port.sriov_total_vfs is not None and len(port.vfs) > port.sriov_total_vfs:
                    yield TOO_MANY_VFS.hit(
                        (*path, "vfs"),
                        f"{label}: {len(port.vfs)} VFs listed, the device supports "
                        f"{port.sriov_total_vfs}",
                    )
                if port.usage is PortUsage.dedicated and not port.owner:
                    yield PORT_DEDICATED_NO_OWNER.hit(
                        (*path, "usage"), f"{label} is dedicated but names no owner"
                    )
                for v, vf in enumerate(port.vfs):
                    vf_path = (*path, "vfs", v)
                    if vf.in_use and port.usage is not PortUsage.sriov:
                        yield VF_ON_NON_SRIOV_PORT.hit(
                            (*vf_path, "in_use"),
                            f"VF {vf.pci_address} is in use but {label} has usage "
                            f"'{port.usage.value}'",
                        )
                    if vf.in_use and not vf.owner:
                        yield VF_IN_USE_NO_OWNER.hit(
                            (*vf_path, "in_use"), f"VF {vf.pci_address} is in use but has no owner"
                        )
                    if vf.rate_gbps is not None and vf.rate_gbps > port.speed_gbps:
                        yield VF_RATE_OVER_SPEED.hit(
                            (*vf_path, "rate_gbps"),
                            f"VF {vf.pci_address} is paced at {vf.rate_gbps:g} Gbps on a "
                            f"{port.speed_gbps:g} Gbps port",
                        )
