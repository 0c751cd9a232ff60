package kaiwork

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// PruneKinds are the kinds of tenancy's KAI render that UseAgreement
// deletes when the new agreement no longer holds them (Namespaces stay).
// PriorityClasses come second: ApplyAgreement replaces those that changed first.
var PruneKinds = []schema.GroupVersionResource{QueueGVR,
	{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
	{Version: "v1", Resource: "resourcequotas"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}}

// Render runs `tenancy render --backend kai` on an agreement (a path
// relative to the repository root) and parses the YAML.
func (c *Cluster) Render(t testing.TB, file string, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	out, stderr, err := c.RenderRaw(file, extra...)
	if err != nil {
		t.Fatalf("tenancy render --backend kai %s: %v\n%s", file, err, stderr)
	}
	objs, err := controlplane.ParseManifests(out)
	if err != nil {
		t.Fatalf("parse render of %s: %v", file, err)
	}
	return objs
}

// RenderRaw is Render's run, unparsed.
func (c *Cluster) RenderRaw(file string, extra ...string) (stdout []byte, stderr string, err error) {
	return c.Run(append([]string{"render", "--backend", "kai", file}, extra...)...)
}

// Run runs tenancy with args in the repository root.
func (c *Cluster) Run(args ...string) (stdout []byte, stderr string, err error) {
	cmd := exec.Command(c.Tenancy, args...)
	cmd.Dir = c.RepoRoot
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.String(), err
}

// UseAgreement makes objs the cluster's agreement: every workload goes,
// objs are applied server-side, and the tenancy-managed objects objs no
// longer holds are deleted, as a change of the agreement would; it returns
// once KAI's queues of objs exist.
func (c *Cluster) UseAgreement(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	c.ClearWorkloads(t)
	c.ApplyAgreement(t, objs)
}

// ApplyAgreement is UseAgreement on a cluster whose workloads are already
// cleared: a check that clears them before it changes the Nodes need not
// clear them twice.
func (c *Cluster) ApplyAgreement(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := Ctx(t)
	want := map[string]bool{}
	for _, o := range objs {
		want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	c.replacePriorityClasses(t, objs)
	if _, err := c.CP.Applier.Apply(ctx, objs, false); err != nil {
		t.Fatalf("apply agreement: %v", err)
	}
	c.Prune(t, want, PruneKinds)
	c.waitFor(t, "the rendered queues to exist", func(ctx context.Context) (bool, string) {
		for _, o := range objs {
			if o.GetKind() != "Queue" {
				continue
			}
			if _, err := c.CP.Dynamic.Resource(QueueGVR).Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
}

// replacePriorityClasses deletes each tenancy-managed PriorityClass that
// objs does not hold as it is: PriorityClasses are replaced, not updated,
// since their value and preemption policy are immutable (an agreement that
// renumbers a priority, or changes its preemptible, cannot be applied in
// place), and the API server allows one globalDefault, which the new
// agreement may give another class. A class objs holds unchanged stays, so
// that the checks that reset to one agreement do not remake its classes.
func (c *Cluster) replacePriorityClasses(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	same := func(a, b *unstructured.Unstructured) bool {
		av, _, _ := unstructured.NestedInt64(a.Object, "value")
		bv, _, _ := unstructured.NestedInt64(b.Object, "value")
		ad, _, _ := unstructured.NestedBool(a.Object, "globalDefault")
		bd, _, _ := unstructured.NestedBool(b.Object, "globalDefault")
		ap, _, _ := unstructured.NestedString(a.Object, "preemptionPolicy")
		bp, _, _ := unstructured.NestedString(b.Object, "preemptionPolicy")
		return av == bv && ad == bd && ap == bp
	}
	wanted := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() == "PriorityClass" {
			wanted[o.GetName()] = o
		}
	}
	keep := map[string]bool{}
	gvr := PruneKinds[1]
	list, err := c.CP.Dynamic.Resource(gvr).List(Ctx(t), metav1.ListOptions{LabelSelector: ManagedBy})
	if err != nil {
		t.Fatalf("list %s: %v", gvr.Resource, err)
	}
	for _, live := range list.Items {
		if w, ok := wanted[live.GetName()]; ok && same(w, &live) {
			keep[live.GetKind()+"/"+live.GetNamespace()+"/"+live.GetName()] = true
		}
	}
	c.Prune(t, keep, PruneKinds[1:2])
}

// Prune deletes the tenancy-managed objects of kinds that want does not hold.
func (c *Cluster) Prune(t testing.TB, want map[string]bool, kinds []schema.GroupVersionResource) {
	t.Helper()
	ctx := Ctx(t)
	for _, gvr := range kinds {
		list, err := c.CP.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: ManagedBy})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range list.Items {
			if want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
				continue
			}
			var err error
			if o.GetNamespace() != "" {
				err = c.CP.Dynamic.Resource(gvr).Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			} else {
				err = c.CP.Dynamic.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("prune %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
}

// ClearWorkloads deletes every workload of a built-in kind and every Pod
// of the suite's namespaces and waits until no pod is left, so KAI's
// queues start empty.
func (c *Cluster) ClearWorkloads(t testing.TB) {
	t.Helper()
	ctx := Ctx(t)
	kube := c.CP.Kube
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	for _, ns := range c.Namespaces {
		_ = kube.BatchV1().Jobs(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.AppsV1().Deployments(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.AppsV1().ReplicaSets(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.AppsV1().StatefulSets(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.AppsV1().DaemonSets(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.CoreV1().ReplicationControllers(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
		_ = kube.BatchV1().CronJobs(ns).DeleteCollection(ctx, bg, metav1.ListOptions{})
	}
	c.DeletePods(t, c.Namespaces...)
	// KAI's binder removes a shared GPU's reservation pod once the GPU's
	// last fractional pod is gone; until then it holds a whole GPU.
	c.waitFor(t, "every GPU reservation pod to be gone", func(ctx context.Context) (bool, string) {
		reserved, err := c.CP.Kube.CoreV1().Pods(controlplane.KAIReservationNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(reserved.Items) == 0, fmt.Sprintf("%d GPU reservation pods", len(reserved.Items))
	})
}

// DeletePods deletes every pod of the namespaces and waits until none is
// left.
func (c *Cluster) DeletePods(t testing.TB, namespaces ...string) {
	t.Helper()
	ctx := Ctx(t)
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	for _, ns := range namespaces {
		_ = c.CP.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, now, metav1.ListOptions{})
	}
	c.waitFor(t, fmt.Sprintf("every pod of %v to be gone", namespaces), func(ctx context.Context) (bool, string) {
		left := 0
		for _, ns := range namespaces {
			pods, err := c.CP.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
					// KWOK removes deleted pods on its Nodes; a pod never
					// bound is removed by the API server at once.
					_ = c.CP.Kube.CoreV1().Pods(ns).Delete(ctx, p.Name, now)
				}
			}
			left += len(pods.Items)
		}
		return left == 0, fmt.Sprintf("%d pods left", left)
	})
}
