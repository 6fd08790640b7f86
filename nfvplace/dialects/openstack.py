"""OpenStack Nova flavors with extra specs (`hw:cpu_policy`, `hw:numa_nodes`, `hw:mem_page_size`...).

Accepts `{flavor: {...}}` (the Nova API), a bare flavor, or the output of
`openstack flavor show -f yaml|json` (`properties` as a mapping or as the `k='v', ...` string);
`{flavor, image, pci_requests}` is a whole Nova request (`nova_request`: image properties merged
by Nova's rules, resolved PCI requests). Dedicated-CPU flavors become cpu-sets, one per guest NUMA
node; shared flavors become plain cloud VMs that allow oversubscription, with floating cpu-sets
(unpinned vCPUs, memory and pages on one node each) when they give a guest NUMA topology. Values outside Nova's
vocabulary, and flavors Nova itself refuses (an uneven automatic NUMA split, memory that is not a
whole number of the asked pages, thread policies on shared CPUs), are errors naming the key; every
extra spec that bears on placement is carried or reported as a note.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from ..models.loading import PathKey
from . import nova_numa, nova_request
from .base import (
    ASSUMED,
    Conversion,
    DialectError,
    Note,
    Page,
    hugepages_of,
    identifier,
    one_of,
    parse_count,
    parse_int,
)
from .nova_traits import HOST_WIDE, TRAIT_FLAGS, UNREPORTED, nova_cpu_mask

NAME = "openstack-flavor"
SPEC_KEYS = ("extra_specs", "properties", "extra-specs")
TRUE = {"true", "yes", "1", "on"}
CPU_POLICIES = ("shared", "dedicated", "mixed")
THREAD_POLICIES = ("prefer", "isolate", "require")
EMULATOR_POLICIES = ("share", "isolate")
NOVA_DEFAULT_THREAD_POLICY = "prefer"
NUMA_KEYS = ("hw:numa_nodes", "hw:numa_cpus.", "hw:numa_mem.", "hw:mem_page_size")
HANDLED = {
    "hw:cpu_policy",
    "hw:cpu_thread_policy",
    "hw:emulator_threads_policy",
    "hw:mem_page_size",
    "hw:numa_nodes",
    "hw:cpu_realtime",
    "hw:cpu_realtime_mask",
    "hw:cpu_dedicated_mask",
    "pci_passthrough:alias",
    "hw:pci_numa_affinity_policy",
}
GUEST_TOPOLOGY = (
    "Nova gives the guest this CPU topology ({part}); it does not change where the VM fits, and "
    "the VM Descriptor has no field for it: a flavor written back gets Nova's default guest "
    "topology (a socket per vCPU) unless you add it"
)
NOT_PLACEMENT = {
    "hw:cpu_sockets": GUEST_TOPOLOGY.format(part="sockets"),
    "hw:cpu_cores": GUEST_TOPOLOGY.format(part="cores"),
    "hw:cpu_threads": GUEST_TOPOLOGY.format(part="threads"),
    "hw:cpu_max_sockets": "guest CPU topology limit; not used for placement",
    "hw:cpu_max_cores": "guest CPU topology limit; not used for placement",
    "hw:cpu_max_threads": "guest CPU topology limit; not used for placement",
}
NAMESPACE_REASONS = {
    "quota:": "a runtime limit (cgroup shares, I/O, bandwidth) that Nova applies after placement",
    "aggregate_instance_extra_specs:": "host aggregate matching: nfvplace has no host aggregates",
    "trait:": "a placement trait with no nfvplace equivalent",
    "resources:": "a placement resource class with no nfvplace equivalent",
}


def _flavor(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], PathKey]:
    inner = data.get("flavor")
    if isinstance(inner, Mapping):
        return inner, ("flavor",)
    return data, ()


def _spec_key(flavor: Mapping[str, Any]) -> str | None:
    return next((k for k in SPEC_KEYS if k in flavor), None)


def detect(data: Mapping[str, Any]) -> bool:
    flavor, _ = _flavor(data)
    return (
        "vcpus" in flavor
        and "ram" in flavor
        and (
            _spec_key(flavor) is not None
            or "flavor" in data
            or "OS-FLV-EXT-DATA:ephemeral" in flavor
        )
    )


def specs_of(flavor: Mapping[str, Any], key: str | None) -> dict[str, str]:
    """Extra specs as strings, from a mapping or the `k='v', ...` string of the OpenStack CLI."""
    raw = flavor.get(key) if key else None
    if isinstance(raw, Mapping):
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in raw.items()}
    if isinstance(raw, str):
        return dict(re.findall(r"([\w:.\-]+)='([^']*)'", raw))
    return {}


def convert(data: Mapping[str, Any]) -> Conversion:
    flavor, base = _flavor(data)
    request = data if base else {}  # image and PCI requests sit beside `flavor`
    out, origins, notes = convert_flavor(flavor, base, request)
    if out.get("cpu_oversubscription") and not out.get("cpu_sets") and out["vcpus"] > 1:
        notes.append(Note((*base, "vcpus"), HOST_WIDE, ASSUMED))
    return Conversion(NAME, out, origins, tuple(notes))


class _Specs:
    """The extra specs of one flavor (with a request's image properties merged in), with the
    source path of each."""

    def __init__(self, flavor: Mapping[str, Any], base: PathKey) -> None:
        key = _spec_key(flavor)
        self.values = specs_of(flavor, key)
        self.path: PathKey = (*base, key) if key else base
        self.per_key = isinstance(flavor.get(key or ""), Mapping)
        self.merged: dict[str, PathKey] = {}  # keys taken from the image's properties

    def at(self, name: str) -> PathKey:
        if name in self.merged:
            return self.merged[name]
        return (*self.path, name) if self.per_key else self.path

    def get(self, name: str, default: str = "") -> str:
        return self.values.get(name, default)

    def word(self, name: str, accepted: tuple[str, ...], default: str) -> str:
        if name not in self.values:
            return default
        return one_of(self.values[name], accepted, name, self.at(name))


def convert_flavor(
    flavor: Mapping[str, Any], base: PathKey, request: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[PathKey, PathKey], list[Note]]:
    """One Nova flavor (vcpus, ram, disk, extra specs) as VM Descriptor data, origins and notes;
    `request` may add the `image` and `pci_requests` of a Nova request (`nova_request`)."""
    request = request or {}
    specs = _Specs(flavor, base)
    vcpus = parse_count(flavor.get("vcpus"), "vcpus", (*base, "vcpus"))
    ram = parse_int(flavor.get("ram"), "ram (MiB)", (*base, "ram"))
    if vcpus <= 0:
        raise DialectError(f"vcpus must be positive, got {vcpus}", (*base, "vcpus"))
    notes: list[Note] = []
    if isinstance(request.get("image"), Mapping):
        specs.merged = nova_request.merge_image(specs.values, request["image"], ("image",), notes)
    origins: dict[PathKey, PathKey] = {
        (): base,
        ("name",): (*base, "name"),
        ("vcpus",): (*base, "vcpus"),
        ("memory_mib",): (*base, "ram"),
    }
    out: dict[str, Any] = {
        "schema": "nfvplace/vmd/v1",
        "name": identifier(flavor.get("name") or flavor.get("id"), "flavor"),
    }
    if flavor.get("description"):
        out["description"] = str(flavor["description"])
    default_policy = "dedicated" if "resources:PCPU" in specs.values else "shared"
    policy = specs.word("hw:cpu_policy", CPU_POLICIES, default_policy)
    realtime = specs.get("hw:cpu_realtime").lower() in TRUE
    dedicated = policy in ("dedicated", "mixed") or realtime
    layout = nova_numa.guest_nodes(specs.get, specs.at, specs.values.__contains__, vcpus, ram)
    word = specs.get("hw:mem_page_size")
    page = nova_numa.page_size(word, specs.at("hw:mem_page_size"), layout)
    # Nova gives a shared flavor a guest NUMA topology when it names nodes or a page size
    numa = any(k.startswith(NUMA_KEYS) for k in specs.values)
    if dedicated:
        out.update(_cpu_sets(specs, vcpus, ram, layout, page, origins, notes))
        if policy == "mixed":
            _mixed(specs, vcpus, notes)
    else:
        _check_floating(specs)
        out.update(_floating(specs, vcpus, ram, layout if numa else [], page, origins))
    required = ["cpu_pinning"] if dedicated else []
    if numa or (dedicated and page):
        required += ["numa_memory_pinning"] + (["hugepage_numa_pinning"] if page else [])
    if required:
        out["hypervisor"] = {"type": "kvm", "required_capabilities": required}
    if specs.word("hw:emulator_threads_policy", EMULATOR_POLICIES, "share") == "isolate":
        out["emulator_threads"] = "isolate"
        origins[("emulator_threads",)] = specs.at("hw:emulator_threads_policy")
    _storage(flavor, base, out, origins)
    _pci(specs, request, out, origins, notes)
    flags = _traits_and_others(specs, notes)
    if flags:
        out["processor"] = {"required_flags": flags}
        origins[("processor",)] = specs.path
    return out, origins, notes


def _floating(
    specs: _Specs,
    vcpus: int,
    ram: int,
    layout: list[nova_numa.GuestNode],
    page: Page,
    origins: dict[PathKey, PathKey],
) -> dict[str, Any]:
    """A shared flavor: floating vCPUs, in floating cpu-sets when it has a guest NUMA `layout`."""
    out: dict[str, Any] = {"vcpus": vcpus, "memory_mib": ram, "cpu_oversubscription": True}
    if not layout:
        return out
    named = "hw:numa_nodes" in specs.values
    out.update(nova_numa.floating_sets(layout, page, specs.at, origins, named))
    if sum(len(n.vcpus) for n in layout) == vcpus:
        del out["vcpus"]  # derived from the cpu-sets (else lint names the mismatch)
    if sum(n.memory_mib for n in layout) == ram:
        del out["memory_mib"]
    return out


def _check_floating(specs: _Specs) -> None:
    """What Nova refuses on a flavor whose vCPUs float (CPUThreadPolicyConfigurationInvalid,
    BadRequirementEmulatorThreadsPolicy) is an error."""
    for name, allowed in (("hw:cpu_thread_policy", ""), ("hw:emulator_threads_policy", "share")):
        if specs.get(name, allowed) != allowed:
            raise DialectError(
                f"{name}={specs.get(name)} needs hw:cpu_policy dedicated (or mixed): Nova refuses "
                "it on shared CPUs",
                specs.at(name),
            )


def _pci(
    specs: _Specs,
    request: Mapping[str, Any],
    out: dict[str, Any],
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> None:
    """PCI devices and the SR-IOV ports of a request, with Nova's NUMA affinity policy when the VM
    has a guest NUMA topology (`nova_request`)."""
    policy = specs.get("hw:pci_numa_affinity_policy").lower()
    alias_at = specs.at("pci_passthrough:alias")
    ports: list[dict[str, Any]] = []
    if "pci_requests" in request:
        where: PathKey = ("pci_requests",)
        devices, ports, policies = nova_request.resolved_requests(
            request["pci_requests"], where, notes
        )
        policy = next((p for p in policies if p), policy)
    elif specs.get("pci_passthrough:alias"):
        where = alias_at
        devices = nova_request.alias_devices(specs.get("pci_passthrough:alias"), where, notes)
    else:
        return
    if out.get("cpu_sets"):
        affinity = nova_request.pci_affinity(policy, where)
        devices = [dict(d, numa_affinity=d.get("numa_affinity", affinity)) for d in devices]
        ports = [dict(p, numa_affinity=p.get("numa_affinity", affinity)) for p in ports]
    else:  # no guest NUMA topology: Nova applies no PCI NUMA affinity
        devices = [{k: v for k, v in d.items() if k != "numa_affinity"} for d in devices]
        ports = [{k: v for k, v in p.items() if k != "numa_affinity"} for p in ports]
    if ports:
        out["interfaces"] = ports
        origins[("interfaces",)] = where
    if devices:
        out["pci_devices"] = devices
        origins[("pci_devices",)] = where


def _mixed(specs: _Specs, vcpus: int, notes: list[Note]) -> None:
    """`hw:cpu_dedicated_mask` (else the realtime mask) names the pinned vCPUs: `2-3`, or `^0-1`
    (all but those), as Nova reads it."""
    mask = specs.get("hw:cpu_dedicated_mask") or specs.get("hw:cpu_realtime_mask")
    where = specs.at("hw:cpu_dedicated_mask")
    floating: list[int] = []
    if mask:
        pinned = set(nova_cpu_mask(mask, vcpus, "hw:cpu_dedicated_mask", where))
        floating = [v for v in range(vcpus) if v not in pinned]
    detail = f"vCPUs {floating} float on shared PUs in Nova" if floating else "some vCPUs float"
    notes.append(
        Note(
            specs.at("hw:cpu_policy"),
            f"cpu_policy 'mixed': {detail}; nfvplace has no mixed VMs and pins every vCPU, "
            "so the VM holds more dedicated PUs than Nova would give it",
            ASSUMED,
        )
    )


def _storage(
    flavor: Mapping[str, Any], base: PathKey, out: dict[str, Any], origins: dict[PathKey, PathKey]
) -> None:
    disks: list[dict[str, Any]] = []
    for field, disk in (
        ("disk", "root"),
        ("OS-FLV-EXT-DATA:ephemeral", "ephemeral"),
        ("ephemeral", "ephemeral"),
    ):
        size = flavor.get(field)
        if size not in (None, 0, "0") and not any(d["name"] == disk for d in disks):
            disks.append({"name": disk, "size_gib": parse_int(size, field, (*base, field))})
            origins[("storage", len(disks) - 1)] = (*base, field)
    if disks:
        out["storage"] = disks


def _traits_and_others(specs: _Specs, notes: list[Note]) -> list[str]:
    """CPU-flag traits become required flags; every other spec not read is a note saying why."""
    flags: list[str] = []
    for name, value in specs.values.items():
        if name in HANDLED or name.startswith(("hw:numa_cpus.", "hw:numa_mem.")):
            continue
        if name.startswith("trait:HW_CPU_X86_") and value.lower() == "required":
            trait = name.removeprefix("trait:")
            flag = TRAIT_FLAGS.get(trait)
            if flag is None:
                flag = trait.removeprefix("HW_CPU_X86_").lower()
                notes.append(Note(specs.at(name), UNREPORTED.format(trait=trait, flag=flag)))
            flags.append(flag)
            continue
        if name == "resources:PCPU":
            continue  # read above: PCPU resources ask for dedicated vCPUs
        reason = NOT_PLACEMENT.get(name) or next(
            (why for prefix, why in NAMESPACE_REASONS.items() if name.startswith(prefix)), None
        )
        if reason is None:
            close = difflib.get_close_matches(name, [*HANDLED, *NOT_PLACEMENT], n=1)
            reason = (
                f"not a Nova extra spec (did you mean '{close[0]}'?); Nova ignores it"
                if close
                else "no nfvplace equivalent"
            )
        notes.append(Note(specs.at(name), f"extra spec '{name}={value}' not carried: {reason}"))
    return flags


def _cpu_sets(
    specs: _Specs,
    vcpus: int,
    ram: int,
    layout: list[nova_numa.GuestNode],
    page: Page,
    origins: dict[PathKey, PathKey],
    notes: list[Note],
) -> dict[str, Any]:
    at = specs.at
    thread = specs.word("hw:cpu_thread_policy", THREAD_POLICIES, NOVA_DEFAULT_THREAD_POLICY)
    cpu_sets = []
    for index, node in enumerate(layout):
        cpu_set: dict[str, Any] = {"id": index, "vcpus": node.vcpus, "memory_mib": node.memory_mib}
        origins[("cpu_sets", index, "vcpus")] = node.vcpus_from
        origins[("cpu_sets", index, "memory_mib")] = node.memory_from
        if thread == "require":
            ids = node.vcpus
            cpu_set["howtogroup"] = [ids[i : i + 2] for i in range(0, len(ids) - 1, 2)]
            origins[("cpu_sets", index, "howtogroup")] = at("hw:cpu_thread_policy")
        if page:
            cpu_set["hugepages"] = hugepages_of(page, node.memory_mib)
            origins[("cpu_sets", index, "hugepages")] = at("hw:mem_page_size")
        cpu_sets.append(cpu_set)
    out: dict[str, Any] = {"cpu_sets": cpu_sets, "cpu_thread_policy": thread}
    origins[("cpu_sets",)] = (
        at("hw:numa_nodes") if "hw:numa_nodes" in specs.values else at("hw:cpu_policy")
    )
    origins[("cpu_thread_policy",)] = at("hw:cpu_thread_policy")
    if "hw:cpu_thread_policy" not in specs.values:
        notes.append(
            Note(
                at("hw:cpu_policy"),
                "no hw:cpu_thread_policy: Nova's default 'prefer' is used",
                ASSUMED,
            )
        )
    if specs.get("hw:cpu_realtime").lower() in TRUE:
        mask = specs.get("hw:cpu_realtime_mask")
        where = at("hw:cpu_realtime_mask")
        out["realtime_vcpus"] = (
            nova_cpu_mask(mask, vcpus, "hw:cpu_realtime_mask", where)
            if mask
            else list(range(vcpus))
        )
        origins[("realtime_vcpus",)] = at("hw:cpu_realtime_mask" if mask else "hw:cpu_realtime")
    if sum(len(cs["vcpus"]) for cs in cpu_sets) != vcpus:
        out["vcpus"] = vcpus  # lint reports the mismatch (NFV105) at the flavor's vcpus
    if sum(cs["memory_mib"] for cs in cpu_sets) != ram:
        out["memory_mib"] = ram
    return out
