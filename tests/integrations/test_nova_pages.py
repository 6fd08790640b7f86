"""The plug-in answers by itself the hosts a request's hugepages rule out (`integrations/nova/pages`):
every host it refuses, the service refuses too, in the engine's words where hugepages are the
service's reason; what it cannot read plainly goes to the service."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench.nova_candidates import FLAVORS, host
from nfvplace.conversion import convert
from nfvplace.integrations.nova.hosts import chd_of
from nfvplace.integrations.nova.pages import PagesAsked, pages_asked
from nfvplace.models import ComputeHostDescriptor, VmDescriptor
from nfvplace.placement import evaluate, index_of


def _document(specs: dict[str, str], ram: int = 4096, **more: Any) -> dict[str, Any]:
    flavor = {"name": "f", "vcpus": 4, "ram": ram, "disk": 0, "extra_specs": specs}
    return {"flavor": flavor, **more}


@pytest.mark.parametrize(
    ("document", "asked"),
    [
        (_document({"hw:mem_page_size": "2MB"}), PagesAsked(2048, 2048)),
        (_document({"hw:mem_page_size": "2048"}), PagesAsked(2048, 2048)),
        (_document({"hw:mem_page_size": "1GB", "hw:numa_nodes": "1"}), PagesAsked(1048576, 4)),
        (
            _document({"hw:cpu_policy": "dedicated", "hw:mem_page_size": "1GB"}),
            PagesAsked(1 << 20, 4),
        ),
        (_document({"hw:mem_page_size": "1GB"}, ram=1536), None),  # the service says why
        (_document({"hw:mem_page_size": "2MB", "hw:numa_nodes": "2"}), None),
        (_document({"hw:mem_page_size": "large"}), None),
        (_document({"hw:mem_page_size": "small"}), None),
        (_document({"hw:mem_page_size": "4"}), None),
        (_document({"hw:mem_page_size": "3MB"}), None),
        (_document({"hw:mem_page_size": "2mb"}), None),
        (_document({"hw:mem_page_size": "2MB", "hw:numa_mem.0": "4096"}), None),
        (_document({"hw:mem_page_size": "2MB"}, image={"properties": {"hw_numa_nodes": 1}}), None),
        (_document({"hw:mem_page_size": "2MB"}, pci_requests=[]), None),
        (_document({"hw:cpu_policy": "dedicated"}), None),
    ],
)
def test_only_a_plainly_read_page_size_on_one_node_is_answered_here(
    document: dict[str, Any], asked: PagesAsked | None
) -> None:
    assert pages_asked(document) == asked


def _cells(view: dict[str, Any]) -> tuple[Any, ...]:
    """A host view's cells as `hosts.cell_pages` gives them (each one's id and page pools)."""
    return tuple((c["id"], tuple(tuple(p.values()) for p in c["mempages"])) for c in view["cells"])


def _pools(*pools: tuple[int, int, int, int]) -> tuple[Any, ...]:
    return (0, pools)


@pytest.mark.parametrize(
    ("cells", "refused"),
    [
        ((), False),  # no NUMA topology: the service decides
        ((_pools((4, 9, 0, 0), (2048, 4096, 2048, 0)),), False),  # 2048 free: fits
        ((_pools((4, 9, 0, 0), (2048, 4096, 2049, 0)),), True),
        ((_pools((4, 9, 0, 0), (2048, 4096, 2000, 49)),), True),  # reserved pages are used
        ((_pools((4, 9, 0, 0), (2048, 100, 0, 200)),), True),  # more reserved than there are
        ((_pools((4, 9, 0, 0)),), False),  # no pool of the size: the service decides
        ((_pools((2048, 10, 0, 0)),), False),  # the smallest pool is normal memory
        ((_pools((4, 9, 0, 0), (2048, 10, 0, 0), (2048, 10, 0, 0)),), False),
        ((_pools((4, 9, 0, 0), (2048, 10, 0, 0)), _pools((4, 9, 0, 0))), False),
    ],
)
def test_a_host_is_refused_only_when_every_cell_plainly_lacks_the_pages(
    cells: tuple[Any, ...], refused: bool
) -> None:
    assert (PagesAsked(2048, 2048).refusal(cells) is not None) is refused


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(
    "flavor",
    [
        *(f for f in FLAVORS if f["name"] in ("pinned", "shared")),
        {"name": "one-g", "vcpus": 2, "ram": 8192, "extra_specs": {"hw:mem_page_size": "1GB"}},
    ],
    ids=lambda f: f["name"],
)
def test_every_host_refused_here_the_service_refuses_in_the_same_words(
    flavor: dict[str, Any], seed: int
) -> None:
    document = _document(flavor["extra_specs"], ram=flavor["ram"])
    document["flavor"]["vcpus"] = flavor["vcpus"]
    asked = pages_asked(document)
    assert asked is not None
    rng = random.Random(seed)
    views = [host(rng, f"compute-{k:04d}") for k in range(150)]
    for view in views:  # some pages reserved, some pools short of their used and reserved
        for pool in (p for c in view["cells"] for p in c["mempages"][1:]):
            pool["reserved"] = rng.choice((0, 0, rng.randint(0, pool["total"] // 2 + 2)))
    vm = VmDescriptor.model_validate(convert(document, to="nfvplace").data)
    fleet = index_of([ComputeHostDescriptor.model_validate(chd_of(v)) for v in views])
    answers = evaluate(fleet, vm, configurations=False)
    refused = 0
    for view, answer in zip(views, answers, strict=True):
        reason = asked.refusal(_cells(view))
        if reason is None:
            continue
        refused += 1
        assert not answer.fits, view["host"]
        if answer.reasons[0].reason == "hugepages":
            assert reason == answer.reasons[0].message
    assert refused >= 3
