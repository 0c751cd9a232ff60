package kueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// applied is the render in force, deleted before the next agreement is
// applied.
var applied []*unstructuredObj

// useAgreement makes the agreement at file the cluster's, as a fresh
// cluster would hold it: the previous render's objects go first (Kueue
// refuses some flavor changes in place), Namespaces stay. It waits until
// every ClusterQueue is active and returns each team's queue.
func useAgreement(t *testing.T, file string) map[string]teamQueue {
	t.Helper()
	ctx := ctxFor(t)
	objs := render(t, file)
	var doomed []*unstructuredObj
	for _, o := range applied {
		if o.GetKind() != "Namespace" {
			doomed = append(doomed, o)
		}
	}
	errs := make([]error, len(doomed))
	controlplane.Parallel(len(doomed), func(i int) {
		res, err := env.cp.Applier.Resource(doomed[i])
		if err == nil {
			err = res.Delete(ctx, doomed[i].GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs[i] = fmt.Errorf("delete %s: %w", controlplane.Describe(doomed[i]), err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	waits.Until(t, ctx, "the previous agreement's objects gone", func(ctx context.Context) (bool, string) {
		var left []string
		for _, o := range doomed {
			res, err := env.cp.Applier.Resource(o)
			if err == nil {
				_, err = res.Get(ctx, o.GetName(), metav1.GetOptions{})
			}
			if !apierrors.IsNotFound(err) {
				left = append(left, controlplane.Describe(o))
			}
		}
		return len(left) == 0, fmt.Sprintf("left: %v", left)
	})
	applied = nil
	if _, err := env.cp.Applier.Apply(ctx, objs, false); err != nil {
		t.Fatalf("apply %s: %v", file, err)
	}
	applied = objs
	queues := map[string]teamQueue{}
	for _, o := range objs {
		switch o.GetKind() {
		case "LocalQueue":
			cq, _, _ := unstructured.NestedString(o.Object, "spec", "clusterQueue")
			q := queues[cq]
			q.ns, q.queue = o.GetNamespace(), o.GetName()
			queues[cq] = q
		case "ClusterQueue":
			q := queues[o.GetName()]
			q.reach = map[corev1.ResourceName]int64{}
			reach(o.Object["spec"], q.reach)
			queues[o.GetName()] = q
			waitActive(t, o.GetName())
		}
	}
	for team, q := range queues {
		if q.ns == "" {
			t.Fatalf("the render of %s has no LocalQueue for ClusterQueue %s", file, team)
		}
	}
	return queues
}

// render runs `tenancy render file` in the repository root.
func render(t *testing.T, file string) []*unstructuredObj {
	t.Helper()
	cmd := exec.Command(env.tenancy, "render", file)
	cmd.Dir = env.repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tenancy render %s: %v\n%s", file, err, stderr.String())
	}
	objs, err := controlplane.ParseManifests(stdout.Bytes())
	if err != nil {
		t.Fatalf("parse the render of %s: %v", file, err)
	}
	return objs
}

// reach adds up, per GPU resource (any but cpu and memory), the most a
// ClusterQueue admits: per flavor its nominal quota and borrowing limit,
// wherever the entries sit in its spec. Every render of tenancy sets both;
// without a borrowing limit the flood is too small, which waitStable
// reports.
func reach(v any, into map[corev1.ResourceName]int64) {
	switch x := v.(type) {
	case map[string]any:
		if name, _ := x["name"].(string); x["nominalQuota"] != nil {
			// A resource the team can never use (0 and 0, as render
			// writes every flavor of a group) is none of its floods: the
			// guardrails refuse a Job that would wait forever.
			n := quantity(x["nominalQuota"]) + quantity(x["borrowingLimit"])
			if r := corev1.ResourceName(name); r != corev1.ResourceCPU && r != corev1.ResourceMemory && n > 0 {
				into[r] += n
			}
			return
		}
		for _, c := range x {
			reach(c, into)
		}
	case []any:
		for _, c := range x {
			reach(c, into)
		}
	}
}

func quantity(v any) int64 {
	q, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		return 0
	}
	return q.Value()
}

// waitActive waits until Kueue reports the ClusterQueue active for its
// current generation.
func waitActive(t *testing.T, name string) {
	t.Helper()
	waits.Until(t, ctxFor(t), "ClusterQueue "+name+" active", func(ctx context.Context) (bool, string) {
		cq, err := env.cp.Dynamic.Resource(kueueAPI.WithResource("clusterqueues")).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(cq.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Active" {
				g, _ := m["observedGeneration"].(int64)
				return m["status"] == "True" && g == cq.GetGeneration(), controlplane.ConditionSummary(cq)
			}
		}
		return false, "no Active condition yet"
	})
}
