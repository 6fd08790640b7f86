"""Differential: nfvplace reading a Nova flavor against Nova 34's own fitter, on generated hosts.

    .venv/bin/python bench/nova_diff.py [--flavors 2000] [--hosts 10] [--seed 1] [--json OUT]

Needs a Nova virtualenv (`bash bench/nova_venv.sh`; `NFVPLACE_NOVA_PYTHON` or `.bench/nova-venv`).
Each generated flavor (bench/nova_cases.py) is asked of its own generated hosts. Nova's side
(bench/nova_side.py) is `numa_get_constraints` + `numa_fit_instance_to_host` on Nova's objects;
nfvplace's side is the Nova reader (`{"flavor", "pci_requests"}` as the scheduler filter sends it),
the lint gate and `nfvplace.evaluate` on the CHDs the filter would build
(`nfvplace.integrations.nova.hosts.chd_of`). Every nfvplace placement is checked against Nova's
rules (`nova_rules.violations`).

Every disagreement is classified by counterfactuals, which take the suspected cause away and ask
both sides again (`nova_classes.CLASSES`, in order): the first that makes them agree names it.
Nova's own bugs are taken away on Nova's side only (its fitter without the fit cache; the host in
the legacy layout that bug #1889633 spares). A disagreement no counterfactual explains is
`unexplained`; it counts as nfvplace wrong until someone reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import nova_cases, nova_classes, nova_rules

ROOT = Path(__file__).resolve().parents[1]


def nova_python() -> str:
    """The Nova virtualenv's interpreter ($NFVPLACE_NOVA_PYTHON, else .bench/nova-venv)."""
    given = os.environ.get("NFVPLACE_NOVA_PYTHON")
    path = Path(given) if given else ROOT / ".bench" / "nova-venv" / "bin" / "python"
    if not path.exists():
        raise SystemExit(f"no Nova virtualenv at {path}: run `bash bench/nova_venv.sh` first")
    return str(path)


