// Package controlplane runs a real Kubernetes control plane with Kueue on
// 127.0.0.1, without nodes, containers or images: etcd, kube-apiserver,
// kube-controller-manager and the Kueue controller with its webhooks, each a
// child process of the test binary in a temporary directory, on free
// loopback ports.
//
// Kueue admits workloads by quota alone, so no kubelet or scheduler is needed
// to watch it admit, borrow, preempt and reclaim. With Options.Nodes the
// real kube-scheduler runs too, and KWOK simulates the Nodes' kubelets, so
// Pods are bound to (simulated) Nodes and run there.
//
// etcd and kube-apiserver, their certificates, the admin user and the CRDs
// come from controller-runtime's envtest (apiserver.go); every other
// component is started by this package's own launcher (process.go).
package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options says which binaries to run and what to install before the
// controllers start.
type Options struct {
	// Binaries maps "etcd", "kube-apiserver", "kube-controller-manager" and
	// "kueue" to executables.
	Binaries map[string]string
	// KueueDir is the sigs.k8s.io/kueue module directory (for its CRDs and
	// webhook configurations).
	KueueDir string
	// Dir is where state, certificates and logs go. It must exist.
	Dir string
	// ExtraCRDs are CustomResourceDefinitions installed with Kueue's, before
	// kube-controller-manager starts, so its garbage collector and quota
	// controller see them from the beginning.
	ExtraCRDs []*unstructured.Unstructured
	// Log receives progress lines.
	Log io.Writer
	// Nodes starts kube-scheduler and KWOK (Binaries "kube-scheduler" and
	// "kwok") after the controllers, so Pods land on the Nodes a check
	// creates with KwokNodeAnnotation.
	Nodes bool
	// KwokDir is the sigs.k8s.io/kwok module directory (for its Stages);
	// needed with Nodes.
	KwokDir string
	// NoJobPods leaves out kube-controller-manager's job controller, so
	// an admitted Job makes no pod: Kueue admits and evicts a Job through
	// its suspend field alone (an evicted Job with no active pods gives
	// its quota back at once: Kueue v0.17.0
	// pkg/controller/jobframework/reconciler.go:579-600), and a check that
	// counts admissions by quota saves the pods' churn.
	NoJobPods bool
	// KueueConfig is YAML appended to the Kueue Configuration: top-level
	// keys the base configuration does not set, e.g. a multiKueue section
	// for a MultiKueue manager.
	KueueConfig string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Dir holds the state and the logs, one <component>.log each.
	Dir string
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Kube and Dynamic are clients for Config.
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Applier applies manifests server-side.
	Applier *Applier
	// StartupTime is how long Start took.
	StartupTime time.Duration

	procs  []*process
	cancel context.CancelFunc
	log    io.Writer

	// env runs etcd and kube-apiserver; caPEM is the API server's serving
	// CA, caFile the same in a file for kube-controller-manager.
	env    *envtest.Environment
	caPEM  []byte
	caFile string
	// kcmBin is the kube-controller-manager binary, for TypeCheckPolicies;
	// typeChecks counts the type checkers it started, to name their logs.
	kcmBin     string
	typeChecks int
}

// Kueue's names for its webhook Service and certificate Secret, prefixed as
// its default kustomization does; the certificate it generates is issued for
// kueueWebhookService.kueueNamespace.svc.
const (
	kueueNamespace      = "kueue-system"
	kueueWebhookService = "kueue-webhook-service"
	kueueWebhookSecret  = "kueue-webhook-server-cert"
)

