"""A VM Configuration built from plain data without pydantic's validation pass, where the data is
already what validation would produce.

The engine assigns a configuration from values it holds (ints, tuples, enum members, validated
names), and validating it again was half the cost of its ids stage. `build_configuration(data)`
checks each value with the same rules the fields state (types, bounds, patterns, the units' own
conversions) and sets the values validation would set: ints and strings as they are, lists as
tuples, rates through the units' own `_gbps`/`_mbps`, defaults validated once. Anything it is not
sure of (a list where a model is wanted, a float for an int, a rate as a string, an unknown or
missing key) makes it hand the whole data to `VmConfiguration.model_validate`, so the result is
always what validation gives: equal, the same types, the same fields set
(`tests/models/test_configuration_build.py` proves it on fuzzed and engine data).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from .base import MAX_INT, MAX_TEXT, PCI_ADDRESS_PATTERN
from .configuration import (
    CONFIGURATION_SCHEMA,
    CacheWaysPlacement,
    CpuSetLink,
    CpuSetPlacement,
    FloatingVcpus,
    HugepageAllocation,
    InterfacePlacement,
    PciDeviceAllocation,
    SharedCpus,
    VmConfiguration,
)
from .units import MAX_GBPS, MAX_KIB, MAX_MIB, _gbps, _mbps
from .vmd import InterfaceMode, ThreadPolicy, VmDescriptor


class _NotBuiltError(Exception):
    """A value this module does not build: the data goes through validation."""


@dataclass(frozen=True)
class _Check:
    """What a field accepts as it is: `test`, a condition on `v` (inlined in the builder), or
    `convert`, a function giving the value validation gives (raising `_NotBuiltError` otherwise)."""

    test: str = ""
    convert: Callable[[Any], Any] | None = None
    optional: bool = False  # None is kept too

    def maybe(self) -> _Check:
        return _Check(self.test, self.convert, True)


_NAMES: dict[str, Any] = {  # what the inlined tests read
    "MAX_INT": MAX_INT,
    "MAX_MIB": MAX_MIB,
    "MAX_KIB": MAX_KIB,
    "MAX_TEXT": MAX_TEXT,
    "SCHEMA": CONFIGURATION_SCHEMA,
    "IDENTIFIER": re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,252}").fullmatch,  # anchored
    "PCI": re.compile(PCI_ADDRESS_PATTERN.removeprefix("^").removesuffix("$")).fullmatch,
    "ThreadPolicy": ThreadPolicy,
    "InterfaceMode": InterfaceMode,
    "VmDescriptor": VmDescriptor,  # an instance is kept as it is (`revalidate_instances` never)
}
_INT = _Check("type(v) is int and 0 <= v <= MAX_INT")
_MIB = _Check("type(v) is int and 0 <= v <= MAX_MIB")
_KIB = _Check("type(v) is int and 0 <= v <= MAX_KIB")
_PAGE_KIB = _Check("type(v) is int and 0 < v <= MAX_KIB")
_TEXT = _Check('type(v) is str and len(v) <= MAX_TEXT and "\\x00" not in v')
_IDENTIFIER = _Check("type(v) is str and IDENTIFIER(v) is not None")
_PCI = _Check("type(v) is str and PCI(v) is not None")
_BOOL = _Check("type(v) is bool")
_THREAD_POLICY = _Check("type(v) is ThreadPolicy")
_MODE = _Check("type(v) is InterfaceMode")
_SCHEMA = _Check("type(v) is str and v == SCHEMA")
_DESCRIPTOR = _Check("type(v) is VmDescriptor")
_TUPLES = (tuple, list)


def _rate(convert: Callable[[Any], float], most: float) -> _Check:
    """A rate field: a bare number through the unit's own conversion (as its BeforeValidator),
    then the field's bounds."""

    def check(v: Any) -> float:
        if type(v) is not int and type(v) is not float:
            raise _NotBuiltError
        r = convert(v)
        if math.isfinite(r) and 0 <= r <= most:
            return r
        raise _NotBuiltError

    return _Check(convert=check)


_GBPS = _rate(_gbps, MAX_GBPS)
_MBPS = _rate(_mbps, MAX_GBPS * 1000)


