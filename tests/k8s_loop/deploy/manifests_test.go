package deploy

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

var update = flag.Bool("update", false, "write deploy/kubernetes/nfvplace-scheduler.yaml from the chart")

const (
	release   = "nfvplace-scheduler"
	namespace = "nfvplace"
	plainFile = "nfvplace-scheduler.yaml"
	plainHead = "# Generated from deploy/helm/nfvplace-scheduler with its default values (release\n" +
		"# nfvplace-scheduler, namespace nfvplace): cd tests/k8s_loop && go test ./deploy -update\n"
)

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(filepath.Join(repoRoot(t), "deploy", "helm", "nfvplace-scheduler"))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// render renders the chart as `helm template` does, with helm's own engine.
func render(ch *chart.Chart, values string) (map[string][]byte, error) {
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.34.2", Major: "1", Minor: "34"}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{
		Name: release, Namespace: namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for name, text := range out {
		if strings.HasSuffix(name, ".yaml") {
			files[name] = []byte(text)
		}
	}
	return files, nil
}

func TestChartRendersToValidObjects(t *testing.T) {
	ch := loadChart(t)
	cases := []struct {
		name, values string
		want         want
	}{
		{"defaults", "", want{[]string{"numa-aware"}, "nfvplace-scheduler"}},
		{"only scheduler", "onlyScheduler: true",
			want{[]string{"numa-aware", "default-scheduler"}, "nfvplace-scheduler"}},
		{"renamed, PostgreSQL from a Secret, two replicas",
			"schedulerName: cnf\nreplicas: 2\nleaderElection: {leaseName: cnf-lease}\n" +
				"nfvplace: {port: 9090, database: {existingSecret: nfvplace-db}}\n" +
				"extender: {policy: spread, nodeCacheCapable: false}",
			want{[]string{"cnf"}, "cnf-lease"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := render(ch, c.values)
			if err != nil {
				t.Fatal(err)
			}
			b, err := decodeBundle("chart ("+c.name+")", files)
			if err != nil {
				t.Fatal(err)
			}
			checkBundle(t, b, c.want)
		})
	}
}

func TestChartRefusesBadValues(t *testing.T) {
	ch := loadChart(t)
	cases := []struct{ values, want string }{
		{"replicas: 2", "replicas > 1 needs nfvplace.database"},
		{"extender: {policy: fastest}", "/extender/policy"},
		{"schedulerName: default-scheduler", "schedulerName"},
		{"extender: {httpTimeout: 5}", "/extender/httpTimeout"},
		{"nfvplace: {databse: {url: x}}", "databse"},
	}
	for _, c := range cases {
		_, err := render(ch, c.values)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %q: want an error naming %q, got %v", c.values, c.want, err)
		}
	}
}

// plainManifests is the chart rendered with its defaults, as one file of documents in a fixed
// order, the Helm label said as what applies them.
func plainManifests(t *testing.T) []byte {
	t.Helper()
	files, err := render(loadChart(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.WriteString(plainHead)
	for _, name := range []string{"serviceaccount.yaml", "rbac.yaml", "configmap.yaml", "deployment.yaml"} {
		text, ok := files["nfvplace-scheduler/templates/"+name]
		if !ok {
			t.Fatalf("the chart rendered no %s", name)
		}
		out.WriteString("---\n# Source: templates/" + name + "\n")
		out.WriteString(strings.TrimSpace(strings.ReplaceAll(string(text),
			"app.kubernetes.io/managed-by: Helm", "app.kubernetes.io/managed-by: kubectl")) + "\n")
	}
	if len(files) != 4 {
		t.Fatalf("the chart rendered %d templates, the plain manifests take 4", len(files))
	}
	return []byte(out.String())
}

func TestPlainManifestsAreTheChartRendered(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "deploy", "kubernetes")
	want := plainManifests(t)
	if *update {
		if err := os.WriteFile(filepath.Join(dir, plainFile), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, plainFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("deploy/kubernetes/%s is not the chart rendered with its defaults: "+
			"cd tests/k8s_loop && go test ./deploy -update", plainFile)
	}
}

func TestPlainManifestsDecodeAndValidate(t *testing.T) {
	b, err := decodeBundle("deploy/kubernetes", readFiles(t, filepath.Join(repoRoot(t), "deploy", "kubernetes")))
	if err != nil {
		t.Fatal(err)
	}
	ns := false
	for _, o := range b.objects {
		if reflect.TypeOf(o).Elem().Name() == "Namespace" {
			ns = true
		}
	}
	if !ns {
		t.Error("deploy/kubernetes creates no Namespace for its objects")
	}
	checkBundle(t, b, want{[]string{"numa-aware"}, "nfvplace-scheduler"})
}
