package k8sloop

// One run: fresh nodes with their kubelets and NRT objects, a new kube-scheduler (with nfvplace
// or without), a workload of Guaranteed CNF pods, then the outcome once nothing moves and the NRT
// objects show every kubelet's counts.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

const schedulerName = "numa-aware" // deploy/kubernetes's profile

// spec says what one run does.
type spec struct {
	nodes    int
	workload string // burst-half, burst-full, stream, churn
	mode     string // control, pack, spread
}

func (s spec) String() string { return fmt.Sprintf("%d nodes %s %s", s.nodes, s.workload, s.mode) }

// run is one run's live state.
type run struct {
	spec
	t        *testing.T
	c        *cluster
	prefix   string
	dir      string
	kubelets *kubelets
	exporter *exporter
	nodes    []string
	mu       sync.Mutex
	lastMove time.Time // the last pod event
	events   int       // pod events so far
	created  time.Time
}

func podCount(s spec) int {
	perNode := map[string]float64{"burst-half": 3.3, "burst-full": 8.5, "stream": 6.5, "churn": 8.5}[s.workload]
	return int(perNode * float64(s.nodes))
}

func (r *run) moved() {
	r.mu.Lock()
	r.lastMove = time.Now()
	r.events++
	r.mu.Unlock()
}

func (r *run) quietFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.lastMove)
}

// addNodes creates the nodes (alternately container and pod scope), their kubelets and their
// NRT objects.
func (r *run) addNodes(ctx context.Context) {
	for i := 0; i < r.spec.nodes; i++ {
		name := fmt.Sprintf("%s-n%02d", r.prefix, i)
		scope := []string{"container", "pod"}[i%2]
		r.kubelets.addNode(name, scope)
		total := func(per int64) resource.Quantity { return *resource.NewQuantity(per*numaPerNode, resource.BinarySI) }
		capacity := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewQuantity(cpusPerNUMA*numaPerNode, resource.DecimalSI),
			corev1.ResourceMemory: total(memoryPerNUMA), hugepages1Gi: total(hugesPerNUMA),
			sriov:               *resource.NewQuantity(vfsPerNUMA*numaPerNode, resource.DecimalSI),
			corev1.ResourcePods: *resource.NewQuantity(110, resource.DecimalSI),
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"kubernetes.io/hostname": name}}}
		created, err := r.c.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		created.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}
		ready, err := r.c.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		// The API server taints a new node not-ready; the node lifecycle controller (not run
		// here) lifts the taint once the node reports Ready.
		ready.Spec.Taints = nil
		if _, err := r.c.client.CoreV1().Nodes().Update(ctx, ready, metav1.UpdateOptions{}); err != nil {
			r.t.Fatal(err)
		}
		r.exporter.publish(ctx, name)
		r.nodes = append(r.nodes, name)
	}
}

// cnfPod is a Guaranteed pod of 2 to 6 whole CPUs with 2 GiB of hugepages-1Gi and one VF; a
// third of them have a one-CPU sidecar too.
func cnfPod(name string, rng *rand.Rand) *corev1.Pod {
	limits := func(cpu int64, mem string, huge string, vfs int64) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpu, resource.DecimalSI),
			corev1.ResourceMemory: resource.MustParse(mem)}
		if huge != "" {
			l[hugepages1Gi] = resource.MustParse(huge)
			l[sriov] = *resource.NewQuantity(vfs, resource.DecimalSI)
		}
		return corev1.ResourceRequirements{Requests: l, Limits: l}
	}
	containers := []corev1.Container{{Name: "dataplane", Image: "example.com/cnf:1",
		Resources: limits(int64(2+rng.Intn(5)), "2Gi", "2Gi", 1)}}
	if rng.Intn(3) == 0 {
		containers = append(containers, corev1.Container{Name: "sidecar", Image: "example.com/agent:1",
			Resources: limits(1, "1Gi", "", 0)})
	}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: podNamespace},
		Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: containers,
			TerminationGracePeriodSeconds: &zero, AutomountServiceAccountToken: new(bool)},
	}
}

// watchPods runs the kubelets on the pod informer: admit what is bound, release what is gone.
func (r *run) watchPods(ctx context.Context) {
	factory := informers.NewSharedInformerFactoryWithOptions(r.c.client, 0, informers.WithNamespace(podNamespace))
	informer := factory.Core().V1().Pods().Informer()
	admit := func(obj any) {
		r.moved()
		if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" && pod.Status.Phase == corev1.PodPending {
			r.kubelets.admit(ctx, pod)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    admit,
		UpdateFunc: func(_, obj any) { admit(obj) },
		DeleteFunc: func(obj any) {
			r.moved()
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.kubelets.release(pod)
			}
		},
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
}

func (r *run) createPods(ctx context.Context, from, count int, perSecond float64, rng *rand.Rand) {
	start := time.Now()
	for i := from; i < from+count; i++ {
		pod := cnfPod(fmt.Sprintf("%s-p%03d", r.prefix, i), rng)
		if perSecond > 0 { // a stream: the k-th pod at k/perSecond
			time.Sleep(time.Until(start.Add(time.Duration(float64(i-from) * float64(time.Second) / perSecond))))
		}
		// One after the other, so that kube-scheduler's queue holds them in the same order in
		// every mode.
		if _, err := r.c.client.CoreV1().Pods(podNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			r.t.Errorf("creating %s: %v", pod.Name, err)
		}
	}
}

// settle waits until no pod event came for `quiet` and every NRT object shows its kubelet's
// counts, or `limit` has passed; it says how long that took.
func (r *run) settle(quiet, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < limit {
		if r.quietFor() >= quiet && r.exporter.caughtUp() {
			return time.Since(start) - quiet, true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Since(start), false
}

func newRun(t *testing.T, c *cluster, s spec, index int) *run {
	dir := filepath.Join(c.dir, fmt.Sprintf("run%02d", index))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &run{spec: s, t: t, c: c, prefix: fmt.Sprintf("r%02d", index), dir: dir, lastMove: time.Now()}
	r.exporter = newExporter(c.dynamic, time.Second)
	// LOOP_EXPORTER_LAG_S: the NRT updates of a loaded machine, written that long after the
	// counts they show were read
	r.exporter.lag = seconds("LOOP_EXPORTER_LAG_S", 0)
	r.kubelets = newKubelets(c.client, r.exporter.changed)
	r.exporter.kubelets = r.kubelets
	return r
}

// changes counts pod events, pod status writes and NRT writes (begun and ended) so far.
func (r *run) changes() int {
	r.mu.Lock()
	events := r.events
	r.mu.Unlock()
	r.kubelets.mu.Lock()
	writes := r.kubelets.writes
	r.kubelets.mu.Unlock()
	return events + writes + r.exporter.sent()
}
