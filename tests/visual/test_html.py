"""Notebook tables: a diagnosis and lint findings as HTML, escaped."""

from __future__ import annotations

from xml.etree import ElementTree

import nfvplace
from nfvplace.lint import lint_paths
from nfvplace.models import ComputeHostDescriptor, VmDescriptor
from nfvplace.visual.html import table

from .conftest import EXAMPLES


def test_diagnosis_table_has_a_row_per_rejected_host(dell: ComputeHostDescriptor) -> None:
    vm = nfvplace.load(EXAMPLES / "vms" / "vran-du.yaml")
    assert isinstance(vm, VmDescriptor)
    no_nics = dell.numa_nodes[0].model_copy(update={"nics": ()})
    hosts = [dell.model_copy(update={"id": f"tiny-{k}", "numa_nodes": (no_nics,)}) for k in (1, 2)]
    result = nfvplace.place(hosts, vm)
    assert not result.ok
    assert result._repr_svg_() is None
    html = result._repr_html_()
    assert html is not None
    doc = ElementTree.fromstring(html)
    assert doc.get("class") == "diagnosis"
    rows = doc.findall("./tbody/tr")
    assert result.diagnosis is not None
    assert len(rows) == len(result.diagnosis.rejections) == 2
    assert [r.findtext("td") for r in rows] == ["tiny-1", "tiny-2"]
    assert doc.findtext("caption") == result.diagnosis.summary


def test_cells_are_escaped() -> None:
    html = table("a<b", ("x",), [("<script>&",)])
    assert "<script>" not in html
    assert ElementTree.fromstring(html).findtext("./tbody/tr/td") == "<script>&"


def test_lint_findings_table() -> None:
    report = lint_paths([EXAMPLES / "dialects"])
    html = report._repr_html_()
    doc = ElementTree.fromstring(html)
    assert doc.get("class") == "findings"
    assert len(doc.findall("./tbody/tr")) == len(report.findings)
    assert doc.findtext("caption") == report.summary()
