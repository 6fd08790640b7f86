"""Read-only advice for a dry run of one VM that fits nowhere: moves of the live placements that
make room for it, worked out on the store's current hosts and placements."""

from __future__ import annotations

from typing import Any

from ..models.configuration import VmConfiguration
from ..models.vmd import VMD_SCHEMA, VmDescriptor
from ..models.vnf import VnfTemplate
from ..store import PlacementRecord, Store


def room_by_moves(store: Store, vm: VmDescriptor, policy: str) -> dict[str, Any] | None:
    """The dry run's answer: where `vm` would go once the moves are made, and the moves (None:
    no set of moves makes room)."""
    from ..placement import suggest_moves

    configs: list[VmConfiguration] = []
    descriptors: dict[str, VmDescriptor] = {}
    after: str | None = None
    while True:
        page = store.list_placements(after=after, limit=500)
        for record in page.placements:
            configs.extend(VmConfiguration.model_validate(c) for c in record.configurations)
            descriptors.update(vm_descriptors(record))
        if page.next_after is None:
            break
        after = page.next_after
    hosts = list(store.snapshot().hosts.values())
    advice = suggest_moves(hosts, vm, configs, descriptors=descriptors, policy=policy)
    if advice is None:
        return None
    return {
        "dry_run": True,
        "configurations": [
            advice.configuration.model_dump(mode="json", by_alias=True, exclude_none=True)
        ],
        "moves": [move.to_dict() for move in advice.moves],
    }


def vm_descriptors(record: PlacementRecord) -> dict[str, VmDescriptor]:
    """The VM Descriptors a placement was made from, by VM name (what rendering needs: VLANs,
    networks); empty for placements stored before descriptors were kept."""
    data = record.descriptor
    if data is None:
        return {}
    if "batch" in data:
        vms = [VmDescriptor.model_validate(item["vm"]) for item in data["batch"]]
        return {vm.name: vm for vm in vms}
    if data.get("schema") == VMD_SCHEMA:
        vm = VmDescriptor.model_validate(data)
        return {vm.name: vm}
    template = VnfTemplate.model_validate(data)
    return {m.descriptor.name: m.descriptor for m in template.members if m.descriptor is not None}
