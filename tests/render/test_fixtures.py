"""The hand-written configurations are real placements: all of them fit on the host together."""

from __future__ import annotations

from nfvplace.claims import claim, conflicts

from ._support import CASES, load_config, load_host, load_vm


def test_every_fixture_claims_cleanly_on_the_host() -> None:
    host = load_host()
    for case in sorted(CASES):
        config = load_config(case)
        assert conflicts(host, config) == ()
        host = claim(host, config)


def test_fixtures_match_their_descriptors() -> None:
    for case in sorted(CASES):
        vm = load_vm(case)
        if vm is None:
            continue
        config = load_config(case)
        assert config.vm == vm.name
        assert sorted(v for cs in config.cpu_sets for v in cs.vcpu_pins) == sorted(
            v for cs in vm.cpu_sets for v in cs.vcpus
        )
        for cs in vm.cpu_sets:
            placed = next(p for p in config.cpu_sets if p.id == cs.id)
            assert placed.memory_mib == cs.memory_mib
            assert tuple(placed.howtogroup) == tuple(cs.howtogroup)
            if cs.hugepages:
                assert placed.hugepages is not None
                assert placed.hugepages.size_kib == cs.hugepages.size_kib
                assert placed.hugepages.count == cs.hugepages.count
        assert {i.name for i in config.interfaces} == {i.name for i in vm.all_interfaces}
