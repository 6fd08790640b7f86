from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from nfvplace.models.units import (
    Gbps,
    Mbps,
    MiB,
    PageSize,
    format_memory_kib,
    uses_decimal_memory_unit,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(4096, 4096), ("4GiB", 4096), ("10GB", 10240), ("512 MiB", 512), ("1TiB", 1024 * 1024)],
)
def test_mib_accepts_numbers_and_units(raw: object, expected: int) -> None:
    assert TypeAdapter(MiB).validate_python(raw) == expected


@pytest.mark.parametrize("raw", ["4 parsecs", "-1GiB", "1.5KiB", True, [1], "GiB"])
def test_mib_rejects_nonsense(raw: object) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(MiB).validate_python(raw)


@pytest.mark.parametrize(
    ("raw", "expected"), [(10, 10.0), ("10Gbps", 10.0), ("500 Mbps", 0.5), ("1Tbps", 1000.0)]
)
def test_gbps(raw: object, expected: float) -> None:
    assert TypeAdapter(Gbps).validate_python(raw) == pytest.approx(expected)


def test_mbps_from_gbps_string() -> None:
    assert TypeAdapter(Mbps).validate_python("1Gbps") == pytest.approx(1000.0)


def test_page_size_needs_a_unit_and_prints_canonically() -> None:
    adapter = TypeAdapter(PageSize)
    assert adapter.validate_python("1GiB") == 1048576
    assert adapter.validate_python("2MB") == 2048
    assert adapter.dump_python(1048576) == "1GiB"
    with pytest.raises(ValidationError):
        adapter.validate_python(2048)


def test_decimal_units_are_flagged() -> None:
    assert uses_decimal_memory_unit("10GB")
    assert not uses_decimal_memory_unit("10GiB")
    assert not uses_decimal_memory_unit(10)


@pytest.mark.parametrize(
    ("kib", "text"), [(1048576, "1GiB"), (2048, "2MiB"), (4, "4KiB"), (1536, "1536KiB")]
)
def test_format_memory(kib: int, text: str) -> None:
    assert format_memory_kib(kib) == text
