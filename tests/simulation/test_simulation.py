"""Simulation: seeded traces, replay per policy (acceptance, stranded capacity, latency), plots, CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import nfvplace
from nfvplace.cli import _register, app
from nfvplace.errors import DescriptorError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.simulation import make_trace, read_trace, simulate, write_trace
from nfvplace.simulation.plot import plot, to_csv

ROOT = Path(__file__).resolve().parents[2]
_register()
runner = CliRunner()


def _fleet() -> list[ComputeHostDescriptor]:
    hosts = nfvplace.load(ROOT / "examples" / "fleet")
    assert isinstance(hosts, list)
    return hosts  # type: ignore[return-value]


def _vms() -> list[VmDescriptor]:
    out = []
    for name in ("cloud-vm.yaml", "sriov-small.yaml"):
        vm = nfvplace.load(ROOT / "examples" / "vms" / name)
        assert isinstance(vm, VmDescriptor)
        out.append(vm)
    return out


def test_trace_is_seeded_ordered_and_departs_only_what_arrived(tmp_path: Path) -> None:
    trace = make_trace(["a", "b"], 500, seed=3, rate=2.0, lifetime=10.0)
    assert trace == make_trace(["a", "b"], 500, seed=3, rate=2.0, lifetime=10.0)
    assert trace != make_trace(["a", "b"], 500, seed=4, rate=2.0, lifetime=10.0)
    assert len(trace) == 500
    assert [e.t for e in trace] == sorted(e.t for e in trace)
    arrived: set[str] = set()
    for event in trace:
        if event.kind == "arrive":
            arrived.add(event.id)
        else:
            assert event.id in arrived
            arrived.remove(event.id)
    write_trace(trace, tmp_path / "t.jsonl")
    assert read_trace(tmp_path / "t.jsonl") == [
        type(e)(round(e.t, 6), e.kind, e.id, e.vm) for e in trace
    ]


def test_bad_trace_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 1, "kind": "arrive", "id": "x", "vm": "a"}\n{"t": 2, "kind": "leave"}\n')
    with pytest.raises(DescriptorError, match="trace line 2"):
        read_trace(path)


def test_replay_counts_and_series(tmp_path: Path) -> None:
    hosts, vms = _fleet(), _vms()
    trace = make_trace([v.name for v in vms], 300, seed=1, rate=1.0, lifetime=200.0)
    before = [h.model_copy(deep=True) for h in hosts]
    pack, spread = simulate(hosts, vms, trace, ["pack", "spread"], samples=10)
    assert hosts == before  # the hosts given are never changed
    arrivals = sum(1 for e in trace if e.kind == "arrive")
    for run in (pack, spread):
        assert run.arrivals == arrivals
        assert 0 < run.accepted < arrivals  # a loaded fleet: some are refused
        assert len(run.samples) == 10
        assert run.samples[-1].event == len(trace)
        assert run.samples[-1].acceptance == round(run.accepted / arrivals, 4)
        assert all(s.latency_p95_ms >= s.latency_p50_ms > 0 for s in run.samples)
        assert all(0 <= s.used_threads <= 1 for s in run.samples)
    rows = list(csv.DictReader(to_csv(pack).splitlines()))
    assert len(rows) == 10
    assert set(rows[0]) >= {"acceptance", "half_cores", "hugepages_gib", "vfs", "latency_p95_ms"}
    plot(pack, tmp_path / "pack.svg")
    assert (tmp_path / "pack.svg").read_text().lstrip().startswith("<?xml")
    plot(pack, tmp_path / "pack.png")
    assert (tmp_path / "pack.png").read_bytes()[:4] == b"\x89PNG"


def test_unknown_vm_in_trace_is_an_error() -> None:
    trace = make_trace(["nobody"], 10)
    with pytest.raises(DescriptorError, match="not given: nobody"):
        simulate(_fleet(), _vms(), trace)


def test_cli_writes_series_and_plots(tmp_path: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            "--hosts",
            str(ROOT / "examples" / "fleet"),
            "--vm",
            str(ROOT / "examples" / "vms" / "cloud-vm.yaml"),
            "--vm",
            str(ROOT / "examples" / "vms" / "sriov-small.yaml"),
            "--policy",
            "pack",
            "--policy",
            "least-fragmentation",
            "--events",
            "200",
            "--copies",
            "2",
            "--samples",
            "5",
            "--out",
            str(tmp_path / "sim"),
            "--plot-format",
            "svg",
            "--write-trace",
            str(tmp_path / "trace.jsonl"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert out.stdout.count("placed (") == 2
    assert "200 events on 20 hosts" in out.stdout
    for policy in ("pack", "least-fragmentation"):
        data = json.loads((tmp_path / "sim" / f"{policy}.json").read_text())
        assert len(data["series"]) == 5
        assert data["summary"]["policy"] == policy
        assert (tmp_path / "sim" / f"{policy}.svg").exists()
        assert (tmp_path / "sim" / f"{policy}.csv").exists()
    again = runner.invoke(
        app,
        [
            "simulate",
            "--hosts",
            str(ROOT / "examples" / "fleet"),
            "--vm",
            str(ROOT / "examples" / "vms" / "cloud-vm.yaml"),
            "--trace",
            str(tmp_path / "trace.jsonl"),
            "--out",
            str(tmp_path / "again"),
        ],
    )
    assert again.exit_code == 1
    assert "not given: vfw-small" in again.stderr
