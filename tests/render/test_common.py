"""Shared helpers: CPU lists, PCI addresses, page-size names, the schema check's own failure."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nfvplace.render._common import Pci, cpu_list, page_size_name, parse_cpu_list

from ._support import virt_xml_validate


@pytest.mark.parametrize(
    ("ids", "text"),
    [
        ([], ""),
        ([3], "3"),
        ([0, 1, 2, 5, 7, 8], "0-2,5,7-8"),
        ([8, 7, 7, 0], "0,7-8"),
        ([1, 3, 5], "1,3,5"),
    ],
)
def test_cpu_list(ids: list[int], text: str) -> None:
    assert cpu_list(ids) == text


@given(st.sets(st.integers(0, 511)))
def test_cpu_list_round_trips(ids: set[int]) -> None:
    assert set(parse_cpu_list(cpu_list(ids))) == ids


@pytest.mark.parametrize(
    ("address", "parts"),
    [("0000:af:02.1", (0, 0xAF, 2, 1)), ("000A:0D:1F.7", (10, 13, 31, 7))],
)
def test_pci(address: str, parts: tuple[int, int, int, int]) -> None:
    pci = Pci.parse(address)
    assert (pci.domain, pci.bus, pci.slot, pci.function) == parts
    assert str(pci) == address.lower()


@pytest.mark.parametrize(
    ("kib", "name"), [(2048, "2M"), (1048576, "1G"), (64, "64K"), (32768, "32M")]
)
def test_page_size_name(kib: int, name: str) -> None:
    assert page_size_name(kib) == name


def test_missing_validator_fails_naming_the_packages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as info:
        virt_xml_validate("<domain/>", tmp_path)
    assert "libvirt-clients" in str(info.value)
    assert "libxml2-utils" in str(info.value)


def test_validator_rejects_an_invalid_domain(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="fails libvirt's schema"):
        virt_xml_validate("<domain type='kvm'><vcpu>2</vcpu></domain>", tmp_path)
