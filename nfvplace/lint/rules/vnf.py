"""VNF template rules: members, their files and the links between them (NFV701-NFV719)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from ... import errors
from ...models.vmd import VmDescriptor
from ...models.vnf import LinkEndpoint, VnfLink, VnfTemplate
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "vnf"
CLAUSE = "8.2.1"

Resolver = Callable[[str], VmDescriptor | str]
"""Loads a member file (relative to the template): the VM Descriptor, or why it cannot be loaded."""


class Outside(str):
    """Why a member file was not opened: it lies outside the template's folder."""

    __slots__ = ()


MEMBER_DUPLICATE = Rule(
    "NFV701",
    Severity.error,
    FAMILY,
    "Two members of the VNF template have the same name",
    "give every member its own name",
    CLAUSE,
)
LINK_UNKNOWN_MEMBER = Rule(
    "NFV702",
    Severity.error,
    FAMILY,
    "A link endpoint names a member the template does not have",
    "name one of the template's members",
    CLAUSE,
)
LINK_UNKNOWN_INTERFACE = Rule(
    "NFV703",
    Severity.error,
    FAMILY,
    "A link endpoint names an interface the member's VM Descriptor does not have",
    "name one of the member's interfaces",
    CLAUSE,
)
MEMBER_FILE_BROKEN = Rule(
    "NFV704",
    Severity.error,
    FAMILY,
    "A member's file cannot be loaded as a valid VM Descriptor",
    "fix the path (relative to the template) or the file it points to",
    CLAUSE,
)
MEMBER_BOTH_SOURCES = Rule(
    "NFV705",
    Severity.error,
    FAMILY,
    "A member gives both an inline descriptor and a file",
    "keep one: 'descriptor' (inline) or 'file'",
    CLAUSE,
)
ANTI_AFFINITY_UNKNOWN = Rule(
    "NFV706",
    Severity.error,
    FAMILY,
    "An anti-affinity group names a member the template does not have",
    "name members of the template",
    CLAUSE,
)
LINK_DUPLICATE = Rule(
    "NFV707",
    Severity.error,
    FAMILY,
    "Two links of the template have the same name",
    "give every link its own name",
    CLAUSE,
)
LINK_OVER_SPEED = Rule(
    "NFV708",
    Severity.error,
    FAMILY,
    "A link needs more bandwidth than one of its endpoint interfaces can carry",
    "lower the link's bandwidth_gbps or use faster interfaces",
    CLAUSE,
)
ANTI_AFFINITY_SAME_HOST = Rule(
    "NFV709",
    Severity.error,
    FAMILY,
    "A same_host link joins members that an anti-affinity group keeps on different hosts",
    "drop the link's locality or the anti-affinity group",
    CLAUSE,
)

MEMBER_FILE_OUTSIDE = Rule(
    "NFV710",
    Severity.error,
    FAMILY,
    "A member's file lies outside the template's folder (an absolute path, or '..' above it): "
    "it is not opened",
    "copy the file into the template's folder (or one below it) and give its path relative to "
    "the template, e.g. members/du.yaml",
    CLAUSE,
    errors.INPUT_REFERENCE,
)

RULES = (
    MEMBER_DUPLICATE,
    LINK_UNKNOWN_MEMBER,
    LINK_UNKNOWN_INTERFACE,
    MEMBER_FILE_BROKEN,
    MEMBER_BOTH_SOURCES,
    ANTI_AFFINITY_UNKNOWN,
    LINK_DUPLICATE,
    LINK_OVER_SPEED,
    ANTI_AFFINITY_SAME_HOST,
    MEMBER_FILE_OUTSIDE,
)


def member_descriptors(
    template: VnfTemplate, resolve: Resolver | None
) -> tuple[dict[str, VmDescriptor], list[Hit]]:
    """Each member's VM Descriptor (inline or loaded), and the hits for members that fail."""
    found: dict[str, VmDescriptor] = {}
    hits: list[Hit] = []
    for index, member in enumerate(template.members):
        if member.descriptor is not None and member.file is not None:
            hits.append(
                MEMBER_BOTH_SOURCES.hit(
                    ("members", index), f"member '{member.name}' has a descriptor and a file"
                )
            )
        if member.descriptor is not None:
            found.setdefault(member.name, member.descriptor)
        elif member.file is not None and resolve is not None:
            loaded = resolve(member.file)
            if isinstance(loaded, VmDescriptor):
                found.setdefault(member.name, loaded)
            elif isinstance(loaded, Outside):
                hits.append(
                    MEMBER_FILE_OUTSIDE.hit(
                        ("members", index, "file"), f"member '{member.name}': {loaded}"
                    )
                )
            else:
                hits.append(
                    MEMBER_FILE_BROKEN.hit(
                        ("members", index, "file"),
                        f"member '{member.name}': {member.file}: {loaded}",
                    )
                )
    return found, hits


