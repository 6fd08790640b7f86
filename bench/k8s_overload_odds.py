"""How many pods a burst into more room than there is leaves running, by policy, over many orders.

The kube-scheduler loop (`tests/k8s_loop/`) compares, in one run each, the pods nfvplace binds with
the pods the default scheduler gets running (bound less the kubelet's refusals). Where everything
fits the count is fixed; where it does not, which pods take the room decides how many fit, and
kube-scheduler picks at random among equal scores. This bench replays the loop's 5-node overload
burst (its nodes, pod shapes and kubelets: single-numa-node, first NUMA node that fits) in the
loop's order over many seeds, and prints the distribution of the difference, so that the loop's
check can allow what chance alone gives and no more.

    python -m bench.k8s_overload_odds [--orders 2000] [--pods 42] [--workload burst|churn]

`--workload churn` replays the loop's churn instead: the burst, every third running pod deleted
(in creation order), then the burst's Pending pods (kube-scheduler retries them on the
deletions) and a stream of a third more pods. There the control can end with no pod Pending
(its overflow refused by the kubelets instead), so the loop reads over-full from what the pods
ask against the room, not from the control's Pending pods.

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
Placed = list[tuple[int, Part]]  # (NUMA node, part) for each part of a pod


def loop_pods(rng: random.Random, count: int) -> list[Pod]:
    """The loop's `cnfPod`: a dataplane of 2-6 CPUs with hugepages and a VF, a sidecar in one of 3."""
    pods = []
    for _ in range(count):
        pod: Pod = [(2 + rng.randrange(5), 1, 1)]
        if rng.randrange(3) == 0:
            pod.append((1, 0, 0))
        pods.append(pod)
    return pods


def align(node: Node, pod: Pod, scope: str) -> tuple[Node, Placed] | None:
    """The simulated kubelet: each part (the pod, at pod scope) on the first NUMA node it fits;
    the node's free counts after, and where each part went."""
    free = [list(numa) for numa in node]
    parts = [(sum(p[0] for p in pod), sum(p[1] for p in pod), sum(p[2] for p in pod))]
    placed: Placed = []
    for part in parts if scope == "pod" else pod:
        numa = next(
            (k for k, f in enumerate(free) if all(a <= b for a, b in zip(part, f, strict=True))),
            None,
        )
        if numa is None:
            return None
        for k in range(3):
            free[numa][k] -= part[k]
        placed.append((numa, part))
    return free, placed


def _score(policy: str, node: Node, after: Node) -> float:
    totals = (CPUS, HUGEPAGE_SLOTS, VFS)
    used = [1 - sum(n[k] for n in after) / (totals[k] * NUMA_PER_NODE) for k in range(3)]
    share = sum(used) / 3 if policy == "pack" else 1 - sum(used) / 3
    least_allocated = sum(n[0] for n in after) / (CPUS * NUMA_PER_NODE)
    return (1 + round(share * 9)) * 50 + least_allocated


