package k8sloop

// TestLoop runs kube-scheduler v1.34.2 with nfvplace as its extender against a real
// kube-apiserver, over the runs $LOOP_RUNS names (default: every workload on 5 and 50 nodes, each
// without extender and with nfvplace's pack and spread), prints a table and checks issue 34's
// "Done when" list. bash tests/k8s_loop/run.sh runs it.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const defaultRuns = "5:burst-half,5:burst-full,5:stream,5:churn,50:burst-half,50:stream"

// specs reads $LOOP_RUNS ("nodes:workload,...") and $LOOP_MODES (default control,pack,spread).
func specs(t *testing.T) []spec {
	runs, modes := os.Getenv("LOOP_RUNS"), os.Getenv("LOOP_MODES")
	if runs == "" {
		runs = defaultRuns
	}
	if modes == "" {
		modes = "control,pack,spread"
	}
	var out []spec
	for _, item := range strings.Split(runs, ",") {
		nodes, workload, ok := strings.Cut(strings.TrimSpace(item), ":")
		n, err := strconv.Atoi(nodes)
		if !ok || err != nil || podCount(spec{nodes: n, workload: workload}) == 0 {
			t.Fatalf("LOOP_RUNS: %q is not nodes:workload (burst-half, burst-full, stream, churn)", item)
		}
		for _, mode := range strings.Split(modes, ",") {
			out = append(out, spec{nodes: n, workload: workload, mode: mode})
		}
	}
	return out
}

func seconds(name string, fallback time.Duration) time.Duration {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return time.Duration(v * float64(time.Second))
	}
	return fallback
}

func TestLoop(t *testing.T) {
	start := time.Now()
	c := startCluster(t)
	t.Logf("etcd + kube-apiserver + CRD + deploy/kubernetes applied in %.1f s", time.Since(start).Seconds())
	var outcomes []outcome
	all := specs(t)
	for i, s := range all {
		o := runOne(t, c, s, i)
		outcomes = append(outcomes, o)
		fmt.Println(row(o))
	}
	for _, i := range shortByChance(outcomes) {
		// One order's tail on an over-full run (3 or more pods fewer than the control in 0.4 % of
		// bench/k8s_overload_odds.py's orders) is chance; a real shortfall is short again. The
		// second run replaces the first, and is judged by the same rule.
		t.Logf("%s: %d bound, short of its over-full control: run once more", all[i], outcomes[i].Bound)
		outcomes[i] = runOne(t, c, all[i], len(all)+i)
		outcomes[i].RunAgain = true
		fmt.Println(row(outcomes[i]))
	}
	fmt.Println(table(outcomes))
	if path := os.Getenv("LOOP_RESULTS"); path != "" {
		data, _ := json.MarshalIndent(outcomes, "", "  ")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, problem := range judge(outcomes) {
		t.Error(problem)
	}
}

// runOne runs one spec and cleans up after it.
func runOne(t *testing.T, c *cluster, s spec, index int) outcome {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRun(t, c, s, index)
	r.addNodes(ctx)
	var ext *nfvplaceServer
	var rec *recorder
	extenderURL := ""
	if s.mode != "control" {
		ext = startNfvplace(t, c, r.dir, s.nodes)
		var err error
		if rec, err = startRecorder(ext.url, r.changes); err != nil {
			t.Fatal(err)
		}
		extenderURL = rec.url
	}
	r.watchPods(ctx)
	stopScheduler := startScheduler(t, c, r.dir, extenderURL, s.mode)
	r.createWorkload(ctx)
	settle, settled := r.settle(seconds("LOOP_QUIET_S", 12*time.Second), seconds("LOOP_LIMIT_S", 240*time.Second))
	o := r.measure(ctx, ext, rec)
	o.SettleS, o.Settled = settle.Seconds(), settled
	stopScheduler()
	if ext != nil {
		rec.close()
		ext.stop()
		if o.Refused > 0 || len(o.PendingFits) > 0 {
			o.NfvplaceLog = keepLog(t, ext.log.Name(), r.prefix)
		}
	}
	r.cleanup(ctx)
	return o
}

// createWorkload creates the run's pods: the same pods, in the same order, for every mode.
func (r *run) createWorkload(ctx context.Context) {
	hash := fnv.New64a()
	fmt.Fprintf(hash, "%d %s", r.spec.nodes, r.spec.workload)
	rng := rand.New(rand.NewSource(int64(hash.Sum64())))
	n := podCount(r.spec)
	rate := float64(r.spec.nodes) // pods per second in a stream
	switch r.spec.workload {
	case "stream":
		r.createPods(ctx, 0, n, rate, rng)
	case "churn":
		r.createPods(ctx, 0, n, 0, rng)
		r.settle(seconds("LOOP_QUIET_S", 12*time.Second), seconds("LOOP_LIMIT_S", 240*time.Second))
		r.deleteThird(ctx)
		r.createPods(ctx, n, n/3, rate, rng)
	default:
		r.createPods(ctx, 0, n, 0, rng)
	}
}

// deleteThird deletes every third running pod.
func (r *run) deleteThird(ctx context.Context) {
	list, err := r.c.client.CoreV1().Pods(podNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	running := 0
	for _, pod := range list.Items {
		if pod.Status.Phase != corev1.PodRunning {
			continue
		}
		if running%3 == 0 {
			err := r.c.client.CoreV1().Pods(podNamespace).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0))
			if err != nil {
				r.t.Error(err)
			}
		}
		running++
	}
}

// cleanup deletes the run's pods, nodes and NRT objects.
func (r *run) cleanup(ctx context.Context) {
	pods := r.c.client.CoreV1().Pods(podNamespace)
	if err := pods.DeleteCollection(ctx, *metav1.NewDeleteOptions(0), metav1.ListOptions{}); err != nil {
		r.t.Error(err)
	}
	for _, node := range r.nodes {
		_ = r.c.client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
		_ = r.c.dynamic.Resource(nrtResource).Delete(ctx, node, metav1.DeleteOptions{})
	}
	r.exporter.inflight.Wait()
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
		if list, err := pods.List(ctx, metav1.ListOptions{}); err == nil && len(list.Items) == 0 {
			return
		}
	}
	r.t.Error("the run's pods were not gone 30 s after deleting them")
}

// keepLog copies a run's nfvplace log (its debug lines say what it assumed, and what each NRT
// update showed) next to $LOOP_LOG, which outlives the test's temporary directory.
func keepLog(t *testing.T, path, prefix string) string {
	kept := os.Getenv("LOOP_LOG")
	if kept == "" {
		return path
	}
	kept += "." + prefix + "-nfvplace.log"
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(kept, data, 0o644)
	}
	if err != nil {
		t.Error(err)
		return path
	}
	return kept
}
