"""A placement's answer as JSON (service/answers.py): the VM Configurations written with the
request's stored descriptor put in are the text written whole."""

from __future__ import annotations

import json

from bench.hostgen import iter_fleet, request_stream
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex, place
from nfvplace.service.answers import configurations_json
from nfvplace.store.records import CONFIGURATIONS


def whole(configs: list[VmConfiguration]) -> bytes:
    return CONFIGURATIONS.dump_json(configs, by_alias=True, exclude_none=True)


def stored(vm: VmDescriptor) -> str:
    """The descriptor as the store keeps it (`PlacementRequest.stored_descriptor`)."""
    return vm.model_dump_json(by_alias=True, exclude_none=True)


def placed() -> list[tuple[VmDescriptor, list[VmConfiguration]]]:
    """The service mix's first 60 VMs placed on 60 of its hosts: each with its configurations."""
    hosts = [ComputeHostDescriptor.model_validate(h.model_dump()) for h in iter_fleet(60, 7)]
    fleet = FleetIndex(hosts)
    out = []
    for k, vm in enumerate(request_stream(60, seed=8)):
        result = place(fleet, vm, instance=f"i-{k}")
        if result.ok:
            fleet.update_many(result.hosts.values())
            out.append((vm, list(result.configurations)))
    return out


def test_the_stored_descriptor_put_in_gives_the_text_written_whole() -> None:
    cases = placed()
    assert len(cases) > 40
    for vm, configs in cases:
        assert configs[0].descriptor is vm  # the case the service puts the text in
        assert configurations_json(configs, (vm, stored(vm))) == whole(configs)
        assert configurations_json(configs) == whole(configs)
    json.loads(configurations_json(cases[0][1], (cases[0][0], stored(cases[0][0]))))


def test_a_configuration_of_another_descriptor_is_written_whole() -> None:
    """Only a configuration holding the very descriptor given takes its text: an equal copy,
    another VM's, or none are written whole, beside one that takes it."""
    (vm, configs), (_, others) = placed()[:2]
    copy = vm.model_copy()
    bare = configs[0].model_copy(update={"descriptor": None})
    mixed = [*configs, *others, bare]
    assert configurations_json(mixed, (vm, stored(vm))) == whole(mixed)
    assert configurations_json(configs, (copy, stored(copy))) == whole(configs)
    wrong = '{"not":"used"}'  # a text given for a descriptor no configuration holds is not used
    assert configurations_json(others, (vm, wrong)) == whole(others)
