package controlplane

import (
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// KAIOptions says what the KAI control plane runs.
type KAIOptions struct {
	// Binaries maps "etcd", "kube-apiserver", "kube-controller-manager",
	// "kwok" and KAI's "scheduler", "binder", "podgrouper",
	// "queuecontroller" and "podgroupcontroller" to executables.
	Binaries map[string]string
	// KAICRDDir is KAI's deployments/kai-scheduler/crds directory.
	KAICRDDir string
	// KwokDir is the sigs.k8s.io/kwok module directory (for its Stages).
	KwokDir string
	// Dir is where state, certificates and logs go. It must exist.
	Dir string
	// Log receives progress lines.
	Log io.Writer
	// Shards are node pools (SchedulingShard partition label values): one
	// more scheduler each, beside the default shard's (kai_shards.go).
	Shards []string
	// WithoutPodGroupController leaves KAI's podgroup controller out. It
	// writes PodGroups' resource status (which the queue controller sums
	// into the Queues' status) and nothing KAI's scheduler, binder or
	// podgrouper reads; v0.17.0 serves its metrics on :8080 whatever it is
	// told, so of two KAI control planes on one machine only one can run
	// it, and the other's exits. The contention proof, which runs beside
	// the KAI suite and counts bound pods, starts without it.
	WithoutPodGroupController bool
	// Admission runs KAI's admission webhook (Binaries "admission") with
	// the webhook configurations KAI's operator writes, before the other
	// KAI components (kai_admission.go).
	Admission bool
	// GPUSharing turns KAI's GPU sharing on as the Config's
	// spec.admission.gpuSharing (the chart's global.gpuSharing) does: the
	// admission webhook's --gpu-sharing-enabled. The binder's gpusharing
	// plugin and the scheduler's gpusharingorder plugin are on already by
	// default. KWOK's Nodes run no reservation pod's program: the control
	// plane stands in for it (standInReservationPods). Needs Admission.
	GPUSharing bool
}

// KAI's names, as its operator and chart give them by default
// (pkg/apis/kai/v1 defaults, deployments/kai-scheduler/values.yaml).
const (
	KAISchedulerName = "kai-scheduler"
	KAINamespace     = "kai-scheduler"
	kaiReservationNS = "kai-resource-reservation"
)

// StartKAI brings up a control plane of its own for the KAI suite: etcd,
// kube-apiserver, KAI's CRDs, kube-controller-manager (with the
// root-ca-cert-publisher, which KAI's binder needs: it refuses every pod
// whose namespace lacks kube-root-ca.crt), KWOK for the Nodes, and the KAI
// Scheduler's scheduler, binder, podgrouper, queue controller and podgroup
// controller, out of cluster, with the arguments KAI's operator gives them
// for the chart's defaults, and with KAIOptions.Admission KAI's admission
// webhook (otherwise the webhooks are off). No kube-scheduler runs:
// every pod of the suite names kai-scheduler.
func StartKAI(ctx context.Context, opts KAIOptions) (_ *ControlPlane, err error) {
	began := time.Now()
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok",
		"scheduler", "binder", "podgrouper", "queuecontroller", "podgroupcontroller"} {
		if opts.Binaries[name] == "" {
			return nil, fmt.Errorf("no binary for %s", name)
		}
	}
	base := Options{Binaries: opts.Binaries, Dir: opts.Dir, Log: logw, KwokDir: opts.KwokDir}
	_, cancel := context.WithCancel(context.Background())
	cp := &ControlPlane{Dir: opts.Dir, cancel: cancel, log: logw}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, cp.logTails(4000))
			cp.Stop()
		}
	}()

	ports, err := freePorts(20)
	if err != nil {
		return nil, err
	}
	next := 0
	port := func() int { p := ports[next]; next++; return p }
	etcdClient, etcdPeer, apiPort, kcmPort, kwokPort := port(), port(), port(), port(), port()

	if err := cp.startAPIServer(ctx, base, etcdClient, etcdPeer, apiPort); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "kai: kube-apiserver ready at %s after %s\n", cp.Config.Host, time.Since(began).Round(time.Millisecond))

	// KAI's CRDs, read from their directory by envtest, and its
	// namespaces, before the controllers start.
	if err := cp.installCRDs(nil, []string{opts.KAICRDDir}, 60*time.Second); err != nil {
		return nil, err
	}
	nss := []*unstructured.Unstructured{namespaceObj(KAINamespace), namespaceObj(kaiReservationNS),
		// The binder makes a fractional GPU's reservation pod as this
		// account, which KAI's operator creates.
		{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "kai-resource-reservation", "namespace": kaiReservationNS}}}}
	if _, err := cp.Applier.Apply(ctx, nss, false); err != nil {
		return nil, fmt.Errorf("install KAI's namespaces: %w", err)
	}

	controllers := []string{
		"job-controller", "deployment-controller", "replicaset-controller",
		// The guardrails' probes let through a StatefulSet, a
		// ReplicationController and a DaemonSet of every kind for real.
		"statefulset-controller", "replicationcontroller-controller", "daemonset-controller",
		"garbage-collector-controller", "namespace-controller", "resourcequota-controller",
		"serviceaccount-controller", "root-ca-certificate-publisher-controller",
		// Not the policy type checker (policyTypeChecker): the checks that
		// read its verdict run it (TypeCheckPolicies).
		"node-lifecycle-controller",
		// The built-in admin role a team's namespace admin is bound to,
		// with the CRD kinds aggregated into it.
		"clusterrole-aggregation-controller",
	}
	cp.kcmBin = base.Binaries["kube-controller-manager"]
	if err := cp.start(base, "kube-controller-manager", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", kcmPort),
		"--cert-dir=" + filepath.Join(opts.Dir, "kcm-certs"),
		"--root-ca-file=" + cp.caFile,
		// As kubeadm runs it: each controller with its own service account
		// (system:serviceaccount:kube-system:<name>-controller), whom the
		// guardrails trust to make pods from a checked parent.
		"--use-service-account-credentials=true",
		"--node-monitor-period=1s",
		"--v=1",
	}, nil); err != nil {
		return nil, err
	}
	kcmTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed loopback health endpoint
	if err := cp.waitHTTP(ctx, "kube-controller-manager", fmt.Sprintf("https://%s/healthz", hostPort(kcmPort)), kcmTLS, 60*time.Second); err != nil {
		return nil, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cp.Kube.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1GetOptions)
		return err == nil, nil
	}); err != nil {
		return nil, fmt.Errorf("kube-controller-manager did not publish kube-root-ca.crt: %w", err)
	}

	cfg, err := kwokConfig(opts.KwokDir)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(opts.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	if err := cp.start(base, "kwok", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--config=" + cfgPath,
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeValue,
		"--node-lease-duration-seconds=40",
		"--server-address=" + hostPort(kwokPort),
	}, nil); err != nil {
		return nil, err
	}
	if err := cp.waitHTTP(ctx, "kwok", fmt.Sprintf("http://%s/healthz", hostPort(kwokPort)), nil, 60*time.Second); err != nil {
		return nil, err
	}

	if opts.GPUSharing && !opts.Admission {
		return nil, fmt.Errorf("KAIOptions.GPUSharing needs Admission: fractional pods bind only once KAI's admission webhook named their ConfigMap")
	}
	if opts.Admission {
		if err := cp.startKAIAdmission(ctx, base, opts); err != nil {
			return nil, err
		}
	}
	if opts.GPUSharing {
		bg, stop := context.WithCancel(context.Background())
		cp.cancel = func() { stop(); cancel() }
		go cp.standInReservationPods(bg)
	}

	// KAI. Every component reads KUBECONFIG (controller-runtime's
	// GetConfigOrDie); each gets its own loopback ports instead of the
	// in-cluster :8080/:8081, and runs as the service account KAI's
	// operator gives it (its deployment's name, in kai-scheduler): the
	// guardrails trust the pod-grouper, binder and podgroup-controller by
	// those names, as they do in a cluster.
	kenv := map[string][]string{}
	for _, c := range []struct{ name, sa string }{
		{"queuecontroller", "queue-controller"}, {"podgroupcontroller", "podgroup-controller"},
		{"podgrouper", "pod-grouper"}, {"binder", "binder"}, {"scheduler", "scheduler"},
	} {
		path, err := cp.serviceAccountKubeconfig(ctx, KAINamespace, c.sa)
		if err != nil {
			return nil, fmt.Errorf("%s's service account: %w", c.name, err)
		}
		kenv[c.name] = []string{"KUBECONFIG=" + path}
	}
	schedConf := filepath.Join(opts.Dir, "kai-scheduler-config.yaml")
	if err := os.WriteFile(schedConf, []byte(KAISchedulerConfig), 0o600); err != nil {
		return nil, err
	}
	qcMetrics, pgcMetrics, pgcProbe, pgMetrics, pgProbe := port(), port(), port(), port(), port()
	bMetrics, bProbe, sListen, sProfiler, sPlugin := port(), port(), port(), port(), port()
	steps := []struct {
		name, health string
		args         []string
	}{
		// pkg/operator/operands/queue_controller/resources.go buildArgsList
		{"queuecontroller", "", []string{
			"--metrics-listen-address=" + hostPort(qcMetrics),
			"--enable-webhook=false",
		}},
		// pkg/operator/operands/pod_group_controller/resources.go. v0.17.0
		// ignores --metrics-bind-address (its manager gets no metrics
		// options) and serves metrics on :8080 whatever is passed.
		{"podgroupcontroller", fmt.Sprintf("http://%s/healthz", hostPort(pgcProbe)), []string{
			"--scheduler-name", KAISchedulerName,
			"--metrics-bind-address=" + hostPort(pgcMetrics),
			"--health-probe-bind-address=" + hostPort(pgcProbe),
			"--enable-podgroup-webhook=false",
		}},
		// pkg/operator/operands/pod_grouper/resources.go
		{"podgrouper", fmt.Sprintf("http://%s/healthz", hostPort(pgProbe)), []string{
			"--scheduler-name", KAISchedulerName,
			"--queue-label-key", "kai.scheduler/queue",
			"--nodepool-label-key", "kai.scheduler/node-pool",
			"--metrics-bind-address=" + hostPort(pgMetrics),
			"--health-probe-bind-address=" + hostPort(pgProbe),
		}},
		// pkg/operator/operands/binder/resources.go buildArgsList, with the
		// chart's resource-reservation defaults.
		// The binder registers no health check: its metrics answer once
		// the manager runs.
		{"binder", fmt.Sprintf("http://%s/metrics", hostPort(bMetrics)), []string{
			"--scheduler-name", KAISchedulerName,
			"--resource-reservation-namespace", kaiReservationNS,
			"--resource-reservation-service-account", "kai-resource-reservation",
			"--resource-reservation-app-label", "kai-resource-reservation",
			"--scale-adjust-namespace", "kai-scale-adjust",
			"--metrics-bind-address=" + hostPort(bMetrics),
			"--health-probe-bind-address=" + hostPort(bProbe),
		}},
		// pkg/operator/operands/scheduler/resources_for_shard.go
		// buildArgsList, for the chart's default SchedulingShard.
		{"scheduler", fmt.Sprintf("http://%s/metrics", hostPort(sListen)), []string{
			"--scheduler-conf=" + schedConf,
			"--scheduler-name=" + KAISchedulerName,
			"--namespace=" + KAINamespace,
			"--nodepool-label-key=kai.scheduler/node-pool",
			"--partition-label-value=",
			"--resource-reservation-app-label=kai-resource-reservation",
			"--queue-label-key=kai.scheduler/queue",
			"--listen-address=" + hostPort(sListen),
			"--profiler-port=" + fmt.Sprint(sProfiler),
			"--plugin-server-port=" + fmt.Sprint(sPlugin),
		}},
	}
	for _, s := range steps {
		if s.name == "podgroupcontroller" && opts.WithoutPodGroupController {
			continue
		}
		if err := cp.start(base, s.name, s.args, kenv[s.name]); err != nil {
			return nil, err
		}
		if s.health != "" {
			if err := cp.waitHTTP(ctx, s.name, s.health, nil, 90*time.Second); err != nil {
				return nil, err
			}
		}
	}
	if err := cp.startKAIShards(ctx, base, opts.Shards, kenv["scheduler"]); err != nil {
		return nil, err
	}
	cp.StartupTime = time.Since(began)
	fmt.Fprintf(logw, "kai: control plane and KAI Scheduler ready in %s (state and logs in %s)\n", cp.StartupTime.Round(time.Millisecond), opts.Dir)
	return cp, nil
}

