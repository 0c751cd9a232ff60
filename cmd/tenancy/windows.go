package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/plan"
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
	lease := fs.String("lease", "tenancy-windows", "name of the leader-election Lease")
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
	clock := time.Now
	if *fakeStart != "" {
		start, err := time.Parse(time.RFC3339, *fakeStart)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy windows: --fake-start: %v\n", err)
			return exitUsage
		}
		offset := time.Until(start)
		clock = func() time.Time { return time.Now().Add(offset) }
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

	c := newWindowController(e, p, opts, dyn, clock, *resync)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy windows: metrics: %v\n", err)
			return exitFailure
		}
		srv := &http.Server{Handler: promhttp.HandlerFor(c.registry, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
	}
	fmt.Fprintf(e.stderr, "tenancy windows: %s waits for the lease %s/%s\n", *identity, *namespace, *lease)
	elector := newLeaseElector(dyn, *namespace, *lease, *identity)
	elector.onStarted = func(ctx context.Context) {
		fmt.Fprintf(e.stderr, "tenancy windows: %s leads\n", *identity)
		c.run(ctx)
	}
	elector.onStopped = func() { fmt.Fprintf(e.stderr, "tenancy windows: %s stopped leading\n", *identity) }
	elector.run(ctx)
	return exitOK
}

// windowController applies the agreement's state at the clock's instant.
type windowController struct {
	e        *env
	p        *plan.Agreement
	opts     generator.Options
	dyn      dynamic.Interface
	clock    func() time.Time
	resync   time.Duration
	gvr      schema.GroupVersionResource
	mu       sync.Mutex
	open     map[string]bool // team/window → open at the last apply
	lastNext time.Time

	registry  *prometheus.Registry
	openGauge *prometheus.GaugeVec
	lastApply prometheus.Gauge
	errors    prometheus.Counter
}

func newWindowController(e *env, p *plan.Agreement, opts generator.Options, dyn dynamic.Interface, clock func() time.Time, resync time.Duration) *windowController {
	c := &windowController{e: e, p: p, opts: opts, dyn: dyn, clock: clock, resync: resync, open: map[string]bool{}}
	c.gvr = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: opts.KueueAPI, Resource: "clusterqueues"}
	if opts.Backend == generator.KAI {
		c.gvr = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"}
	}
	c.registry = prometheus.NewRegistry()
	c.openGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tenancy_window_open", Help: "1 while the team's lending window (its index in the agreement) is open, by the controller's clock."}, []string{"pool", "team", "window"})
	c.lastApply = prometheus.NewGauge(prometheus.GaugeOpts{Name: "tenancy_windows_last_apply_timestamp_seconds", Help: "When the controller last applied every queue successfully (Unix seconds, real time)."})
	c.errors = prometheus.NewCounter(prometheus.CounterOpts{Name: "tenancy_windows_apply_errors_total", Help: "Failed applies of a queue's lending and borrowing limits."})
	c.registry.MustRegister(c.openGauge, c.lastApply, c.errors)
	for _, t := range p.Teams {
		for i := range t.Windows {
			c.openGauge.WithLabelValues(p.Name, t.Name, strconv.Itoa(i)).Set(0)
		}
	}
	return c
}

// run applies now, then at every edge and every resync, until ctx ends.
func (c *windowController) run(ctx context.Context) {
	for {
		next := c.reconcile(ctx)
		wait := c.resync
		if !next.IsZero() {
			// Wake just after the edge: the window's interval includes its
			// start and excludes its end, so the instant itself is decided.
			if d := next.Sub(c.clock()) + 10*time.Millisecond; d < wait {
				wait = max(d, 0)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// reconcile applies the state at the clock's instant and returns the next
// edge.
func (c *windowController) reconcile(ctx context.Context) time.Time {
	now := c.clock()
	ws, err := generator.Windows(c.p, now, c.opts)
	if err != nil {
		c.errors.Inc()
		fmt.Fprintf(c.e.stderr, "tenancy windows: %v\n", err)
		return time.Time{}
	}
	open := map[string]bool{}
	for _, o := range ws.Open {
		open[o.Team+"/"+strconv.Itoa(o.Index)] = true
	}
	for _, t := range c.p.Teams {
		for i := range t.Windows {
			v := 0.0
			if open[t.Name+"/"+strconv.Itoa(i)] {
				v = 1
			}
			c.openGauge.WithLabelValues(c.p.Name, t.Name, strconv.Itoa(i)).Set(v)
		}
	}
	failed := false
	for _, a := range ws.Applies {
		body, err := json.Marshal(a.Patch)
		if err == nil {
			force := true
			_, err = c.dyn.Resource(c.gvr).Patch(ctx, a.Team, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: generator.WindowFieldManager, Force: &force})
		}
		if err != nil {
			failed = true
			c.errors.Inc()
			fmt.Fprintf(c.e.stderr, "tenancy windows: apply %s %s: %v\n", c.gvr.Resource, a.Team, err)
			continue
		}
		c.edgeEvents(ctx, a.Team, open, now)
	}
	if !failed {
		c.lastApply.SetToCurrentTime()
	}
	if !ws.NextEdge.Equal(c.lastNext) {
		// Once per edge, not per resync.
		fmt.Fprintf(c.e.stderr, "tenancy windows: applied %d queue(s) at %s (%d window(s) open); next edge %s\n", len(ws.Applies), now.Format(time.RFC3339), len(ws.Open), ws.NextEdge.Format(time.RFC3339))
		c.lastNext = ws.NextEdge
	}
	return ws.NextEdge
}

// edgeEvents records an Event on the team's queue for each of its windows
// whose state differs from the last apply (and for the open ones at
// start-up), so kubectl describe shows the edges.
func (c *windowController) edgeEvents(ctx context.Context, team string, open map[string]bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.p.Teams[0]
	for _, pt := range c.p.Teams {
		if pt.Name == team {
			t = pt
		}
	}
	for i, w := range t.Windows {
		key := team + "/" + strconv.Itoa(i)
		was, seen := c.open[key]
		is := open[key]
		c.open[key] = is
		if seen && was == is || !seen && !is {
			continue
		}
		reason, verb := "WindowOpened", "opened"
		if !is {
			reason, verb = "WindowClosed", "closed"
		}
		msg := fmt.Sprintf("lending window %d of team %s (%s) %s at %s: limits applied by tenancy-windows", i, team, w.Schedule.Describe(), verb, now.Format(time.RFC3339))
		if err := c.event(ctx, team, reason, msg); err != nil {
			fmt.Fprintf(c.e.stderr, "tenancy windows: event: %v\n", err)
		}
		fmt.Fprintf(c.e.stderr, "tenancy windows: %s\n", msg)
	}
}

func (c *windowController) event(ctx context.Context, team, reason, msg string) error {
	obj, err := c.dyn.Resource(c.gvr).Get(ctx, team, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	ev := map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"generateName": team + ".", "namespace": metav1.NamespaceDefault},
		"involvedObject": map[string]any{
			"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "name": team, "uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(),
		},
		"reason": reason, "message": msg, "type": "Normal",
		"source":         map[string]any{"component": generator.WindowFieldManager},
		"firstTimestamp": now, "lastTimestamp": now, "count": int64(1),
	}
	events := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	_, err = c.dyn.Resource(events).Namespace(metav1.NamespaceDefault).Create(ctx, &unstructured.Unstructured{Object: ev}, metav1.CreateOptions{})
	if err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
