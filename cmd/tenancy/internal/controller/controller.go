// Package controller is the lending-windows controller: from a checked
// agreement and a clock alone it computes each team's lending and borrowing
// limits at the clock's instant (generator.Windows) and applies them to the
// team's queue with server-side apply under the field manager
// tenancy-windows, owning only the fields the backend's descriptor names
// (gpu.Descriptor.WindowOwned). It re-applies at every window edge and every
// resync, so a restart, a missed edge or a value changed by hand converge to
// the agreement; it records an Event on the queue at each edge and serves
// Prometheus metrics. Leader election is package lease's; the command wires
// the two.
package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Config is what a controller needs: the agreement (checked), the options
// it was checked with, a client, a clock and how often to re-apply.
type Config struct {
	Plan    *plan.Agreement
	Options generator.Options
	Client  dynamic.Interface
	// Clock decides which windows are open; tests give a fake one, and
	// `tenancy windows --fake-start` one that starts at another instant.
	Clock clock.Clock
	// Resync is the longest wait between applies, edges or not.
	Resync time.Duration
	// Log receives one line per edge, apply error and Event.
	Log io.Writer
}

// Controller applies the agreement's state at the clock's instant.
type Controller struct {
	cfg Config
	gvr schema.GroupVersionResource

	mu       sync.Mutex
	open     map[string]bool // team/window → open at the last apply
	lastNext time.Time

	registry  *prometheus.Registry
	openGauge *prometheus.GaugeVec
	lastApply prometheus.Gauge
	errors    prometheus.Counter
}

// New returns a controller of cfg; it does nothing until Run or Reconcile.
func New(cfg Config) *Controller {
	c := &Controller{cfg: cfg, open: map[string]bool{}}
	d := gpu.Describe(cfg.Options.Backend)
	version := ""
	if d.Backend == gpu.Kueue {
		version = cfg.Options.KueueAPI
	}
	c.gvr = d.QueueGVR(version)
	c.registry = prometheus.NewRegistry()
	c.openGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tenancy_window_open", Help: "1 while the team's lending window (its index in the agreement) is open, by the controller's clock."}, []string{"pool", "team", "window"})
	c.lastApply = prometheus.NewGauge(prometheus.GaugeOpts{Name: "tenancy_windows_last_apply_timestamp_seconds", Help: "When the controller last applied every queue successfully (Unix seconds, real time)."})
	c.errors = prometheus.NewCounter(prometheus.CounterOpts{Name: "tenancy_windows_apply_errors_total", Help: "Failed applies of a queue's lending and borrowing limits."})
	c.registry.MustRegister(c.openGauge, c.lastApply, c.errors)
	p := cfg.Plan
	for _, t := range p.Teams {
		for i := range t.Windows {
			c.openGauge.WithLabelValues(p.Name, t.Name, strconv.Itoa(i)).Set(0)
		}
	}
	return c
}

// Registry holds the controller's metrics, for the command's /metrics.
func (c *Controller) Registry() *prometheus.Registry { return c.registry }

// Queues is the resource the controller patches: the backend's queues.
func (c *Controller) Queues() schema.GroupVersionResource { return c.gvr }

// Run applies now, then at every edge and every resync, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	for {
		next := c.Reconcile(ctx)
		wait := c.cfg.Resync
		if !next.IsZero() {
			// Wake just after the edge: the window's interval includes its
			// start and excludes its end, so the instant itself is decided.
			if d := next.Sub(c.cfg.Clock.Now()) + 10*time.Millisecond; d < wait {
				wait = max(d, 0)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-c.cfg.Clock.After(wait):
		}
	}
}

// Reconcile applies the state at the clock's instant and returns the next
// edge (zero when the state could not be computed).
func (c *Controller) Reconcile(ctx context.Context) time.Time {
	p := c.cfg.Plan
	now := c.cfg.Clock.Now()
	ws, err := generator.Windows(p, now, c.cfg.Options)
	if err != nil {
		c.errors.Inc()
		fmt.Fprintf(c.cfg.Log, "tenancy windows: %v\n", err)
		return time.Time{}
	}
	open := map[string]bool{}
	for _, o := range ws.Open {
		open[o.Team+"/"+strconv.Itoa(o.Index)] = true
	}
	for _, t := range p.Teams {
		for i := range t.Windows {
			v := 0.0
			if open[t.Name+"/"+strconv.Itoa(i)] {
				v = 1
			}
			c.openGauge.WithLabelValues(p.Name, t.Name, strconv.Itoa(i)).Set(v)
		}
	}
	failed := false
	for _, a := range ws.Applies {
		body, err := json.Marshal(a.Patch)
		if err == nil {
			force := true
			_, err = c.cfg.Client.Resource(c.gvr).Patch(ctx, a.Queue, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: generator.WindowFieldManager, Force: &force})
		}
		if err != nil {
			failed = true
			c.errors.Inc()
			fmt.Fprintf(c.cfg.Log, "tenancy windows: apply %s %s: %v\n", c.gvr.Resource, a.Queue, err)
			continue
		}
		c.edgeEvents(ctx, a.Team, a.Queue, open, now)
	}
	if !failed {
		c.lastApply.SetToCurrentTime()
	}
	if !ws.NextEdge.Equal(c.lastNext) {
		// Once per edge, not per resync.
		fmt.Fprintf(c.cfg.Log, "tenancy windows: applied %d queue(s) at %s (%d window(s) open); next edge %s\n", len(ws.Applies), now.Format(time.RFC3339), len(ws.Open), ws.NextEdge.Format(time.RFC3339))
		c.lastNext = ws.NextEdge
	}
	return ws.NextEdge
}

// edgeEvents records an Event on the team's queue for each of its windows
// whose state differs from the last apply (and for the open ones at
// start-up), so kubectl describe shows the edges. A team with a queue per
// KAI node pool gets each edge once, on the first of its queues applied.
func (c *Controller) edgeEvents(ctx context.Context, team, queue string, open map[string]bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.cfg.Plan
	t := p.Teams[0]
	for _, pt := range p.Teams {
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
		if err := c.event(ctx, queue, reason, msg); err != nil {
			fmt.Fprintf(c.cfg.Log, "tenancy windows: event: %v\n", err)
		}
		fmt.Fprintf(c.cfg.Log, "tenancy windows: %s\n", msg)
	}
}

// EventsGVR is core/v1 Events, which the controller records edges as.
var EventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// event records an Event about a team's queue. An Event about a
// cluster-scoped object lives in the default namespace. Its timestamps are
// real time, whatever the controller's clock, as kubectl shows their age.
func (c *Controller) event(ctx context.Context, queue, reason, msg string) error {
	obj, err := c.cfg.Client.Resource(c.gvr).Get(ctx, queue, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	ev := map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"generateName": queue + ".", "namespace": metav1.NamespaceDefault},
		"involvedObject": map[string]any{
			"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(), "name": queue, "uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(),
		},
		"reason": reason, "message": msg, "type": "Normal",
		"source":         map[string]any{"component": generator.WindowFieldManager},
		"firstTimestamp": now, "lastTimestamp": now, "count": int64(1),
	}
	_, err = c.cfg.Client.Resource(EventsGVR).Namespace(metav1.NamespaceDefault).Create(ctx, &unstructured.Unstructured{Object: ev}, metav1.CreateOptions{})
	if err != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
