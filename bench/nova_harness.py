"""Nova's own functional harness with nfvplace: the real nova-api, conductor, scheduler and
in-process Placement, nova-compute with the libvirt driver on fake libvirt NUMA hosts
(`nova.tests.functional.libvirt.base.ServersTestBase`, shipped in Nova's wheel).

Runs in the Nova virtualenv (`bash bench/nova_venv.sh --harness`) with this repository on
PYTHONPATH. From nfvplace's side, `bench/nova_loop.py` starts a real `nfvplace serve` and runs
this (`boot(...)` for one flavor, `run_plan(...)` for a whole loop); directly:

    PYTHONPATH=. .bench/nova-venv/bin/python bench/nova_harness.py plan.json result.json

A plan (JSON):
  url, token_file        the nfvplace service ([nfvplace] url / token_file)
  filters                appended to Nova 34's default enabled_filters, in order
                         (e.g. ["NUMATopologyFilter", "NfvplaceFilter"])
  weigher                true: NfvplaceWeigher in weight_classes (with Nova's weighers)
  nfvplace               other [nfvplace] options (failure_mode, policy, weight_multiplier...)
  workarounds            [workarounds] options (disable_fallback_pcpu_query...)
  hosts                  [{name, nodes, cores, threads, sockets?, memory_mib (per node),
                           pages? {"2048": n, "1048576": n} per node, cpu_dedicated_set?,
                           cpu_shared_set?, vcpu_pin_set?}] -- the compute's [compute] options
                           are set while that compute starts
  steps                  [{"boot": flavor, "name": server}, {"delete": server},
                          {"delete_all": true}, {"snapshot": label}]
                         a flavor: {name, vcpus, ram, extra_specs?}

The result (JSON): per step, a boot's status, host, fault, the instance NUMA topology Nova
built and the domain XML; a snapshot's hosts (the compute node's NUMA cells as the resource
tracker keeps them, Placement's usages, the tracker's own view) and the live servers' topologies.
Throughout: every filtering pass's verdicts (Nova's NUMATopologyFilter and NfvplaceFilter asked
about the same HostStates, with nfvplace's reasons), every claim nova-compute refused, and every
claim that raised otherwise (`claims_failed`, with its traceback).
"""

from __future__ import annotations

# First of all, as nova/tests/functional/__init__.py does for Nova's own functional tests: Nova
# runs here in eventlet mode, and oslo.db keeps each context's transaction in a subclass of
# threading.local made when oslo.db is imported. Imported before the patch (by nova.context),
# it is the native thread-local, shared by every greenthread: a greenthread's write then finds
# another's read open on a context they share ("Can't upgrade a READER transaction to a WRITER
# mid-transaction" from compute_node.save() in a claim), and the resource tracker keeps a claim
# it never saved.
from nova import monkey_patch  # isort: skip

monkey_patch.patch()

import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from typing import Any  # noqa: E402

import fixtures  # noqa: E402

warnings.simplefilter("ignore")

from nova import context as nova_context  # noqa: E402
from nova import exception, objects  # noqa: E402
from nova.compute import resource_tracker  # noqa: E402
from nova.scheduler import host_manager  # noqa: E402
from nova.tests.fixtures import libvirt as fakelibvirt  # noqa: E402
from nova.tests.functional.libvirt import base  # noqa: E402

NOVA_DEFAULT_FILTERS = [
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]
"""Nova 34's `[filter_scheduler] enabled_filters` default (nova/conf/scheduler.py)."""

ONLINE_CPUS = 256
DISK_GB = 4096


class Recorder:
    """What the scheduler and the computes did, kept outside the test case (Nova's test case
    deletes its attributes in cleanup)."""

    def __init__(self) -> None:
        self.verdicts: list[dict[str, Any]] = []
        self.claims_refused: list[dict[str, Any]] = []
        self.claims_failed: list[dict[str, Any]] = []
        self.steps: list[dict[str, Any]] = []
        self.error: str | None = None


def _cell_pages(host: dict[str, Any]) -> list[Any] | None:
    pages = {int(k): int(v) for k, v in (host.get("pages") or {}).items()}
    if not pages:
        return None
    per_node = int(host["memory_mib"]) * 1024
    small = (per_node - sum(size * count for size, count in pages.items())) // 4
    mappings = [(4, small), *sorted(pages.items())]
    cells = int(host["nodes"]) * int(host.get("sockets", 1))
    return [fakelibvirt.create_mempages(mappings) for _ in range(cells)]


def _host_info(host: dict[str, Any]) -> Any:
    nodes, sockets = int(host["nodes"]), int(host.get("sockets", 1))
    return fakelibvirt.HostInfo(
        cpu_nodes=nodes,
        cpu_sockets=sockets,
        cpu_cores=int(host["cores"]),
        cpu_threads=int(host["threads"]),
        kB_mem=int(host["memory_mib"]) * 1024 * nodes * sockets,
        mempages=_cell_pages(host),
    )


