package k8sloop

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestMain sends what is written to the process's stderr (kube-apiserver's, kube-scheduler's and
// etcd's logs) to $LOOP_LOG, so that `go test -v`, which merges the two, shows the runs alone.
func TestMain(m *testing.M) {
	if path := os.Getenv("LOOP_LOG"); path != "" {
		log, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Println("LOOP_LOG:", err)
			os.Exit(2)
		}
		if err := syscall.Dup3(int(log.Fd()), 2, 0); err != nil {
			fmt.Println("LOOP_LOG:", err)
			os.Exit(2)
		}
	}
	// k8s.io/kubernetes/test/utils/ktesting sets klog's -v to 5 for unit tests: far too much here.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "v" })
	if !explicit {
		_ = flag.Set("v", "1")
	}
	os.Exit(m.Run())
}