// Start brings up etcd, kube-apiserver, Kueue's CRDs and webhooks, the Kueue
// controller and kube-controller-manager, in that order, and returns when
// Kueue's webhooks answer. On error, everything started is stopped again.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	began := time.Now()
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	needed := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kueue"}
	if opts.Nodes {
		needed = append(needed, "kube-scheduler", "kwok")
	}
	for _, name := range needed {
		if opts.Binaries[name] == "" {
			return nil, fmt.Errorf("no binary for %s", name)
		}
	}
	bg, cancel := context.WithCancel(context.Background())
	cp := &ControlPlane{Dir: opts.Dir, cancel: cancel, log: logw}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, cp.logTails(4000))
			cp.Stop()
		}
	}()

	ports, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, webhookPort, kueueHealth, kcmPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	schedPort, kwokPort := ports[6], ports[7]

	if err := cp.startAPIServer(ctx, opts, etcdClient, etcdPeer, apiPort); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "kube-apiserver ready at %s after %s\n", cp.Config.Host, time.Since(began).Round(time.Millisecond))

	// Kueue's namespace, certificate Secret, webhook Service, CRDs (with
	// the CRDs the tests bring) and webhook configurations.
	if err := installKueue(ctx, cp, opts, webhookPort); err != nil {
		return nil, err
	}

	// Kueue
	certDir := filepath.Join(opts.Dir, "kueue-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(opts.Dir, "kueue-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(kueueConfig(webhookPort, kueueHealth, certDir)+opts.KueueConfig), 0o600); err != nil {
		return nil, err
	}
	if err := cp.start(opts, "kueue", []string{
		"--config=" + cfgPath,
		"--zap-log-level=info",
	}, []string{"KUBECONFIG=" + cp.Kubeconfig}); err != nil {
		return nil, err
	}
	// Out of cluster nothing mounts the Secret the rotator fills: copy it
	// to certDir ourselves, and keep copying in case it rotates.
	certsCopied := make(chan struct{})
	go syncWebhookCerts(bg, cp.Kube, certDir, certsCopied)
	select {
	case <-certsCopied:
	case <-time.After(60 * time.Second):
		return nil, errors.New("kueue did not fill its webhook certificate Secret within 60s")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := waitKueueWebhooks(ctx, cp, 90*time.Second); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "kueue webhooks answering after %s\n", time.Since(began).Round(time.Millisecond))

	// kube-controller-manager, after every CRD is in place: its garbage
	// collector then watches Workloads from the start, so deleting a Job
	// promptly deletes its Workload and frees the quota.
	controllers := []string{
		"garbage-collector-controller",
		"namespace-controller",
		"resourcequota-controller",
		"serviceaccount-controller",
		// Not the policy type checker (policyTypeChecker): the checks that
		// read its verdict run it (TypeCheckPolicies).
		// The guardrails' checks: the built-in admin role (aggregated),
		// and the controllers that make the pods of what the probes let
		// through.
		"clusterrole-aggregation-controller",
		"deployment-controller",
		"replicaset-controller",
		"statefulset-controller",
		"replicationcontroller-controller",
		"daemonset-controller",
	}
	if !opts.NoJobPods {
		controllers = append(controllers, "job-controller")
	}
	var nodeFlags []string
	if opts.Nodes {
		// The API server's TaintNodesByCondition admission taints every
		// new Node not-ready; the node lifecycle controller lifts the taint
		// once KWOK reports the Node Ready, as in a cluster. Checked every
		// second rather than every 5 s, so a new Node is usable at once.
		controllers = append(controllers, "node-lifecycle-controller")
		nodeFlags = []string{"--node-monitor-period=1s"}
	}
	cp.kcmBin = opts.Binaries["kube-controller-manager"]
	if err := cp.start(opts, "kube-controller-manager", append([]string{
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
		"--v=1",
	}, nodeFlags...), nil); err != nil {
		return nil, err
	}
	kcmTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed loopback health endpoint
	if err := cp.waitHTTP(ctx, "kube-controller-manager", fmt.Sprintf("https://%s/healthz", hostPort(kcmPort)), kcmTLS, 60*time.Second); err != nil {
		return nil, err
	}
	// The serviceaccount controller creating "default" in namespace default
	// shows the controllers run, not only that the process serves /healthz.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cp.Kube.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1GetOptions)
		return err == nil, nil
	}); err != nil {
		return nil, fmt.Errorf("kube-controller-manager did not create the default ServiceAccount: %w", err)
	}
	if opts.Nodes {
		if err := cp.startNodes(ctx, opts, schedPort, kwokPort); err != nil {
			return nil, err
		}
	}

	cp.StartupTime = time.Since(began)
	fmt.Fprintf(logw, "control plane ready in %s (state and logs in %s)\n", cp.StartupTime.Round(time.Millisecond), opts.Dir)
	return cp, nil
}

// start launches one component and remembers it for Stop.
func (cp *ControlPlane) start(opts Options, name string, args, env []string) error {
	p, err := startProcess(opts.Dir, name, opts.Binaries[name], args, env)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// Stop stops every component in reverse order of start: ours, then
// envtest's kube-apiserver and etcd. It is safe to call more than once.
func (cp *ControlPlane) Stop() {
	if cp.cancel != nil {
		cp.cancel()
	}
	for i := len(cp.procs) - 1; i >= 0; i-- {
		if cp.procs[i].cmd != nil {
			cp.procs[i].stop(10 * time.Second)
		}
	}
	if cp.env != nil {
		if err := cp.env.Stop(); err != nil {
			fmt.Fprintf(cp.log, "stop etcd and kube-apiserver: %v\n", err)
		}
		cp.env = nil
	}
	for _, p := range cp.procs {
		p.stop(0) // envtest's: close the logs
	}
}

// Kill ends every component at once with SIGKILL, as a machine that loses
// power would (Stop gives each a grace period, and kube-apiserver takes
// all of envtest's 10 s to drain), then releases what Stop releases. Stop
// may still be called after it.
func (cp *ControlPlane) Kill() {
	for _, p := range cp.procs {
		if done, _ := p.exited(); !done {
			if pid := p.pid(); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	cp.Stop()
}

// Exited names the components that have ended on their own; a test failure
// caused by a crashed component then says so.
func (cp *ControlPlane) Exited() []string {
	var out []string
	for _, p := range cp.procs {
		if done, err := p.exited(); done {
			out = append(out, fmt.Sprintf("%s (%v)", p.name, err))
		}
	}
	return out
}

// MemoryMiB returns the resident memory of each running component, in MiB,
// read from /proc.
func (cp *ControlPlane) MemoryMiB() map[string]int {
	out := map[string]int{}
	for _, p := range cp.procs {
		if done, _ := p.exited(); done {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			var kb int
			if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
				out[p.name] = kb / 1024
			}
		}
	}
	return out
}

// LogTails returns the end of every component's log, for failure messages.
func (cp *ControlPlane) LogTails(n int) string { return cp.logTails(n) }

func (cp *ControlPlane) logTails(n int) string {
	var b strings.Builder
	for _, p := range cp.procs {
		fmt.Fprintf(&b, "\n----- %s (%s) -----\n%s", p.name, p.logPath, p.tail(n))
	}
	return b.String()
}

// waitHTTP polls url until it answers 200, failing early when the component
// has exited.
func (cp *ControlPlane) waitHTTP(ctx context.Context, name, url string, tlsCfg *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	p := cp.procs[len(cp.procs)-1]
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done, werr := p.exited(); done {
			return false, fmt.Errorf("%w: %s: %v", errExited, p.name, werr)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready at %s (last answer: %s): %w", name, url, last, err)
	}
	return nil
}