def _int_tuple(v: Any, least: int = 0) -> tuple[int, ...]:
    if type(v) not in _TUPLES or len(v) < least:
        raise _NotBuiltError
    for x in v:
        if type(x) is not int or not 0 <= x <= MAX_INT:
            raise _NotBuiltError
    return v if type(v) is tuple else tuple(v)  # validation's tuple is an equal one


def _pairs(v: Any) -> tuple[tuple[int, int], ...]:
    if type(v) not in _TUPLES:
        raise _NotBuiltError
    for pair in v:
        if type(pair) not in _TUPLES or len(pair) != 2:
            raise _NotBuiltError
        a, b = pair
        if type(a) is not int or type(b) is not int or not 0 <= a <= MAX_INT >= b >= 0:
            raise _NotBuiltError
    if type(v) is tuple and all(type(pair) is tuple for pair in v):
        return v
    return tuple(tuple(pair) for pair in v)


def _pair(v: Any) -> tuple[int, int]:
    return _pairs((v,))[0]


def _pins(v: Any) -> dict[int, int]:
    if type(v) is not dict:
        raise _NotBuiltError
    for key, pu in v.items():
        if type(key) is not int or type(pu) is not int or not 0 <= key <= MAX_INT >= pu >= 0:
            raise _NotBuiltError
    return dict(v)  # a dict of its own, as validation makes


_INTS = _Check(convert=_int_tuple)
_INTS_ONE = _Check(convert=lambda v: _int_tuple(v, 1))
_PAIR = _Check(convert=_pair)
_PAIRS = _Check(convert=_pairs)
_PINS = _Check(convert=_pins)


class _Spec:
    """How to build one model: a builder generated from its fields' checks, each test inlined
    (a call per field cost as much as validation). Each field is read by its alias where it has
    one, else by its name; any other key, or a required field missing, is `_NotBuiltError`."""

    def __init__(self, cls: type[BaseModel], checks: Mapping[str, _Check]) -> None:
        fields = cls.model_fields
        if list(checks) != list(fields) or cls.__pydantic_post_init__ is not None:
            raise TypeError(f"{cls.__name__}: the checks do not cover its fields in order")
        self.cls = cls
        names: dict[str, Any] = _NAMES | {"M": _MISSING, "V": _NotBuiltError, "CLS": cls}
        lines = ["def build(data):", "    if type(data) is not dict: raise V", "    get = data.get"]
        lines.append("    n = 0")
        for k, (name, info) in enumerate(fields.items()):
            check = checks[name]
            if not info.is_required():
                names[f"D{k}"] = self._default(check, info.default)
            names[f"C{k}"] = check.convert
            lines += _field_lines(k, info.alias or name, check, info.is_required())
        lines.append("    if n != len(data): raise V")  # a key of no field (or a name for an alias)
        lines.append("    fs = set(data)")
        for name, info in fields.items():
            if info.alias:
                lines.append(
                    f"    if {info.alias!r} in fs: fs.remove({info.alias!r}); fs.add({name!r})"
                )
        values = ", ".join(f"{name!r}: f{k}" for k, name in enumerate(fields))
        lines.append(f"    return NEW(CLS, {{{values}}}, fs)")
        names["NEW"] = _new
        exec("\n".join(lines), names)  # the source: fixed templates above
        self.build_dict: Callable[[dict[str, Any]], Any] = names["build"]

    @staticmethod
    def _default(check: _Check, default: Any) -> Any:
        """The default as validation gives it (`validate_default`)."""
        if default is None and check.optional:
            return None
        if check.convert is not None:
            return check.convert(default)
        if not eval(check.test, _NAMES, {"v": default}):
            raise TypeError(f"default {default!r} fails {check.test}")
        return default

    def build(self, data: Any) -> Any:
        if type(data) is self.cls:
            return data  # kept as it is, as validation keeps an instance
        return self.build_dict(data)

    def many(self, v: Any) -> tuple[Any, ...]:
        if type(v) not in _TUPLES:
            raise _NotBuiltError
        build = self.build
        return tuple([build(x) for x in v])

    def check(self) -> _Check:
        return _Check(convert=self.build)

    def tuple_check(self) -> _Check:
        return _Check(convert=self.many)


