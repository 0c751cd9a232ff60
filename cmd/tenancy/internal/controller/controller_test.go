package controller_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/controller"
	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// agreement is the issue's, with inference also allowed to borrow 2 during
// its window (weekday nights, 20:00 to 06:00 Europe/Berlin), so that both
// backends have a field that changes at the edges.
const agreement = windowstest.Head + windowstest.WeekdayNights + "borrow = 2\n" + windowstest.Research

var berlin, _ = time.LoadLocation("Europe/Berlin")

// Instants around Monday night's window.
var (
	beforeOpening = time.Date(2026, 12, 7, 19, 59, 50, 0, berlin)
	opening       = time.Date(2026, 12, 7, 20, 0, 0, 0, berlin)
	inside        = time.Date(2026, 12, 7, 21, 0, 0, 0, berlin)
	closing       = time.Date(2026, 12, 8, 6, 0, 0, 0, berlin)
)

// backend is what differs between the backends in these tests: the
// inference queue's value the window changes, outside and inside it.
type backend struct {
	value           func(q *unstructured.Unstructured) string
	outside, inside string
}

var backends = map[gpu.Backend]backend{
	gpu.Kueue: {kueueLending, "0", "6"},
	gpu.KAI:   {kaiLimit, "8", "10"},
}

// kueueLending is the GPU lendingLimit of a ClusterQueue.
func kueueLending(q *unstructured.Unstructured) string {
	groups, _, _ := unstructured.NestedSlice(q.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			resources, _, _ := unstructured.NestedSlice(f.(map[string]any), "resources")
			for _, r := range resources {
				if r := r.(map[string]any); r["name"] == gpu.WholeGPU {
					return fmt.Sprint(r["lendingLimit"])
				}
			}
		}
	}
	return "none"
}

// kaiLimit is the GPU limit of a KAI Queue.
func kaiLimit(q *unstructured.Unstructured) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(q.Object, "spec", "resources", "gpu", "limit")
	if !ok {
		return "none"
	}
	return fmt.Sprint(v)
}

// cluster is a fake API server holding the rendered queues, with a fake
// clock, and a controller of the agreement on it.
type cluster struct {
	t      *testing.T
	dyn    *fake.FakeDynamicClient
	clock  *clocktesting.FakeClock
	c      *controller.Controller
	b      backend
	log    *syncBuffer
	resync time.Duration
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newCluster(t *testing.T, b gpu.Backend, at time.Time) *cluster {
	t.Helper()
	opts, err := generator.Options{Backend: b}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	src := generator.Source{Path: "tenancy.toml", Data: []byte(agreement)}
	res, err := generator.Render(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	var queues []runtime.Object
	for _, o := range res.Objects {
		if o.Kind() == gpu.Describe(b).QueueKind {
			queues = append(queues, &unstructured.Unstructured{Object: o.Fields})
		}
	}
	dyn := fake.NewSimpleDynamicClient(runtime.NewScheme(), queues...)
	// The fake's apply is a strategic merge, which needs Go types; apply
	// here as a merge of maps (lists replaced whole), which is what
	// server-side apply does to the fields the controller owns: an atomic
	// list (Kueue) and a number (KAI).
	dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		if pa.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		obj, err := dyn.Tracker().Get(pa.GetResource(), pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured)
		var patch map[string]any
		if err := json.Unmarshal(pa.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		merge(u.Object, patch)
		return true, u, dyn.Tracker().Update(pa.GetResource(), u, pa.GetNamespace())
	})
	clk := clocktesting.NewFakeClock(at)
	log := &syncBuffer{}
	resync := 30 * time.Second
	c := controller.New(controller.Config{Plan: res.Plan, Options: opts, Client: dyn, Clock: clk, Resync: resync, Log: log})
	return &cluster{t: t, dyn: dyn, clock: clk, c: c, b: backends[b], log: log, resync: resync}
}

func merge(dst, patch map[string]any) {
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, pm)
				continue
			}
		}
		dst[k] = v
	}
}

