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
