package k8sloop

// What a run ends with: pods bound (by the scheduler), running (admitted by their kubelet) or
// refused by it, still
// Pending, and whether a Pending pod would fit a node by the kubelet's own count; nodes used;
// extender call latencies; filter/prioritize agreement, in the loop and asked directly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

type outcome struct {
	Spec        string   `json:"run"`
	Nodes       int      `json:"nodes"`
	Workload    string   `json:"workload"`
	Mode        string   `json:"mode"`
	Pods        int      `json:"pods"`
	Bound       int      `json:"bound"` // by the scheduler: admitted, refused or not yet seen
	Running     int      `json:"running"`
	Refused     int      `json:"kubelet_refused"`
	RefusedWhy  []string `json:"kubelet_refused_why"` // the kubelet's reason, and nfvplace's last filter
	NfvplaceLog string   `json:"nfvplace_log"`        // kept when the run refused or stranded a pod
	Pending     int      `json:"pending"`
	Overfull    bool     `json:"overfull"` // the run's pods ask more than the nodes hold, in some resource
	Unadmitted  int      `json:"bound_not_admitted"`
	PendingFits []string `json:"pending_that_fit"`
	PendingWhy  []string `json:"pending_why"` // nfvplace's last answer for each Pending pod
	NodesUsed   int      `json:"nodes_used"`
	SettleS     float64  `json:"settle_s"`
	Settled     bool     `json:"settled"`
	Disagree    []string `json:"filter_prioritize_disagreements"`
	Raced       int      `json:"disagreements_across_a_change"`
	BindErrors  int      `json:"bind_errors"`
	Filter      string   `json:"filter"`
	Prioritize  string   `json:"prioritize"`
	Bind        string   `json:"bind"`
	NRTUpdates  int      `json:"nrt_updates"`
	NRTFailures []string `json:"nrt_updates_refused"` // by the API server: the exporter fell behind
	RunAgain    bool     `json:"run_again"`           // a second run, the first short by chance
}

// allocatable is every node's (all nodes are alike).
var allocatable = amounts{cpusPerNUMA * numaPerNode, memoryPerNUMA * numaPerNode,
	hugesPerNUMA * numaPerNode, vfsPerNUMA * numaPerNode}

func podDemand(pod *corev1.Pod) amounts {
	var sum amounts
	for _, c := range pod.Spec.Containers {
		sum = sum.plus(demand(c))
	}
	return sum
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

func (r *run) measure(ctx context.Context, ext *nfvplaceServer, rec *recorder) outcome {
	list, err := r.c.client.CoreV1().Pods(podNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	o := outcome{Spec: r.spec.String(), Nodes: r.spec.nodes, Workload: r.workload, Mode: r.mode,
		Pods: len(list.Items)}
	requested := map[string]amounts{}
	used := map[string]bool{}
	var pending []*corev1.Pod
	var asked, room amounts
	for range r.nodes {
		room = room.plus(allocatable)
	}
	r.kubelets.mu.Lock()
	for i := range list.Items {
		pod := &list.Items[i]
		asked = asked.plus(podDemand(pod))
		_, refused := r.kubelets.refused[pod.UID]
		node, admitted := r.kubelets.admitted[pod.UID]
		switch {
		case pod.Spec.NodeName == "":
			o.Pending++
			pending = append(pending, pod)
		case admitted:
			o.Bound++
			o.Running++
			used[node] = true
		case refused:
			o.Bound++
			o.Refused++
			o.RefusedWhy = append(o.RefusedWhy, fmt.Sprintf("%s on %s: %s", pod.Name,
				pod.Spec.NodeName, r.kubelets.refused[pod.UID]))
		default:
			o.Bound++
			o.Unadmitted++
		}
		if pod.Spec.NodeName != "" && !terminal(pod) {
			requested[pod.Spec.NodeName] = requested[pod.Spec.NodeName].plus(podDemand(pod))
		}
	}
	r.kubelets.mu.Unlock()
	o.NodesUsed = len(used)
	o.Overfull = !asked.fits(room)
	for _, pod := range pending {
		for _, node := range r.nodes {
			if podDemand(pod).fits(allocatable.minus(requested[node])) && r.kubelets.wouldAdmit(node, pod) {
				fits := fmt.Sprintf("%s fits %s", pod.Name, node)
				if rec != nil {
					fits += " (nfvplace's last answer " + truncate(rec.lastRefusal(string(pod.UID)), 400) + ")"
				}
				o.PendingFits = append(o.PendingFits, fits)
				break
			}
		}
	}
	o.NRTUpdates, o.NRTFailures = r.exporter.written(), r.exporter.failures()
	if rec != nil {
		rec.mu.Lock()
		o.Disagree = slices.Clone(rec.disagree)
		o.BindErrors = len(rec.bindError)
		o.Raced = len(rec.raced)
		rec.mu.Unlock()
		o.Filter, o.Prioritize, o.Bind = rec.stats("filter"), rec.stats("prioritize"), rec.stats("bind")
		o.Disagree = append(o.Disagree, r.probe(ext, list.Items)...)
		for _, pod := range pending {
			o.PendingWhy = append(o.PendingWhy, pod.Name+": "+rec.lastRefusal(string(pod.UID)))
		}
		for i, why := range o.RefusedWhy {
			pod, _, _ := strings.Cut(why, " ")
			for _, item := range list.Items {
				if item.Name == pod {
					o.RefusedWhy[i] += "; nfvplace's last filter: " + rec.lastRefusal(string(item.UID))
				}
			}
		}
	}
	return o
}

// probe asks nfvplace directly, for every Pending pod and a few others, filter and prioritize
// over every node: a node filter refuses must score 0, one it keeps 1 to 10.
func (r *run) probe(ext *nfvplaceServer, pods []corev1.Pod) []string {
	var out []string
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName != "" && i%5 != 0 {
			continue
		}
		names := slices.Clone(r.nodes)
		args := extenderv1.ExtenderArgs{Pod: pod, NodeNames: &names}
		var filtered extenderv1.ExtenderFilterResult
		var scores extenderv1.HostPriorityList
		if err := post(ext.url+"/k8s/v1/filter", args, &filtered); err != nil {
			return append(out, err.Error())
		}
		if err := post(ext.url+"/k8s/v1/prioritize", args, &scores); err != nil {
			return append(out, err.Error())
		}
		var kept []string
		if filtered.NodeNames != nil {
			kept = *filtered.NodeNames
		}
		for _, s := range scores {
			in := slices.Contains(kept, s.Host)
			if (in && (s.Score < 1 || s.Score > 10)) || (!in && s.Score != 0) {
				out = append(out, fmt.Sprintf("probe: pod %s node %s: filter kept=%v, score %d",
					pod.Name, s.Host, in, s.Score))
			}
		}
		if len(scores) != len(names) {
			out = append(out, fmt.Sprintf("probe: pod %s: %d scores for %d nodes", pod.Name, len(scores), len(names)))
		}
	}
	return out
}

func post(url string, body, answer any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: status %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(answer)
}

func truncate(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return text[:n] + "..."
}
