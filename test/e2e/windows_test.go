package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/windowsproc"
)

// fakeClock maps real time to the controllers' clock: every controller the
// test starts gets the same clock, also after a restart.
type fakeClock struct {
	realStart time.Time
	fakeStart time.Time
}

func (c fakeClock) now() time.Time { return c.fakeStart.Add(time.Since(c.realStart)) }

// until is the real time left until the fake instant.
func (c fakeClock) until(fake time.Time) time.Duration { return fake.Sub(c.now()) }

// startWindows starts a controller; it runs until the test (top, not the
// subtest that started it) ends.
func startWindows(t, top *testing.T, agreement, identity string, clock fakeClock) *windowsproc.Controller {
	t.Helper()
	w, err := windowsproc.Start(env.tenancy,
		"--agreement", agreement,
		"--kubeconfig", env.cp.Kubeconfig,
		"--namespace", "default",
		"--lease", "tenancy-windows-e2e",
		"--identity", identity,
		"--metrics-address", "127.0.0.1:0",
		"--fake-start", clock.now().Format(time.RFC3339Nano))
	if err != nil {
		t.Fatalf("start tenancy windows: %v", err)
	}
	top.Cleanup(w.Stop)
	return w
}

// lendingLimit is inference's h100 lendingLimit as the API server has it.
func lendingLimit(ctx context.Context) (int64, error) {
	o, err := env.cp.Dynamic.Resource(cqGVR).Get(ctx, "inference", metav1.GetOptions{})
	if err != nil {
		return -1, err
	}
	rgs, _, _ := unstructured.NestedSlice(o.Object, "spec", "resourceGroups")
	for _, rg := range rgs {
		fl, _, _ := unstructured.NestedSlice(rg.(map[string]any), "flavors")
		for _, f := range fl {
			rs, _, _ := unstructured.NestedSlice(f.(map[string]any), "resources")
			for _, r := range rs {
				r := r.(map[string]any)
				if r["name"] == string(gpu) {
					return quantity(r["lendingLimit"]), nil
				}
			}
		}
	}
	return -1, fmt.Errorf("no GPU resource in inference's ClusterQueue")
}

func waitLendingLimit(t *testing.T, want int64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("inference's lendingLimit %d", want), func(ctx context.Context) (bool, string) {
		got, err := lendingLimit(ctx)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("lendingLimit %d", got)
	})
}

// TestWindow: issue 21's proof in the real control plane with Kueue. The
// controller (`tenancy windows`, built from the repository) runs with a
// clock that starts 25 s before a window of 20:00-20:01 UTC:
//   - before the window research cannot borrow inference's GPUs;
//   - at the opening edge it can, 6 of them;
//   - restarted mid-window after the values were reverted (as a sync
//     would), the controller restores the window's value;
//   - a second replica does nothing while the first leads;
//   - at the closing edge the value outside the window is back, and
//     inference's workload gets its GPUs back within the README's 30 s.
func TestWindow(t *testing.T) {
	begin(t)
	path := testdata("windows.toml")
	all := render(t, path)
	var objs []*unstructuredObj
	for _, o := range all {
		// The controller's own Deployment and RBAC are not needed: the
		// test runs the controller as a process.
		if o.GetNamespace() == "tenancy-system" || o.GetName() == "tenancy-system" || strings.HasPrefix(o.GetName(), "tenancy-windows-") {
			continue
		}
		objs = append(objs, o)
	}
	if len(objs) == len(all) {
		t.Fatal("the render has no windows controller")
	}
	useAgreement(t, "windows", objs)
	agreement := filepath.Join(env.repoRoot, path)
	opens := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	closes := opens.Add(time.Minute)
	clock := fakeClock{realStart: time.Now(), fakeStart: opens.Add(-25 * time.Second)}
	first := startWindows(t, t, agreement, "first", clock)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller log:\n%s", first.Log())
		}
	})

	rq := localQueueFor(t, objs, "research")
	own := submit(t, job{ns: "research", queue: rq, name: "own", pods: 1, gpus: 8})
	waitAdmitted(t, own)
	borrower := submit(t, job{ns: "research", queue: rq, name: "borrower", pods: 1, gpus: 6})
	t.Run("before-the-window-no-borrowing", func(t *testing.T) {
		t.Logf("pending: %s", waitPending(t, borrower))
		if got, err := lendingLimit(ctxFor(t)); err != nil || got != 0 {
			t.Fatalf("lendingLimit %d before the window (%v), want 0", got, err)
		}
		if clock.until(opens) <= 0 {
			t.Fatalf("the window opened before the check ended; the check is too slow for its clock")
		}
	})

	t.Run("at-the-edge-research-borrows-6", func(t *testing.T) {
		waitAdmitted(t, borrower)
		if late := -clock.until(opens); late < 0 {
			t.Fatalf("admitted %s before the window opened", -late)
		} else {
			t.Logf("admitted %s after the opening edge", late.Round(100*time.Millisecond))
		}
		waitUsage(t, "research", h100, gpu, usage{total: 14, borrowed: 6})
		if !strings.Contains(first.Log(), "opened") {
			t.Errorf("no opening in the controller's log:\n%s", first.Log())
		}
	})

	second := (*windowsproc.Controller)(nil)
	top := t
	t.Run("restart-mid-window-restores", func(t *testing.T) {
		first.Stop()
		// A sync of the rendered objects puts the value outside the window back.
		if _, err := env.cp.Applier.Apply(ctxFor(t), byKind(objs, "ClusterQueue"), false); err != nil {
			t.Fatal(err)
		}
		waitLendingLimit(t, 0)
		// The killed leader's Lease must expire (15 s) before the next one leads.
		first = startWindows(t, top, agreement, "first-again", clock)
		waitLendingLimit(t, 6)
		if clock.until(closes) <= 0 {
			t.Fatal("the window closed before the restart was checked")
		}
	})

	t.Run("second-replica-waits", func(t *testing.T) {
		second = startWindows(t, top, agreement, "second", clock)
		time.Sleep(5 * time.Second)
		if log := second.Log(); strings.Contains(log, "leads") || !strings.Contains(log, "waits") {
			t.Errorf("the second replica's log:\n%s", log)
		}
		lease, err := env.cp.Kube.CoordinationV1().Leases("default").Get(ctxFor(t), "tenancy-windows-e2e", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := lease.Spec.HolderIdentity; h == nil || *h != "first-again" {
			t.Errorf("lease holder %v, want first-again", h)
		}
	})

	t.Run("closing-edge-inference-gets-them-back", func(t *testing.T) {
		if d := clock.until(closes); d > 0 {
			t.Logf("waiting %s for the closing edge", d.Round(time.Second))
			time.Sleep(d)
		}
		edge := time.Now()
		waitLendingLimit(t, 0)
		iq := localQueueFor(t, objs, "inference")
		back := submit(t, job{ns: "inference", queue: iq, name: "back", pods: 1, gpus: 8})
		waitAdmitted(t, back)
		if took := time.Since(edge); took > 30*time.Second {
			t.Errorf("inference got its GPUs %s after the closing edge, the README says within 30 s", took.Round(time.Second))
		} else {
			t.Logf("inference admitted %s after the closing edge", took.Round(100*time.Millisecond))
		}
		if s := state(t, borrower); s.admitted && s.preemptedReason == "" {
			t.Errorf("the borrower still holds inference's GPUs: %+v", s)
		}
		if strings.Contains(second.Log(), "leads") {
			t.Errorf("the second replica led while the first was running:\n%s", second.Log())
		}
	})
}
