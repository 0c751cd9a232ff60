package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// startAPIServer starts etcd and kube-apiserver with controller-runtime's
// envtest (which writes the serving certificate, the client CA and the
// service-account key pair, and adds the users), on the given ports from
// our registry, then fills cp's admin Config, Kubeconfig, clients and
// Applier: the part every suite's control plane shares. Both programs run
// behind cmd/pdeathsig, so they die with the test process as the
// components our own launcher starts do.
func (cp *ControlPlane) startAPIServer(ctx context.Context, opts Options, etcdClient, etcdPeer, apiPort int) error {
	shim, err := buildShim(ctx, filepath.Join(opts.Dir, "bin"))
	if err != nil {
		return err
	}
	etcdProc, etcdBin, err := cp.envtestProcess(opts, shim, "etcd")
	if err != nil {
		return err
	}
	apiProc, apiBin, err := cp.envtestProcess(opts, shim, "kube-apiserver")
	if err != nil {
		return err
	}
	setEnvtestLogger(cp.log)

	peerURL := "http://" + hostPort(etcdPeer)
	etcd := &envtest.Etcd{
		Path: etcdBin,
		// envtest picks its ports by binding port 0, in the ephemeral range
		// that outgoing connections draw from, and only its own users see
		// its reservations: ours come from the registry every suite
		// process shares (freePorts).
		URL:     &url.URL{Scheme: "http", Host: hostPort(etcdClient)},
		DataDir: filepath.Join(opts.Dir, "etcd"),
		Out:     etcdProc.logFile,
		Err:     etcdProc.logFile,
	}
	etcd.Configure().
		// envtest's own peer port is one it picked; this one replaces it.
		Set("listen-peer-urls", peerURL).
		Set("name", "e2e").
		Set("initial-advertise-peer-urls", peerURL).
		Set("initial-cluster", "e2e="+peerURL).
		Set("log-level", "warn")
	// envtest adds --unsafe-no-fsync itself when etcd has it: the data is
	// thrown away after the run, and fsync only costs time.

	api := &envtest.APIServer{
		Path:    apiBin,
		CertDir: filepath.Join(opts.Dir, "apiserver"),
		SecureServing: envtest.SecureServing{
			ListenAddr: envtest.ListenAddr{Address: "127.0.0.1", Port: strconv.Itoa(apiPort)},
		},
		Out: apiProc.logFile,
		Err: apiProc.logFile,
	}
	if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
		return err
	}
	api.Configure().
		Set("advertise-address", "127.0.0.1").
		// The suites check RBAC as a cluster enforces it: a team's admin
		// is refused what its Role does not grant.
		Set("authorization-mode", "RBAC").
		// As kubeadm and kind run it: privileged pods are the cluster's to
		// allow, and Pod Security Admission decides per namespace.
		Set("allow-privileged", "true").
		// envtest turns the ServiceAccount admission plugin off; a cluster
		// runs it, and the pods the checks make get their account from it.
		Disable("disable-admission-plugins").
		// The issuer a cluster's tokens carry (kubeadm's). The key pair is
		// envtest's (sa-signer.key and sa-signer.crt in the cert dir):
		// kube-controller-manager asks the API server for its controllers'
		// tokens (TokenRequest), so only the API server signs.
		Set("service-account-issuer", "https://kubernetes.default.svc").
		Set("service-cluster-ip-range", "10.96.0.0/16").
		// On loopback there is no node address to publish for the
		// kubernetes Service; the reconciler would fail forever.
		Set("endpoint-reconciler-type", "none").
		// The checks poll hard; fairness queues would only slow them.
		Set("enable-priority-and-fairness", "false").
		Set("profiling", "false").
		Set("v", "1")

	cp.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{Etcd: etcd, APIServer: api},
		// Never a cluster from $KUBECONFIG or USE_EXISTING_CLUSTER, never
		// downloaded binaries: the ones the suite built.
		UseExistingCluster:       ptr.To(false),
		DownloadBinaryAssets:     false,
		ControlPlaneStartTimeout: 60 * time.Second,
		ControlPlaneStopTimeout:  10 * time.Second,
	}
	if _, err := cp.env.Start(); err != nil {
		return fmt.Errorf("start etcd and kube-apiserver (envtest): %w", err)
	}
	// envtest always makes a serving certificate for a webhook server of
	// its own, in a temporary directory it removes in Stop. No webhook here
	// is envtest's, and a killed test process would leave the directory
	// behind: remove it now (Stop's removal then finds nothing).
	if err := os.RemoveAll(cp.env.WebhookInstallOptions.LocalServingCertDir); err != nil {
		return err
	}

	// Our own admin rather than envtest's: the same system:masters
	// certificate from envtest's CA, with no client-side throttling (the
	// checks poll, and a throttled poll only hides what the server
	// answers) and without deprecation warnings (the v1beta1 checks
	// expect them).
	admin, err := cp.env.AddUser(envtest.User{Name: "tenancy-e2e-admin", Groups: []string{"system:masters"}},
		&rest.Config{QPS: -1, WarningHandler: rest.NoWarnings{}})
	if err != nil {
		return fmt.Errorf("add the admin user: %w", err)
	}
	cp.Config = rest.CopyConfig(admin.Config())
	cp.Config.Host = strings.TrimSuffix(cp.Config.Host, "/")
	cp.caPEM = api.SecureServing.CA
	// The serving CA, which kube-controller-manager publishes to every
	// namespace as kube-root-ca.crt; envtest keeps it in memory only.
	cp.caFile = filepath.Join(api.CertDir, "serving-ca.crt")
	if err := os.WriteFile(cp.caFile, cp.caPEM, 0o600); err != nil {
		return err
	}

	// envtest waits for /healthz; /readyz also waits for the informers
	// the admission plugins read.
	apiTLS, err := rest.TLSConfigFor(cp.Config)
	if err != nil {
		return err
	}
	if err := cp.waitHTTP(ctx, "kube-apiserver", cp.Config.Host+"/readyz", apiTLS, 60*time.Second); err != nil {
		return err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	cp.Kubeconfig = filepath.Join(opts.Dir, "admin.kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return err
	}
	if cp.Kube, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	if cp.Dynamic, err = dynamic.NewForConfig(cp.Config); err != nil {
		return err
	}
	if cp.Applier, err = NewApplier(cp.Config, "tenancy-e2e"); err != nil {
		return err
	}
	return nil
}

