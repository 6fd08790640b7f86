"""`models/configuration_build.py`: a VM Configuration built without validating again is what
validation gives, to the type of every nested value and the fields set.

Three sources of data: the engine's own drafts on fuzzed hosts and VMs (the differential fuzzer's
generators) and on the hostgen mix, each of which must take the fast path; and fuzzed data of
every shape (lists for tuples, floats for ints, rates as strings, unknown or missing keys, bad
names), where the builder either gives validation's answer or hands the data to validation.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from test_differential import chds, vmds

import nfvplace
from nfvplace.errors import LintError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.configuration_build import build_configuration, built_fast
from nfvplace.models.vmd import InterfaceMode, ThreadPolicy, VmDescriptor
from nfvplace.placement.resources import draft as draft_module

EXAMPLES = settings(
    max_examples=int(os.environ.get("NFVPLACE_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def same_value(a: Any, b: Any, where: str = "") -> None:
    """`a` and `b` alike to the type of every nested value (floats by repr: -0.0 is not 0.0)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} against {type(b).__name__}"
    if isinstance(a, BaseModel):
        assert a.model_fields_set == b.model_fields_set, where
        assert a.__pydantic_extra__ == b.__pydantic_extra__, where
        assert a.__pydantic_private__ == b.__pydantic_private__, where
        assert list(a.__dict__) == list(b.__dict__), where
        for name, value in a.__dict__.items():
            same_value(value, b.__dict__[name], f"{where}.{name}")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            same_value(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key, value in a.items():
            same_value(key, key, f"{where} key")
            same_value(value, b[key], f"{where}[{key!r}]")
    elif isinstance(a, float):
        assert repr(a) == repr(b), where
    else:
        assert a == b, where


def same_configuration(fast: VmConfiguration, data: dict[str, Any]) -> None:
    """`fast` is what validating `data` gives, and what validating its own dump gives."""
    for other in (
        VmConfiguration.model_validate(data),
        VmConfiguration.model_validate(fast.model_dump(by_alias=True)),
    ):
        assert fast == other
        assert fast.model_dump_json() == other.model_dump_json()
        assert fast.model_dump_json(by_alias=True) == other.model_dump_json(by_alias=True)
        assert repr(fast) == repr(other)
        assert hash(fast.model_dump_json()) == hash(other.model_dump_json())
    same_value(fast, VmConfiguration.model_validate(data), "configuration")


@contextmanager
def drafts() -> Iterator[list[dict[str, Any]]]:
    """The data of every configuration the engine builds meanwhile."""
    seen: list[dict[str, Any]] = []
    real = draft_module.build_configuration

    def spy(data: dict[str, Any]) -> VmConfiguration:
        seen.append(data)
        return real(data)

    draft_module.build_configuration = spy
    try:
        yield seen
    finally:
        draft_module.build_configuration = real


def check_drafts(seen: list[dict[str, Any]]) -> None:
    for data in seen:
        fast = built_fast(data)
        assert fast is not None, f"the engine's draft went through validation: {data}"
        same_configuration(fast, data)


@EXAMPLES
@given(
    hosts=st.lists(st.integers(0, 1000), min_size=1, max_size=2).flatmap(
        lambda keys: st.tuples(*(chds(f"h{k}") for k in range(len(keys))))
    ),
    vm=vmds(),
    policy=st.sampled_from(["pack", "spread"]),
)
def test_the_engines_configurations_on_fuzzed_hosts_are_as_validated(
    hosts: tuple[ComputeHostDescriptor, ...], vm: VmDescriptor, policy: str
) -> None:
    with drafts() as seen:
        try:
            nfvplace.place(list(hosts), vm, policy=policy)
        except LintError:
            return
    check_drafts(seen)


def test_the_engines_configurations_on_the_hostgen_mix_are_as_validated() -> None:
    from bench.hostgen import make_fleet, request_stream

    fleet = nfvplace.Fleet(make_fleet(300, seed=0))
    with drafts() as seen:
        for vm in request_stream(250, seed=1):
            fleet.place(vm)
    assert len(seen) > 200
    assert any(d.get("shared") for d in seen)
    assert any(d["interfaces"] for d in seen)
    check_drafts(seen)


# --- fuzzed data: validation's answer, or validation itself ---------------------------------

_WEIRD = st.sampled_from(
    [None, True, 1.0, -1, 2**31, 2**41, "x", "", "a\x00", "10Gbps", float("nan"), float("inf"),
     -0.0, [], (), {}, [1, 2], (1, 2), [[1, 2]], {"a": 1}, ThreadPolicy.isolate]
)  # fmt: skip


_ODDS = st.shared(st.sampled_from([0, 0, 0, 30, 8]), key="odds")  # 0: every value sensible


def _maybe_weird(draw: st.DrawFn, value: Any) -> Any:
    odds = draw(_ODDS)
    return draw(_WEIRD) if odds and draw(st.integers(0, odds)) == 0 else value


def _one_of(draw: st.DrawFn, good: list[Any], bad: list[Any]) -> Any:
    """One of `good`, or where values may be weird, sometimes one of `bad`."""
    return draw(st.sampled_from(good + bad if draw(_ODDS) else good))


def _seq(draw: st.DrawFn, items: list[Any]) -> Any:
    return _maybe_weird(draw, draw(st.sampled_from([tuple, list]))(items))


@st.composite
def _ints(draw: st.DrawFn, most: int = 4) -> Any:
    items = [
        _maybe_weird(draw, draw(st.integers(0, 80))) for _ in range(draw(st.integers(0, most)))
    ]
    return _seq(draw, items)


def _rate(draw: st.DrawFn) -> Any:
    return _maybe_weird(draw, draw(st.sampled_from([0, 0.0, 10, 2.5, 0.1, 1e-9, 25.0, 1e7, 1e8])))


@st.composite
def _cpu_set(draw: st.DrawFn, k: int) -> dict[str, Any]:
    pins = {v: _maybe_weird(draw, draw(st.integers(0, 80))) for v in range(draw(st.integers(0, 4)))}
    entry: dict[str, Any] = {"id": k, "numa_node": draw(st.integers(0, 3)), "vcpu_pins": pins}
    entry["memory_mib"] = _maybe_weird(draw, draw(st.sampled_from([0, 512, 2048])))
    optional: dict[str, Any] = {
        "hugepages": {"size_kib": _one_of(draw, [2048, 1048576], [0]), "count": 2},
        "memory_bandwidth_gbps": _rate(draw),
        "reserved_siblings": draw(_ints()),
        "howtogroup": _seq(draw, [_seq(draw, [0, 1]), _seq(draw, [2, 3])]),
        "thread_policy": _one_of(draw, [None, ThreadPolicy.isolate], ["prefer"]),
        "cache_ways": {"domain": 0, "first_way": 4, "ways": 2, "way_kib": draw(_ints(0))},
        "floating": {"vcpus": draw(_ints()), "cpus": draw(_ints())},
    }
    for name, value in optional.items():
        if draw(st.booleans()):
            entry[name] = _maybe_weird(draw, value)
    return entry


@st.composite
def _interface(draw: st.DrawFn, k: int) -> dict[str, Any]:
    mode = _one_of(draw, [InterfaceMode.sriov, InterfaceMode.vswitch], ["dedicated"])
    entry: dict[str, Any] = {"name": _one_of(draw, [f"e{k}"], ["bad name", "-x"]), "mode": mode}
    optional: dict[str, Any] = {
        "cpu_set": draw(st.sampled_from([None, 0, 1])),
        "pci_address": _one_of(draw, ["0000:1a:01.0", "0000:1A:01.7"], ["0000:1a:01.8"]),
        "physical_function": _one_of(draw, ["0000:1a:00.0"], ["0000:1a:00.0\n"]),
        "numa_node": draw(st.sampled_from([None, 0, 1])),
        "bandwidth_gbps": _rate(draw),
        "vhost_user": _one_of(draw, [False, True], [1]),
        "physical_network": _one_of(draw, [None, "phys"], ["a\x00"]),
        "vlan": draw(st.sampled_from([None, 100])),
    }
    for name, value in optional.items():
        if draw(st.booleans()):
            entry[name] = _maybe_weird(draw, value)
    return entry


@st.composite
def configuration_data(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {"vm": _one_of(draw, ["vm-1", "a" * 253, "x"], ["vm 1", "a" * 254])}
    data["host"] = _one_of(draw, ["host-1"], ["host 1", ""])
    optional: dict[str, Any] = {
        "schema": "nfvplace/vm-configuration/v1",
        "schema_": "nfvplace/vm-configuration/v1",
        "instance": _one_of(draw, [None, "vm-1@host-1-1", "x" * 16384], ["x" * 16385]),
        "vcpus": _one_of(draw, [None, 4], [4.0]),
        "memory_mib": _one_of(draw, [None, 4096], ["4GiB"]),
        "thread_policy": draw(st.sampled_from([None, ThreadPolicy.prefer])),
        "cpu_sets": _seq(draw, [draw(_cpu_set(k)) for k in range(draw(st.integers(0, 2)))]),
        "shared": {"vcpus": 2, "cpus": draw(_ints()), "numa_node": 0, "oversubscribed": True},
        "emulator_pins": draw(_ints()),
        "realtime_vcpus": draw(_ints()),
        "interfaces": _seq(draw, [draw(_interface(k)) for k in range(draw(st.integers(0, 2)))]),
        "pci_devices": _seq(
            draw, [{"pci_address": "0000:3b:00.0", "class": "gpu", "numa_node": 0, "cpu_set": 0}]
        ),
        "cpu_set_links": _seq(
            draw, [{"cpu_sets": (0, 1), "numa_nodes": [0, 1], "bandwidth_mbps": _rate(draw)}]
        ),
        "memory_bandwidth_gbps": _rate(draw),
        "variant": draw(st.sampled_from([None, "small"])),
        "descriptor": draw(
            st.sampled_from([None, VmDescriptor(name="vm-1", vcpus=1, memory_mib=512)])
        ),
        "unknown": 1,
    }
    for name, value in optional.items():
        if name in ("schema_", "unknown") and not draw(_ODDS):
            continue
        if draw(st.integers(0, 3)) > (1 if name in ("schema_", "unknown") else 0):
            data[name] = _maybe_weird(draw, value)
    return data


def agrees(data: dict[str, Any]) -> None:
    """`build_configuration(data)` is what validation gives, or raises validation's error."""
    try:
        expected = VmConfiguration.model_validate(data)
    except ValidationError as error:
        message = str(error)
    else:
        message = ""
    if message:
        with pytest.raises(ValidationError) as raised:
            build_configuration(data)
        assert str(raised.value) == message
        assert built_fast(data) is None
        return
    made = build_configuration(data)
    same_configuration(made, data)
    same_value(made, expected, "configuration")


@EXAMPLES
@given(data=configuration_data())
def test_any_data_gives_validations_answer(data: dict[str, Any]) -> None:
    agrees(data)


@pytest.mark.parametrize(
    ("change", "fast"),
    [
        ({}, True),
        ({"vcpus": 4.0}, False),  # a float for an int: validation converts it
        ({"memory_mib": "4GiB"}, False),  # a unit: the units' parsing
        ({"memory_bandwidth_gbps": 3}, True),  # a bare rate: the unit's own conversion
        ({"realtime_vcpus": [1, 2]}, True),  # a list for a tuple
        ({"host": "host 1"}, False),  # not an Identifier: validation's error
        ({"schema_": "nfvplace/vm-configuration/v1"}, False),  # by name, not alias: validation
        ({"extra": 1}, False),
        (
            {"descriptor": {"name": "vm-1", "vcpus": 1, "memory_mib": 512}},
            False,
        ),  # a dict for a model
    ],
)
def test_what_takes_the_fast_path(change: dict[str, Any], fast: bool) -> None:
    data = {"vm": "vm-1", "host": "host-1", "vcpus": 4, "memory_mib": 4096} | change
    assert (built_fast(data) is not None) is fast
    agrees(data)
