"""Child-process entry point that runs hwloc (through pyhwloc) where a crash cannot hurt us.

    python -P _pyhwloc_child.py live                    -> the live topology as hwloc XML
    python -P _pyhwloc_child.py counts FILE             -> JSON counts of an XML file
    python -P _pyhwloc_child.py counts-unguarded FILE   -> the same, distances kept
        (only to show in tests that a crash of hwloc is contained)

It imports nothing from nfvplace, so it is run by path and starts fast.

`pyhwloc_live` runs it and turns a crash (SIGSEGV in hwloc's loader) into a DiscoveryError.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from pyhwloc.topology import Topology, TopologyFlags, TypeFilter

    modes = {"live", "counts", "counts-unguarded"}
    if not argv or argv[0] not in modes or (argv[0] != "live" and len(argv) != 2):
        sys.stderr.write("usage: _pyhwloc_child live | counts FILE | counts-unguarded FILE\n")
        return 2
    if argv[0] == "live":
        topo = Topology.from_this_system()
        topo.set_flags(TopologyFlags.INCLUDE_DISALLOWED)
    elif argv[0] == "counts-unguarded":  # distances imported: shows the hwloc crash (tests only)
        topo = Topology.from_xml_file(argv[1])
        topo.set_flags(TopologyFlags.INCLUDE_DISALLOWED)
    else:
        topo = Topology.from_xml_file(argv[1])
        # hwloc 3.0.0a1 dereferences a NULL name in unnamed <distances2>: never import distances
        topo.set_flags(TopologyFlags.INCLUDE_DISALLOWED | TopologyFlags.NO_DISTANCES)
    topo.set_io_types_filter(TypeFilter.KEEP_IMPORTANT)
    topo.load()
    if argv[0] == "live":
        sys.stdout.write(topo.export_xml_buffer())
    else:
        counts = {
            "packages": topo.n_packages(),
            "numa_nodes": topo.n_numa_nodes(),
            "cores": topo.n_cores(),
            "pus": topo.n_cpus(),
        }
        sys.stdout.write(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
