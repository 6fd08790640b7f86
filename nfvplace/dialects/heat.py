"""OpenStack Heat templates (HOT): `OS::Nova::Server`s with their `OS::Nova::Flavor` and ports.

Each server becomes a VM: its flavor, when the template defines it (`flavor: {get_resource: X}`
with X an `OS::Nova::Flavor`), is read with the OpenStack flavor reader (extra specs and all);
a flavor given by name says no sizes, which is a note per missing item. The server's
`OS::Neutron::Port`s give its interfaces: `binding:vnic_type: direct` is an SR-IOV VF,
`direct-physical` a passthrough port. A template with flavors and no server gives one VM per flavor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from . import openstack
from .base import (
    ASSUMED,
    MISSING,
    Conversion,
    DialectError,
    Note,
    as_list,
    as_mapping,
    identifier,
    members_of,
    nest_origins,
    vnf_template,
)

NAME = "heat"
SERVER = "OS::Nova::Server"
FLAVOR = "OS::Nova::Flavor"
PORT = "OS::Neutron::Port"
VNIC_TYPES = {
    "normal": "vswitch",
    "virtio-forwarder": "vswitch",
    "direct": "sriov",
    "macvtap": "sriov",
    "direct-physical": "dedicated",
}


def _resources(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(data.get("resources"))


def detect(data: Mapping[str, Any]) -> bool:
    return "heat_template_version" in data and any(
        as_mapping(r).get("type") in (SERVER, FLAVOR) for r in _resources(data).values()
    )


def convert(data: Mapping[str, Any]) -> Conversion:
    resources = _resources(data)
    servers = [n for n, r in resources.items() if as_mapping(r).get("type") == SERVER]
    flavors = [n for n, r in resources.items() if as_mapping(r).get("type") == FLAVOR]
    notes: list[Note] = []
    origins: dict[PathKey, PathKey] = {}
    vms: list[dict[str, Any]] = []
    names = servers or flavors
    if not names:
        raise DialectError(f"no {SERVER} or {FLAVOR} resource", ("resources",))
    for index, name in enumerate(names):
        prefix: PathKey = () if len(names) == 1 else ("members", index, "descriptor")
        if servers:
            vm, vm_origins = _server(str(name), resources, notes)
        else:
            base: PathKey = ("resources", name, "properties")
            vm, vm_origins, flavor_notes = openstack.convert_flavor(
                {"name": name, **as_mapping(as_mapping(resources[name]).get("properties"))}, base
            )
            notes.extend(flavor_notes)
        vms.append(vm)
        nest_origins(origins, prefix, vm_origins)
    if len(vms) == 1:
        return Conversion(NAME, vms[0], origins, tuple(notes))
    template = vnf_template(
        identifier(str(data.get("description", "")).strip() or "heat", "heat"), members_of(vms)
    )
    return Conversion(NAME, template, origins, tuple(notes))


def _server(
    name: str, resources: Mapping[str, Any], notes: list[Note]
) -> tuple[dict[str, Any], dict[PathKey, PathKey]]:
    path: PathKey = ("resources", name)
    props = as_mapping(as_mapping(resources[name]).get("properties"))
    flavor = props.get("flavor")
    ref = as_mapping(flavor).get("get_resource")
    target = as_mapping(resources.get(str(ref))) if ref is not None else {}
    vm: dict[str, Any]
    if target.get("type") == FLAVOR:
        base: PathKey = ("resources", str(ref), "properties")
        flavor_props = {**as_mapping(target.get("properties")), "name": name}
        vm, origins, flavor_notes = openstack.convert_flavor(flavor_props, base)
        notes.extend(flavor_notes)
    else:
        what = f"names the flavor {flavor!r}" if flavor else "gives no flavor"
        notes.append(
            Note(
                (*path, "properties", "flavor"),
                f"server '{name}' {what}: its vCPUs, memory, CPU policy and page size are not "
                "in the template",
                MISSING,
            )
        )
        vm, origins = {"schema": "nfvplace/vmd/v1", "name": identifier(name, "vm")}, {(): path}
    interfaces = _ports(props, path, resources, notes)
    if interfaces:
        start = len(vm.get("interfaces", []))
        for offset, (_, source) in enumerate(interfaces):
            origins[("interfaces", start + offset)] = source
        vm["interfaces"] = [*vm.get("interfaces", []), *(i for i, _ in interfaces)]
    return vm, origins


def _ports(
    props: Mapping[str, Any], path: PathKey, resources: Mapping[str, Any], notes: list[Note]
) -> list[tuple[dict[str, Any], PathKey]]:
    out = []
    for index, network in enumerate(as_list(props.get("networks"))):
        port_ref = as_mapping(as_mapping(network).get("port")).get("get_resource")
        port = as_mapping(resources.get(str(port_ref))) if port_ref is not None else {}
        if port.get("type") != PORT:
            out.append(
                (
                    {"name": f"net{index}", "mode": "vswitch"},
                    (*path, "properties", "networks", index),
                )
            )
            continue
        port_props = as_mapping(port.get("properties"))
        source: PathKey = ("resources", str(port_ref), "properties", "binding:vnic_type")
        vnic = str(port_props.get("binding:vnic_type", "normal")).lower()
        mode = VNIC_TYPES.get(vnic)
        if mode is None:
            notes.append(
                Note(source, f"vnic_type '{vnic}' read as a vSwitch port (no equivalent)", ASSUMED)
            )
            mode = "vswitch"
        out.append(({"name": identifier(port_ref, "port"), "mode": mode}, source))
    return out