// KAISchedulerConfig is the scheduler configuration KAI's operator writes
// for the chart's default SchedulingShard (placementStrategy binpack):
// pkg/apis/kai/v1/schedulingshard_types.go SetDefaultsWhereNeeded (plugins
// and actions with their default priorities, gpuspread off and gpupack and
// gpusharingorder on under binpack, consolidation on) and
// pkg/operator/operands/scheduler (sorted by priority, descending, then by
// name; scenario search budgets at their defaults).
const KAISchedulerConfig = `actions: allocate, consolidation, reclaim, preempt, stalegangeviction
tiers:
- plugins:
  - name: predicates
  - name: proportion
  - name: priority
  - name: nodeavailability
  - name: resourcetype
  - name: podaffinity
  - name: elastic
  - name: kubeflow
  - name: ray
  - name: subgrouporder
  - name: taskorder
  - name: nominatednode
  - name: dynamicresources
  - name: minruntime
  - name: topology
  - name: snapshot
  - name: sg-nodelocalgreedy
  - name: sg-multinodegang
  - name: gpupack
  - name: nodeplacement
    arguments:
      cpu: binpack
      gpu: binpack
  - name: gpusharingorder
scenarioSearchBudgets:
  maxActionSearchDuration:
    default: 5m0s
  maxJobSearchDuration: 4m0s
  minJobSearchDuration: 0s
  maxGeneratorSearchDuration:
    default: 2m0s
    MultiNodeGang: 2m0s
    NodeLocalGreedy: 30s
`

func namespaceObj(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

// serviceAccountKubeconfig creates service account sa in ns, bound to
// cluster-admin (KAI's chart grants each component its own role; the
// suite checks scheduling, not KAI's RBAC), and writes a kubeconfig with a
// token for it that outlives any run. A token, not one of envtest's
// certificate users: the guardrails trust KAI's pod-grouper, binder and
// podgroup-controller as the service accounts they are in a cluster, and
// only a token makes the API server itself say so (the user name, the
// system:serviceaccounts groups and the service-account extras); a
// certificate would only carry a name we chose.
func (cp *ControlPlane) serviceAccountKubeconfig(ctx context.Context, ns, sa string) (string, error) {
	kube := cp.Kube
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-kai-" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](48 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	path := filepath.Join(cp.Dir, sa+".kubeconfig")
	return path, os.WriteFile(path, kubeconfigFor(cp.Config.Host, cp.caPEM, sa, &clientcmdapi.AuthInfo{Token: tok.Status.Token}), 0o600)
}
