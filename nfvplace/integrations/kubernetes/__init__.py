"""nfvplace inside Kubernetes: a scheduler extender (`POST /k8s/v1/filter`, `/prioritize`, `/bind`)
that reads NodeResourceTopology objects and decides NUMA alignment as each node's kubelet will.

- `hints`, `providers`, `allocate`, `admission`: the kubelet's Topology Manager (policies, scopes),
  its CPU, memory and device managers' hints and allocations, ported over counts;
- `state`: a node's counts, read from its CHD;
- `decide`: the one decision per (pod, node) that filter, prioritize and bind answer from;
- `extender`: the upstream JSON in and out, and which answer does what in kube-scheduler;
- `calls`: the verbs and the watch's events over the store (the assumed pods).
"""
