// Contract tests of nfvplace's Kubernetes scheduler extender against the upstream Go types.
//
// The NodeResourceTopology objects are built with the types of
// github.com/k8stopologyawareschedwg/noderesourcetopology-api (v1alpha2) and PUT to
// /v1/hosts/{node}; the pods with k8s.io/api/core/v1; the requests with ExtenderArgs of
// k8s.io/kube-scheduler/extender/v1, encoded and the answers decoded exactly as kube-scheduler's
// HTTPExtender does (encoding/json, pkg/scheduler/extender.go `send`).
//
// NFVPLACE_URL names a running `nfvplace serve` (an empty database); NFVPLACE_TOKEN, when set, is
// sent as a bearer token of the admin role. tests/service/test_service_k8s_contract.py runs this.
package k8scontract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

const sriov = "intel.com/sriov_netdevice"

func server(t *testing.T) string {
	t.Helper()
	url := os.Getenv("NFVPLACE_URL")
	if url == "" {
		t.Fatal("set NFVPLACE_URL to a running `nfvplace serve` (tests/service/test_service_k8s_contract.py does)")
	}
	return strings.TrimRight(url, "/")
}

// send is kube-scheduler's HTTPExtender.send: JSON in, 200 expected, JSON decoded into result.
func send(t *testing.T, method, path string, args, result any) {
	t.Helper()
	out, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, server(t)+path, bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token := os.Getenv("NFVPLACE_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var problem bytes.Buffer
		_, _ = problem.ReadFrom(resp.Body)
		t.Fatalf("%s %s: status %d: %s", method, path, resp.StatusCode, problem.String())
	}
	if result != nil {
		if err := json.NewDecoder(resp.Body).Decode(result); err != nil {
			t.Fatalf("%s %s: decoding the answer: %v", method, path, err)
		}
	}
}

func zone(id int, cpus, freeCPUs, vfs, freeVFs int64) topologyv1alpha2.Zone {
	quantity := func(n int64) resource.Quantity { return *resource.NewQuantity(n, resource.DecimalSI) }
	return topologyv1alpha2.Zone{
		Name: fmt.Sprintf("node-%d", id),
		Type: "Node",
		Costs: topologyv1alpha2.CostList{
			{Name: "node-0", Value: map[bool]int64{true: 10, false: 21}[id == 0]},
			{Name: "node-1", Value: map[bool]int64{true: 10, false: 21}[id == 1]},
		},
		Resources: topologyv1alpha2.ResourceInfoList{
			{Name: "cpu", Capacity: quantity(cpus + 2), Allocatable: quantity(cpus), Available: quantity(freeCPUs)},
			{Name: "memory", Capacity: resource.MustParse("66Gi"), Allocatable: resource.MustParse("64Gi"), Available: resource.MustParse("60Gi")},
			{Name: "hugepages-1Gi", Capacity: resource.MustParse("16Gi"), Allocatable: resource.MustParse("16Gi"), Available: resource.MustParse("8Gi")},
			{Name: sriov, Capacity: quantity(vfs), Allocatable: quantity(vfs), Available: quantity(freeVFs)},
		},
	}
}

// node is an NRT object as the resource-topology-exporter writes it: NUMA node 0 has `free0` free
// CPUs of 16, NUMA node 1 `free1`; both have 4 VFs.
func node(name string, free0, free1 int64, policy, scope string) *topologyv1alpha2.NodeResourceTopology {
	return &topologyv1alpha2.NodeResourceTopology{
		TypeMeta:   metav1.TypeMeta{APIVersion: "topology.node.k8s.io/v1alpha2", Kind: "NodeResourceTopology"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Zones:      topologyv1alpha2.ZoneList{zone(0, 16, free0, 4, 4), zone(1, 16, free1, 4, 4)},
		Attributes: topologyv1alpha2.AttributeList{
			{Name: "topologyManagerPolicy", Value: policy},
			{Name: "topologyManagerScope", Value: scope},
		},
	}
}

func pod(uid string, cpus string) *v1.Pod {
	limits := v1.ResourceList{
		v1.ResourceCPU:                   resource.MustParse(cpus),
		v1.ResourceMemory:                resource.MustParse("2Gi"),
		v1.ResourceName("hugepages-1Gi"): resource.MustParse("2Gi"),
		v1.ResourceName(sriov):           resource.MustParse("1"),
	}
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnf-" + uid, Namespace: "contract", UID: types.UID(uid)},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "dataplane",
			Image:     "example.com/cnf:1",
			Resources: v1.ResourceRequirements{Requests: limits, Limits: limits},
		}}},
	}
}

// setup registers three nodes of its own for a test: <prefix>-roomy (12 free CPUs on NUMA node 1),
// <prefix>-tight (at most 6 free CPUs on a NUMA node, pod scope) and <prefix>-spread (6 free on
// each NUMA node, policy restricted).
func setup(t *testing.T, prefix string) []string {
	nodes := []*topologyv1alpha2.NodeResourceTopology{
		node(prefix+"-roomy", 2, 12, "single-numa-node", "container"),
		node(prefix+"-tight", 6, 4, "single-numa-node", "pod"),
		node(prefix+"-spread", 6, 6, "restricted", "container"),
	}
	var names []string
	for _, nrt := range nodes {
		send(t, http.MethodPut, "/v1/hosts/"+nrt.Name, nrt, nil)
		names = append(names, nrt.Name)
	}
	return names
}