def run_nova(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Nova's answers, from its own virtualenv."""
    done = subprocess.run(
        [nova_python(), str(ROOT / "bench" / "nova_side.py")],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"Nova's side failed:\n{done.stderr[-4000:]}")
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def request_document(flavor: dict[str, Any], alias: dict[str, Any]) -> dict[str, Any]:
    """The Nova request document the scheduler filter sends for a flavor (its PCI alias resolved
    as Nova resolves it, with the flavor's NUMA affinity policy)."""
    document: dict[str, Any] = {"flavor": dict(flavor)}
    wanted = flavor["extra_specs"].get("pci_passthrough:alias")
    if wanted:
        name, _, count = wanted.partition(":")
        spec = {"vendor_id": alias["vendor_id"], "product_id": alias["product_id"]}
        document["pci_requests"] = [
            {
                "alias_name": name,
                "count": int(count or 1),
                "numa_policy": flavor["extra_specs"].get("hw:pci_numa_affinity_policy"),
                "spec": [spec | {"dev_type": alias["device_type"]}],
            }
        ]
    return document


def run_nfvplace(data: dict[str, Any]) -> list[dict[str, Any]]:
    """nfvplace's answers: the flavor read (or why not), and per host fits and configuration."""
    import nfvplace
    from nfvplace.errors import NfvplaceError
    from nfvplace.integrations.nova.hosts import chd_of
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.reader import load_document

    alias = data["pci_alias"][0]
    out = []
    for case in data["cases"]:
        document = request_document(case["flavor"], alias)
        hosts = [ComputeHostDescriptor.model_validate(chd_of(v)) for v in case["hosts"]]
        try:
            vm = load_document(SourceDocument(data=document, source="flavor"))
            answers = nfvplace.evaluate(hosts, vm)
        except NfvplaceError as exc:
            out.append({"refused": f"{exc.code}: {exc}", "hosts": []})
            continue
        out.append(
            {
                "refused": None,
                "vm": vm,
                "hosts": [
                    {"fits": a.fits, "configuration": a.configuration, "reasons": a.reasons}
                    for a in answers
                ],
            }
        )
    return out


def compare(
    data: dict[str, Any], nova: list[dict[str, Any]], ours: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per (flavor, host): both answers and whether they agree."""
    rows = []
    for k, case in enumerate(data["cases"]):
        n, o = nova[k], ours[k]
        for h, view in enumerate(case["hosts"]):
            nh = n["hosts"][h] if n["hosts"] else None
            oh = o["hosts"][h] if o["hosts"] else None
            row = {
                "case": k,
                "host": h,
                "nova": bool(nh and nh["fits"]),
                "nfvplace": bool(oh and oh["fits"]),
                "nova_answer": nh,
                "nova_refused": n["refused"],
                "nova_no_topology": bool(n.get("no_topology")),
                "nfvplace_refused": o["refused"],
                "nfvplace_answer": oh,
            }
            if oh and oh["fits"]:
                row["invalid"] = nova_rules.violations(view, case["flavor"], oh["configuration"])
            rows.append(row)
    return rows


def run(flavors: int, hosts: int, seed: int) -> dict[str, Any]:
    data = nova_cases.cases(seed, flavors, hosts)
    started = time.perf_counter()
    nova = run_nova(data)
    nova_s = time.perf_counter() - started
    started = time.perf_counter()
    ours = run_nfvplace(data)
    ours_s = time.perf_counter() - started
    rows = compare(data, nova, ours)
    counterfactual = nova_classes.classify(data, rows, run_nova, run_nfvplace, compare)
    return {
        "flavors": flavors,
        "hosts_per_flavor": hosts,
        "seed": seed,
        "seconds": {"nova": round(nova_s, 2), "nfvplace": round(ours_s, 2)},
        "rows": rows,
        "classes": counterfactual,
    }


def table(result: dict[str, Any]) -> str:
    """The agreement table (markdown), every disagreement class with its count."""
    rows = [r for r in result["rows"] if not r["nova_no_topology"]]
    agree = sum(r["nova"] == r["nfvplace"] for r in rows)
    both = sum(r["nova"] and r["nfvplace"] for r in rows)
    invalid = [r for r in rows if r.get("invalid")]
    counts = Counter(c["class"] for c in result["classes"])
    nova_wrong = sum(n for c, n in counts.items() if nova_classes.SIDE.get(c) == "nova wrong")
    lines = [
        f"{len(rows)} (flavor, host) pairs: {result['flavors']} flavors x "
        f"{result['hosts_per_flavor']} hosts, seed {result['seed']}",
        "",
        "| | pairs |",
        "|---|---|",
        f"| agree | {agree} ({100 * agree / max(len(rows), 1):.1f} %) |",
        f"| agree outside Nova's own errors | {agree} of {len(rows) - nova_wrong} "
        f"({100 * agree / max(len(rows) - nova_wrong, 1):.1f} %) |",
        f"| both fit | {both} |",
        f"| nfvplace placements Nova's rules refuse | {len(invalid)} |",
        "",
        "| disagreement class | side | Nova fits | nfvplace fits | pairs |",
        "|---|---|---|---|---|",
    ]
    by_class: Counter[tuple[str, bool]] = Counter()
    for c in result["classes"]:
        by_class[(c["class"], c["nova"])] += 1
    for (name, nova_fits), n in sorted(by_class.items(), key=lambda x: (-x[1], x[0])):
        side = nova_classes.SIDE.get(name, "nfvplace wrong")
        lines.append(f"| {name} | {side} | {nova_fits} | {not nova_fits} | {n} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flavors", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every disagreement here")
    args = parser.parse_args()
    result = run(args.flavors, args.hosts, args.seed)
    print(table(result))
    print(f"\nseconds: {result['seconds']}; uptime: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(result["classes"], indent=1, default=str))


if __name__ == "__main__":
    main()
