"""`nfvplace discover --hwloc-xml FILE --set KEY=VALUE --defaults FILE`: facts an export cannot know."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from nfvplace.cli import _register, app
from nfvplace.discovery.given import Fact, apply_facts, parse_set
from nfvplace.errors import NfvplaceError

_register()
XML = Path(__file__).resolve().parents[1] / "data" / "hwloc-xml" / "16intel64-manyVFs.xml"


def test_defaults_and_sets_fill_the_export_and_say_where_from(tmp_path: Path) -> None:
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text(
        "hypervisor.type: kvm\nprocessor.flags: [avx2]\n"
        "'numa_nodes[*].nics[*].ports[*].speed_gbps': 25\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "discover",
            "--hwloc-xml",
            str(XML),
            "--defaults",
            str(defaults),
            "--set",
            "numa_nodes[*].memory.hugepages[*].used=0",
        ],
    )
    assert result.exit_code == 0, result.stderr
    chd = yaml.safe_load(result.stdout)
    assert chd["hypervisor"]["type"] == "kvm"
    assert chd["processor"]["flags"] == ["avx2"]
    speeds = {
        p["speed_gbps"] for n in chd["numa_nodes"] for c in n.get("nics", []) for p in c["ports"]
    }
    assert speeds == {25}
    notes = chd["provenance"]["notes"]
    assert any(n.startswith("hypervisor.type = 'kvm' from ") and str(defaults) in n for n in notes)
    assert any("from --set" in n for n in notes)
    assert "hypervisor" not in chd["provenance"]["unknown"]


def test_a_bad_value_names_the_field() -> None:
    result = CliRunner().invoke(
        app, ["discover", "--hwloc-xml", str(XML), "--set", "hypervisor.type=xen9"]
    )
    assert result.exit_code == 1
    assert "hypervisor.type" in result.stderr
    assert "did you mean 'xen'" in result.stderr


@pytest.mark.parametrize("text", ["novalue", "=3", "a..b=1", "[0]=1"])
def test_bad_keys_are_refused(text: str) -> None:
    def apply() -> None:
        apply_facts({"id": "h"}, [parse_set(text)])

    with pytest.raises(NfvplaceError):
        apply()


def test_defaults_never_override_but_set_does() -> None:
    chd = {"hypervisor": {"type": "xen"}, "provenance": {"unknown": []}}
    kept, warnings = apply_facts(chd, [Fact("hypervisor.type", "kvm", "d.yaml", override=False)])
    assert kept["hypervisor"]["type"] == "xen"
    assert warnings
    changed, _ = apply_facts(chd, [Fact("hypervisor.type", "kvm", "--set")])
    assert changed["hypervisor"]["type"] == "kvm"
    assert chd["hypervisor"]["type"] == "xen"  # the input is not changed
