package kueue

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/contentioncheck"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// flood submits, for each busy team and each GPU resource of its
// ClusterQueue, one more Job asking for 1 of it than the ClusterQueue can
// ever admit, the teams' Jobs interleaved and created a few at a time, so
// no team is served first by construction. It returns how many Jobs it
// created.
func flood(t *testing.T, queues map[string]teamQueue, busy []string) int {
	t.Helper()
	type sub struct {
		team string
		res  corev1.ResourceName
		i    int64
	}
	var subs []sub
	for i := int64(0); ; i++ {
		added := false
		for _, team := range busy {
			q, ok := queues[team]
			if !ok {
				t.Fatalf("busy team %s has no ClusterQueue in the render", team)
			}
			for _, res := range slices.Sorted(maps.Keys(q.reach)) {
				if i <= q.reach[res] {
					subs = append(subs, sub{team, res, i})
					added = true
				}
			}
		}
		if !added {
			break
		}
	}
	ctx := ctxFor(t)
	var failed atomic.Value
	controlplane.Parallel(len(subs), func(k int) {
		s := subs[k]
		q := queues[s.team]
		name := fmt.Sprintf("flood-%s-%d", strings.NewReplacer("/", "-", ".", "-").Replace(string(s.res)), s.i)
		job := workload.JobOf(q.ns, name, map[string]string{queueKey: q.queue}, workload.GPUPodSpec(s.res, 1))
		// The API server's admission plugin reads the guardrails'
		// policies through an informer: right after an agreement is
		// applied it may refuse with the previous one's data; such a
		// refusal is retried, any other error fails.
		deadline := time.Now().Add(waits.Timeout)
		_, err := env.cp.Kube.BatchV1().Jobs(q.ns).Create(ctx, job, metav1.CreateOptions{})
		for err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && time.Now().Before(deadline) {
			time.Sleep(waits.Interval)
			_, err = env.cp.Kube.BatchV1().Jobs(q.ns).Create(ctx, job, metav1.CreateOptions{})
		}
		if err != nil {
			failed.CompareAndSwap(nil, fmt.Errorf("create Job %s/%s: %w", q.ns, job.Name, err))
		}
	})
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	return len(subs)
}

// admission is what one look at the Workloads saw.
type admission struct {
	// admitted counts the GPUs holding quota per ClusterQueue (team) and
	// flavor; pending the Workloads Kueue considered and left without
	// quota, per namespace and GPU resource.
	admitted map[contentioncheck.Key]int64
	pending  map[string]int
	// total, unconsidered and evicting count the Workloads, those Kueue
	// has not yet looked at, and those evicted but still holding quota.
	total, unconsidered, evicting int
}

func readAdmission(ctx context.Context) (admission, error) {
	list, err := env.cp.Dynamic.Resource(kueueAPI.WithResource("workloads")).List(ctx, metav1.ListOptions{})
	if err != nil {
		return admission{}, err
	}
	a := admission{admitted: map[contentioncheck.Key]int64{}, pending: map[string]int{}, total: len(list.Items)}
	for i := range list.Items {
		w := &list.Items[i]
		switch {
		case controlplane.HasCondition(w, "QuotaReserved", "True"):
			if controlplane.HasCondition(w, "Evicted", "True") {
				a.evicting++
			}
			cq, _, _ := unstructured.NestedString(w.Object, "status", "admission", "clusterQueue")
			psas, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
			for _, p := range psas {
				m, _ := p.(map[string]any)
				flavor, _, _ := unstructured.NestedString(m, "flavors", string(gpuOf(w)))
				count, ok := m["count"].(int64)
				if !ok {
					count = 1
				}
				a.admitted[contentioncheck.Key{Team: cq, Flavor: flavor}] += count
			}
		case controlplane.HasCondition(w, "QuotaReserved", "False"):
			a.pending[w.GetNamespace()+"/"+string(gpuOf(w))]++
		default:
			a.unconsidered++
		}
	}
	return a, nil
}

// gpuOf is the GPU resource a flood's Workload asks for: the request of
// its container that is neither cpu nor memory.
func gpuOf(w *unstructuredObj) corev1.ResourceName {
	sets, _, _ := unstructured.NestedSlice(w.Object, "spec", "podSets")
	for _, ps := range sets {
		cs, _, _ := unstructured.NestedSlice(ps.(map[string]any), "template", "spec", "containers")
		for _, c := range cs {
			reqs, _, _ := unstructured.NestedMap(c.(map[string]any), "resources", "requests")
			for r := range reqs {
				if r != string(corev1.ResourceCPU) && r != string(corev1.ResourceMemory) {
					return corev1.ResourceName(r)
				}
			}
		}
	}
	return ""
}

// waitStable waits until Kueue's admissions are stable: a Workload for
// each of the n Jobs, every one considered, no eviction under way, and
// the admitted counts unchanged for the quiet period. It fails when a busy
// team has nothing left pending: its flood was not more than it can get.
func waitStable(t *testing.T, queues map[string]teamQueue, busy []string, n int, quiet time.Duration) map[contentioncheck.Key]int64 {
	t.Helper()
	var last admission
	began := time.Now()
	var since time.Time
	waits.UntilWithin(t, ctxFor(t), settling, "Kueue's admissions stable", func(ctx context.Context) (bool, string) {
		a, err := readAdmission(ctx)
		if err != nil {
			return false, err.Error()
		}
		settled := a.total == n && a.unconsidered == 0 && a.evicting == 0
		if !settled || !maps.Equal(a.admitted, last.admitted) {
			since = time.Now()
		}
		last = a
		saw := fmt.Sprintf("%d of %d Workloads, %d not yet considered, %d being evicted, admitted %v", a.total, n, a.unconsidered, a.evicting, a.admitted)
		return settled && time.Since(since) >= quiet, saw
	})
	t.Logf("%d Jobs of %v: admissions settled after %s, stable for %s", n, busy, since.Sub(began).Round(10*time.Millisecond), quiet)
	for _, team := range busy {
		q := queues[team]
		for res, n := range q.reach {
			if last.pending[q.ns+"/"+string(res)] == 0 {
				t.Errorf("busy team %s has no Job asking for %s left pending: its flood of %d was not more than Kueue admits", team, res, n+1)
			}
		}
	}
	return last.admitted
}

// clearJobs deletes every Job and Workload in the teams' namespaces and
// waits until no Workload is left, so the next scenario starts with every
// quota free.
func clearJobs(t *testing.T, queues map[string]teamQueue) {
	t.Helper()
	ctx := ctxFor(t)
	for _, q := range queues {
		if err := env.cp.Kube.BatchV1().Jobs(q.ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}); err != nil {
			t.Fatalf("delete the Jobs in %s: %v", q.ns, err)
		}
		if err := env.cp.Dynamic.Resource(kueueAPI.WithResource("workloads")).Namespace(q.ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}); err != nil {
			t.Fatalf("delete the Workloads in %s: %v", q.ns, err)
		}
	}
	waits.Until(t, ctx, "no Workloads left", func(ctx context.Context) (bool, string) {
		list, err := env.cp.Dynamic.Resource(kueueAPI.WithResource("workloads")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items))
	})
}

// clusterState summarizes, for a failure, what readAdmission sees.
func clusterState(ctx context.Context) string {
	a, err := readAdmission(ctx)
	if err != nil {
		return "cluster state: " + err.Error()
	}
	return fmt.Sprintf("cluster state: %d Workloads, %d not yet considered, %d being evicted; GPUs admitted per team and flavor %v; pending per namespace %v",
		a.total, a.unconsidered, a.evicting, a.admitted, a.pending)
}
