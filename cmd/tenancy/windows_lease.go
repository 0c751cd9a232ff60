package main

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// leaseGVR is coordination.k8s.io/v1 Leases, the object client-go's leader
// election uses too; the controller reads and writes it with the dynamic
// client it already has.
var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// leaseElector is leader election on one Lease, as client-go's
// leaderelection does it (holderIdentity, renewTime, leaseDurationSeconds,
// optimistic concurrency on resourceVersion), written on the dynamic client:
// client-go's package pulls the typed clientset and its scheme of every API
// group into the binary, which doubled the CPU of every tenancy render
// (docs/decisions.md, "Lending windows").
type leaseElector struct {
	client    dynamic.ResourceInterface
	name      string
	identity  string
	duration  time.Duration // a holder that has not renewed for this long has lost the lease
	renewBy   time.Duration // the leader stops when it could not renew for this long
	retry     time.Duration // how often candidates try and the leader renews
	now       func() time.Time
	onStarted func(ctx context.Context)
	onStopped func()
}

func newLeaseElector(dyn dynamic.Interface, namespace, name, identity string) *leaseElector {
	return &leaseElector{
		client: dyn.Resource(leaseGVR).Namespace(namespace), name: name, identity: identity,
		duration: 15 * time.Second, renewBy: 10 * time.Second, retry: 2 * time.Second, now: time.Now,
	}
}

// run waits to acquire the lease, runs onStarted while it holds it, and
// returns when ctx ends (releasing the lease) or when it could not renew in
// time (onStarted's context is cancelled first).
func (l *leaseElector) run(ctx context.Context) {
	for !l.tryAcquireOrRenew(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(l.retry):
		}
	}
	leadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); l.onStarted(leadCtx) }()
	renewed := l.now()
	for {
		select {
		case <-ctx.Done():
			cancel()
			<-done
			l.release()
			l.onStopped()
			return
		case <-time.After(l.retry):
		}
		if l.tryAcquireOrRenew(ctx) {
			renewed = l.now()
			continue
		}
		if l.now().Sub(renewed) > l.renewBy {
			cancel()
			<-done
			l.onStopped()
			return
		}
	}
}

// tryAcquireOrRenew takes the lease when it is free, expired or already
// ours, and reports whether this replica holds it now. A concurrent writer
// makes the update fail on its resourceVersion, and this replica does not
// hold it.
func (l *leaseElector) tryAcquireOrRenew(ctx context.Context) bool {
	now := metav1.NewMicroTime(l.now())
	obj, err := l.client.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": l.name},
			"spec":     l.spec(now, now, 0),
		}}
		_, err := l.client.Create(ctx, lease, metav1.CreateOptions{})
		return err == nil
	}
	if err != nil {
		return false
	}
	holder, _, _ := unstructured.NestedString(obj.Object, "spec", "holderIdentity")
	acquired, _, _ := unstructured.NestedString(obj.Object, "spec", "acquireTime")
	renewedAt, _, _ := unstructured.NestedString(obj.Object, "spec", "renewTime")
	seconds, _, _ := unstructured.NestedInt64(obj.Object, "spec", "leaseDurationSeconds")
	transitions, _, _ := unstructured.NestedInt64(obj.Object, "spec", "leaseTransitions")
	if holder != l.identity && holder != "" {
		var last metav1.MicroTime
		if err := last.UnmarshalQueryParameter(renewedAt); err == nil && l.now().Before(last.Add(time.Duration(seconds)*time.Second)) {
			return false // held by another replica that renews
		}
	}
	acquireTime := now
	if holder == l.identity {
		if err := acquireTime.UnmarshalQueryParameter(acquired); err != nil {
			acquireTime = now
		}
	} else {
		transitions++
	}
	obj.Object["spec"] = l.spec(acquireTime, now, transitions)
	_, err = l.client.Update(ctx, obj, metav1.UpdateOptions{})
	return err == nil
}

func (l *leaseElector) spec(acquired, renewed metav1.MicroTime, transitions int64) map[string]any {
	return map[string]any{
		"holderIdentity":       l.identity,
		"leaseDurationSeconds": int64(l.duration / time.Second),
		"acquireTime":          acquired.UTC().Format(metav1.RFC3339Micro),
		"renewTime":            renewed.UTC().Format(metav1.RFC3339Micro),
		"leaseTransitions":     transitions,
	}
}

// release gives the lease up on shutdown, so a standby replica takes over
// at once instead of after the lease's duration.
func (l *leaseElector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	obj, err := l.client.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return
	}
	if holder, _, _ := unstructured.NestedString(obj.Object, "spec", "holderIdentity"); holder != l.identity {
		return
	}
	_ = unstructured.SetNestedField(obj.Object, "", "spec", "holderIdentity")
	_ = unstructured.SetNestedField(obj.Object, int64(1), "spec", "leaseDurationSeconds")
	_, _ = l.client.Update(ctx, obj, metav1.UpdateOptions{})
}
