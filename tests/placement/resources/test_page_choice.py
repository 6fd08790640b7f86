"""Page sizes chosen on the node (`hugepages.size: large|any`): Nova's largest size that fits."""

from __future__ import annotations

import pytest
from builders import NodeSpec, host
from checker import violations

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models.vmd import VmDescriptor


def _vm(size: str, memory_mib: int, **extra: object) -> VmDescriptor:
    cpu_set = {"id": 0, "vcpus": [0, 1], "memory_mib": memory_mib, "hugepages": {"size": size}}
    return VmDescriptor.model_validate(
        {
            "schema": "nfvplace/vmd/v1",
            "name": "p",
            "hypervisor": {"type": "kvm"},
            "cpu_sets": [cpu_set | extra],
        }
    )


@pytest.mark.parametrize(
    ("size", "memory_mib", "one_gib", "two_mib", "expected"),
    [
        ("large", 2048, 2, 1024, (1048576, 2)),  # the largest size that holds it
        ("large", 2048, 1, 1024, (2048, 1024)),  # 1 GiB pages short: 2 MiB pages
        ("large", 1536, 4, 1024, (2048, 768)),  # not whole GiB: 2 MiB pages
        ("any", 2048, 1, 0, None),  # no size holds it: normal memory
        ("any", 1024, 1, 0, (1048576, 1)),
    ],
)
def test_the_largest_page_size_that_holds_the_memory(
    size: str,
    memory_mib: int,
    one_gib: int,
    two_mib: int,
    expected: tuple[int, int] | None,
) -> None:
    h = host(nodes=[NodeSpec(hugepages_1g=one_gib, hugepages_2m=two_mib)])
    vm = _vm(size, memory_mib)
    result = nfvplace.place([h], vm)
    assert result.ok, result.diagnosis
    pages = result.configuration.cpu_sets[0].hugepages
    assert (None if pages is None else (pages.size_kib, pages.count)) == expected
    assert violations([h], vm, result.configurations) == []
    assert release(claim(h, result.configuration), result.configuration) == h


def test_large_refuses_a_node_with_no_size_that_holds_it_and_says_how_much() -> None:
    h = host(nodes=[NodeSpec(hugepages_1g=1, hugepages_2m=100)])
    result = nfvplace.place([h], _vm("large", 2048))
    assert not result.ok
    assert result.diagnosis is not None
    (rejection,) = result.diagnosis.rejections
    assert rejection.reason == "hugepages"
    assert (rejection.requested, rejection.available) == (2048, 1024)


def test_a_size_word_takes_no_count() -> None:
    with pytest.raises(ValueError, match="give no count"):
        _vm("large", 2048, hugepages={"size": "large", "count": 2})
