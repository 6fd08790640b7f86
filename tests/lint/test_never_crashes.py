"""Lint never crashes: arbitrary text, arbitrary bytes, arbitrary YAML data, mutated examples."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nfvplace.lint import Finding, lint_file, lint_text
from nfvplace.models.loading import KINDS, iter_descriptor_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_DATA = [
    yaml.safe_load(path.read_text()) for path in sorted(iter_descriptor_files(EXAMPLES))
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["10GB", "1GiB", "0000:18:00.0", "10 Gbps", "dedicated", "sriov", "-1", "nan"]),
)
data = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(
                st.text(max_size=10),
                st.sampled_from(
                    [
                        "schema",
                        "cpu_sets",
                        "vcpus",
                        "id",
                        "numa_nodes",
                        "cpus",
                        "siblings",
                        "memory_mib",
                        "hugepages",
                        "interfaces",
                        "members",
                        "vdu",
                        "numas",
                        "extra_specs",
                        "flavor",
                        "ram",
                        "vcpu_pins",
                        "variants",
                    ]
                ),
            ),
            children,
            max_size=5,
        ),
    ),
    max_leaves=30,
)


def _assert_findings(findings: tuple[Finding, ...]) -> None:
    for finding in findings:
        assert finding.rule.startswith("NFV")
        assert finding.message


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_text(text: str) -> None:
    _assert_findings(lint_text(text, "fuzz.yaml").findings)


@settings(max_examples=150, deadline=None)
@given(data, st.sampled_from([None, *KINDS]), st.booleans())
def test_arbitrary_data_of_every_kind(value: Any, kind: str | None, as_yaml: bool) -> None:
    if kind is not None and isinstance(value, dict):
        value = {"schema": kind, **value}
    if as_yaml:
        text = yaml.safe_dump(value, allow_unicode=True)
    else:
        text = json.dumps(value, default=str) if not isinstance(value, str) else value
    _assert_findings(lint_text(text, "fuzz.yaml").findings)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLE_DATA), st.data())
def test_mutated_examples(example: Any, draw: st.DataObject) -> None:
    doc = copy.deepcopy(example)
    for _ in range(draw.draw(st.integers(1, 3))):
        node = doc
        path: list[Any] = []
        while isinstance(node, dict | list) and node and draw.draw(st.booleans()):
            key = draw.draw(
                st.sampled_from(list(node) if isinstance(node, dict) else range(len(node)))
            )
            path.append(key)
            node = node[key]
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = draw.draw(data)
    _assert_findings(lint_text(json.dumps(doc, default=str), "mutated.json").findings)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_in_a_file(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "blob.yaml"
    path.write_bytes(blob)
    result = lint_file(path)
    _assert_findings(result.findings)


def test_no_traceback_from_the_command(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_bytes(b"\xff\xfe\x00\x01")
    (tmp_path / "b.yaml").write_text("a: &a [*a]\n")
    (tmp_path / "c.json").write_text('{"schema": "nfvplace/chd/v1", "numa_nodes": [[[]]]}')
    (tmp_path / "d.yaml").write_text("- !!python/name:os.system\n")
    (tmp_path / "e.yml").write_text("vdu: [{}]\n")
    (tmp_path / "f.yaml").write_text(
        "flavor: {vcpus: -3, ram: x, extra_specs: {hw:numa_nodes: 9}}\n"
    )
    (tmp_path / "g.yaml").write_text("numas: [{paired-threads: 2, paired-threads-id: [[0]]}]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "nfvplace", "lint", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "7 files checked" in proc.stdout


def test_huge_counts_are_not_materialised() -> None:
    big = 10**12
    vm = f"schema: nfvplace/vmd/v1\nname: x\nvcpus: {big}\nmemory_mib: 1\nrealtime_vcpus: [{big}]\n"
    # the models' bounds (at most 4096 vCPUs, ids below 4096) refuse them, naming each field
    refused = {(f.rule, f.path) for f in lint_text(vm, "vm.yaml").findings}
    assert refused == {("NFV001", "vcpus"), ("NFV001", "realtime_vcpus[0]")}
    gap = (
        "schema: nfvplace/vmd/v1\nname: x\nhypervisor: {required_capabilities: [cpu_pinning]}\n"
        f"cpu_sets: [{{id: 0, vcpus: [0, {big}], memory_mib: 1}}]\n"
    )
    (finding,) = lint_text(gap, "gap.yaml").findings
    assert (finding.rule, finding.path) == ("NFV001", "cpu_sets[0].vcpus[1]")
    assert "less than 4096" in finding.message
    # within the bounds, a gap in the vCPU ids is still lint's own finding, listed briefly
    wide = gap.replace(str(big), "4000")
    (finding,) = [f for f in lint_text(wide, "gap.yaml").findings if f.rule == "NFV104"]
    assert "missing [1, 2, 3" in finding.message
    for dialect in (
        f"flavor: {{vcpus: {big}, ram: 1, extra_specs: {{hw:cpu_policy: dedicated}}}}\n",
        f"numas: [{{paired-threads: {big}}}]\n",
        f"vdu: [{{id: a, vm-flavor: {{vcpu-count: {big}, memory-mb: 1}}, guest-epa: {{cpu-pinning-policy: DEDICATED}}}}]\n",
    ):
        findings = lint_text(dialect, "d.yaml").findings
        assert any("must be between 0 and 4096" in f.message for f in findings), findings
