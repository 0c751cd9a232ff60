package kueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/contentioncheck"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

type unstructuredObj = unstructured.Unstructured

const (
	// eventually bounds the waits for objects to appear or go; settling
	// bounds a whole scenario's admissions (a flood of about a hundred
	// Jobs with preemptions, on a loaded machine).
	eventually = 30 * time.Second
	settling   = 90 * time.Second
	poll       = 200 * time.Millisecond
	// quiet is how long the admitted counts must stay unchanged, with
	// every Workload considered and no eviction under way, before they
	// are read as Kueue's answer.
	quiet = 2 * time.Second

	queueKey = "kueue.x-k8s.io/queue-name"
)

var (
	cqGVR       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	wlGVR       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	deleteInBkg = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var waits = await.Waits{Timeout: eventually, Interval: poll, State: clusterState}

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
			err = res.Delete(ctx, doomed[i].GetName(), metav1.DeleteOptions{})
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
			q.reach = reach(o)
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

// reach is the most a ClusterQueue admits of GPUs: per flavor its nominal
// quota and borrowing limit (without one, it could borrow the whole pool:
// nominal plus everyone's, which no render of tenancy leaves open; then
// the flood is what the check's error says).
func reach(cq *unstructuredObj) int64 {
	var n int64
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			rs, _, _ := unstructured.NestedSlice(f.(map[string]any), "resources")
			for _, r := range rs {
				rm := r.(map[string]any)
				if rm["name"] == string(workload.GPU) {
					n += quantity(rm["nominalQuota"]) + quantity(rm["borrowingLimit"])
				}
			}
		}
	}
	return n
}

func quantity(v any) int64 {
	if v == nil {
		return 0
	}
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
		cq, err := env.cp.Dynamic.Resource(cqGVR).Get(ctx, name, metav1.GetOptions{})
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

// flood submits, for each busy team, one more 1-GPU Job than its
// ClusterQueue can ever admit, the teams' Jobs interleaved and created a
// few at a time, so no team is served first by construction. It returns
// how many Jobs it created.
func flood(t *testing.T, queues map[string]teamQueue, busy []string) int {
	t.Helper()
	type sub struct {
		team string
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
			if i <= q.reach {
				subs = append(subs, sub{team, i})
				added = true
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
		job := workload.JobOf(q.ns, fmt.Sprintf("flood-%d", s.i), map[string]string{queueKey: q.queue}, workload.GPUPodSpec(workload.GPU, 1))
		// The API server's admission plugin reads the guardrails'
		// policies through an informer: right after an agreement is
		// applied it may refuse with the previous one's data; such a
		// refusal is retried, any other error fails.
		var err error
		_ = wait.PollUntilContextTimeout(ctx, poll, eventually, true, func(ctx context.Context) (bool, error) {
			_, err = env.cp.Kube.BatchV1().Jobs(q.ns).Create(ctx, job, metav1.CreateOptions{})
			return err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy"), nil
		})
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
	// quota, per namespace.
	admitted map[contentioncheck.Key]int64
	pending  map[string]int
	// total, unconsidered and evicting count the Workloads, those Kueue
	// has not yet looked at, and those evicted but still holding quota.
	total, unconsidered, evicting int
}

func readAdmission(ctx context.Context) (admission, error) {
	list, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return admission{}, err
	}
	a := admission{admitted: map[contentioncheck.Key]int64{}, pending: map[string]int{}, total: len(list.Items)}
	for i := range list.Items {
		w := &list.Items[i]
		reserved, evicted := condition(w, "QuotaReserved"), condition(w, "Evicted")
		switch reserved {
		case "True":
			if evicted == "True" {
				a.evicting++
			}
			cq, _, _ := unstructured.NestedString(w.Object, "status", "admission", "clusterQueue")
			psas, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
			for _, p := range psas {
				m, _ := p.(map[string]any)
				flavor, _, _ := unstructured.NestedString(m, "flavors", string(workload.GPU))
				count, ok := m["count"].(int64)
				if !ok {
					count = 1
				}
				a.admitted[contentioncheck.Key{Team: cq, Flavor: flavor}] += count
			}
		case "False":
			a.pending[w.GetNamespace()]++
		default:
			a.unconsidered++
		}
	}
	return a, nil
}

func condition(w *unstructuredObj, typ string) string {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// waitStable waits until Kueue's admissions are stable: a Workload for
// each of the n Jobs, every one considered, no eviction under way, and
// the admitted counts unchanged for the quiet period. It fails when a busy
// team has nothing left pending: its flood was not more than it can get.
func waitStable(t *testing.T, queues map[string]teamQueue, busy []string, n int) map[contentioncheck.Key]int64 {
	t.Helper()
	var last admission
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
	for _, team := range busy {
		if last.pending[queues[team].ns] == 0 {
			t.Errorf("busy team %s has no Job left pending: its flood of %d was not more than Kueue admits", team, queues[team].reach+1)
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
		if err := env.cp.Kube.BatchV1().Jobs(q.ns).DeleteCollection(ctx, deleteInBkg, metav1.ListOptions{}); err != nil {
			t.Fatalf("delete the Jobs in %s: %v", q.ns, err)
		}
		if err := env.cp.Dynamic.Resource(wlGVR).Namespace(q.ns).DeleteCollection(ctx, deleteInBkg, metav1.ListOptions{}); err != nil {
			t.Fatalf("delete the Workloads in %s: %v", q.ns, err)
		}
	}
	waits.Until(t, ctx, "no Workloads left", func(ctx context.Context) (bool, string) {
		list, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items))
	})
}

// clusterState summarizes, for a failure, each ClusterQueue's GPU usage
// and the Workloads per namespace and condition.
func clusterState(ctx context.Context) string {
	var lines []string
	cqs, err := env.cp.Dynamic.Resource(cqGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "cluster state: " + err.Error()
	}
	for _, cq := range cqs.Items {
		fls, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
		var parts []string
		for _, f := range fls {
			fm, _ := f.(map[string]any)
			rs, _ := fm["resources"].([]any)
			for _, r := range rs {
				rm, _ := r.(map[string]any)
				if rm["name"] == string(workload.GPU) {
					parts = append(parts, fmt.Sprintf("%v total %v borrowed %v", fm["name"], rm["total"], rm["borrowed"]))
				}
			}
		}
		lines = append(lines, fmt.Sprintf("  ClusterQueue %s: %s", cq.GetName(), strings.Join(parts, ", ")))
	}
	list, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err == nil {
		counts := map[string]int{}
		for i := range list.Items {
			w := &list.Items[i]
			counts[fmt.Sprintf("  Workloads in %s QuotaReserved=%s Evicted=%s", w.GetNamespace(), condition(w, "QuotaReserved"), condition(w, "Evicted"))]++
		}
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			lines = append(lines, fmt.Sprintf("%s: %d", k, counts[k]))
		}
	}
	sort.Strings(lines[:len(cqs.Items)])
	return "cluster state:\n" + strings.Join(lines, "\n")
}
