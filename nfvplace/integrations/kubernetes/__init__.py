"""nfvplace inside Kubernetes: a scheduler extender (`POST /k8s/v1/filter`, `/k8s/v1/prioritize`)
that reads NodeResourceTopology objects and decides NUMA alignment as each node's kubelet will.

- `hints`, `providers`, `allocate`, `admission`: the kubelet's Topology Manager (policies, scopes),
  its CPU, memory and device managers' hints and allocations, ported over counts;
- `state`: a node's counts, read from its CHD;
- `extender`: the extender's answers (filter, prioritize) and the assumed claims they keep.
"""