def _field_lines(k: int, key: str, check: _Check, required: bool) -> list[str]:
    lines = [f"    v = get({key!r}, M)", "    if v is M:"]
    lines.append("        raise V" if required else f"        f{k} = D{k}")
    lines += ["    else:", "        n += 1"]
    guard = "v is not None and " if check.optional else ""
    if check.test:
        lines.append(f"        if {guard}not ({check.test}): raise V")
    else:
        lines.append(f"        if {guard.removesuffix(' and ') or 'True'}: v = C{k}(v)")
    lines.append(f"        f{k} = v")
    return lines


_MISSING: Final = object()
_set = object.__setattr__


def _new(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> BaseModel:
    made = cls.__new__(cls)
    _set(made, "__dict__", values)
    _set(made, "__pydantic_fields_set__", fields_set)
    _set(made, "__pydantic_extra__", None)
    _set(made, "__pydantic_private__", None)
    return made


_HUGEPAGES = _Spec(HugepageAllocation, {"size_kib": _PAGE_KIB, "count": _INT})
_CACHE_WAYS = _Spec(
    CacheWaysPlacement, {"domain": _INT, "first_way": _INT, "ways": _INT, "way_kib": _KIB.maybe()}
)
_FLOATING = _Spec(FloatingVcpus, {"vcpus": _INTS_ONE, "cpus": _INTS})
_CPU_SET = _Spec(
    CpuSetPlacement,
    {
        "id": _INT,
        "numa_node": _INT,
        "vcpu_pins": _PINS,
        "memory_mib": _MIB,
        "hugepages": _HUGEPAGES.check().maybe(),
        "memory_bandwidth_gbps": _GBPS.maybe(),
        "reserved_siblings": _INTS,
        "howtogroup": _PAIRS,
        "thread_policy": _THREAD_POLICY.maybe(),
        "cache_ways": _CACHE_WAYS.check().maybe(),
        "floating": _FLOATING.check().maybe(),
    },
)
_INTERFACE = _Spec(
    InterfacePlacement,
    {
        "name": _IDENTIFIER,
        "cpu_set": _INT.maybe(),
        "mode": _MODE,
        "pci_address": _PCI.maybe(),
        "physical_function": _PCI.maybe(),
        "numa_node": _INT.maybe(),
        "bandwidth_gbps": _GBPS,
        "vhost_user": _BOOL,
        "physical_network": _TEXT.maybe(),
        "vlan": _INT.maybe(),
    },
)
_SHARED = _Spec(
    SharedCpus,
    {
        "vcpus": _INT,
        "cpus": _INTS,
        "numa_node": _INT.maybe(),
        "memory_mib": _MIB,
        "oversubscribed": _BOOL,
    },
)
_DEVICE = _Spec(
    PciDeviceAllocation,
    {"pci_address": _PCI, "device_class": _TEXT, "numa_node": _INT, "cpu_set": _INT.maybe()},
)
_LINK = _Spec(CpuSetLink, {"cpu_sets": _PAIR, "numa_nodes": _PAIR, "bandwidth_mbps": _MBPS})
_CONFIGURATION = _Spec(
    VmConfiguration,
    {
        "schema_": _SCHEMA,
        "vm": _IDENTIFIER,
        "instance": _TEXT.maybe(),
        "host": _IDENTIFIER,
        "vcpus": _INT.maybe(),
        "memory_mib": _MIB.maybe(),
        "thread_policy": _THREAD_POLICY.maybe(),
        "cpu_sets": _CPU_SET.tuple_check(),
        "shared": _SHARED.check().maybe(),
        "emulator_pins": _INTS,
        "realtime_vcpus": _INTS,
        "interfaces": _INTERFACE.tuple_check(),
        "pci_devices": _DEVICE.tuple_check(),
        "cpu_set_links": _LINK.tuple_check(),
        "memory_bandwidth_gbps": _GBPS,
        "variant": _TEXT.maybe(),
        "descriptor": _DESCRIPTOR.maybe(),
    },
)


def built_fast(data: dict[str, Any]) -> VmConfiguration | None:
    """`data` built without validation, or None where validation is needed."""
    try:
        made: VmConfiguration = _CONFIGURATION.build_dict(data)
    except (_NotBuiltError, ValueError, TypeError):  # the units' own errors: validation says it
        return None
    return made


def build_configuration(data: dict[str, Any]) -> VmConfiguration:
    """What `VmConfiguration.model_validate(data)` gives, built without validating again where
    every value already is what validation would make of it."""
    made = built_fast(data)
    return VmConfiguration.model_validate(data) if made is None else made
