package controlplane

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

var metav1GetOptions = metav1.GetOptions{}

// conversionCRDs are the Kueue CRDs that serve two versions and so need the
// conversion webhook; Kueue's own kustomization patches exactly these.
var conversionCRDs = map[string]bool{
	"localqueues.kueue.x-k8s.io":        true,
	"clusterqueues.kueue.x-k8s.io":      true,
	"cohorts.kueue.x-k8s.io":            true,
	"workloads.kueue.x-k8s.io":          true,
	"multikueueclusters.kueue.x-k8s.io": true,
}

// installKueue does by hand what Kueue's config/default kustomization does
// in a cluster, for a controller running on 127.0.0.1: namespace, empty
// certificate Secret, a webhook Service of type ExternalName pointing at
// 127.0.0.1, the CRDs (conversion webhook wired to that Service) and the
// webhook configurations (renamed with the kueue- prefix the certificate
// rotator looks for).
func installKueue(ctx context.Context, cp *ControlPlane, opts Options, webhookPort int) error {
	core := cp.Kube.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kueueNamespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", kueueNamespace, err)
	}
	if _, err := core.Secrets(kueueNamespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookSecret}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret %s: %w", kueueWebhookSecret, err)
	}
	// The API server resolves an ExternalName Service to externalName:port,
	// and verifies the webhook's certificate against <service>.<ns>.svc, the
	// name Kueue's rotator issues it for.
	if _, err := core.Services(kueueNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookService},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1"},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", kueueWebhookService, err)
	}

	service := map[string]any{
		"namespace": kueueNamespace,
		"name":      kueueWebhookService,
		"port":      int64(webhookPort),
	}

	crds, err := KueueCRDs(opts.KueueDir)
	if err != nil {
		return err
	}
	for _, o := range crds {
		if conversionCRDs[o.GetName()] {
			svc := deepCopyMap(service)
			svc["path"] = "/convert"
			if err := unstructured.SetNestedField(o.Object, map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"clientConfig":             map[string]any{"service": svc},
					"conversionReviewVersions": []any{"v1"},
				},
			}, "spec", "conversion"); err != nil {
				return err
			}
		}
	}
	// With the CRDs the tests bring, before kube-controller-manager starts,
	// so its garbage collector and quota controller see them from the
	// beginning.
	if err := cp.installCRDs(append(crds, opts.ExtraCRDs...), nil, 60*time.Second); err != nil {
		return err
	}

	hooks, err := ReadManifestFile(filepath.Join(opts.KueueDir, "config", "components", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	for _, h := range hooks {
		h.SetName("kueue-" + h.GetName())
		list, _, _ := unstructured.NestedSlice(h.Object, "webhooks")
		for i := range list {
			w := list[i].(map[string]any)
			path, _, _ := unstructured.NestedString(w, "clientConfig", "service", "path")
			svc := deepCopyMap(service)
			svc["path"] = path
			if err := unstructured.SetNestedField(w, svc, "clientConfig", "service"); err != nil {
				return err
			}
		}
		if err := unstructured.SetNestedSlice(h.Object, list, "webhooks"); err != nil {
			return err
		}
	}
	if _, err := cp.Applier.Apply(ctx, hooks, false); err != nil {
		return fmt.Errorf("install Kueue webhook configurations: %w", err)
	}
	return nil
}

// KueueCRDs reads Kueue's CRDs from its module directory as its
// kustomization's bases hold them: without the conversion webhook its
// default kustomization wires in (installKueue adds it), so a cluster
// without the Kueue controller stores and serves them as written.
func KueueCRDs(kueueDir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(kueueDir, "config", "components", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Kueue CRDs under %s (err %v)", kueueDir, err)
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := ReadManifestFile(f)
		if err != nil {
			return nil, err
		}
		crds = append(crds, objs...)
	}
	return crds, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// kueueConfig is the Configuration for a Kueue controller on loopback:
// internal certificate management, webhooks on 127.0.0.1, no leader
// election, no metrics listener, no visibility API server, and only the
// batch/job integration the tests use.
func kueueConfig(webhookPort, healthPort int, certDir string) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: %s
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: %s
  webhookSecretName: %s
clientConnection:
  qps: 100
  burst: 200
integrations:
  frameworks:
  - batch/job
featureGates:
  VisibilityOnDemand: false
`, kueueNamespace, hostPort(healthPort), webhookPort, certDir, kueueWebhookService, kueueWebhookSecret)
}

// syncWebhookCerts copies tls.crt, tls.key and ca.crt from Kueue's
// certificate Secret into certDir whenever they change, closing copied after
// the first complete copy. It returns when ctx ends.
func syncWebhookCerts(ctx context.Context, kube kubernetes.Interface, certDir string, copied chan<- struct{}) {
	var last []byte
	first := true
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := kube.CoreV1().Secrets(kueueNamespace).Get(ctx, kueueWebhookSecret, metav1.GetOptions{})
		if err == nil && len(s.Data["tls.crt"]) > 0 && len(s.Data["tls.key"]) > 0 && len(s.Data["ca.crt"]) > 0 {
			sig := bytes.Join([][]byte{s.Data["tls.crt"], s.Data["tls.key"], s.Data["ca.crt"]}, nil)
			if !bytes.Equal(sig, last) {
				ok := true
				for _, name := range []string{"ca.crt", "tls.key", "tls.crt"} {
					if werr := writeAtomic(filepath.Join(certDir, name), s.Data[name]); werr != nil {
						ok = false
					}
				}
				if ok {
					last = sig
					if first {
						first = false
						close(copied)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// waitKueueWebhooks polls a server-side dry-run create of a ClusterQueue in
// the storage version and of a LocalQueue in v1beta1 until both succeed: the
// first goes through Kueue's mutating and validating webhooks, the second
// through its conversion webhook, so both the certificates and the
// ExternalName routing work once it passes.
func waitKueueWebhooks(ctx context.Context, cp *ControlPlane, timeout time.Duration) error {
	cq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "ClusterQueue",
		"metadata":   map[string]any{"name": "e2e-webhook-probe"},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{
				"coveredResources": []any{"cpu"},
				"flavors": []any{map[string]any{
					"name":      "probe",
					"resources": []any{map[string]any{"name": "cpu", "nominalQuota": "1"}},
				}},
			}},
		},
	}}
	lq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta1",
		"kind":       "LocalQueue",
		"metadata":   map[string]any{"name": "e2e-webhook-probe", "namespace": "default"},
		"spec":       map[string]any{"clusterQueue": "e2e-webhook-probe"},
	}}
	cqRes := cp.Dynamic.Resource(schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"})
	lqRes := cp.Dynamic.Resource(schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "localqueues"}).Namespace("default")
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	kueue := cp.procs[len(cp.procs)-1]
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done, werr := kueue.exited(); done {
			return false, fmt.Errorf("%w: kueue: %v", errExited, werr)
		}
		if _, err := cqRes.Create(ctx, cq, dry); err != nil {
			last = fmt.Errorf("dry-run ClusterQueue: %w", err)
			return false, nil
		}
		if _, err := lqRes.Create(ctx, lq, dry); err != nil && !apierrors.IsAlreadyExists(err) {
			last = fmt.Errorf("dry-run v1beta1 LocalQueue: %w", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kueue webhooks not answering (last error: %v): %w", last, err)
	}
	return nil
}

// kubeconfigFor renders a kubeconfig of one cluster (server, trusting caPEM)
// and one user, with client-go's own writer, so every kubeconfig the suites
// hand to a component is one the component's loader reads.
func kubeconfigFor(server string, caPEM []byte, user string, auth *clientcmdapi.AuthInfo) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = auth
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		// Write only fails to encode a Config it built itself.
		panic(fmt.Sprintf("encode kubeconfig: %v", err))
	}
	return out
}

// TokenKubeconfig returns a kubeconfig for this API server, its CA inline,
// that authenticates with a bearer token: the form MultiKueue accepts for a
// worker (no file paths, no exec plugins).
func (cp *ControlPlane) TokenKubeconfig(user, token string) []byte {
	return kubeconfigFor(cp.Config.Host, cp.caPEM, user, &clientcmdapi.AuthInfo{Token: token})
}
