package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// KAI's admission names, as its operator gives them for the chart's
// defaults (pkg/apis/kai/v1/admission/admission.go,
// pkg/operator/operands/admission): the Service and Deployment
// "admission" in kai-scheduler, the certificate Secret, and the webhook
// configurations. The webhooks are named after the Service's DNS name,
// which the certificate is issued for.
const (
	kaiAdmissionService   = "admission"
	kaiAdmissionSecret    = "kai-admission-webhook-tls-secret"
	kaiMutatingWebhooks   = "mutating-kai-admission"
	kaiValidatingWebhooks = "validating-kai-admission"
	kaiAdmissionHost      = kaiAdmissionService + "." + KAINamespace + ".svc"
)

// KAI's GPU-sharing names (pkg/common/constants, pkg/binder/binding/
// resourcereservation): the label of the reservation pods, the label that
// ties a shared GPU's pods to its reservation pod, and the annotation in
// which the reservation pod reports the GPU it got.
const (
	KAIReservationNamespace         = kaiReservationNS
	KAIGPUGroupLabel                = "runai-gpu-group"
	KAIReservedGPUAnnotation        = "run.ai/reserve_for_gpu_index"
	kaiReservationAppLabel          = "kai-resource-reservation"
	kaiFractionRuntimeClass         = "nvidia"
	KAISharedGPUConfigMapAnnotation = "runai/shared-gpu-configmap"
)

// startKAIAdmission runs KAI's admission webhook (cmd/admission) out of
// cluster, as the Kueue suite runs Kueue's: the API server reaches it
// through a Service of type ExternalName pointing at 127.0.0.1, with the
// webhook configurations as KAI's operator writes them
// (pkg/operator/operands/admission/resources.go) but for the port, and a
// self-signed certificate for the Service's name made as the operator
// makes it (pkg/operator/cert-utils), its own CA bundle. It returns when
// the webhooks answer through the API server.
func (cp *ControlPlane) startKAIAdmission(ctx context.Context, base Options, opts KAIOptions) error {
	if opts.Binaries["admission"] == "" {
		return fmt.Errorf("no binary for admission")
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	webhookPort, probePort, metricsPort := ports[0], ports[1], ports[2]

	cert, key, err := selfSignedCert(kaiAdmissionHost)
	if err != nil {
		return err
	}
	// controller-runtime serves from $TMPDIR/k8s-webhook-server/serving-certs
	// when not told otherwise, and KAI's admission does not tell it: in a
	// cluster the operator mounts the Secret there.
	tmp := filepath.Join(opts.Dir, "admission-tmp")
	certDir := filepath.Join(tmp, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": cert, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return err
		}
	}

	// The Secret the operator keeps the certificate in (nothing reads it
	// out of cluster; it is there as in a cluster).
	if _, err := cp.Kube.CoreV1().Secrets(KAINamespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kaiAdmissionSecret},
		Data:       map[string][]byte{"tls.crt": cert, "tls.key": key},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s: %w", kaiAdmissionSecret, err)
	}
	// The API server resolves an ExternalName Service to externalName:port
	// and checks the certificate against <service>.<namespace>.svc.
	objs := append([]*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": kaiAdmissionService, "namespace": KAINamespace},
		"spec":     map[string]any{"type": "ExternalName", "externalName": "127.0.0.1"}}}},
		kaiWebhookConfigurations(cert, webhookPort)...)
	if opts.GPUSharing {
		// The runtime class KAI's admission gives fractional pods
		// (--gpu-fraction-runtime-class-name, "nvidia" by default), which
		// NVIDIA's GPU operator installs in a cluster.
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
			"metadata": map[string]any{"name": kaiFractionRuntimeClass}, "handler": kaiFractionRuntimeClass}})
	}
	if _, err := cp.Applier.Apply(ctx, objs, false); err != nil {
		return fmt.Errorf("install KAI's admission Service and webhook configurations: %w", err)
	}

	sa, err := cp.serviceAccountKubeconfig(ctx, KAINamespace, kaiAdmissionService)
	if err != nil {
		return fmt.Errorf("admission's service account: %w", err)
	}
	if err := cp.start(base, "admission", kaiAdmissionArgs(opts, webhookPort, probePort, metricsPort),
		[]string{"KUBECONFIG=" + sa, "TMPDIR=" + tmp}); err != nil {
		return err
	}
	if err := cp.waitHTTP(ctx, "admission", fmt.Sprintf("http://%s/readyz", hostPort(probePort)), nil, 90*time.Second); err != nil {
		return err
	}
	return cp.waitKAIAdmission(ctx, opts.GPUSharing, 60*time.Second)
}

// kaiAdmissionArgs are the arguments the operator's buildArgsList gives
// the admission Deployment for the chart's defaults (the runtime class of
// fractional pods "nvidia", one replica, no HAMi-core), with loopback
// ports, and --gpu-sharing-enabled=true when the Config's
// spec.admission.gpuSharing (the chart's global.gpuSharing) is on.
func kaiAdmissionArgs(opts KAIOptions, webhookPort, probePort, metricsPort int) []string {
	args := []string{
		"--scheduler-name", KAISchedulerName,
		"--webhook-addr", fmt.Sprint(webhookPort),
		"--health-probe-bind-address", hostPort(probePort),
		"--metrics-bind-address", hostPort(metricsPort),
	}
	if opts.GPUSharing {
		args = append(args, "--gpu-sharing-enabled=true")
	}
	return append(args, "--gpu-fraction-runtime-class-name", kaiFractionRuntimeClass)
}

