package k8sloop

// kube-scheduler (its own command's Setup and Run, in this process) and `nfvplace serve` (a child
// process), each started for one run.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schedulerv1 "k8s.io/kube-scheduler/config/v1"
	schedulertesting "k8s.io/kubernetes/cmd/kube-scheduler/app/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// schedulerConfig is deploy/kubernetes's KubeSchedulerConfiguration with what differs here: the
// kubeconfig file (in the pod: its ServiceAccount), no leader election (one replica per run, each
// run a new scheduler), the extender's URL (the recording proxy) and policy; no extender at all
// for the control runs.
func schedulerConfig(c *cluster, extenderURL, policy string) ([]byte, error) {
	var cfg schedulerv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(c.schedulerConfig, &cfg); err != nil {
		return nil, fmt.Errorf("deploy/kubernetes's config.yaml: %w", err)
	}
	if len(cfg.Extenders) != 1 {
		return nil, fmt.Errorf("deploy/kubernetes's config.yaml names %d extenders, want 1", len(cfg.Extenders))
	}
	cfg.ClientConnection.Kubeconfig = c.kubeconfig
	cfg.LeaderElection.LeaderElect = ptr.To(false)
	if extenderURL == "" {
		cfg.Extenders = nil
	} else {
		cfg.Extenders[0].URLPrefix = extenderURL + "/k8s/v1"
		cfg.Extenders[0].PrioritizeVerb = "prioritize?policy=" + policy
	}
	return yaml.Marshal(&cfg)
}

func startScheduler(t *testing.T, c *cluster, dir, extenderURL, policy string) func() {
	data, err := schedulerConfig(c, extenderURL, policy)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scheduler.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	server, err := schedulertesting.StartTestServer(context.Background(), []string{"--config=" + path})
	if err != nil {
		t.Fatalf("kube-scheduler: %v", err)
	}
	return server.TearDownFn
}

// nfvplaceBinary is the CLI to run: $NFVPLACE (run.sh sets the worktree's .venv/bin/nfvplace).
func nfvplaceBinary(t *testing.T) string {
	if bin := os.Getenv("NFVPLACE"); bin != "" {
		return bin
	}
	bin := filepath.Join(repoRoot(), ".venv", "bin", "nfvplace")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("set NFVPLACE to the nfvplace command (none at %s)", bin)
	}
	return bin
}

type nfvplaceServer struct {
	url  string
	cmd  *exec.Cmd
	log  *os.File
	stop func()
}

// startNfvplace runs `nfvplace serve --kubeconfig` on its own SQLite database and waits until it
// knows every node's NodeResourceTopology.
func startNfvplace(t *testing.T, c *cluster, dir string, nodes int) *nfvplaceServer {
	port := freePort(t)
	log, err := os.Create(filepath.Join(dir, "nfvplace.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nfvplaceBinary(t), "serve", "--host", "127.0.0.1", "--port", fmt.Sprint(port),
		"--no-auth", "--db", "sqlite:///"+filepath.Join(dir, "nfvplace.db"), "--kubeconfig", c.kubeconfig,
		"--nrt-interval", "3", // the simulated exporter writes 1 s after an admission
		"--log-level", "debug") // each assumption, NRT and pod event: kept when a run fails
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &nfvplaceServer{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, log: log}
	s.stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = log.Close()
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if known, err := s.hostCount(); err == nil && known >= nodes {
			return s
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.stop()
	tail, _ := os.ReadFile(log.Name())
	t.Fatalf("nfvplace did not learn the %d nodes' NodeResourceTopology in 90 s; its log:\n%s",
		nodes, lastLines(string(tail), 40))
	return nil
}

func (s *nfvplaceServer) hostCount() (int, error) {
	resp, err := http.Get(s.url + "/v1/hosts")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list struct {
		Hosts []json.RawMessage `json:"hosts"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	return len(list.Hosts), err
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