// inference is the inference queue as the fake API server has it.
func (k *cluster) inference() *unstructured.Unstructured {
	k.t.Helper()
	obj, err := k.dyn.Tracker().Get(k.c.Queues(), "", "inference")
	if err != nil {
		k.t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
}

// waitValue waits (real time) for inference's value to become want.
func (k *cluster) waitValue(want string) {
	k.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := k.b.value(k.inference()); got != want; got = k.b.value(k.inference()) {
		if time.Now().After(deadline) {
			k.t.Fatalf("inference's value %s, want %s; log:\n%s", got, want, k.log)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitIdle waits (real time) until the controller waits on its clock.
func (k *cluster) waitIdle() {
	k.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !k.clock.HasWaiters() {
		if time.Now().After(deadline) {
			k.t.Fatal("the controller never waited on its clock")
		}
		time.Sleep(time.Millisecond)
	}
}

// events are the reasons of the Events the controller created, in order.
func (k *cluster) events() []string {
	var out []string
	for _, a := range k.dyn.Actions() {
		if c, ok := a.(k8stesting.CreateAction); ok && a.GetResource() == controller.EventsGVR {
			reason, _, _ := unstructured.NestedString(c.GetObject().(*unstructured.Unstructured).Object, "reason")
			out = append(out, reason)
		}
	}
	return out
}

// run starts the controller's loop until the test ends.
func (k *cluster) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); k.c.Run(ctx) }()
	k.t.Cleanup(func() { cancel(); <-done })
}

// TestEdges: the loop applies the value outside the window, wakes at the
// opening edge and applies the window's, then at the closing edge the
// value outside again, with an Event at each edge.
func TestEdges(t *testing.T) {
	for b := range backends {
		t.Run(string(b), func(t *testing.T) {
			k := newCluster(t, b, beforeOpening)
			k.run()
			k.waitValue(k.b.outside)
			k.waitIdle()
			k.clock.SetTime(opening.Add(10 * time.Millisecond))
			k.waitValue(k.b.inside)
			k.waitIdle()
			k.clock.SetTime(closing.Add(10 * time.Millisecond))
			k.waitValue(k.b.outside)
			k.waitIdle()
			if got, want := strings.Join(k.events(), ","), "WindowOpened,WindowClosed"; got != want {
				t.Errorf("events %s, want %s", got, want)
			}
			for _, want := range []string{"opened at 2026-12-07T20:00:00+01:00", "closed at 2026-12-08T06:00:00+01:00"} {
				if !strings.Contains(k.log.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, k.log)
				}
			}
		})
	}
}

// TestRestartMidWindow: a controller that starts inside a window (a
// restart, or a replica taking over) applies the window's value at once and
// records the open window.
func TestRestartMidWindow(t *testing.T) {
	for b := range backends {
		t.Run(string(b), func(t *testing.T) {
			k := newCluster(t, b, inside)
			if got := k.b.value(k.inference()); got != k.b.outside {
				t.Fatalf("the rendered queue holds %s, want the value outside the window %s", got, k.b.outside)
			}
			next := k.c.Reconcile(context.Background())
			if got := k.b.value(k.inference()); got != k.b.inside {
				t.Errorf("after the restart %s, want %s", got, k.b.inside)
			}
			if !next.Equal(closing) {
				t.Errorf("next edge %s, want %s", next, closing)
			}
			if got := k.events(); len(got) != 1 || got[0] != "WindowOpened" {
				t.Errorf("events %v, want the open window recorded once", got)
			}
		})
	}
}

// TestValueChangedByHand: a value someone (or a sync) changed by hand
// inside a window is put back at the next resync, with no Event (no edge).
func TestValueChangedByHand(t *testing.T) {
	k := newCluster(t, gpu.Kueue, inside)
	k.run()
	k.waitValue(k.b.inside)
	k.waitIdle()
	q := k.inference()
	groups, _, _ := unstructured.NestedSlice(q.Object, "spec", "resourceGroups")
	res := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)["resources"].([]any)
	for _, r := range res {
		if r := r.(map[string]any); r["name"] == gpu.WholeGPU {
			r["lendingLimit"] = "0"
		}
	}
	_ = unstructured.SetNestedSlice(q.Object, groups, "spec", "resourceGroups")
	if err := k.dyn.Tracker().Update(k.c.Queues(), q, ""); err != nil {
		t.Fatal(err)
	}
	k.waitValue("0")
	k.clock.Step(k.resync)
	k.waitValue(k.b.inside)
	if got := k.events(); len(got) != 1 {
		t.Errorf("events %v, want only the start-up's", got)
	}
}
