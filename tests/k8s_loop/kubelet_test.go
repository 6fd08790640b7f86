package k8sloop

// A simulated kubelet per node: it admits each pod bound to its node as kubelet v1.34's Topology
// Manager does under `single-numa-node`, with the static CPU manager, the Static memory manager
// and the device manager: at `container` scope each container in turn goes to the lowest NUMA node
// that holds all it asks (the hint merger's narrowest preferred hint, lower NUMA ids first); at
// `pod` scope the pod's sum goes to one NUMA node. A pod that cannot be aligned is refused with
// TopologyAffinityError, as the kubelet does, and stays bound with phase Failed.

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	sriov         = "intel.com/sriov_netdevice"
	hugepages1Gi  = "hugepages-1Gi"
	numaPerNode   = 2
	cpusPerNUMA   = 16
	gib           = int64(1) << 30
	memoryPerNUMA = 64 * gib
	hugesPerNUMA  = 8 * gib
	vfsPerNUMA    = 4
)

// amounts is what a NUMA node has free, or what a container takes there.
type amounts struct{ cpu, memory, hugepages, vfs int64 }

func (a amounts) fits(in amounts) bool {
	return a.cpu <= in.cpu && a.memory <= in.memory && a.hugepages <= in.hugepages && a.vfs <= in.vfs
}

func (a amounts) minus(b amounts) amounts {
	return amounts{a.cpu - b.cpu, a.memory - b.memory, a.hugepages - b.hugepages, a.vfs - b.vfs}
}

func (a amounts) plus(b amounts) amounts {
	return amounts{a.cpu + b.cpu, a.memory + b.memory, a.hugepages + b.hugepages, a.vfs + b.vfs}
}

func (a amounts) String() string {
	return fmt.Sprintf("%d CPUs, %d GiB hugepages-1Gi, %d VFs", a.cpu, a.hugepages/gib, a.vfs)
}

var perNUMA = amounts{cpusPerNUMA, memoryPerNUMA, hugesPerNUMA, vfsPerNUMA}

// taken is what one container (or, at pod scope, the pod) takes on one NUMA node.
type taken struct {
	numa int
	amounts
}

type nodeState struct {
	name  string
	scope string // the Topology Manager's scope: container or pod
	free  [numaPerNode]amounts
	pods  map[types.UID][]taken
	names map[types.UID][2]string // namespace and name of each admitted pod
}

// demand is what a container asks the kubelet to align (a Guaranteed pod's integer CPUs).
func demand(c corev1.Container) amounts {
	q := func(name corev1.ResourceName) resource.Quantity { return c.Resources.Limits[name] }
	cpu, memory, huge, vf := q(corev1.ResourceCPU), q(corev1.ResourceMemory), q(hugepages1Gi), q(sriov)
	return amounts{cpu.Value(), memory.Value(), huge.Value(), vf.Value()}
}

// align is the Topology Manager's decision for a pod on a node's current free counts.
func (n *nodeState) align(pod *corev1.Pod) ([]taken, error) {
	free := n.free
	var parts []amounts
	if n.scope == "pod" {
		var sum amounts
		for _, c := range pod.Spec.Containers {
			sum = sum.plus(demand(c))
		}
		parts = []amounts{sum}
	} else {
		for _, c := range pod.Spec.Containers {
			parts = append(parts, demand(c))
		}
	}
	var out []taken
	for i, part := range parts {
		placed := false
		for numa := range free {
			if part.fits(free[numa]) {
				free[numa] = free[numa].minus(part)
				out = append(out, taken{numa, part})
				placed = true
				break
			}
		}
		if !placed {
			return nil, fmt.Errorf("single-numa-node (%s scope): part %d (%s) fits no NUMA node: "+
				"free %s | %s", n.scope, i, part, free[0], free[1])
		}
	}
	return out, nil
}

// kubelets are the simulated kubelets of every node, with the outcomes they decided.
type kubelets struct {
	mu       sync.Mutex
	client   kubernetes.Interface
	nodes    map[string]*nodeState
	refused  map[types.UID]string
	admitted map[types.UID]string // the node
	changed  func(node string)    // the NRT exporter's hook
	writes   int                  // pod status writes begun
}

func newKubelets(client kubernetes.Interface, changed func(string)) *kubelets {
	return &kubelets{client: client, nodes: map[string]*nodeState{}, refused: map[types.UID]string{},
		admitted: map[types.UID]string{}, changed: changed}
}

func (k *kubelets) addNode(name, scope string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := &nodeState{name: name, scope: scope, pods: map[types.UID][]taken{}, names: map[types.UID][2]string{}}
	for i := range n.free {
		n.free[i] = perNUMA
	}
	k.nodes[name] = n
}

// admit runs when a pod bound to one of the nodes is first seen, in the order the pod events come
// (the kubelet's sync loop handles pod additions one after the other: were each admitted in a
// goroutine of its own, two pods bound to a node in turn could be admitted the other way round),
// and writes the pod's status in the background.
func (k *kubelets) admit(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	n := k.nodes[pod.Spec.NodeName]
	_, seen := k.admitted[pod.UID]
	_, refusedBefore := k.refused[pod.UID]
	if n == nil || seen || refusedBefore {
		k.mu.Unlock()
		return
	}
	parts, err := n.align(pod)
	if err == nil {
		for _, p := range parts {
			n.free[p.numa] = n.free[p.numa].minus(p.amounts)
		}
		n.pods[pod.UID] = parts
		n.names[pod.UID] = [2]string{pod.Namespace, pod.Name}
		k.admitted[pod.UID] = n.name
	} else {
		k.refused[pod.UID] = err.Error()
	}
	k.writes++
	k.mu.Unlock()
	status := pod.DeepCopy()
	if err == nil {
		status.Status.Phase = corev1.PodRunning
		status.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		k.changed(n.name)
	} else {
		status.Status.Phase = corev1.PodFailed
		status.Status.Reason = "TopologyAffinityError"
		status.Status.Message = "Pod was rejected: Resources cannot be allocated with Topology locality: " + err.Error()
	}
	go func() { _, _ = k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, status, metav1.UpdateOptions{}) }()
}

// release frees what a deleted pod held.
func (k *kubelets) release(pod *corev1.Pod) {
	k.mu.Lock()
	node, ok := k.admitted[pod.UID]
	if ok {
		n := k.nodes[node]
		for _, p := range n.pods[pod.UID] {
			n.free[p.numa] = n.free[p.numa].plus(p.amounts)
		}
		delete(n.pods, pod.UID)
		delete(n.names, pod.UID)
		delete(k.admitted, pod.UID)
	}
	delete(k.refused, pod.UID)
	k.mu.Unlock()
	if ok {
		k.changed(node)
	}
}

// freeOf is a node's free counts now.
func (k *kubelets) freeOf(node string) [numaPerNode]amounts {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nodes[node].free
}

// podsOf is a node's free counts and the pods it admitted (namespace, name), read together (as
// the exporter reads the kubelet's podresources API).
func (k *kubelets) podsOf(node string) ([numaPerNode]amounts, [][2]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.nodes[node]
	names := make([][2]string, 0, len(n.names))
	for _, name := range n.names {
		names = append(names, name)
	}
	return n.free, names
}

// wouldAdmit asks, without admitting, whether a node's kubelet would admit the pod now.
func (k *kubelets) wouldAdmit(node string, pod *corev1.Pod) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, err := k.nodes[node].align(pod)
	return err == nil
}

func (k *kubelets) scopeOf(node string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nodes[node].scope
}
