"""How many pods a burst into more room than there is leaves running, by policy, over many orders.

The kube-scheduler loop (`tests/k8s_loop/`) compares, in one run each, the pods nfvplace binds with
the pods the default scheduler gets running (bound less the kubelet's refusals). Where everything
fits the count is fixed; where it does not, which pods take the room decides how many fit, and
kube-scheduler picks at random among equal scores. This bench replays the loop's 5-node overload
burst (its nodes, pod shapes and kubelets: single-numa-node, first NUMA node that fits) in the
loop's order over many seeds, and prints the distribution of the difference, so that the loop's
check can allow what chance alone gives and no more.

    python -m bench.k8s_overload_odds [--orders 2000] [--pods 42]

Model: the control scheduler sees node totals (kube-scheduler's NodeResourcesFit, least allocated)
and the kubelet refuses a pod no NUMA node can hold; nfvplace sees NUMA nodes and scores a node
by the share in use once the pod is there (`pack`) or left free (`spread`), on kube-scheduler's
1-10 scale, ties broken by least allocated and then at random.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter

NODES, NUMA_PER_NODE, CPUS, HUGEPAGE_SLOTS, VFS = 5, 2, 16, 4, 4
SCOPES = ("container", "pod", "container", "pod", "container")  # the loop's kubelets alternate

Part = tuple[int, int, int]  # CPUs, 2 GiB hugepages, VFs
Pod = list[Part]
Node = list[list[int]]  # free [CPUs, hugepage slots, VFs] per NUMA node


def loop_pods(rng: random.Random, count: int) -> list[Pod]:
    """The loop's `cnfPod`: a dataplane of 2-6 CPUs with hugepages and a VF, a sidecar in one of 3."""
    pods = []
    for _ in range(count):
        pod: Pod = [(2 + rng.randrange(5), 1, 1)]
        if rng.randrange(3) == 0:
            pod.append((1, 0, 0))
        pods.append(pod)
    return pods


def align(node: Node, pod: Pod, scope: str) -> Node | None:
    """The simulated kubelet: each part (the pod, at pod scope) on the first NUMA node it fits."""
    free = [list(numa) for numa in node]
    parts = [(sum(p[0] for p in pod), sum(p[1] for p in pod), sum(p[2] for p in pod))]
    for part in parts if scope == "pod" else pod:
        numa = next((f for f in free if all(a <= b for a, b in zip(part, f, strict=True))), None)
        if numa is None:
            return None
        for k in range(3):
            numa[k] -= part[k]
    return free


def _score(policy: str, node: Node, after: Node) -> float:
    totals = (CPUS, HUGEPAGE_SLOTS, VFS)
    used = [1 - sum(n[k] for n in after) / (totals[k] * NUMA_PER_NODE) for k in range(3)]
    share = sum(used) / 3 if policy == "pack" else 1 - sum(used) / 3
    least_allocated = sum(n[0] for n in after) / (CPUS * NUMA_PER_NODE)
    return (1 + round(share * 9)) * 50 + least_allocated


def running(pods: list[Pod], policy: str, rng: random.Random) -> int:
    """Pods running once the burst is placed in order under `policy` (control, pack or spread)."""
    nodes: list[Node] = [[[CPUS, HUGEPAGE_SLOTS, VFS] for _ in range(NUMA_PER_NODE)]] * NODES
    node_cpus = [CPUS * NUMA_PER_NODE] * NODES
    count = 0
    for pod in pods:
        need = [sum(p[k] for p in pod) for k in range(3)]
        scored = []
        for i, node in enumerate(nodes):
            if policy == "control":
                room = [node_cpus[i], *(sum(n[k] for n in node) for k in (1, 2))]
                if all(a <= b for a, b in zip(need, room, strict=True)):
                    scored.append(((node_cpus[i] - need[0]) / (CPUS * NUMA_PER_NODE), i))
            elif (after := align(node, pod, SCOPES[i])) is not None:
                scored.append((_score(policy, node, after), i))
        if not scored:
            continue
        best = max(s for s, _ in scored)
        chosen = rng.choice([i for s, i in scored if s == best])
        after = align(nodes[chosen], pod, SCOPES[chosen])
        if after is None:  # the kubelet refuses what the control bound
            continue
        nodes = [*nodes[:chosen], after, *nodes[chosen + 1 :]]
        node_cpus[chosen] -= need[0]
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=42)
    args = parser.parse_args()
    outcomes: dict[str, list[int]] = {"control": [], "pack": [], "spread": []}
    for seed in range(args.orders):
        pods = loop_pods(random.Random(seed), args.pods)
        for policy, counts in outcomes.items():
            counts.append(running(pods, policy, random.Random(seed * 7 + 1)))
    for policy, counts in outcomes.items():
        print(f"{policy}: mean {statistics.mean(counts):.2f} running, {min(counts)}-{max(counts)}")
    for policy in ("pack", "spread"):
        diff = Counter(a - b for a, b in zip(outcomes[policy], outcomes["control"], strict=True))
        below = {k: sum(v for d, v in diff.items() if d <= -k) / args.orders for k in (1, 2, 3)}
        print(
            f"{policy} - control: "
            + ", ".join(f"{d:+d}: {diff[d]}" for d in sorted(diff))
            + f" | fewer: {below[1]:.1%}, by 2 or more: {below[2]:.1%}, by 3 or more: {below[3]:.1%}"
        )


if __name__ == "__main__":
    main()
