"""Doors into other schedulers, as thin as the CLI and the service: they translate the scheduler's
objects into nfvplace documents and decide over the same reader, lint gate and engine. `nova` holds
OpenStack Nova's scheduler filter and weigher (they ask the service); `kubernetes` the scheduler
extender's decision (the kubelet's Topology Manager over NodeResourceTopology counts)."""
