"""What libvirt's running domains hold on this host: pinned PUs and PCI devices, per domain.

Read from libvirt's Python binding when it is installed, else from `virsh list`/`virsh dumpxml`,
or from a folder of domain XML files (`--libvirt-xml`, for tests and hosts where the agent cannot
reach libvirt). A vCPU or emulator thread pinned to one PU holds that PU; one pinned to a range
floats over shared PUs and holds none. PCI devices are `<hostdev>` and `<interface type='hostdev'>`
sources. nfvplace names a domain after the instance it placed (`nfvplace render --format
libvirt`), so a domain's name is the owner the inventory knows it by.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
VIRSH_TIMEOUT_S = 20


@dataclass(frozen=True)
class Domain:
    name: str
    pus: frozenset[int] = field(
        default_factory=frozenset
    )  # PUs its threads are pinned to, one each
    pci: frozenset[str] = field(
        default_factory=frozenset
    )  # PCI addresses it was given (lower case)


class DomainsUnreadableError(Exception):
    """libvirt cannot be read here (not installed, no daemon, no permission): the message says."""


def _cpuset(text: str | None) -> set[int] | None:
    """`"3"` -> {3}; a list or range (`"2-5,^3"`) is floating, not pinned: None."""
    if text is None or not text.strip().isdigit():
        return None
    return {int(text)}


def _address(node: etree._Element) -> str | None:
    parts = [node.get(k) for k in ("domain", "bus", "slot", "function")]
    if any(p is None for p in parts):
        return None
    try:
        domain, bus, slot, function = (int(str(p), 0) for p in parts)
    except ValueError:
        return None
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function:x}"


def parse_domain(text: str | bytes, source: str) -> Domain:
    """One domain from its XML (`virsh dumpxml`); raises DomainsUnreadableError naming `source`."""
    try:
        root = etree.fromstring(text.encode() if isinstance(text, str) else text, PARSER)
    except etree.XMLSyntaxError as exc:
        raise DomainsUnreadableError(f"{source}: not a libvirt domain XML: {exc}") from None
    name = root.findtext("name")
    if root.tag != "domain" or not name:
        raise DomainsUnreadableError(f"{source}: not a libvirt domain XML (no <domain><name>)")
    pus: set[int] = set()
    for pin in root.iterfind("cputune/*"):
        if pin.tag in ("vcpupin", "emulatorpin", "iothreadpin"):
            pus |= _cpuset(pin.get("cpuset")) or set()
    pci = set()
    for node in root.iterfind("devices/hostdev/source/address"):
        pci.add(_address(node))
    for node in root.iterfind("devices/interface[@type='hostdev']/source/address"):
        pci.add(_address(node))
    return Domain(name.strip(), frozenset(pus), frozenset(a for a in pci if a))


def from_folder(folder: Path) -> list[Domain]:
    """Every `*.xml` of a folder, as the running domains."""
    try:
        files = sorted(folder.glob("*.xml"))
    except OSError as exc:
        raise DomainsUnreadableError(f"cannot read {folder}: {exc}") from None
    return [parse_domain(path.read_bytes(), str(path)) for path in files]


def _from_binding() -> list[Domain] | None:
    try:
        import libvirt  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        conn = libvirt.openReadOnly("qemu:///system")
        try:
            running = conn.listAllDomains(libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE)
            return [parse_domain(d.XMLDesc(0), f"libvirt domain {d.name()}") for d in running]
        finally:
            conn.close()
    except libvirt.libvirtError as exc:
        raise DomainsUnreadableError(f"libvirt: {exc}") from None


def _virsh(*args: str) -> str:
    try:
        done = subprocess.run(
            ["virsh", "-r", "-c", "qemu:///system", *args],
            capture_output=True,
            text=True,
            timeout=VIRSH_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DomainsUnreadableError(f"virsh: {exc}") from None
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise DomainsUnreadableError(f"virsh {' '.join(args)}: {last}")
    return done.stdout


def _from_virsh() -> list[Domain]:
    if shutil.which("virsh") is None:
        raise DomainsUnreadableError("neither libvirt's Python binding nor virsh is installed")
    names: Iterable[str] = (n.strip() for n in _virsh("list", "--name").splitlines())
    return [parse_domain(_virsh("dumpxml", n), f"virsh dumpxml {n}") for n in names if n]


def running_domains(folder: Path | None = None) -> list[Domain]:
    """The running domains (from `folder` when given); raises DomainsUnreadableError."""
    if folder is not None:
        return from_folder(folder)
    found = _from_binding()
    return found if found is not None else _from_virsh()
