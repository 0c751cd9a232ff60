package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/controller"
	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/lease"
	"github.com/tenancy-dev/tenancy/generator"
)

func runWindows(e *env, args []string) int {
	fs := newFlagSet(e, "windows", "windows --agreement FILE [--backend kueue|kai] [flags]", `
Run the lending-windows controller: from the agreement and the clock alone it
computes each team's lending and borrowing limits (a window's inside it, the
team's outside every window) and applies them to the team's queue with
server-side apply under the field manager "tenancy-windows", owning only
those fields (Kueue: the ClusterQueue's spec.resourceGroups; KAI: the Queue's
spec.resources.gpu.limit). It re-applies at every window edge and every
--resync, so a restart, a missed edge or a value changed by hand converge to
the agreement. With several replicas one leads (a Lease); the others wait.

render writes this controller as a Deployment when any team has a window;
run it by hand against a cluster with --kubeconfig.

Metrics on --metrics-address: tenancy_window_open{team,window},
tenancy_windows_last_apply_timestamp_seconds, tenancy_windows_apply_errors_total.

Examples:
  tenancy windows --agreement tenancy.toml --kubeconfig ~/.kube/config --namespace tenancy-system
  # test only: the clock starts at the given instant and runs at real speed
  tenancy windows --agreement tenancy.toml --fake-start 2026-12-07T19:59:50+01:00`)
	var b backendFlags
	b.register(fs)
	agreementFile := fs.String("agreement", "", "the agreement the controller applies (required)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster, or $KUBECONFIG)")
	namespace := fs.String("namespace", "tenancy-system", "namespace of the leader-election Lease")
	leaseName := fs.String("lease", "tenancy-windows", "name of the leader-election Lease")
	identity := fs.String("identity", "", "this replica's name in the Lease (default: the host name and process id)")
	metricsAddr := fs.String("metrics-address", ":8080", "address of the Prometheus metrics endpoint (empty: none)")
	resync := fs.Duration("resync", 30*time.Second, "re-apply at least this often, also between edges")
	fakeStart := fs.String("fake-start", "", "TEST ONLY: RFC 3339 instant the controller's clock starts at; it then runs at real speed")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	if len(positional) > 0 || *agreementFile == "" {
		fmt.Fprintf(e.stderr, "tenancy windows: --agreement FILE is required and no arguments are taken\nRun 'tenancy windows --help' for usage.\n")
		return exitUsage
	}
	opts, err := b.options()
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy windows: %v\n", err)
		return exitUsage
	}
	var clk clock.Clock = clock.RealClock{}
	if *fakeStart != "" {
		start, err := time.Parse(time.RFC3339, *fakeStart)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy windows: --fake-start: %v\n", err)
			return exitUsage
		}
		clk = offsetClock{offset: time.Until(start)}
	}
	src, err := readAgreement(e, *agreementFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitFailure
	}
	p, _, err := generator.Check(src, opts)
	if err != nil {
		return reportError(e, err)
	}
	opts = opts.Resolve(p)
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	if *kubeconfig != "" {
		loading.ExplicitPath = *kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy windows: %v\n", err)
		return exitFailure
	}
	cfg.UserAgent = generator.WindowFieldManager
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy windows: %v\n", err)
		return exitFailure
	}
	if *identity == "" {
		host, _ := os.Hostname()
		*identity = host + "_" + strconv.Itoa(os.Getpid())
	}

	c := controller.New(controller.Config{Plan: p, Options: opts, Client: dyn, Clock: clk, Resync: *resync, Log: e.stderr})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy windows: metrics: %v\n", err)
			return exitFailure
		}
		srv := &http.Server{Handler: promhttp.HandlerFor(c.Registry(), promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
	}
	fmt.Fprintf(e.stderr, "tenancy windows: %s waits for the lease %s/%s\n", *identity, *namespace, *leaseName)
	// The Lease is judged by the real clock, whatever --fake-start says:
	// replicas agree on who leads, not on the agreement's instant.
	elector := lease.New(dyn, *namespace, *leaseName, *identity, clock.RealClock{})
	elector.OnStarted = func(ctx context.Context) {
		fmt.Fprintf(e.stderr, "tenancy windows: %s leads\n", *identity)
		c.Run(ctx)
	}
	elector.OnStopped = func() { fmt.Fprintf(e.stderr, "tenancy windows: %s stopped leading\n", *identity) }
	elector.Run(ctx)
	return exitOK
}

// offsetClock is the real clock started at another instant: it runs at real
// speed, and only Now and Since see the offset (timers wait real time).
type offsetClock struct {
	clock.RealClock
	offset time.Duration
}

func (c offsetClock) Now() time.Time                  { return c.RealClock.Now().Add(c.offset) }
func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