class Cluster:
    """The nodes' free counts per NUMA node (what the kubelets hold), the control's view of each
    node's free CPUs (node totals), and where each running pod is."""

    def __init__(self) -> None:
        self.nodes: list[Node] = [
            [[CPUS, HUGEPAGE_SLOTS, VFS] for _ in range(NUMA_PER_NODE)] for _ in range(NODES)
        ]
        self.node_cpus = [CPUS * NUMA_PER_NODE] * NODES
        self.running: dict[int, tuple[int, Placed]] = {}  # pod -> node, parts per NUMA node

    def place(self, k: int, pod: Pod, policy: str, rng: random.Random) -> str:
        """Schedule pod `k` under `policy`: "running", "refused" (by the kubelet, where the control
        bound it) or "pending" (no node passes the filters)."""
        need = [sum(p[i] for p in pod) for i in range(3)]
        scored = []
        for i, node in enumerate(self.nodes):
            if policy == "control":
                room = [self.node_cpus[i], *(sum(n[j] for n in node) for j in (1, 2))]
                if all(a <= b for a, b in zip(need, room, strict=True)):
                    scored.append(((self.node_cpus[i] - need[0]) / (CPUS * NUMA_PER_NODE), i))
            elif (aligned := align(node, pod, SCOPES[i])) is not None:
                scored.append((_score(policy, node, aligned[0]), i))
        if not scored:
            return "pending"
        best = max(s for s, _ in scored)
        chosen = rng.choice([i for s, i in scored if s == best])
        aligned = align(self.nodes[chosen], pod, SCOPES[chosen])
        if aligned is None:  # the kubelet refuses what the control bound; it takes no room
            return "refused"
        self.nodes[chosen] = aligned[0]
        self.node_cpus[chosen] -= need[0]
        self.running[k] = (chosen, aligned[1])
        return "running"

    def delete(self, k: int) -> None:
        node, placed = self.running.pop(k)
        for numa, part in placed:
            for i in range(3):
                self.nodes[node][numa][i] += part[i]
            self.node_cpus[node] += part[0]


def running(pods: list[Pod], policy: str, rng: random.Random) -> int:
    """Pods running once the burst is placed in order under `policy` (control, pack or spread)."""
    cluster = Cluster()
    for k, pod in enumerate(pods):
        cluster.place(k, pod, policy, rng)
    return len(cluster.running)


def churn(pods: list[Pod], policy: str, rng: random.Random) -> tuple[int, int]:
    """The loop's churn: the first three quarters of `pods` in a burst; every third running pod
    deleted (in creation order); the burst's Pending pods retried on the deletions, then the rest
    of `pods` one after the other. Pods running, and pods left Pending, at the end."""
    burst = len(pods) * 3 // 4
    cluster = Cluster()
    pending = [k for k in range(burst) if cluster.place(k, pods[k], policy, rng) == "pending"]
    for j, k in enumerate(sorted(cluster.running)):
        if j % 3 == 0:
            cluster.delete(k)
    queue = pending + list(range(burst, len(pods)))
    left = [k for k in queue if cluster.place(k, pods[k], policy, rng) == "pending"]
    return len(cluster.running), len(left)


def _report(outcomes: dict[str, list[int]], orders: int) -> None:
    for policy, counts in outcomes.items():
        print(f"{policy}: mean {statistics.mean(counts):.2f} running, {min(counts)}-{max(counts)}")
    for policy in ("pack", "spread"):
        diff = Counter(a - b for a, b in zip(outcomes[policy], outcomes["control"], strict=True))
        below = {k: sum(v for d, v in diff.items() if d <= -k) / orders for k in (1, 2, 3)}
        print(
            f"{policy} - control: "
            + ", ".join(f"{d:+d}: {diff[d]}" for d in sorted(diff))
            + f" | fewer: {below[1]:.1%}, by 2 or more: {below[2]:.1%}, by 3 or more: {below[3]:.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=42, help="the burst's pods")
    parser.add_argument("--workload", choices=("burst", "churn"), default="burst")
    args = parser.parse_args()
    outcomes: dict[str, list[int]] = {"control": [], "pack": [], "spread": []}
    control_pending: list[int] = []
    for seed in range(args.orders):
        if args.workload == "burst":
            pods = loop_pods(random.Random(seed), args.pods)
            for policy, counts in outcomes.items():
                counts.append(running(pods, policy, random.Random(seed * 7 + 1)))
            continue
        pods = loop_pods(random.Random(seed), args.pods + args.pods // 3)
        for policy, counts in outcomes.items():
            count, left = churn(pods, policy, random.Random(seed * 7 + 1))
            counts.append(count)
            if policy == "control":
                control_pending.append(left)
    _report(outcomes, args.orders)
    if control_pending:
        none = sum(1 for left in control_pending if left == 0) / args.orders
        print(
            f"control: no pod left Pending in {none:.1%} of orders (its overflow refused instead)"
        )


if __name__ == "__main__":
    main()
