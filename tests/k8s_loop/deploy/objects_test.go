// Package deploy checks deploy/: the plain manifests and the Helm chart decode strictly into the
// upstream Go types, the KubeSchedulerConfiguration they carry passes kube-scheduler's own loading
// (defaulting and conversion) and validation, and the ServiceAccount's RBAC, evaluated by the API
// server's RBAC authorizer over its bootstrap roles, allows what kube-scheduler and nfvplace do.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// repoRoot is three levels above this file: tests/k8s_loop/deploy.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// bundle is one deployment's objects, typed.
type bundle struct {
	source     string
	objects    []k8sruntime.Object
	sa         *corev1.ServiceAccount
	configMap  *corev1.ConfigMap
	deployment *appsv1.Deployment
	roles      []*rbacv1.Role
	bindings   []*rbacv1.RoleBinding
	cRoles     []*rbacv1.ClusterRole
	cBindings  []*rbacv1.ClusterRoleBinding
}

// strict is client-go's scheme with strict decoding: unknown or duplicated fields are errors.
var strict = serializer.NewCodecFactory(clientgoscheme.Scheme, serializer.EnableStrict).
	UniversalDeserializer()

// splitDocuments cuts a multi-document YAML stream, dropping documents that are only comments.
func splitDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if hasContent(doc) {
			docs = append(docs, doc)
		}
	}
}

func hasContent(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") && trimmed != "---" {
			return true
		}
	}
	return false
}

// decodeBundle decodes every document of every source strictly, each into its upstream type.
func decodeBundle(source string, streams map[string][]byte) (*bundle, error) {
	b := &bundle{source: source}
	for name, data := range streams {
		docs, err := splitDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i, doc := range docs {
			obj, gvk, err := strict.Decode(doc, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, i+1, err)
			}
			if _, unknown := obj.(*k8sruntime.Unknown); unknown {
				return nil, fmt.Errorf("%s, document %d: %s is no upstream type", name, i+1, gvk)
			}
			b.add(obj)
		}
	}
	return b, nil
}

func (b *bundle) add(obj k8sruntime.Object) {
	b.objects = append(b.objects, obj)
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		b.sa = o
	case *corev1.ConfigMap:
		b.configMap = o
	case *appsv1.Deployment:
		b.deployment = o
	case *rbacv1.Role:
		b.roles = append(b.roles, o)
	case *rbacv1.RoleBinding:
		b.bindings = append(b.bindings, o)
	case *rbacv1.ClusterRole:
		b.cRoles = append(b.cRoles, o)
	case *rbacv1.ClusterRoleBinding:
		b.cBindings = append(b.cBindings, o)
	}
}

// schedulerConfig loads the ConfigMap's config.yaml as kube-scheduler's --config does (strict
// decoding, defaulting, conversion to the internal type) and validates it with kube-scheduler's
// validation.
func schedulerConfig(cm *corev1.ConfigMap) (*schedconfig.KubeSchedulerConfiguration, error) {
	data, ok := cm.Data["config.yaml"]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no config.yaml", cm.Name)
	}
	obj, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("config.yaml: %w", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("config.yaml: a %s, not a KubeSchedulerConfiguration", gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if errs := schedvalidation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return nil, fmt.Errorf("config.yaml does not validate: %w", errs)
	}
	return cfg, nil
}

func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Join(dir, e.Name())] = data
		}
	}
	return files
}
