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

type recorder struct {
	mu        sync.Mutex
	latencies map[string][]time.Duration // by verb
	kept      map[string][]string        // pod UID -> nodes filter kept last
	disagree  []string
	bindError []string
	server    *http.Server
	url       string
}

func startRecorder(target string) (*recorder, error) {
	upstream, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	r := &recorder{latencies: map[string][]time.Duration{}, kept: map[string][]string{}}
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
	start := time.Now()
	proxy.ServeHTTP(out, req)
	elapsed := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
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
	r.kept[string(args.Pod.UID)] = kept
}

// recordPrioritize checks the answer against the pod's last filter: every node filter kept
// scores 1 to 10, every node it refused 0.
func (r *recorder) recordPrioritize(request, answer []byte) {
	var args extenderv1.ExtenderArgs
	var scores extenderv1.HostPriorityList
	if json.Unmarshal(request, &args) != nil || json.Unmarshal(answer, &scores) != nil || args.Pod == nil {
		return
	}
	kept := r.kept[string(args.Pod.UID)]
	for _, s := range scores {
		inFilter := slices.Contains(kept, s.Host)
		if (inFilter && (s.Score < 1 || s.Score > 10)) || (!inFilter && s.Score != 0) {
			r.disagree = append(r.disagree, fmt.Sprintf("pod %s node %s: filter kept=%v, score %d",
				args.Pod.Name, s.Host, inFilter, s.Score))
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
