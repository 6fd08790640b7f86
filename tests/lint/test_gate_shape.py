"""`lint.gate.shape`: what lint's verdict on a VM Descriptor is a function of (all but its name),
the key `Fleet` keeps the shapes lint passed by. Over the lint table's descriptors (refused and
passed) and the request mix: renamed, a descriptor gets the same hits (rule, path, message,
hint) and the same verdict; the shape's JSON gives the descriptor's values back; and a fleet
passes or refuses each VM of a stream as the gate does, linting each shape it passed once."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet, request_stream
from nfvplace.lint import rules
from nfvplace.lint.gate import gate, refuse, shape
from nfvplace.models.vmd import VmDescriptor
from nfvplace.models.vnf import VnfTemplate

from .test_gate import VMS, _outcome

WHAT = "VM Descriptor or VNF template"  # what `Fleet` calls the descriptor it refuses
NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,30}", fullmatch=True)


def _hits(vm: VmDescriptor) -> list[tuple[str, tuple[str | int, ...], str, str | None]]:
    return [(h.rule.id, h.path, h.message, h.hint) for h in rules.check_vmd(vm)]


def _refused(vm: VmDescriptor) -> bool:
    return _outcome(gate, vm) is not None


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(VMS), NAMES)
def test_a_renamed_descriptor_gets_the_same_hits_and_verdict(vm: VmDescriptor, name: str) -> None:
    renamed = vm.model_copy(update={"name": name})
    assert shape(renamed) == shape(vm)
    assert _hits(renamed) == _hits(vm)
    assert _refused(renamed) == _refused(vm)


@pytest.mark.parametrize("vm", VMS, ids=lambda vm: vm.name)
def test_the_shape_gives_the_values_back(vm: VmDescriptor) -> None:
    key = shape(vm)
    assert key is not None
    assert VmDescriptor.model_validate_json(key[:-1] + f',"name":"{vm.name}"}}') == vm


def test_only_a_vm_descriptor_has_a_shape() -> None:
    class Derived(VmDescriptor):
        pass

    vm = VMS[0]
    assert shape(Derived.model_validate(vm.model_dump(by_alias=True))) is None
    template = VnfTemplate.model_validate(
        {"name": "t", "members": [{"name": "m", "descriptor": vm.model_dump(by_alias=True)}]}
    )
    assert shape(template) is None


def test_a_fleet_passes_and_refuses_as_the_gate_and_lints_a_shape_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    linted: list[VmDescriptor] = []

    def counting(vm: VmDescriptor, what: str) -> None:
        linted.append(vm)
        refuse(vm, what)

    monkeypatch.setattr("nfvplace.fleet.refuse", counting)
    fleet = nfvplace.Fleet(make_fleet(20, seed=5))
    stream = [*request_stream(60, seed=6), *VMS]
    shapes_passed: set[str | None] = set()
    for vm in stream:
        got = _outcome(lambda vm, _: fleet.try_place(vm), vm)
        assert got == _outcome(lambda vm, _: refuse(vm, WHAT), vm)
        if got is None:
            shapes_passed.add(shape(vm))
    passed = [vm for vm in stream if _outcome(refuse, vm) is None]
    assert len(passed) > len(shapes_passed)  # the stream repeats shapes under new names
    assert len([vm for vm in linted if _outcome(refuse, vm) is None]) == len(shapes_passed)
