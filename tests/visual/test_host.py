"""Host pictures: every PU, port and VF drawn with its state, and the placed VMs overlaid."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from hwloc_corpus import corpus_file

import nfvplace
from nfvplace.discovery import chd_from_hwloc_xml
from nfvplace.errors import NfvplaceError
from nfvplace.models import ComputeHostDescriptor, VmConfiguration
from nfvplace.visual import host_svg, hosts_svg, to_png
from nfvplace.visual.host import cpu_state, port_state

from .conftest import EXAMPLES

SVG = "{http://www.w3.org/2000/svg}"
Placed = tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]


def _elements(svg: str) -> dict[str, ElementTree.Element]:
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return {e.get("id", ""): e for e in root.iter(f"{SVG}g") if e.get("id")}


def _classes(element: ElementTree.Element) -> set[str]:
    return set((element.get("class") or "").split())


def _labels(element: ElementTree.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def test_every_pu_port_and_vf_has_its_state(placed: Placed) -> None:
    host, configs = placed
    drawn = _elements(host_svg(host, configs))
    for cpu in host.cpus:
        assert {"pu", cpu_state(cpu)} <= _classes(drawn[f"pu-{cpu.id}"]), cpu
    for node in host.numa_nodes:
        assert f"numa-{node.id}" in drawn
        for port in node.ports:
            assert {"port", port_state(port)} <= _classes(drawn[f"dev-{port.pci_address}"])
            for vf in port.vfs:
                state = "dedicated" if vf.in_use else "free"
                assert {"vf", state} <= _classes(drawn[f"dev-{vf.pci_address}"])
    states = {cpu_state(cpu) for cpu in host.cpus}
    assert states == {"free", "ineligible", "dedicated", "shared"}  # the host shows all four


def test_pins_and_interfaces_of_a_real_placement_are_overlaid(placed: Placed) -> None:
    host, configs = placed
    drawn = _elements(host_svg(host, configs))
    for k, config in enumerate(configs):
        assert config.cpu_sets, config
        for cs in config.cpu_sets:
            for vcpu, pu in cs.vcpu_pins.items():
                element = drawn[f"pu-{pu}"]
                assert {"dedicated", "vm", f"vm-{k}"} <= _classes(element)
                assert f"v{vcpu}" in _labels(element)
        devices = [i for i in config.interfaces if i.pci_address]
        assert devices, "the example VMs use ports or VFs"
        for iface in devices:
            assert f"vm-{k}" in _classes(drawn[f"dev-{iface.pci_address}"]), iface
    legend = ElementTree.fromstring(host_svg(host, configs))
    names = " ".join(t.text or "" for t in legend.iter(f"{SVG}text"))
    for config in configs:
        assert config.owner in names


def test_a_host_file_from_before_placement_is_drawn_claimed(
    dell: ComputeHostDescriptor, placed: Placed
) -> None:
    after, configs = placed
    assert host_svg(dell, configs) == host_svg(after, configs)
    assert host_svg(dell) != host_svg(after)


def test_a_configuration_for_another_host_is_refused(placed: Placed) -> None:
    host, configs = placed
    other = host.model_copy(update={"id": "elsewhere"})
    with pytest.raises(NfvplaceError) as caught:
        host_svg(other, configs)
    assert caught.value.code == "nfvplace.input.reference"
    assert "is for host" in str(caught.value)


@pytest.mark.parametrize(
    "name",
    ["x86cpuid-AMD-19h-Zen4-2xEpyc-9654.xml", "192em64t-24n8c2t.xml", "16intel64-manyVFs.xml"],
)
def test_hwloc_corpus_hosts_draw_every_pu(name: str) -> None:
    host = chd_from_hwloc_xml(corpus_file(name))
    drawn = _elements(host_svg(host))
    assert sum(1 for key in drawn if key.startswith("pu-")) == len(host.cpus)


def test_png_of_the_same_picture(placed: Placed) -> None:
    host, configs = placed
    svg = host_svg(host, configs)
    png = to_png(svg)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    root = ElementTree.fromstring(svg)
    assert (width, height) == (
        round(float(root.get("width", 0))),
        round(float(root.get("height", 0))),
    )
    assert 800 < width < 2000
    assert 300 < height < 2000


def test_placement_result_and_host_show_in_notebooks(
    dell: ComputeHostDescriptor, placed: Placed
) -> None:
    assert ElementTree.fromstring(dell._repr_svg_()).tag == f"{SVG}svg"
    result = nfvplace.place([dell], nfvplace.load(EXAMPLES / "vms" / "vran-du.yaml"))
    picture = result._repr_svg_()
    assert picture is not None
    assert result._repr_html_() is None
    assert {"vm", "vm-0"} <= _classes(
        _elements(picture)[f"pu-{next(iter(result.configuration.pinned_cpus))}"]
    )
    several = ElementTree.fromstring(hosts_svg([dell, placed[0]], placed[1]))
    machines = [g.get("data-host") for g in several.iter(f"{SVG}g") if "machine" in _classes(g)]
    assert machines == [dell.id, dell.id]
    ids = [g.get("id") for g in several.iter(f"{SVG}g") if g.get("id")]
    assert len(ids) == len(set(ids))
    assert f"h1-pu-{dell.cpus[0].id}" in ids


def test_a_shared_cpu_vm_shows_its_legend_colour_on_its_shared_pus(
    dell: ComputeHostDescriptor,
) -> None:
    result = nfvplace.place([dell], nfvplace.load(EXAMPLES / "vms" / "cloud-vm.yaml"))
    config = result.configuration
    assert config.shared is not None
    assert not config.cpu_sets  # only floating vCPUs: nothing pinned to show
    root = ElementTree.fromstring(host_svg(dell, [config]))
    (legend,) = [g for g in root.iter(f"{SVG}g") if "legend-vm" in _classes(g)]
    colour = next(legend.iter(f"{SVG}rect")).get("fill")
    drawn = _elements(host_svg(dell, [config]))
    for pu in config.shared.cpus:
        element = drawn[f"pu-{pu}"]
        assert {"shared", "vm-shared", "vm-0"} <= _classes(element)
        assert colour in {r.get("fill") for r in element.iter(f"{SVG}rect")}


@pytest.mark.parametrize(
    "model",
    [
        "Ethernet Controller E810-XXV for SFP (synthetic)",
        "Ethernet Controller X710 for 10GbE SFP+ with a very long marketing name (rev 02, OEM)",
    ],
)
def test_a_nic_label_is_never_cut(model: str) -> None:
    host = nfvplace.load(EXAMPLES / "hosts" / "dell-r740-2s-gold-6230-snc2.yaml")
    assert isinstance(host, ComputeHostDescriptor)
    nic = host.numa_nodes[0].nics[0].model_copy(update={"model": model})
    node = host.numa_nodes[0].model_copy(update={"nics": (nic,)})
    host = host.model_copy(update={"numa_nodes": (node, *host.numa_nodes[1:])})
    texts = [t.text or "" for t in ElementTree.fromstring(host_svg(host)).iter(f"{SVG}text")]
    drawn = " ".join(t for t in texts if t.startswith("NIC") or model.split()[-1] in t)
    for word in f"NIC {nic.vendor} {model}".split():
        assert word in drawn, (word, texts)


def test_text_fits_the_width_it_is_given() -> None:
    from nfvplace.visual.svg import BOLD_EM, fit_line, fit_lines

    lines = fit_lines("NIC Intel Corporation Ethernet Controller E810-XXV (x)", 200, 8.5, bold=True)
    assert len(lines) > 1
    assert all(len(line) * 8.5 * BOLD_EM <= 200 for line in lines)
    assert fit_line("0000:18:00.0 a device model name far too long", 60, 8).endswith("\u2026")