def _shadow_nova(hosts: list[Any], spec_obj: Any) -> list[str]:
    """The hosts Nova's NUMATopologyFilter passes, its side effects (limits, pruned candidates)
    undone so that the real chain runs as configured."""
    from nova.scheduler.filters.numa_topology_filter import NUMATopologyFilter

    passing = []
    for host in hosts:
        limits = dict(host.limits)
        candidates = list(host.allocation_candidates)
        if NUMATopologyFilter().host_passes(host, spec_obj):
            passing.append(host.nodename)
        host.limits.clear()
        host.limits.update(limits)
        host.allocation_candidates = candidates
    return passing


def _shadow_nfvplace(hosts: list[Any], spec_obj: Any) -> dict[str, Any]:
    from nfvplace.integrations.nova import scheduler

    try:
        answers = scheduler._ask(hosts, spec_obj)
    except scheduler.EvaluationError as exc:
        return {"error": str(exc)}
    return {
        "passing": [h.nodename for h, a in zip(hosts, answers, strict=True) if a.fits],
        "reasons": {h.nodename: list(a.reasons) for h, a in zip(hosts, answers, strict=True)},
    }


def _views(hosts: list[Any]) -> list[dict[str, Any]]:
    from nfvplace.integrations.nova.hosts import host_view

    return [host_view(h) for h in hosts]


def _instrument(case: Any, record: Recorder) -> None:
    """Record every filtering pass and every claim the compute refuses."""
    original_filter = host_manager.HostManager.get_filtered_hosts
    original_claim = resource_tracker.ResourceTracker.instance_claim

    def filtered(manager: Any, hosts: Any, spec_obj: Any, index: int = 0) -> Any:
        hosts = list(hosts)
        entry: dict[str, Any] = {
            "instance": spec_obj.instance_uuid,
            "flavor": spec_obj.flavor.name,
            "hosts": [h.nodename for h in hosts],
            "nova": _shadow_nova(hosts, spec_obj),
            "nfvplace": _shadow_nfvplace(hosts, spec_obj),
        }
        ours = set(entry["nfvplace"].get("passing", ()))
        if "error" not in entry["nfvplace"]:  # the hosts the two disagree on, as Nova saw them
            entry["differ"] = _views(
                [h for h in hosts if (h.nodename in entry["nova"]) != (h.nodename in ours)]
            )
        entry["flavor_spec"] = {
            "name": spec_obj.flavor.name,
            "vcpus": spec_obj.flavor.vcpus,
            "ram": spec_obj.flavor.memory_mb,
            "disk": 0,
            "extra_specs": dict(spec_obj.flavor.extra_specs),
        }
        passed = list(original_filter(manager, hosts, spec_obj, index))
        entry["passed"] = [h.nodename for h in passed]
        record.verdicts.append(entry)
        return passed

    def claim(
        tracker: Any, context: Any, instance: Any, nodename: str, *args: Any, **kw: Any
    ) -> Any:
        try:
            return original_claim(tracker, context, instance, nodename, *args, **kw)
        except exception.ComputeResourcesUnavailable as exc:
            record.claims_refused.append(
                {"instance": instance.uuid, "host": nodename, "reason": str(exc)}
            )
            raise
        except Exception as exc:  # the claim failed otherwise: Nova reschedules the boot
            import traceback

            record.claims_failed.append(
                {
                    "instance": instance.uuid,
                    "host": nodename,
                    "error": repr(exc),
                    "traceback": "".join(traceback.format_exception(exc))[-4000:],
                }
            )
            raise

    original_domain = fakelibvirt.Domain.__init__

    def domain(self: Any, connection: Any, xml: str, *args: Any, **kw: Any) -> None:
        original_domain(self, connection, xml, *args, **kw)
        self.defined_xml = xml  # the fake's XMLDesc drops vcpusched, hugepages, cpu topology

    case.useFixture(fixtures.MonkeyPatch("nova.tests.fixtures.libvirt.Domain.__init__", domain))
    case.useFixture(
        fixtures.MonkeyPatch("nova.scheduler.host_manager.HostManager.get_filtered_hosts", filtered)
    )
    case.useFixture(
        fixtures.MonkeyPatch("nova.compute.resource_tracker.ResourceTracker.instance_claim", claim)
    )


def instance_topology(topology: Any) -> dict[str, Any] | None:
    """An `InstanceNUMATopology` as plain data."""
    if topology is None:
        return None
    cells = []
    for cell in topology.cells:
        cells.append(
            {
                "id": cell.id,
                "cpuset": sorted(cell.cpuset),
                "pcpuset": sorted(cell.pcpuset),
                "memory": cell.memory,
                "pagesize": cell.pagesize,
                "cpu_pinning": {str(k): v for k, v in sorted((cell.cpu_pinning or {}).items())},
                "cpuset_reserved": sorted(cell.cpuset_reserved or ()),
                "cpu_policy": cell.cpu_policy,
                "cpu_thread_policy": cell.cpu_thread_policy,
            }
        )
    return {"cells": cells, "emulator_threads_policy": topology.emulator_threads_policy}


