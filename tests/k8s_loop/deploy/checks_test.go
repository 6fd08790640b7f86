package deploy

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// want is what one rendering must hold.
type want struct {
	profiles  []string // the scheduler's profiles, in order
	leaseName string
}

// checkBundle checks one deployment's objects against each other and against kube-scheduler.
func checkBundle(t *testing.T, b *bundle, w want) {
	t.Helper()
	if b.sa == nil || b.configMap == nil || b.deployment == nil {
		t.Fatalf("%s: want a ServiceAccount, a ConfigMap and a Deployment, got %d objects", b.source, len(b.objects))
	}
	cfg, err := schedulerConfig(b.configMap)
	if err != nil {
		t.Fatalf("%s: %v", b.source, err)
	}
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, p.SchedulerName)
	}
	if !slices.Equal(names, w.profiles) {
		t.Errorf("%s: profiles %v, want %v", b.source, names, w.profiles)
	}
	le := cfg.LeaderElection
	if !le.LeaderElect || le.ResourceName != w.leaseName || le.ResourceNamespace != b.deployment.Namespace {
		t.Errorf("%s: leader election %v on %s/%s, want its own lease %s/%s", b.source,
			le.LeaderElect, le.ResourceNamespace, le.ResourceName, b.deployment.Namespace, w.leaseName)
	}
	if len(cfg.Extenders) != 1 {
		t.Fatalf("%s: %d extenders, want nfvplace alone", b.source, len(cfg.Extenders))
	}
	ext := cfg.Extenders[0]
	if ext.FilterVerb != "filter" || ext.BindVerb != "bind" || !strings.HasPrefix(ext.PrioritizeVerb, "prioritize?policy=") {
		t.Errorf("%s: extender verbs %q %q %q", b.source, ext.FilterVerb, ext.PrioritizeVerb, ext.BindVerb)
	}
	if ext.Ignorable {
		t.Errorf("%s: extender ignorable=%v (kube-scheduler would skip nfvplace's retry Error)", b.source, ext.Ignorable)
	}
	checkPod(t, b, ext.URLPrefix)
	checkRBAC(t, b, w.leaseName)
}

// checkPod: kube-scheduler reads the ConfigMap where it is mounted, calls nfvplace on the port
// nfvplace listens on, on loopback, and both run as the ServiceAccount the RBAC names.
func checkPod(t *testing.T, b *bundle, urlPrefix string) {
	t.Helper()
	spec := b.deployment.Spec.Template.Spec
	if spec.ServiceAccountName != b.sa.Name || b.sa.Namespace != b.deployment.Namespace {
		t.Errorf("%s: pod runs as %q, the ServiceAccount is %s/%s", b.source,
			spec.ServiceAccountName, b.sa.Namespace, b.sa.Name)
	}
	scheduler, nfvplace := container(spec, "kube-scheduler"), container(spec, "nfvplace")
	if scheduler == nil || nfvplace == nil {
		t.Fatalf("%s: want containers kube-scheduler and nfvplace", b.source)
	}
	configPath := flagValue(scheduler.Command, "--config")
	mounted := false
	for _, m := range scheduler.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == b.configMap.Name &&
				path.Join(m.MountPath, "config.yaml") == configPath {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("%s: kube-scheduler's --config=%s is not the ConfigMap %s's config.yaml", b.source,
			configPath, b.configMap.Name)
	}
	u, err := url.Parse(urlPrefix)
	if err != nil {
		t.Fatal(err)
	}
	host, port := flagValue(nfvplace.Args, "--host"), flagValue(nfvplace.Args, "--port")
	if u.Hostname() != "127.0.0.1" || host != "127.0.0.1" || u.Port() != port || u.Path != "/k8s/v1" {
		t.Errorf("%s: extender at %s, nfvplace serves on %s:%s", b.source, urlPrefix, host, port)
	}
	if !slices.Contains(nfvplace.Args, "--in-cluster") {
		t.Errorf("%s: nfvplace runs without --in-cluster: it would neither bind nor watch", b.source)
	}
}

func container(spec corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	return nil
}

// flagValue finds --name=value in a command line.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// access is one request the ServiceAccount makes, or must not be able to make.
type access struct {
	who                                         string
	verb, namespace, group, resource, sub, name string
	allowed                                     bool
}

func accesses(ns, lease string) []access {
	return []access{
		{"kube-scheduler", "update", ns, "coordination.k8s.io", "leases", "", lease, true},
		{"kube-scheduler", "create", ns, "coordination.k8s.io", "leases", "", "", true},
		{"kube-scheduler", "watch", "", "", "pods", "", "", true},
		{"kube-scheduler", "watch", "", "", "nodes", "", "", true},
		{"kube-scheduler", "patch", "default", "", "pods", "status", "p", true},
		{"kube-scheduler", "create", "default", "events.k8s.io", "events", "", "", true},
		{"kube-scheduler", "list", "", "storage.k8s.io", "storageclasses", "", "", true},
		{"kube-scheduler", "list", "", "storage.k8s.io", "csinodes", "", "", true},
		{"kube-scheduler", "get", "kube-system", "", "configmaps", "", "extension-apiserver-authentication", true},
		{"nfvplace", "create", "default", "", "pods", "binding", "p", true},
		{"nfvplace", "watch", "", "", "pods", "", "", true},
		{"nfvplace", "watch", "", "topology.node.k8s.io", "noderesourcetopologies", "", "", true},
		{"nfvplace", "list", "", "topology.node.k8s.io", "noderesourcetopologies", "", "", true},
		{"nobody", "update", ns, "coordination.k8s.io", "leases", "", "someone-elses", false},
		{"nobody", "get", "default", "", "secrets", "", "", false},
		{"nobody", "delete", "", "", "nodes", "", "n", false},
		{"nobody", "update", "", "topology.node.k8s.io", "noderesourcetopologies", "", "n", false},
	}
}

// checkRBAC asks the API server's RBAC authorizer, over the bootstrap roles and the bundle's.
func checkRBAC(t *testing.T, b *bundle, lease string) {
	t.Helper()
	roles := slices.Clone(b.roles)
	for _, rs := range bootstrappolicy.NamespaceRoles() {
		for i := range rs {
			roles = append(roles, &rs[i])
		}
	}
	clusterRoles := slices.Clone(b.cRoles)
	for _, r := range bootstrappolicy.ClusterRoles() {
		clusterRoles = append(clusterRoles, &r)
	}
	_, static := validation.NewTestRuleResolver(roles, b.bindings, clusterRoles, b.cBindings)
	authz := rbac.New(static, static, static, static)
	ns := b.deployment.Namespace
	account := &user.DefaultInfo{
		Name:   fmt.Sprintf("system:serviceaccount:%s:%s", ns, b.sa.Name),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	for _, a := range accesses(ns, lease) {
		decision, reason, err := authz.Authorize(context.Background(), authorizer.AttributesRecord{
			User: account, Verb: a.verb, Namespace: a.namespace, APIGroup: a.group,
			Resource: a.resource, Subresource: a.sub, Name: a.name, ResourceRequest: true,
		})
		if err != nil {
			t.Errorf("%s: %v", b.source, err)
		}
		if got := decision == authorizer.DecisionAllow; got != a.allowed {
			t.Errorf("%s: %s %s %s/%s %s (%s) in %q: allowed=%v, want %v (%s)", b.source, a.who,
				a.verb, a.resource, a.sub, a.name, a.group, a.namespace, got, a.allowed, reason)
		}
	}
}
