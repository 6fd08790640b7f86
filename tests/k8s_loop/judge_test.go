package k8sloop

import (
	"strings"
	"testing"
)

// TestJudge checks the count rule of judge: strict where every pod fit, within overloadChance of
// the control's running pods where not.
func TestJudge(t *testing.T) {
	control := func(bound, refused, pending int) outcome {
		return outcome{Spec: "5 nodes w control", Nodes: 5, Workload: "w", Mode: "control", Bound: bound,
			Refused: refused, Pending: pending, Settled: true}
	}
	pack := func(bound int) outcome {
		return outcome{Spec: "5 nodes w pack", Nodes: 5, Workload: "w", Mode: "pack", Bound: bound, Settled: true}
	}
	cases := []struct {
		name    string
		control outcome
		bound   int
		fails   bool
	}{
		{"all fit, as many", control(16, 0, 0), 16, false},
		{"all fit, one fewer", control(16, 0, 0), 15, true},
		{"all fit, one fewer than bound, as many as running", control(16, 1, 0), 15, false},
		{"overload, as many as running", control(38, 1, 4), 37, false},
		{"overload, by chance fewer", control(38, 1, 4), 37 - overloadChance, false},
		{"overload, fewer than chance gives", control(38, 1, 4), 36 - overloadChance, true},
	}
	for _, c := range cases {
		problems := judge([]outcome{c.control, pack(c.bound)})
		failed := len(problems) > 0 && strings.Contains(strings.Join(problems, ";"), "bound, the control bound")
		if failed != c.fails {
			t.Errorf("%s: problems %v, want failing %v", c.name, problems, c.fails)
		}
	}
}
