package lease

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)

// replica is one candidate with its own clock, as on its own node.
type replica struct {
	*Elector
	clock *clocktesting.FakeClock
}

func replicas(skews ...time.Duration) []replica {
	dyn := fake.NewSimpleDynamicClient(runtime.NewScheme())
	var out []replica
	for i, skew := range skews {
		clk := clocktesting.NewFakeClock(t0.Add(skew))
		out = append(out, replica{New(dyn, "tenancy-system", "tenancy-windows", string(rune('a'+i)), clk), clk})
	}
	return out
}

func holder(t *testing.T, r replica) (string, int64) {
	t.Helper()
	obj, err := r.client.Get(context.Background(), r.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := readRecord(obj)
	return rec.holder, rec.transitions
}

// TestSkewedClocks: a standby replica whose clock is set apart from the
// leader's, ahead or behind by far more than the Lease's duration, waits
// as long as the leader renews, and takes over once the leader's record
// has stood still for the Lease's duration by the standby's own clock.
// Judged by the leader's renewTime against the standby's clock, as this
// package did before, a standby an hour ahead took the Lease from a live
// leader at once: two leaders.
func TestSkewedClocks(t *testing.T) {
	ctx := context.Background()
	for name, skew := range map[string]time.Duration{
		"standby an hour ahead":  time.Hour,
		"standby an hour behind": -time.Hour,
		"standby 14s ahead":      14 * time.Second,
		"same clock":             0,
	} {
		t.Run(name, func(t *testing.T) {
			rs := replicas(0, skew)
			leader, standby := rs[0], rs[1]
			if !leader.tryAcquireOrRenew(ctx) {
				t.Fatal("the first replica did not acquire a missing Lease")
			}
			// A minute of renewals every 2 s, each replica on its clock.
			for range 30 {
				if standby.tryAcquireOrRenew(ctx) {
					h, _ := holder(t, standby)
					t.Fatalf("the standby took the Lease from a leader that renews (holder %s)", h)
				}
				leader.clock.Step(leader.RetryPeriod)
				standby.clock.Step(standby.RetryPeriod)
				if !leader.tryAcquireOrRenew(ctx) {
					t.Fatal("the leader could not renew")
				}
			}
			// The leader stops. Within the Lease's duration, by the
			// standby's clock, it still waits; past it, it takes over.
			standby.tryAcquireOrRenew(ctx) // sees the last renewal
			standby.clock.Step(standby.Duration - time.Second)
			if standby.tryAcquireOrRenew(ctx) {
				t.Fatal("the standby took the Lease before its duration passed")
			}
			standby.clock.Step(2 * time.Second)
			if !standby.tryAcquireOrRenew(ctx) {
				t.Fatal("the standby did not take an expired Lease")
			}
			if h, n := holder(t, standby); h != standby.identity || n != 1 {
				t.Errorf("holder %s after %d transition(s), want %s after 1", h, n, standby.identity)
			}
			if leader.tryAcquireOrRenew(ctx) {
				t.Error("the old leader renewed a Lease another replica holds")
			}
		})
	}
}

// signals has r's OnStarted lead until its context ends, and returns
// channels closed when it started and when it stopped leading.
func signals(r replica) (started, stopped chan struct{}) {
	started, stopped = make(chan struct{}), make(chan struct{})
	r.OnStarted = func(ctx context.Context) { close(started); <-ctx.Done() }
	r.OnStopped = func() { close(stopped) }
	return started, stopped
}

// TestHandOver: a second replica waits while the first leads; when the
// first shuts down it releases the Lease, and the second leads at its next
// try, without waiting for the Lease's duration.
func TestHandOver(t *testing.T) {
	rs := replicas(0, 0)
	first, second := rs[0], rs[1]
	started, stopped := signals(first)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); first.Run(ctx) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first replica did not lead")
	}
	if second.tryAcquireOrRenew(context.Background()) {
		t.Fatal("the second replica led beside the first")
	}
	cancel()
	<-done
	select {
	case <-stopped:
	default:
		t.Error("OnStopped did not run")
	}
	if h, _ := holder(t, first); h != "" {
		t.Fatalf("holder %q after shutdown, want the Lease released", h)
	}
	if !second.tryAcquireOrRenew(context.Background()) {
		t.Fatal("the second replica did not take the released Lease")
	}
	if h, n := holder(t, second); h != second.identity || n != 1 {
		t.Errorf("holder %s after %d transition(s), want %s after 1", h, n, second.identity)
	}
}

// TestStopsWhenItCannotRenew: a leader whose Lease another replica took
// stops leading within RenewDeadline, before that replica may act.
func TestStopsWhenItCannotRenew(t *testing.T) {
	rs := replicas(0, 0)
	first, second := rs[0], rs[1]
	started, stopped := signals(first)
	go first.Run(context.Background())
	<-started
	// The second replica takes the Lease by force (as after a partition).
	obj, _ := second.client.Get(context.Background(), second.name, metav1.GetOptions{})
	obj.Object["spec"] = record{holder: second.identity, seconds: 15, transitions: 1}.spec()
	if _, err := second.client.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-stopped:
			return
		case <-deadline:
			t.Fatal("the leader went on leading without its Lease")
		case <-time.After(time.Millisecond):
			if first.clock.HasWaiters() {
				first.clock.Step(first.RetryPeriod)
			}
		}
	}
}