def check_vnf(template: VnfTemplate, resolve: Resolver | None = None) -> Iterator[Hit]:
    names: dict[str, int] = {}
    for index, member in enumerate(template.members):
        if member.name in names:
            yield MEMBER_DUPLICATE.hit(
                ("members", index, "name"),
                f"member '{member.name}' is also members[{names[member.name]}]",
            )
        else:
            names[member.name] = index
    descriptors, hits = member_descriptors(template, resolve)
    yield from hits
    link_names: dict[str, int] = {}
    for index, link in enumerate(template.links):
        if link.name in link_names:
            yield LINK_DUPLICATE.hit(
                ("links", index, "name"),
                f"link '{link.name}' is also links[{link_names[link.name]}]",
            )
        else:
            link_names[link.name] = index
        for e, endpoint in enumerate(link.endpoints):
            yield from _endpoint(link, ("links", index), e, endpoint, names, descriptors)
    yield from _anti_affinity(template, names)


def _endpoint(
    link: VnfLink,
    at: tuple[str, int],
    e: int,
    endpoint: LinkEndpoint,
    names: Mapping[str, int],
    descriptors: Mapping[str, VmDescriptor],
) -> Iterator[Hit]:
    """An endpoint names a member, and an interface of it fast enough for the link."""
    path = (*at, "endpoints", e)
    if endpoint.member not in names:
        yield LINK_UNKNOWN_MEMBER.hit(
            (*path, "member"),
            f"link '{link.name}' names member '{endpoint.member}' (members: {sorted(names)})",
        )
        return
    vm = descriptors.get(endpoint.member)
    if vm is None:
        return
    interfaces = {i.name: i for i in vm.all_interfaces}
    interface = interfaces.get(endpoint.interface)
    if interface is None:
        yield LINK_UNKNOWN_INTERFACE.hit(
            (*path, "interface"),
            f"member '{endpoint.member}' ({vm.name}) has no interface "
            f"'{endpoint.interface}' (it has {sorted(interfaces)})",
        )
    elif (
        link.bandwidth_gbps is not None
        and interface.speed_gbps is not None
        and link.bandwidth_gbps > interface.speed_gbps
    ):
        yield LINK_OVER_SPEED.hit(
            (*at, "bandwidth_gbps"),
            f"link '{link.name}' needs {link.bandwidth_gbps:g} Gbps but "
            f"{endpoint.member}.{endpoint.interface} is a {interface.speed_gbps:g} Gbps "
            "interface",
        )


def _anti_affinity(template: VnfTemplate, names: Mapping[str, int]) -> Iterator[Hit]:
    """Anti-affinity groups name members, and no same-host link joins two members they part."""
    apart: set[frozenset[str]] = set()
    for index, group in enumerate(template.anti_affinity):
        for m, name in enumerate(group.members):
            if name not in names:
                yield ANTI_AFFINITY_UNKNOWN.hit(
                    ("anti_affinity", index, "members", m),
                    f"anti-affinity group names member '{name}' (members: {sorted(names)})",
                )
        apart |= {frozenset((a, b)) for a in group.members for b in group.members if a != b}
    for index, link in enumerate(template.links):
        if link.locality.value != "same_host":
            continue
        members = [e.member for e in link.endpoints]
        clash = [
            (a, b)
            for i, a in enumerate(members)
            for b in members[i + 1 :]
            if frozenset((a, b)) in apart
        ]
        if clash:
            a, b = clash[0]
            yield ANTI_AFFINITY_SAME_HOST.hit(
                ("links", index, "locality"),
                f"link '{link.name}' wants '{a}' and '{b}' on the same host, an anti-affinity "
                "group wants them apart",
            )