func TestFilterWithNodeNames(t *testing.T) {
	names := setup(t, "names")
	args := extenderv1.ExtenderArgs{Pod: pod("names-1", "8"), NodeNames: &names}
	var result extenderv1.ExtenderFilterResult
	send(t, http.MethodPost, "/k8s/v1/filter", args, &result)
	if result.Error != "" {
		t.Fatalf("Error: %s", result.Error)
	}
	if result.NodeNames == nil || strings.Join(*result.NodeNames, ",") != "names-roomy" {
		t.Fatalf("NodeNames: want [names-roomy], got %v", result.NodeNames)
	}
	if result.Nodes != nil {
		t.Fatalf("Nodes must stay empty with NodeNames, got %v", result.Nodes)
	}
	for _, refused := range names[1:] {
		reason, ok := result.FailedAndUnresolvableNodes[refused]
		if !ok || !strings.Contains(reason, "Topology Affinity Error") {
			t.Errorf("%s: want an unresolvable Topology Affinity Error, got %q", refused, reason)
		}
	}
}

func TestFilterWithNodeObjects(t *testing.T) {
	names := setup(t, "objects")
	list := &v1.NodeList{}
	for _, name := range names {
		list.Items = append(list.Items, v1.Node{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": "cnf"}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("32"),
			}},
		})
	}
	args := extenderv1.ExtenderArgs{Pod: pod("objects-1", "4"), Nodes: list}
	var result extenderv1.ExtenderFilterResult
	send(t, http.MethodPost, "/k8s/v1/filter", args, &result)
	if result.Nodes == nil || len(result.Nodes.Items) != 3 {
		t.Fatalf("Nodes: want the three Node objects back, got %v", result.Nodes)
	}
	for i, item := range result.Nodes.Items {
		if item.Name != names[i] || item.Labels["role"] != "cnf" || item.Status.Allocatable.Cpu().Value() != 32 {
			t.Errorf("node %d came back changed: %+v", i, item)
		}
	}
	if result.NodeNames != nil {
		t.Fatalf("NodeNames must stay empty with Nodes, got %v", *result.NodeNames)
	}
}

func TestFilterAssumesNothing(t *testing.T) {
	names := setup(t, "burst")[:1] // burst-roomy: 12 free CPUs on NUMA node 1, 4 VFs there
	for i := 0; i < 4; i++ {       // four pods of 4 CPUs: each passes, none is assumed (no bind)
		args := extenderv1.ExtenderArgs{Pod: pod(fmt.Sprintf("burst-%d", i), "4"), NodeNames: &names}
		var result extenderv1.ExtenderFilterResult
		send(t, http.MethodPost, "/k8s/v1/filter", args, &result)
		if result.Error != "" || result.NodeNames == nil || len(*result.NodeNames) != 1 {
			t.Fatalf("pod %d: want %v kept, got %+v", i, names, result)
		}
	}
}

func TestBindWithoutACluster(t *testing.T) {
	args := extenderv1.ExtenderBindingArgs{
		PodName: "cnf-bind-1", PodNamespace: "contract", PodUID: types.UID("bind-1"), Node: "n",
	}
	var result extenderv1.ExtenderBindingResult
	send(t, http.MethodPost, "/k8s/v1/bind", args, &result)
	if !strings.HasPrefix(result.Error, "nfvplace.kubernetes.no_cluster:") {
		t.Fatalf("want the no_cluster Error (serve has no --kubeconfig here), got %q", result.Error)
	}
}

func TestPrioritize(t *testing.T) {
	names := setup(t, "scores")
	args := extenderv1.ExtenderArgs{Pod: pod("prioritize-1", "2"), NodeNames: &names}
	var result extenderv1.HostPriorityList
	send(t, http.MethodPost, "/k8s/v1/prioritize?policy=spread", args, &result)
	if len(result) != len(names) {
		t.Fatalf("want one HostPriority per node, got %v", result)
	}
	var filtered extenderv1.ExtenderFilterResult
	send(t, http.MethodPost, "/k8s/v1/filter", args, &filtered)
	kept := map[string]bool{}
	if filtered.NodeNames != nil {
		for _, name := range *filtered.NodeNames {
			kept[name] = true
		}
	}
	best := ""
	var top int64 = -1
	for i, priority := range result {
		if kept[priority.Host] != (priority.Score > 0) { // one decision: refused 0, kept 1-10
			t.Errorf("%s: filter kept it %v, yet it scores %d", priority.Host, kept[priority.Host], priority.Score)
		}
		if priority.Host != names[i] {
			t.Errorf("host %d: want %s, got %s", i, names[i], priority.Host)
		}
		if priority.Score < extenderv1.MinExtenderPriority || priority.Score > extenderv1.MaxExtenderPriority {
			t.Errorf("%s: score %d outside [%d, %d]", priority.Host, priority.Score,
				extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority)
		}
		if priority.Score > top {
			best, top = priority.Host, priority.Score
		}
	}
	if best != names[0] {
		t.Fatalf("spread: want %s (the most free CPUs) first, got %s at %d", names[0], best, top)
	}
}
