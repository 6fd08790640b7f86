"""Time Nova's own fitter (`nova.virt.hardware.numa_fit_instance_to_host`) on a fleet converted to its
objects. Runs in an interpreter where `nova` is importable; reads JSON on stdin, prints JSON.

Input: {"hosts": [[cell, ...], ...], "requests": [[cell, ...], ...], "repeat": int}, a host cell being
{"id", "pcpus", "siblings", "pinned", "memory_mib", "used_mib", "pages_total", "pages_used"} and a
request cell {"pcpus", "memory_mib", "pages", "thread_policy"}.
"""

from __future__ import annotations

import json
import sys
import time
import warnings


def main() -> None:
    warnings.simplefilter("ignore")
    from nova import objects

    objects.register_all()
    from nova.virt import hardware

    data = json.load(sys.stdin)
    hosts = []
    for cells in data["hosts"]:
        hosts.append(
            objects.NUMATopology(
                cells=[
                    objects.NUMACell(
                        id=c["id"],
                        cpuset=set(),
                        pcpuset=set(c["pcpus"]),
                        memory=c["memory_mib"],
                        cpu_usage=0,
                        memory_usage=c["used_mib"],
                        pinned_cpus=set(c["pinned"]),
                        siblings=[set(s) for s in c["siblings"]],
                        mempages=[
                            objects.NUMAPagesTopology(
                                size_kb=4, total=c["memory_mib"] * 256, used=0, reserved=0
                            ),
                            objects.NUMAPagesTopology(
                                size_kb=1048576,
                                total=c["pages_total"],
                                used=c["pages_used"],
                                reserved=0,
                            ),
                        ],
                        network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
                    )
                    for c in cells
                ]
            )
        )
    requests = []
    for cells in data["requests"]:
        vcpu = 0
        inst_cells = []
        for k, c in enumerate(cells):
            inst_cells.append(
                objects.InstanceNUMACell(
                    id=k,
                    cpuset=set(),
                    pcpuset=set(range(vcpu, vcpu + c["pcpus"])),
                    memory=c["memory_mib"],
                    pagesize=1048576 if c["pages"] else None,
                    cpu_policy="dedicated",
                    cpu_thread_policy=c["thread_policy"],
                )
            )
            vcpu += c["pcpus"]
        requests.append(objects.InstanceNUMATopology(cells=inst_cells))
    per_request = []
    fits = []
    for req in requests:
        start = time.perf_counter()
        fit = 0
        for host in hosts:
            if hardware.numa_fit_instance_to_host(host, req, None) is not None:
                fit += 1
        per_request.append(time.perf_counter() - start)
        fits.append(fit)
    json.dump({"seconds": per_request, "fits": fits, "hosts": len(hosts)}, sys.stdout)


if __name__ == "__main__":
    main()