// envtestProcess opens the log of one program envtest starts, records it
// for Exited, LogTails and MemoryMiB, and writes the wrapper envtest runs
// instead of the program: a script that notes its process id and execs
// cmd/pdeathsig, which execs the program (one process id throughout).
func (cp *ControlPlane) envtestProcess(opts Options, shim, name string) (*process, string, error) {
	// Resolved, as /proc/<pid>/exe shows it (exited compares the two).
	bin, err := filepath.EvalSymlinks(opts.Binaries[name])
	if err != nil {
		return nil, "", err
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, "", err
	}
	p, err := externalProcess(opts.Dir, name, bin)
	if err != nil {
		return nil, "", err
	}
	cp.procs = append(cp.procs, p)
	wrapper := filepath.Join(opts.Dir, "bin", name)
	script := fmt.Sprintf("#!/bin/sh\n# %s, started by envtest, killed with the test process %d.\necho $$ > %s\nexec %s %d %s \"$@\"\n",
		name, os.Getpid(), shellQuote(p.pidPath), shellQuote(shim), os.Getpid(), shellQuote(bin))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, "", err
	}
	return p, wrapper, nil
}

var envtestLogger sync.Once

// setEnvtestLogger sends controller-runtime's log (envtest's retries and
// errors) to w. controller-runtime's logger is global: the first control
// plane of a process sets it, and every suite passes os.Stderr.
func setEnvtestLogger(w io.Writer) {
	envtestLogger.Do(func() {
		ctrllog.SetLogger(funcr.New(func(prefix, args string) {
			fmt.Fprintf(w, "envtest: %s %s\n", prefix, args)
		}, funcr.Options{}))
	})
}

// buildShim builds cmd/pdeathsig into dir. The go command finds the
// package in the module of the working directory: every suite runs inside
// test/e2e. With the build cache warm this is a link, well under a second.
func buildShim(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "pdeathsig")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/tenancy-dev/tenancy/test/e2e/cmd/pdeathsig")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build cmd/pdeathsig: %w\n%s", err, b)
	}
	return out, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// installCRDs installs CRDs with envtest, which creates (or updates) each
// and waits until the API server serves every version of each. The
// objects are read as manifests elsewhere, so they come as unstructured.
func (cp *ControlPlane) installCRDs(objs []*unstructured.Unstructured, paths []string, timeout time.Duration) error {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
			return fmt.Errorf("CRD %s: %w", o.GetName(), err)
		}
		crds = append(crds, crd)
	}
	// No WebhookOptions: envtest would then rewrite every CRD's conversion
	// for a webhook server of its own; Kueue's conversion webhook is wired
	// to Kueue (installKueue).
	_, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
		CRDs:               crds,
		Paths:              paths,
		ErrorIfPathMissing: true,
		MaxTime:            timeout,
	})
	if err != nil {
		return fmt.Errorf("install CRDs (envtest): %w", err)
	}
	return nil
}
