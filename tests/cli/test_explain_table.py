"""`place --explain`: one row per host, in plain words, on stderr; stdout keeps the configuration."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.cli.why import MAX_ROWS, host_table

_register()
ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet"
VMS = ROOT / "examples" / "vms"


def _explain(vm: str) -> tuple[dict[str, object], list[str]]:
    result = CliRunner().invoke(
        app, ["place", "--hosts", str(FLEET), "--vm", str(VMS / vm), "--explain"]
    )
    assert result.exit_code == 0, result.stderr
    return yaml.safe_load(result.stdout), result.stderr.splitlines()


def test_the_table_names_every_host_once_with_the_winner_first() -> None:
    config, lines = _explain("sriov-small.yaml")
    table = [line for line in lines if not line.startswith("#")]
    assert table[0].split() == ["host", "verdict", "why"]
    rows = {line.split()[0]: line for line in table[1:]}
    assert sorted(rows) == sorted(p.stem for p in FLEET.glob("*.yaml"))
    assert table[1].split()[:2] == [config["host"], "chosen"]
    assert "free" in table[1]
    # the two hosts without SMT cannot pair the VM's threads: said with the reason's code
    rejected = [line for line in table[1:] if " rejected " in line]
    assert len(rejected) == 2
    assert all("[smt]" in line for line in rejected)
    fits = [line for line in table[1:] if "fits, not chosen" in line]
    assert len(fits) == len(table) - 1 - 1 - 2
    assert all(f"ranked after {config['host']}" in line for line in fits)
    # the engine's own scoring lines follow the table
    assert any(line.startswith("# placed:") for line in lines)


def test_a_rejected_host_gives_its_numbers() -> None:
    _, lines = _explain("vran-du.yaml")
    rejected = [line for line in lines if " rejected " in line]
    assert rejected
    assert all("not compatible with" in line for line in rejected)


def test_large_fleets_are_cut_to_a_readable_table_that_keeps_the_winner() -> None:
    hosts = [h for h in nfvplace.load(FLEET) if isinstance(h, nfvplace.ComputeHostDescriptor)]
    # only compute-08's processor suits the vRAN DU: put it last, after 54 hosts that cannot
    others = [h for h in hosts if h.id != "compute-08"]
    many = [h.model_copy(update={"id": f"{h.id}-{k}"}) for k in range(6) for h in others]
    many += [h for h in hosts if h.id == "compute-08"]
    vm = nfvplace.load(VMS / "vran-du.yaml")
    assert isinstance(vm, nfvplace.VmDescriptor)
    result = nfvplace.place(many, vm)
    winner = result.configurations[0].host
    assert winner == "compute-08"
    lines = host_table(many, vm, result, policy="pack", seed=0)
    assert len(lines) == 1 + MAX_ROWS + 1
    assert lines[1].split()[:2] == [winner, "chosen"]
    assert lines[-1] == f"... and {len(many) - MAX_ROWS} more hosts (the table shows {MAX_ROWS})"


def test_a_vnf_is_explained_vm_by_vm_with_what_each_instance_was_given() -> None:
    result = CliRunner().invoke(
        app,
        [
            "place",
            "--hosts",
            str(FLEET),
            "--vm",
            str(ROOT / "examples" / "vnf" / "ran-site.yaml"),
            "--explain",
        ],
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    placed = yaml.safe_load(result.stdout)
    configs = placed.get("configurations", placed)
    du = next(c for c in configs if c["vm"] == "vran-du")
    # a table per VM of the template, naming every host with its verdict
    header = lines.index(f"VM vran-du (placed on {du['host']}):")
    rows = lines[header + 2 : header + 2 + len(list(FLEET.glob("*.yaml")))]
    assert rows[0].split()[:2] == [du["host"], "chosen"]
    assert all("[" in row for row in rows if " rejected " in row)  # each with its reason code
    # what the DU was given: its node, every vCPU's PU, the hugepages, the VFs and their ports
    said = "\n".join(lines)
    cs = du["cpu_sets"][0]
    assert f"cpu-set 0 on NUMA node {cs['numa_node']}" in said
    pins = ", ".join(f"{v}->{p}" for v, p in sorted(cs["vcpu_pins"].items()))
    assert pins in said
    assert f"{cs['hugepages']['count']} x 1GiB hugepages" in said
    vf = next(i for i in du["interfaces"] if i["mode"] == "sriov")
    assert f"{vf['pci_address']} (a VF of port {vf['physical_function']})" in said


def test_one_vm_is_shown_with_its_pus_pages_and_vfs() -> None:
    config, lines = _explain("sriov-small.yaml")
    said = "\n".join(lines)
    cs = config["cpu_sets"][0]
    assert ", ".join(f"{v}->{p}" for v, p in sorted(cs["vcpu_pins"].items())) in said
    for interface in config["interfaces"]:
        if interface.get("pci_address"):
            assert interface["pci_address"] in said
