package k8sloop

// A simulated NodeResourceTopology exporter (as the resource-topology-exporter or NFD's
// topology-updater): it writes a node's free counts per NUMA node `delay` after the kubelet's
// allocations there change (an admission or a deletion), one update for all changes in that time.
// It loses no change: a change after an update's counts were read arms the next update, and a
// node's updates are written one after the other (each on the object the last one wrote). Like
// the real exporters it publishes the fingerprint of the pods its counts account for
// (podfingerprint's attributes, method "all": every pod the kubelet admitted there).

import (
	"context"
	"fmt"
	"sync"
	"time"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"
	"github.com/k8stopologyawareschedwg/podfingerprint"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var nrtResource = schema.GroupVersionResource{
	Group: "topology.node.k8s.io", Version: "v1alpha2", Resource: "noderesourcetopologies"}

type exporter struct {
	mu        sync.Mutex
	client    dynamic.Interface
	kubelets  *kubelets
	delay     time.Duration
	lag       time.Duration // between reading the counts and writing them (a loaded machine)
	pending   map[string]*time.Timer
	writing   map[string]*sync.Mutex // held while a node's update is read and written
	published map[string][numaPerNode]amounts
	versions  map[string]string // resourceVersion of the object last written
	updates   int
	begun     int // updates sent: the API server may show one to its watchers before it answers
	errors    []error
	inflight  sync.WaitGroup
}

func newExporter(client dynamic.Interface, delay time.Duration) *exporter {
	return &exporter{client: client, delay: delay, pending: map[string]*time.Timer{},
		writing: map[string]*sync.Mutex{}, published: map[string][numaPerNode]amounts{},
		versions: map[string]string{}}
}

// changed is the kubelets' hook: publish this node's counts after the delay.
func (e *exporter) changed(node string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.pending[node]; ok {
		return
	}
	e.inflight.Add(1)
	e.pending[node] = time.AfterFunc(e.delay, func() {
		defer e.inflight.Done()
		e.publish(context.Background(), node)
	})
}

func zoneOf(numa int, free amounts, scope string) topologyv1alpha2.Zone {
	n := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }
	b := func(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.BinarySI) }
	var costs topologyv1alpha2.CostList
	for other := 0; other < numaPerNode; other++ {
		cost := int64(21)
		if other == numa {
			cost = 10
		}
		costs = append(costs, topologyv1alpha2.CostInfo{Name: fmt.Sprintf("node-%d", other), Value: cost})
	}
	return topologyv1alpha2.Zone{
		Name: fmt.Sprintf("node-%d", numa), Type: "Node", Costs: costs,
		Resources: topologyv1alpha2.ResourceInfoList{
			{Name: "cpu", Capacity: n(cpusPerNUMA), Allocatable: n(cpusPerNUMA), Available: n(free.cpu)},
			{Name: "memory", Capacity: b(memoryPerNUMA), Allocatable: b(memoryPerNUMA), Available: b(free.memory)},
			{Name: hugepages1Gi, Capacity: b(hugesPerNUMA), Allocatable: b(hugesPerNUMA), Available: b(free.hugepages)},
			{Name: sriov, Capacity: n(vfsPerNUMA), Allocatable: n(vfsPerNUMA), Available: n(free.vfs)},
		},
	}
}

// fingerprintOf signs the pods an update's counts account for, as the real exporters do.
func fingerprintOf(pods [][2]string) string {
	fp := podfingerprint.NewFingerprint(len(pods))
	for _, pod := range pods {
		_ = fp.Add(pod[0], pod[1])
	}
	return fp.Sign()
}

func nrtObject(node, scope, version string, free [numaPerNode]amounts, pods [][2]string) (*unstructured.Unstructured, error) {
	policy := map[string]string{"container": "SingleNUMANodeContainerLevel", "pod": "SingleNUMANodePodLevel"}[scope]
	nrt := &topologyv1alpha2.NodeResourceTopology{
		TypeMeta:         metav1.TypeMeta{APIVersion: "topology.node.k8s.io/v1alpha2", Kind: "NodeResourceTopology"},
		ObjectMeta:       metav1.ObjectMeta{Name: node, ResourceVersion: version},
		TopologyPolicies: []string{policy},
		Attributes: topologyv1alpha2.AttributeList{
			{Name: "topologyManagerPolicy", Value: "single-numa-node"},
			{Name: "topologyManagerScope", Value: scope},
			{Name: podfingerprint.Attribute, Value: fingerprintOf(pods)},
			{Name: podfingerprint.AttributeMethod, Value: podfingerprint.MethodAll},
		},
	}
	for numa := range free {
		nrt.Zones = append(nrt.Zones, zoneOf(numa, free[numa], scope))
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(nrt)
	return &unstructured.Unstructured{Object: content}, err
}

// publish writes the node's NRT object with its counts now (creating it the first time).
func (e *exporter) publish(ctx context.Context, node string) {
	e.mu.Lock()
	delete(e.pending, node) // before the counts are read: a change from here on arms another update
	writing := e.writing[node]
	if writing == nil {
		writing = &sync.Mutex{}
		e.writing[node] = writing
	}
	e.mu.Unlock()
	writing.Lock()
	defer writing.Unlock()
	free, pods := e.kubelets.podsOf(node)
	time.Sleep(e.lag)
	e.mu.Lock()
	version, exists := e.versions[node]
	e.begun++
	e.mu.Unlock()
	scope := e.kubelets.scopeOf(node)
	obj, err := nrtObject(node, scope, version, free, pods)
	var written *unstructured.Unstructured
	if err == nil && exists {
		written, err = e.client.Resource(nrtResource).Update(ctx, obj, metav1.UpdateOptions{})
	} else if err == nil {
		written, err = e.client.Resource(nrtResource).Create(ctx, obj, metav1.CreateOptions{})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.errors = append(e.errors, fmt.Errorf("NRT %s: %w", node, err))
		return
	}
	e.versions[node] = written.GetResourceVersion()
	e.published[node] = free
	e.updates++
}

// caughtUp: every node's NRT object shows its kubelet's counts, and no update is due.
func (e *exporter) caughtUp() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) > 0 {
		return false
	}
	for node, shown := range e.published {
		if shown != e.kubelets.freeOf(node) {
			return false
		}
	}
	return true
}

// forget drops a node whose NRT object the run deletes.
func (e *exporter) forget(node string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.published, node)
	delete(e.versions, node)
}

// failures are the updates the API server refused (each leaves its node's object behind).
func (e *exporter) failures() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.errors))
	for _, err := range e.errors {
		out = append(out, err.Error())
	}
	return out
}

// written is how many NRT updates it wrote so far.
func (e *exporter) written() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.updates
}

// sent is how many NRT writes it began or ended so far.
func (e *exporter) sent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.begun + e.updates
}
