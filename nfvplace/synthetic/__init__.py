"""Realistic example hosts from real topologies: a documented, reproducible transform.

An hwloc export tells the hardware but not how a host is set up or used. `realistic_host` fills that
in the way an NFV compute host is commonly configured (seeds 000-003), deterministically from a seed:

- hypervisor: KVM with QEMU 8.2.2 and libvirt 10.0.0 (capabilities from the discovery version table,
  IOMMU with large pages and interrupt remapping on), OVS-DPDK 3.3.0 with its PMD threads on the
  host-reserved PUs;
- processor: the export's vendor and model, with the cpuinfo flags of that vendor's server parts;
- installed memory: type, speed and channels of the processor generation (`MEMORY_BY_MODEL`);
- kernel: RHEL 9 with `isolcpus`/`nohz_full`/`rcu_nocbs` on the guest PUs and hugepages preallocated;
- CPUs: the first core of every NUMA node is host-reserved (`eligible: false`), PUs the export
  disallowed stay ineligible, `dedicated` PUs (whole cores) are held by a few VMs, and the last
  `SHARED_CORES_PER_NODE` cores of a node with at least 6 cores form its shared pool for
  oversubscribed cloud VMs (`shared`, ratio `SHARED_RATIO`, partly used; left out of `isolcpus`);
- memory: per node, half the memory in 1 GiB pages and 2048 x 2 MiB pages, some of both used;
- NICs: port speeds from the controller's nominal speed (table below); ports of 10 Gb/s and more are
  SR-IOV with 8 configured VFs (2 in use), except the last port of a multi-port NIC, which stays
  free for passthrough; 1 Gb/s ports carry the vSwitch. An export with no NIC at
  all (CPU-only or I/O-less dumps) gets one synthetic dual-port 25 Gb/s Intel E810-XXV on the first
  NUMA node of each package, said so in the host's provenance notes;
- L3 cache allocation: on a Xeon Scalable (Bronze, Silver, Gold, Platinum), the L3 caches discovery
  read from the export, with 16 classes of service (the export cannot say; said in the notes).

Pure: takes a CHD, returns a new one.
"""

from __future__ import annotations

from .host import realistic_host

__all__ = ["realistic_host"]
