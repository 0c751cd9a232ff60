// Package await is how the end-to-end checks wait on the controllers: until
// a condition holds, or through a settle period in which it must never
// hold. A check that fails says what it waited for, the condition's last
// word, and the suite's summary of its cluster, so a timeout reads as what
// the cluster was doing instead of "context deadline exceeded".
package await

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Cond reports whether the awaited state holds, and what it saw.
type Cond func(ctx context.Context) (ok bool, saw string)

// Waits are one suite's deadlines and its summary of the cluster.
type Waits struct {
	// Timeout is how long Until waits; Interval how often it looks.
	Timeout, Interval time.Duration
	// Settle is how long Never watches.
	Settle time.Duration
	// State summarizes the cluster for a failure message.
	State func(ctx context.Context) string
}

// Until polls cond until it holds, failing the check when Timeout passes.
func (w Waits) Until(t testing.TB, ctx context.Context, what string, cond Cond) {
	t.Helper()
	w.UntilWithin(t, ctx, w.Timeout, what, cond)
}

// UntilWithin is Until with a timeout of its own.
func (w Waits) UntilWithin(t testing.TB, ctx context.Context, timeout time.Duration, what string, cond Cond) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, w.Interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, saw := cond(ctx)
		last = saw
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s: %s\n%s", timeout, what, last, w.state())
	}
}

// Never watches cond for Settle and fails the check the moment it holds.
func (w Waits) Never(t testing.TB, ctx context.Context, what string, cond Cond) {
	t.Helper()
	for deadline := time.Now().Add(w.Settle); time.Now().Before(deadline); time.Sleep(w.Interval) {
		if ok, saw := cond(ctx); ok {
			t.Fatalf("%s happened, and must not: %s\n%s", what, saw, w.state())
		}
	}
}

// state is the summary, read with a context of its own: the check's may
// be what ran out.
func (w Waits) state() string {
	if w.State == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.State(ctx)
}
