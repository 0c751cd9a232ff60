// Package lease is leader election on one coordination.k8s.io/v1 Lease, by
// client-go's leaderelection rules (holderIdentity, leaseDurationSeconds,
// optimistic concurrency on resourceVersion, and expiry judged by the local
// time at which this replica last saw the record change), written on the
// dynamic client: client-go's package and its resourcelock pull the typed
// clientset and its scheme of every API group into the binary, which the
// start-up budget of every tenancy run cannot pay (docs/decisions.md).
package lease

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
)

// GVR is coordination.k8s.io/v1 Leases, the object client-go's leader
// election uses too.
var GVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// Elector runs a function while this replica holds the Lease.
type Elector struct {
	client   dynamic.ResourceInterface
	name     string
	identity string
	clock    clock.Clock

	// Duration is how long a holder that has stopped renewing keeps the
	// Lease, measured by the clock of the replica that waits for it.
	Duration time.Duration
	// RenewDeadline is how long the leader goes on without renewing before
	// it stops leading; shorter than Duration, so it stops before another
	// replica may take over.
	RenewDeadline time.Duration
	// RetryPeriod is how often candidates try and the leader renews.
	RetryPeriod time.Duration
	// OnStarted runs while this replica leads; its context ends when it
	// stops leading.
	OnStarted func(ctx context.Context)
	// OnStopped runs after OnStarted has returned, once leading has ended.
	OnStopped func()

	// observed is the Lease's record as this replica last read or wrote
	// it, and observedAt the local time it first saw that record.
	observed   record
	observedAt time.Time
}

// record is the part of a Lease's spec leader election reads.
type record struct {
	holder      string
	seconds     int64
	acquired    string
	renewed     string
	transitions int64
}

// New returns an elector for the Lease namespace/name as identity, with
// client-go's usual timings (15 s, 10 s, 2 s).
func New(dyn dynamic.Interface, namespace, name, identity string, clk clock.Clock) *Elector {
	return &Elector{
		client: dyn.Resource(GVR).Namespace(namespace), name: name, identity: identity, clock: clk,
		Duration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		OnStarted: func(context.Context) {}, OnStopped: func() {},
	}
}

// Run waits to acquire the Lease, runs OnStarted while it holds it, and
// returns when ctx ends (releasing the Lease) or when it could not renew in
// time (OnStarted's context is cancelled first).
func (l *Elector) Run(ctx context.Context) {
	for !l.tryAcquireOrRenew(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-l.clock.After(l.RetryPeriod):
		}
	}
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); l.OnStarted(leadCtx) }()
	renewed := l.clock.Now()
	for {
		select {
		case <-ctx.Done():
			cancel()
			<-done
			l.release()
			l.OnStopped()
			return
		case <-l.clock.After(l.RetryPeriod):
		}
		if l.tryAcquireOrRenew(ctx) {
			renewed = l.clock.Now()
			continue
		}
		if l.clock.Since(renewed) > l.RenewDeadline {
			cancel()
			<-done
			l.OnStopped()
			return
		}
	}
}

// tryAcquireOrRenew takes the Lease when it is free, expired or already
// ours, and reports whether this replica holds it now. As client-go's
// leaderelection does, a Lease held by another replica has expired when
// its record has not changed for its duration by this replica's clock,
// from the moment this replica first saw that record: the holder's
// renewTime, written by the holder's clock, is never compared with this
// one's, so clocks set apart cannot make two leaders. A concurrent writer
// makes the update fail on its resourceVersion, and this replica does not
// hold it.
func (l *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	now := l.clock.Now()
	stamp := metav1.NewMicroTime(now).UTC().Format(metav1.RFC3339Micro)
	ours := record{holder: l.identity, seconds: int64(l.Duration / time.Second), acquired: stamp, renewed: stamp}
	obj, err := l.client.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": l.name},
			"spec":     ours.spec(),
		}}
		if _, err := l.client.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return false
		}
		l.observe(ours, now)
		return true
	}
	if err != nil {
		return false
	}
	old := readRecord(obj)
	if old != l.observed {
		l.observe(old, now)
	}
	valid := l.observedAt.Add(time.Duration(old.seconds) * time.Second).After(now)
	if old.holder != "" && old.holder != l.identity && valid {
		return false // held by another replica whose record still changes
	}
	if old.holder == l.identity {
		ours.acquired, ours.transitions = old.acquired, old.transitions
	} else {
		ours.transitions = old.transitions + 1
	}
	obj.Object["spec"] = ours.spec()
	if _, err := l.client.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return false
	}
	l.observe(ours, now)
	return true
}

func (l *Elector) observe(r record, at time.Time) {
	l.observed, l.observedAt = r, at
}

func readRecord(obj *unstructured.Unstructured) record {
	var r record
	r.holder, _, _ = unstructured.NestedString(obj.Object, "spec", "holderIdentity")
	r.acquired, _, _ = unstructured.NestedString(obj.Object, "spec", "acquireTime")
	r.renewed, _, _ = unstructured.NestedString(obj.Object, "spec", "renewTime")
	r.seconds, _, _ = unstructured.NestedInt64(obj.Object, "spec", "leaseDurationSeconds")
	r.transitions, _, _ = unstructured.NestedInt64(obj.Object, "spec", "leaseTransitions")
	return r
}

func (r record) spec() map[string]any {
	return map[string]any{
		"holderIdentity":       r.holder,
		"leaseDurationSeconds": r.seconds,
		"acquireTime":          r.acquired,
		"renewTime":            r.renewed,
		"leaseTransitions":     r.transitions,
	}
}

// release gives the Lease up on shutdown, so a standby replica takes over
// at once instead of after the Lease's duration.
func (l *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obj, err := l.client.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil || readRecord(obj).holder != l.identity {
		return
	}
	_ = unstructured.SetNestedField(obj.Object, "", "spec", "holderIdentity")
	_ = unstructured.SetNestedField(obj.Object, int64(1), "spec", "leaseDurationSeconds")
	_, _ = l.client.Update(ctx, obj, metav1.UpdateOptions{})
}
