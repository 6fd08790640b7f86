"""Every VNF template rule, with member files resolved by a plain function (and from disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nfvplace.lint import lint_paths
from nfvplace.lint.rules.vnf import Outside
from nfvplace.models import VmDescriptor

from .cases import Case, check

MEMBER = VmDescriptor.model_validate(
    {
        "schema": "nfvplace/vmd/v1",
        "name": "lb",
        "vcpus": 2,
        "memory_mib": 1024,
        "interfaces": [{"name": "east", "speed_gbps": 10}, {"name": "west"}],
    }
)


def resolve(relative: str) -> VmDescriptor | str:
    if relative.startswith(("/", "..")):
        return Outside(f"{relative} lies outside the template's folder; not opened")
    return MEMBER if relative == "lb.yaml" else "cannot read file: No such file or directory"


def vnf(members: str, rest: str = "") -> str:
    return "schema: nfvplace/vnf/v1\nname: v\nmembers:\n" + members + rest


INLINE = (
    "  - name: worker\n    descriptor:\n      schema: nfvplace/vmd/v1\n      name: worker\n"
    "      vcpus: 1\n      memory_mib: 512\n      interfaces: [{name: east}, {name: mgmt}]\n"
)
FILE = "  - {name: lb, file: lb.yaml}\n"
LINK = "links:\n  - name: l1\n    endpoints: [{member: lb, interface: east}, {member: worker, interface: east}]\n"

CASES = [
    Case(
        "NFV701",
        "members[2].name",
        vnf(FILE + INLINE + "  - {name: lb, file: lb.yaml} #<\n"),
        vnf(FILE + INLINE + "  - {name: lb2, file: lb.yaml}\n"),
    ),
    Case(
        "NFV702",
        "links[0].endpoints[1].member",
        vnf(
            FILE + INLINE,
            "links:\n  - name: l1\n    endpoints:\n      - {member: lb, interface: east}\n"
            "      - {member: wrker, interface: east} #<\n",
        ),
        vnf(FILE + INLINE, LINK),
    ),
    Case(
        "NFV703",
        "links[0].endpoints[0].interface",
        vnf(
            FILE + INLINE,
            "links:\n  - name: l1\n    endpoints:\n      - {member: lb, interface: north} #<\n"
            "      - {member: worker, interface: east}\n",
        ),
        vnf(FILE + INLINE, LINK),
    ),
    Case(
        "NFV704",
        "members[0].file",
        vnf("  - {name: lb, file: missing.yaml} #<\n" + INLINE),
        vnf(FILE + INLINE),
    ),
    Case(
        "NFV705",
        "members[1]",
        vnf(
            FILE + INLINE.replace("  - name: worker\n", "  - name: worker #<\n    file: lb.yaml\n")
        ),
        vnf(FILE + INLINE),
    ),
    Case(
        "NFV706",
        "anti_affinity[0].members[1]",
        vnf(FILE + INLINE, "anti_affinity:\n  - members:\n      - lb\n      - workr #<\n"),
        vnf(FILE + INLINE, "anti_affinity:\n  - members: [lb, worker]\n"),
    ),
    Case(
        "NFV707",
        "links[1].name",
        vnf(
            FILE + INLINE,
            LINK
            + "  - name: l1 #<\n    endpoints: [{member: lb, interface: west}, {member: worker, interface: mgmt}]\n",
        ),
        vnf(
            FILE + INLINE,
            LINK
            + "  - name: l2\n    endpoints: [{member: lb, interface: west}, {member: worker, interface: mgmt}]\n",
        ),
    ),
    Case(
        "NFV708",
        "links[0].bandwidth_gbps",
        vnf(FILE + INLINE, LINK + "    bandwidth_gbps: 40 #<\n"),
        vnf(FILE + INLINE, LINK + "    bandwidth_gbps: 4\n"),
    ),
    Case(
        "NFV709",
        "links[0].locality",
        vnf(
            FILE + INLINE,
            LINK + "    locality: same_host #<\nanti_affinity:\n  - members: [lb, worker]\n",
        ),
        vnf(
            FILE + INLINE,
            LINK + "    locality: different_host\nanti_affinity:\n  - members: [lb, worker]\n",
        ),
    ),
    Case(
        "NFV710",
        "members[0].file",
        vnf("  - {name: lb, file: ../../etc/passwd} #<\n" + INLINE),
        vnf(FILE + INLINE),
    ),
    # Inline members are checked as VM Descriptors, under their own path.
    Case(
        "NFV302",
        "members[1].descriptor.interfaces[1].name",
        vnf(
            FILE
            + INLINE.replace(
                "[{name: east}, {name: mgmt}]",
                "\n        - {name: east}\n        - {name: east} #<",
            )
        ),
        vnf(FILE + INLINE),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case) -> None:
    check(case, resolve)


def test_member_files_are_resolved_from_disk(tmp_path: Path) -> None:
    (tmp_path / "vms").mkdir()
    (tmp_path / "vms" / "a.yaml").write_text(
        "schema: nfvplace/vmd/v1\nname: a\nvcpus: 1\nmemory_mib: 512\ninterfaces: [{name: e}]\n"
    )
    (tmp_path / "vms" / "host.yaml").write_text(
        "schema: nfvplace/chd/v1\nid: h\nprocessor: {vendor: V, model: M}\n"
        "numa_nodes: [{id: 0, memory: {total_mib: 1}}]\n"
    )
    template = tmp_path / "vnf.yaml"
    template.write_text(
        "schema: nfvplace/vnf/v1\nname: v\nmembers:\n"
        "  - {name: a, file: vms/a.yaml}\n"
        "  - {name: b, file: vms/host.yaml}\n"
        "  - {name: c, file: vms/nope.yaml}\n"
        "links:\n  - {name: l, endpoints: [{member: a, interface: e}, {member: a, interface: x}]}\n"
    )
    report = lint_paths([template])
    found = {(f.rule, f.path) for f in report.findings}
    assert ("NFV704", "members[1].file") in found
    assert ("NFV704", "members[2].file") in found
    assert ("NFV703", "links[0].endpoints[1].interface") in found
    assert ("NFV704", "members[0].file") not in found
    messages = {f.path: f.message for f in report.findings}
    assert "not a VM Descriptor" in messages["members[1].file"]
    assert "nfvplace.input.unreadable" in messages["members[2].file"]
