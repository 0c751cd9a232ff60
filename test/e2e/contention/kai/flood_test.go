package kai

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/contentioncheck"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

const (
	// margin is how many pods a busy team keeps waiting beyond the most it
	// can ever run (explain's alone), so that its queue always asks for
	// more than its limit, as "busy" means, however many of its pods KAI
	// reclaims (a reclaimed bare pod is gone, and the flood tops it up).
	margin = 4
	// quiet is how long the bound counts must stay unchanged before they
	// are read as KAI's answer: three of its one-second cycles (the KAI
	// suite's settle), so that a reclaim in flight (evict, then bind the
	// reclaimer's pod a cycle later) is not read half done.
	quiet = 3 * time.Second
	// stuck is how long counts unchanged but unlike explain's are watched
	// before the check fails: KAI has settled on other numbers.
	stuck = 20 * time.Second
	// deadline bounds a scenario that never settles.
	deadline = 2 * time.Minute
	poll     = 250 * time.Millisecond
)

// team is a team of the agreement under test: its queue is its name.
type team struct{ name, ns string }

// flood runs an agreement's scenarios: its teams, the flavor explain
// names KAI's GPUs after, and the most each team can ever run (alone).
type flood struct {
	teams  []team
	flavor string
	most   map[string]int64
}

// run keeps each busy team's queue flooded with 1-GPU pods (its alone plus
// margin alive, topped up as KAI reclaims), empties the idle teams'
// namespaces, and waits until the pods bound per team are unchanged for
// quiet; it fails unless they are what explain says.
func (f flood) run(t *testing.T, sc contentioncheck.Scenario) {
	t.Helper()
	began := time.Now()
	var idle []string
	for _, tm := range f.teams {
		if !slices.Contains(sc.Busy, tm.name) {
			idle = append(idle, tm.ns)
		}
	}
	env.DeletePods(t, idle...)
	ctx := kaiwork.Ctx(t)
	var last map[contentioncheck.Key]int64
	var lastErr error
	changed := time.Now()
	for ; ; time.Sleep(poll) {
		for _, tm := range f.teams {
			if slices.Contains(sc.Busy, tm.name) {
				if err := topUp(ctx, tm, f.most[tm.name]+margin); err != nil {
					lastErr = err
				}
			}
		}
		got, err := f.bound(ctx)
		if err != nil {
			lastErr = err
			continue
		}
		if !maps.Equal(got, last) {
			last, changed = got, time.Now()
		}
		still := time.Since(changed)
		lines, ok := contentioncheck.Compare(sc, got)
		switch {
		case ok && still >= quiet:
			outcomes.add(t.Name(), sc, got, time.Since(began))
			return
		case still >= stuck || time.Since(began) >= deadline:
			outcomes.add(t.Name(), sc, got, time.Since(began))
			note := ""
			if lastErr != nil {
				note = "\nlast API error: " + lastErr.Error()
			}
			t.Fatalf("%s: KAI's bound pods, unchanged for %s, against explain --contention --backend kai:\n  %s%s\n%s",
				sc.Name, still.Round(time.Second), strings.Join(lines, "\n  "), note, state(ctx))
		}
	}
}

// topUp creates pods of tm until n are alive (not being deleted).
func topUp(ctx context.Context, tm team, n int64) error {
	list, err := env.CP.Kube.CoreV1().Pods(tm.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	alive := int64(0)
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			alive++
		}
	}
	spec := workload.GPUPodSpec(workload.GPU, 1)
	spec.SchedulerName = controlplane.KAISchedulerName
	spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "flood-", Namespace: tm.ns,
		Labels: map[string]string{"kai.scheduler/queue": tm.name}}, Spec: spec}
	var mu sync.Mutex
	var errs []string
	controlplane.Parallel(int(n-alive), func(int) {
		// Refused right after an agreement changes, while the API
		// server's policy informer still holds the previous one: the next
		// poll tries again.
		if _, err := env.CP.Kube.CoreV1().Pods(tm.ns).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{}); err != nil {
			mu.Lock()
			errs = append(errs, err.Error())
			mu.Unlock()
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("create a pod in %s: %s", tm.ns, errs[0])
	}
	return nil
}

// bound counts each team's pods bound to a Node: its GPUs, as KAI counts
// them, under explain's flavor.
func (f flood) bound(ctx context.Context) (map[contentioncheck.Key]int64, error) {
	out := map[contentioncheck.Key]int64{}
	for _, tm := range f.teams {
		list, err := env.CP.Kube.CoreV1().Pods(tm.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				out[contentioncheck.Key{Team: tm.name, Flavor: f.flavor}]++
			}
		}
	}
	return out, nil
}

// state is the pods per namespace, for a failure message. (Queue status
// is not kept here: the podgroup controller does not run.)
func state(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("cluster state:")
	for _, ns := range env.Namespaces {
		list, err := env.CP.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			continue
		}
		n := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				n++
			}
		}
		fmt.Fprintf(&b, " %s: %d bound, %d not;", ns, n, len(list.Items)-n)
	}
	return b.String()
}

// outcomes are every scenario's numbers, for the closing report (and
// docs/kai.md's table).
var outcomes record

type record struct {
	mu    sync.Mutex
	lines []string
}

// add records a scenario: per busy team, explain's number / the pods KAI
// bound.
func (r *record) add(check string, sc contentioncheck.Scenario, got map[contentioncheck.Key]int64, took time.Duration) {
	var parts []string
	for k, w := range sc.Want {
		if !slices.Contains(sc.Busy, k.Team) {
			continue
		}
		mark := ""
		if got[k] < w.Min || got[k] > w.Max {
			mark = " MISMATCH"
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d%s", k.Team, w.Min, got[k], mark))
	}
	sort.Strings(parts)
	r.mu.Lock()
	r.lines = append(r.lines, fmt.Sprintf("%-12s %-34s %5.1fs  %s", strings.TrimPrefix(check, "TestKAIContention"), sc.Name, took.Seconds(), strings.Join(parts, ", ")))
	r.mu.Unlock()
}

func (r *record) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}
