package k8sloop

// The control plane: an embedded etcd, the real kube-apiserver (its own test server, RBAC on),
// the NodeResourceTopology CRD as its API module ships it, and deploy/kubernetes applied so that
// kube-scheduler and nfvplace run as the ServiceAccount the chart creates, with its RBAC.

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"sigs.k8s.io/yaml"
)

const (
	deployNamespace = "nfvplace" // deploy/kubernetes's namespace
	deployAccount   = "nfvplace-scheduler"
	podNamespace    = "cnf"
	nrtModule       = "github.com/k8stopologyawareschedwg/noderesourcetopology-api"
)

// cluster is the control plane the runs share.
type cluster struct {
	admin           *rest.Config
	client          kubernetes.Interface
	dynamic         dynamic.Interface
	schedulerConfig []byte // deploy/kubernetes's KubeSchedulerConfiguration
	kubeconfig      string // the chart's ServiceAccount's token, for kube-scheduler and nfvplace
	dir             string
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd runs etcd in this process, on loopback, without fsync (a throwaway store).
func startEtcd(t *testing.T, dir string) string {
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "etcd")
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true
	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	select {
	case <-etcd.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("etcd did not start in 60 s")
	}
	return client.String()
}

func startCluster(t *testing.T) *cluster {
	dir := t.TempDir()
	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = []string{startEtcd(t, dir)}
	server := apiservertesting.StartTestServerOrDie(t, nil, []string{
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount", // no controller-manager creates tokens
	}, storage)
	t.Cleanup(server.TearDownFn)
	c := &cluster{admin: server.ClientConfig, dir: dir}
	c.client = kubernetes.NewForConfigOrDie(c.admin)
	c.dynamic = dynamic.NewForConfigOrDie(c.admin)
	ctx := context.Background()
	installCRD(t, ctx, c.admin)
	applyDeployManifests(t, ctx, c)
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: podNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.kubeconfig = writeAccountKubeconfig(t, ctx, c)
	return c
}

// installCRD installs the NodeResourceTopology CRD from the API module's own manifest.
func installCRD(t *testing.T, ctx context.Context, admin *rest.Config) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", nrtModule).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", nrtModule, err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "manifests", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("the NRT CRD: %v", err)
	}
	client := apiextensionsclient.NewForConfigOrDie(admin)
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil {
		t.Fatalf("the NRT CRD was not established: %v", err)
	}
}

// servingCA is the API server's self-signed serving certificate chain's root, as served.
func servingCA(t *testing.T, host string) []byte {
	conn, err := tls.Dial("tcp", host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the chain to trust it
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	chain := conn.ConnectionState().PeerCertificates
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[len(chain)-1].Raw})
}

// writeAccountKubeconfig writes a kubeconfig with a token of deploy/kubernetes's ServiceAccount:
// kube-scheduler and nfvplace get exactly the rights the chart grants.
func writeAccountKubeconfig(t *testing.T, ctx context.Context, c *cluster) string {
	expiry := int64(3 * 3600)
	token, err := c.client.CoreV1().ServiceAccounts(deployNamespace).CreateToken(ctx, deployAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(c.admin.Host, "https://")
	config := clientcmdapi.NewConfig()
	config.Clusters["loop"] = &clientcmdapi.Cluster{
		Server: "https://" + host, CertificateAuthorityData: servingCA(t, host)}
	config.AuthInfos["nfvplace-scheduler"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["loop"] = &clientcmdapi.Context{Cluster: "loop", AuthInfo: "nfvplace-scheduler"}
	config.CurrentContext = "loop"
	path := filepath.Join(c.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyDeployManifests creates deploy/kubernetes's objects through the API server, which
// validates each (the Deployment stays without pods: no controller-manager runs here), and keeps
// the KubeSchedulerConfiguration of its ConfigMap.
func applyDeployManifests(t *testing.T, ctx context.Context, c *cluster) {
	dir := filepath.Join(repoRoot(), "deploy", "kubernetes")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	decoder := scheme.Codecs.UniversalDeserializer()
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			if strings.TrimSpace(strings.Trim(doc, "-")) == "" || !strings.Contains(doc, "kind:") {
				continue
			}
			obj, _, err := decoder.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if err := create(ctx, c, obj); err != nil {
				t.Fatalf("%s: creating %T: %v", file, obj, err)
			}
		}
	}
}

func create(ctx context.Context, c *cluster, obj k8sruntime.Object) error {
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = c.client.CoreV1().Namespaces().Create(ctx, o, opts)
	case *corev1.ServiceAccount:
		_, err = c.client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
	case *corev1.ConfigMap:
		c.schedulerConfig = []byte(o.Data["config.yaml"])
		_, err = c.client.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.ClusterRole:
		_, err = c.client.RbacV1().ClusterRoles().Create(ctx, o, opts)
	case *rbacv1.ClusterRoleBinding:
		_, err = c.client.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
	case *rbacv1.Role:
		_, err = c.client.RbacV1().Roles(o.Namespace).Create(ctx, o, opts)
	case *rbacv1.RoleBinding:
		_, err = c.client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
	case *appsv1.Deployment:
		_, err = c.client.AppsV1().Deployments(o.Namespace).Create(ctx, o, opts)
	default:
		err = fmt.Errorf("no client here for %T", obj)
	}
	return err
}
