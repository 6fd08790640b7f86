package k8sloop

// A recording proxy between kube-scheduler and nfvplace: it passes each extender call on as it
// is and keeps, per verb, how long nfvplace took and what it answered, so the run can say whether
// filter and prioritize agreed (a node filter kept must score 1 to 10).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// filtered is what a filter call kept, and how many changes the cluster had seen then.
type filtered struct {
	nodes   []string
	changes int
	refused map[string]string // node -> nfvplace's reason
	err     string            // the answer's Error (kube-scheduler retries the pod after a backoff)
	at      time.Time
}

type recorder struct {
	mu        sync.Mutex
	latencies map[string][]time.Duration // by verb
	kept      map[string]filtered        // by pod UID: its last filter
	disagree  []string
	raced     []string   // disagreements after the cluster changed between the two calls
	changes   func() int // bind calls begun and ended, pod events, NRT updates, so far
	bindCalls int
	bindError []string
	binds     int
	server    *http.Server
	url       string
}

func startRecorder(target string, clusterChanges func() int) (*recorder, error) {
	upstream, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	r := &recorder{latencies: map[string][]time.Duration{}, kept: map[string]filtered{}}
	r.changes = func() int { return r.bindCalls + clusterChanges() } // under r.mu
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + listener.Addr().String()
	r.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.serve(proxy, w, req)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.server.Serve(listener) }()
	return r, nil
}

// capture is a ResponseWriter that keeps a copy of the body.
type capture struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (c *capture) Write(p []byte) (int, error) {
	c.body.Write(p)
	return c.ResponseWriter.Write(p)
}

func (r *recorder) serve(proxy *httputil.ReverseProxy, w http.ResponseWriter, req *http.Request) {
	verb := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	request, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(request))
	out := &capture{ResponseWriter: w}
	if verb == "bind" { // nfvplace's state changes from the moment it takes the call
		r.mu.Lock()
		r.bindCalls++
		r.mu.Unlock()
	}
	start := time.Now()
	proxy.ServeHTTP(out, req)
	elapsed := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if verb == "bind" {
		r.bindCalls++
	}
	r.latencies[verb] = append(r.latencies[verb], elapsed)
	switch verb {
	case "filter":
		r.recordFilter(request, out.body.Bytes())
	case "prioritize":
		r.recordPrioritize(request, out.body.Bytes())
	case "bind":
		var result extenderv1.ExtenderBindingResult
		if json.Unmarshal(out.body.Bytes(), &result) != nil || result.Error != "" {
			r.bindError = append(r.bindError, fmt.Sprintf("%s %s", result.Error, out.body.String()))
		} else {
			r.binds++
		}
	}
}

func (r *recorder) recordFilter(request, answer []byte) {
	var args extenderv1.ExtenderArgs
	var result extenderv1.ExtenderFilterResult
	if json.Unmarshal(request, &args) != nil || json.Unmarshal(answer, &result) != nil || args.Pod == nil {
		return
	}
	var kept []string
	if result.NodeNames != nil {
		kept = *result.NodeNames
	} else if result.Nodes != nil {
		for _, n := range result.Nodes.Items {
			kept = append(kept, n.Name)
		}
	}
	refused := map[string]string{}
	for node, why := range result.FailedNodes {
		refused[node] = why
	}
	for node, why := range result.FailedAndUnresolvableNodes {
		refused[node] = "(unresolvable) " + why
	}
	r.kept[string(args.Pod.UID)] = filtered{kept, r.changes(), refused, result.Error, time.Now()}
}

// recordPrioritize checks the answer against the pod's last filter: every node filter kept
// scores 1 to 10, every node it refused 0. Where a bind call began or ended, a pod changed or an
// NRT object was written between the two calls, the two answers may rest on different states:
// such a disagreement is kept apart (the direct probe at the end checks a still cluster).
func (r *recorder) recordPrioritize(request, answer []byte) {
	var args extenderv1.ExtenderArgs
	var scores extenderv1.HostPriorityList
	if json.Unmarshal(request, &args) != nil || json.Unmarshal(answer, &scores) != nil || args.Pod == nil {
		return
	}
	last := r.kept[string(args.Pod.UID)]
	for _, s := range scores {
		inFilter := slices.Contains(last.nodes, s.Host)
		if (inFilter && (s.Score < 1 || s.Score > 10)) || (!inFilter && s.Score != 0) {
			what := fmt.Sprintf("pod %s node %s: filter kept=%v, score %d", args.Pod.Name, s.Host, inFilter, s.Score)
			if r.changes() != last.changes {
				r.raced = append(r.raced, what)
			} else {
				r.disagree = append(r.disagree, what)
			}
		}
	}
}

// stats is p50/p95/max and the count of one verb's calls.
func (r *recorder) stats(verb string) string {
	r.mu.Lock()
	d := slices.Clone(r.latencies[verb])
	r.mu.Unlock()
	if len(d) == 0 {
		return "-"
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) string { return fmt.Sprintf("%.0f", float64(x.Microseconds())/1000) }
	return fmt.Sprintf("%d× p50 %s p95 %s max %s ms", len(d), ms(d[len(d)/2]),
		ms(d[(len(d)*95)/100]), ms(d[len(d)-1]))
}

func (r *recorder) close() { _ = r.server.Close() }

// lastRefusal is one of the reasons nfvplace's last filter gave for a pod, with its node.
func (r *recorder) lastRefusal(uid string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.kept[uid]
	if !ok {
		return "never filtered"
	}
	nodes := make([]string, 0, len(last.refused))
	for node := range last.refused {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	ago := time.Since(last.at).Round(100 * time.Millisecond)
	if last.err != "" {
		return fmt.Sprintf("%s ago: Error %q", ago, last.err)
	}
	if len(nodes) == 0 {
		return fmt.Sprintf("%s ago: filter kept %v", ago, last.nodes)
	}
	return fmt.Sprintf("%s ago: %d nodes refused, %s: %s", ago, len(nodes), nodes[0], last.refused[nodes[0]])
}
