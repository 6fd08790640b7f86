package k8sloop

import (
	"strings"
	"testing"
)

// TestJudge checks the count rule of judge: strict where the pods fit in the nodes' room, within
// overloadChance of the control's running pods where they ask more, whether the control's overflow
// stayed Pending or was refused by the kubelets; and that only the over-full shortfalls are run again.
func TestJudge(t *testing.T) {
	control := func(bound, refused, pending int, overfull bool) outcome {
		return outcome{Spec: "5 nodes w control", Nodes: 5, Workload: "w", Mode: "control", Bound: bound,
			Refused: refused, Pending: pending, Overfull: overfull, Settled: true}
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
		{"all fit, as many", control(16, 0, 0, false), 16, false},
		{"all fit, one fewer", control(16, 0, 0, false), 15, true},
		{"all fit, one fewer than bound, as many as running", control(16, 1, 0, false), 15, false},
		{"overload, as many as running", control(38, 1, 4, true), 37, false},
		{"overload, by chance fewer", control(38, 1, 4, true), 37 - overloadChance, false},
		{"overload, fewer than chance gives", control(38, 1, 4, true), 36 - overloadChance, true},
		// churn: the control bound every pod and its kubelets refused the overflow
		{"overload all refused, by chance fewer", control(44, 8, 0, true), 36 - 1, false},
		{"overload all refused, fewer than chance gives", control(44, 8, 0, true), 35 - overloadChance, true},
	}
	for _, c := range cases {
		runs := []outcome{c.control, pack(c.bound)}
		problems := judge(runs)
		failed := len(problems) > 0 && strings.Contains(strings.Join(problems, ";"), "bound, the control bound")
		if failed != c.fails {
			t.Errorf("%s: problems %v, want failing %v", c.name, problems, c.fails)
		}
		// only a shortfall against an over-full control is run again
		again := len(shortByChance(runs)) > 0
		if want := c.fails && c.control.Overfull; again != want {
			t.Errorf("%s: run again %v, want %v", c.name, again, want)
		}
	}
}