def host_cells(topology: Any) -> list[dict[str, Any]]:
    """A compute node's `NUMATopology` (what the resource tracker holds) as plain data."""
    return [
        {
            "id": cell.id,
            "cpuset": sorted(cell.cpuset),
            "pcpuset": sorted(cell.pcpuset),
            "pinned_cpus": sorted(cell.pinned_cpus),
            "siblings": [sorted(s) for s in cell.siblings],
            "memory": cell.memory,
            "memory_usage": cell.memory_usage,
            "cpu_usage": cell.cpu_usage,
            "mempages": [
                {"size_kb": p.size_kb, "total": p.total, "used": p.used, "reserved": p.reserved}
                for p in cell.mempages
            ],
        }
        for cell in (topology.cells if topology else ())
    ]


def _summed(allocations: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for provider in allocations.values():
        for rc, amount in provider["resources"].items():
            out[rc] = out.get(rc, 0) + amount
    return out


class Harness(base.ServersTestBase):  # type: ignore[misc]
    """One plan in one test: the services start with the plan's filters; the computes with the
    plan's hosts."""

    PLAN: dict[str, Any] = {}
    RECORD = Recorder()
    ADMIN_API = True

    def setUp(self) -> None:
        plan = self.PLAN
        filters = [*NOVA_DEFAULT_FILTERS, *plan.get("filters", ())]
        self.flags(enabled_filters=filters, group="filter_scheduler")
        self.flags(
            available_filters=[
                "nova.scheduler.filters.all_filters",
                "nfvplace.integrations.nova.NfvplaceFilter",
            ],
            group="filter_scheduler",
        )
        if plan.get("weigher"):
            self.flags(
                weight_classes=[
                    "nova.scheduler.weights.all_weighers",
                    "nfvplace.integrations.nova.NfvplaceWeigher",
                ],
                group="filter_scheduler",
            )
        for key, value in (plan.get("workarounds") or {}).items():
            self.flags(**{key: value}, group="workarounds")
        self.flags(cores=-1, instances=-1, ram=-1, group="quota")
        super().setUp()
        # ServersTestBase mocks these for hosts of up to 16 CPUs and 128 GB of disk
        from nova.virt.libvirt import driver, host

        host.Host.get_online_cpus.return_value = set(range(ONLINE_CPUS))
        driver.LibvirtDriver._get_local_gb_info.return_value = {
            "total": DISK_GB,
            "used": 0,
            "free": DISK_GB,
        }
        self.flags(url=plan.get("url"), token_file=plan.get("token_file"), group="nfvplace")
        for key, value in (plan.get("nfvplace") or {}).items():
            self.flags(**{key: value}, group="nfvplace")
        _instrument(self, self.RECORD)
        self.ctxt = nova_context.get_admin_context()
        self.servers: dict[str, dict[str, Any]] = {}

    def _start_host(self, host: dict[str, Any]) -> None:
        for key in ("cpu_dedicated_set", "cpu_shared_set"):
            self.flags(**{key: host.get(key)}, group="compute")
        self.flags(vcpu_pin_set=host.get("vcpu_pin_set"))
        connection = fakelibvirt.Connection(
            "qemu:///system",
            version=fakelibvirt.FAKE_LIBVIRT_VERSION,
            hv_version=fakelibvirt.FAKE_QEMU_VERSION,
            host_info=_host_info(host),
            hostname=host["name"],
        )
        self.start_compute(hostname=host["name"], connection=connection)

    def _boot(self, step: dict[str, Any]) -> dict[str, Any]:
        flavor = step["boot"]
        flavor_id = self._create_flavor(
            name=f"{flavor['name']}-{len(self.RECORD.steps)}",
            memory_mb=int(flavor["ram"]),
            vcpu=int(flavor["vcpus"]),
            disk=1,
            ephemeral=0,
            extra_spec=dict(flavor.get("extra_specs") or {}),
        )
        body = self._build_server(name=step.get("name"), flavor_id=flavor_id)
        server = self.api.post_server({"server": body})
        server = self._wait_for_state_change(server, ("ACTIVE", "ERROR"))
        out: dict[str, Any] = {
            "boot": step.get("name") or server["name"],
            "flavor": flavor["name"],
            "id": server["id"],
            "status": server["status"],
            "host": server.get("OS-EXT-SRV-ATTR:host"),
            "fault": (server.get("fault") or {}).get("message"),
        }
        if server["status"] == "ACTIVE":
            instance = objects.Instance.get_by_uuid(
                self.ctxt, server["id"], expected_attrs=["numa_topology"]
            )
            out["numa_topology"] = instance_topology(instance.numa_topology)
            connection = self.computes[out["host"]].driver._host.get_connection()
            domain = connection.lookupByUUIDString(server["id"])
            out["domain_xml"] = getattr(domain, "defined_xml", None) or domain.XMLDesc(0)
            self.servers[out["boot"]] = server
        else:  # a server that did not boot holds nothing; it goes at once
            self._delete_server(server)
        return out

    def _wait_for_state_change(self, server: dict[str, Any], states: Any) -> dict[str, Any]:
        import time

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            server = self.api.get_server(server["id"])
            if server["status"] in states:
                return server
            time.sleep(0.05)
        raise AssertionError(f"server {server['id']} stayed {server['status']}")

    def _delete(self, name: str) -> dict[str, Any]:
        server = self.servers.pop(name, None)
        if server is None:
            return {"delete": name, "skipped": "it did not boot"}
        try:
            self._delete_server(server)
        except Exception as exc:  # recorded with Nova's log, and the loop goes on
            log = self.stdlog.logger.output
            at = log.rfind("Traceback")
            return {"delete": name, "error": str(exc), "log": log[at - 2000 : at + 4000]}
        return {"delete": name}

    def snapshot(self, label: str) -> dict[str, Any]:
        hosts = {}
        for name in self.computes:
            node = objects.ComputeNode.get_by_nodename(self.ctxt, name)
            usages = self.placement.get(
                f"/resource_providers/{self.compute_rp_uuids[name]}/usages"
            ).body["usages"]
            hosts[name] = {
                "cells": host_cells(
                    node.numa_topology and objects.NUMATopology.obj_from_db_obj(node.numa_topology)
                ),
                "usages": usages,
                "nova": self._held(name),
            }
        servers = {}
        for name, server in self.servers.items():
            instance = objects.Instance.get_by_uuid(
                self.ctxt, server["id"], expected_attrs=["numa_topology", "flavor"]
            )
            allocations = self.placement.get(f"/allocations/{server['id']}").body["allocations"]
            servers[name] = {
                "id": server["id"],
                "allocations": _summed(allocations),
                "host": instance.host,
                "vcpus": instance.flavor.vcpus,
                "memory_mb": instance.flavor.memory_mb,
                "numa_topology": instance_topology(instance.numa_topology),
            }
        return {"snapshot": label, "hosts": hosts, "servers": servers}

    def _held(self, name: str) -> dict[str, Any]:
        """What nova-compute's resource tracker holds in memory for a host (its pinned CPUs per
        cell, the instances it counts), to tell a claim it kept from what the row shows."""
        tracker = self.computes[name].manager.rt
        node = tracker.compute_nodes.get(name)
        topology = node and node.numa_topology
        if isinstance(topology, str):
            topology = objects.NUMATopology.obj_from_db_obj(topology)
        cells = topology.cells if topology else ()
        return {
            "tracker_pinned": {c.id: sorted(c.pinned_cpus) for c in cells},
            "tracked": sorted(tracker.tracked_instances),
        }

    def test_plan(self) -> None:
        record = self.RECORD
        try:
            for host in self.PLAN["hosts"]:
                self._start_host(host)
            for step in self.PLAN.get("steps", ()):
                if "boot" in step:
                    record.steps.append(self._boot(step))
                elif "delete" in step:
                    record.steps.append(self._delete(step["delete"]))
                elif "delete_all" in step:
                    record.steps += [self._delete(name) for name in list(self.servers)]
                elif "snapshot" in step:
                    record.steps.append(self.snapshot(step["snapshot"]))
        except Exception as exc:
            import traceback

            record.error = "".join(traceback.format_exception(exc))
            raise


def run(plan: dict[str, Any]) -> dict[str, Any]:
    """Run a plan in Nova's harness; the record as plain data (`error` set if the harness
    itself failed: a step raised, or the test case's fixtures did)."""
    import testtools

    Harness.PLAN = plan
    Harness.RECORD = record = Recorder()
    result = testtools.TestResult()
    Harness("test_plan").run(result)
    problems = [f"{case.id()}: {text}" for case, text in result.errors + result.failures]
    if problems and not record.error:
        record.error = "\n".join(problems)
    return {
        "steps": record.steps,
        "verdicts": record.verdicts,
        "claims_refused": record.claims_refused,
        "claims_failed": record.claims_failed,
        "error": record.error,
    }


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as source:
        plan = json.load(source)
    result = run(plan)
    with open(sys.argv[2], "w", encoding="utf-8") as target:
        json.dump(result, target)
    sys.exit(1 if result["error"] else 0)


if __name__ == "__main__":
    main()