// kaiWebhookConfigurations are the operator's mutatingWCForKAIConfig and
// validatingWCForKAIConfig for the chart's defaults (no queue-label or pod
// selector, the kai-scheduler scheduler name), their Service reference
// given the suite's port.
func kaiWebhookConfigurations(caBundle []byte, port int) []*unstructured.Unstructured {
	client := func(path string) map[string]any {
		return map[string]any{
			"service": map[string]any{"namespace": KAINamespace, "name": kaiAdmissionService, "path": path, "port": int64(port)},
			// The operator's caBundle is the self-signed certificate itself.
			"caBundle": base64.StdEncoding.EncodeToString(caBundle),
		}
	}
	podSelector := map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system", KAINamespace}}}}
	schedulerMatch := []any{map[string]any{"name": "scheduler-name-match",
		"expression": fmt.Sprintf("object.spec.schedulerName == '%s'", KAISchedulerName)}}
	podRule := func(ops ...any) []any {
		return []any{map[string]any{"operations": ops, "apiGroups": []any{""}, "apiVersions": []any{"v1"},
			"resources": []any{"pods"}, "scope": "Namespaced"}}
	}
	meta := func(name string) map[string]any {
		return map[string]any{"name": name, "labels": map[string]any{"app": kaiAdmissionService}}
	}
	mutating := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
		"metadata": meta(kaiMutatingWebhooks),
		"webhooks": []any{map[string]any{
			"name": kaiAdmissionHost, "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
			"namespaceSelector": podSelector, "failurePolicy": "Fail", "clientConfig": client("/mutate--v1-pod"),
			"matchConditions": schedulerMatch, "rules": podRule("CREATE"), "reinvocationPolicy": "IfNeeded",
		}},
	}}
	validating := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": meta(kaiValidatingWebhooks),
		"webhooks": []any{
			map[string]any{
				"name": kaiAdmissionHost, "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
				"namespaceSelector": podSelector, "failurePolicy": "Fail", "clientConfig": client("/validate--v1-pod"),
				"matchConditions": schedulerMatch, "rules": podRule("CREATE", "UPDATE"),
			},
			map[string]any{
				"name": "topology." + kaiAdmissionHost, "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
				"failurePolicy": "Fail", "clientConfig": client("/validate-kai-scheduler-v1alpha1-topology"),
				"rules": []any{map[string]any{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{"kai.scheduler"},
					"apiVersions": []any{"v1alpha1"}, "resources": []any{"topologies"}, "scope": "Cluster"}},
			},
		},
	}}
	return []*unstructured.Unstructured{mutating, validating}
}

// selfSignedCert makes a certificate and key as KAI's operator does
// (GenerateSelfSignedCert): RSA 2048, the name as common name and only
// DNS name, ten years, self-signed.
func selfSignedCert(name string) (certPEM, keyPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2019),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().AddDate(10, 0, 0),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
}

// waitKAIAdmission polls a dry-run create of a pod on KAI's scheduler
// until KAI's webhooks answer it through the API server: with GPU sharing
// a fractional pod, which the mutating webhook names its GPU-sharing
// ConfigMap on; without, a plain pod.
func (cp *ControlPlane) waitKAIAdmission(ctx context.Context, sharing bool, timeout time.Duration) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-admission-probe", Namespace: "default"},
		Spec: corev1.PodSpec{SchedulerName: KAISchedulerName,
			Containers: []corev1.Container{{Name: "probe", Image: "registry.example/probe:1"}}},
	}
	if sharing {
		pod.Annotations = map[string]string{"gpu-fraction": "0.5"}
	}
	admission := cp.procs[len(cp.procs)-1]
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done, werr := admission.exited(); done {
			return false, fmt.Errorf("%w: admission: %v", errExited, werr)
		}
		got, err := cp.Kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if sharing && got.Annotations[KAISharedGPUConfigMapAnnotation] == "" {
			last = "the fractional pod came back without " + KAISharedGPUConfigMapAnnotation
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("KAI's admission webhooks not answering (last: %s): %w", last, err)
	}
	return nil
}

// standInReservationPods does, for every GPU reservation pod KAI's binder
// places on a Node, what the pod's own program does on a real GPU Node
// (cmd/resourcereservation: it asks NVML for the one GPU the device plugin
// gave it and writes the GPU's UUID into its run.ai/reserve_for_gpu_index
// annotation, which the binder waits for). KWOK runs no container, so this
// writes a UUID of its own, GPU-<node>-<n>, n the lowest not held by
// another reservation pod on that Node: distinct GPUs, as the device
// plugin would hand out. It polls until ctx ends.
func (cp *ControlPlane) standInReservationPods(ctx context.Context) {
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for {
		cp.reserveGPUs(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (cp *ControlPlane) reserveGPUs(ctx context.Context) {
	list, err := cp.Kube.CoreV1().Pods(kaiReservationNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + kaiReservationAppLabel})
	if err != nil {
		return
	}
	held := map[string]bool{}
	for _, p := range list.Items {
		if uuid := p.Annotations[KAIReservedGPUAnnotation]; uuid != "" && p.DeletionTimestamp == nil {
			held[uuid] = true
		}
	}
	for _, p := range list.Items {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Annotations[KAIReservedGPUAnnotation] != "" {
			continue
		}
		uuid := ""
		for n := 0; uuid == "" || held[uuid]; n++ {
			uuid = fmt.Sprintf("GPU-%s-%d", p.Spec.NodeName, n)
		}
		held[uuid] = true
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, KAIReservedGPUAnnotation, uuid)
		_, _ = cp.Kube.CoreV1().Pods(kaiReservationNS).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
}
