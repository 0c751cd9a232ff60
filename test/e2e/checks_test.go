package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// The reference agreement (root tenancy.toml): 32 H100s in one cohort;
// training 16 guaranteed (8 lendable, borrows up to 8), research 8 (all 8
// lendable, borrows up to 8), inference 8 (never lent, borrows nothing).
const h100 = "h100"

// examples lists every agreement under examples/ and the root one, by a
// short name, as paths relative to the repo root.
func examples(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"reference": "tenancy.toml"}
	err := filepath.WalkDir(filepath.Join(env.repoRoot, "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "tenancy.toml" {
			rel, _ := filepath.Rel(env.repoRoot, path)
			out[strings.TrimPrefix(filepath.Dir(rel), "examples"+string(filepath.Separator))] = rel
		}
		return nil
	})
	if err != nil {
		t.Fatalf("find examples: %v", err)
	}
	if len(out) < 2 {
		t.Fatalf("no agreements under examples/")
	}
	// A fleet renders one part per cluster (--cluster), each for its own
	// control plane: the fleet suite's, not this one's.
	delete(out, "fleet")
	if os.Getenv(envKueueTools) != "" {
		for _, name := range matrixSkipsExamples {
			delete(out, name)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Check 1: every object rendered from every example is accepted by the API
// server and Kueue's webhooks (server-side apply), is there afterwards, and
// Kueue considers every ClusterQueue active. The v1beta1 rendering of the
// reference goes through Kueue's conversion webhook and is accepted too.
func TestRenderedObjectsAccepted(t *testing.T) {
	begin(t)
	ex := examples(t)
	for _, name := range sortedKeys(ex) {
		t.Run(name, func(t *testing.T) {
			objs := render(t, ex[name])
			useAgreement(t, name, objs)
			ctx := ctxFor(t)
			errs := make([]error, len(objs))
			controlplane.Parallel(len(objs), func(i int) {
				res, err := env.cp.Applier.Resource(objs[i])
				if err == nil {
					_, err = res.Get(ctx, objs[i].GetName(), metav1.GetOptions{})
				}
				errs[i] = err
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s not in the cluster after apply: %v", controlplane.Describe(objs[i]), err)
				}
			}
			t.Logf("%d objects applied: %s", len(objs), kindCounts(objs))
		})
	}
	t.Run("reference-v1beta1", func(t *testing.T) {
		objs := render(t, "--kueue-api", "v1beta1", "tenancy.toml")
		useAgreement(t, "reference", reference(t))
		if _, err := env.cp.Applier.Apply(ctxFor(t), objs, true); err != nil {
			t.Fatalf("v1beta1 render rejected: %v", err)
		}
	})
}

func kindCounts(objs []*unstructuredObj) string {
	counts := map[string]int{}
	for _, o := range objs {
		counts[o.GetKind()]++
	}
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// Check 2: applying the same render a second time (server-side, dry run)
// changes nothing: no defaulting, quantity formatting or ownership that
// would show as drift in Argo CD or kubectl diff.
func TestNoPhantomDrift(t *testing.T) {
	begin(t)
	ex := examples(t)
	for _, name := range sortedKeys(ex) {
		t.Run(name, func(t *testing.T) {
			objs := render(t, ex[name])
			useAgreement(t, name, objs)
			ctx := ctxFor(t)
			again, err := env.cp.Applier.Apply(ctx, objs, true)
			if err != nil {
				t.Fatalf("second apply: %v", err)
			}
			drift := make([][]string, len(objs))
			controlplane.Parallel(len(objs), func(i int) {
				res, err := env.cp.Applier.Resource(objs[i])
				if err != nil {
					drift[i] = []string{err.Error()}
					return
				}
				live, err := res.Get(ctx, objs[i].GetName(), metav1.GetOptions{})
				if err != nil {
					drift[i] = []string{err.Error()}
					return
				}
				drift[i] = diffPaths(comparable(live), comparable(again[i]), "")
			})
			for i, d := range drift {
				if len(d) > 0 {
					t.Errorf("%s drifts on a second apply: %s", controlplane.Describe(objs[i]), strings.Join(d, "; "))
				}
			}
			t.Logf("%d objects unchanged by a second apply", len(objs))
		})
	}
}

// comparable strips what changes without anyone changing the object:
// status and its managed-field entries (the controllers own them), the
// resource version and managed-field timestamps.
func comparable(o *unstructuredObj) map[string]any {
	c := o.DeepCopy().Object
	delete(c, "status")
	unstructured.RemoveNestedField(c, "metadata", "resourceVersion")
	if mfs, ok, _ := unstructured.NestedSlice(c, "metadata", "managedFields"); ok {
		var kept []any
		for _, mf := range mfs {
			m, ok := mf.(map[string]any)
			if !ok || m["subresource"] == "status" {
				continue
			}
			delete(m, "time")
			kept = append(kept, m)
		}
		_ = unstructured.SetNestedSlice(c, kept, "metadata", "managedFields")
	}
	return c
}

// diffPaths lists the paths at which a and b differ.
func diffPaths(a, b any, path string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var out []string
		for k := range keys {
			out = append(out, diffPaths(am[k], bm[k], path+"."+k)...)
		}
		sort.Strings(out)
		return out
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		var out []string
		for i := range as {
			out = append(out, diffPaths(as[i], bs[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s -> %s", strings.TrimPrefix(path, "."), short(a), short(b))}
}

// short prints v, cut to a length a failure message can carry.
func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Check 2b: every field tenancy writes into a Kueue object is what the API
// server keeps, read back in the API version rendered. This is where a
// Kueue whose defaulting or conversion differs from the render shows (for
// instance flavorFungibility.whenCanBorrow, which Kueue before 0.15
// defaulted to Borrow and tenancy writes as MayStopSearch): a second apply
// cannot show it, since both applies are defaulted alike.
func TestRenderedFieldsKept(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	ctx := ctxFor(t)
	checked := 0
	for _, o := range objs {
		if !strings.HasPrefix(o.GetAPIVersion(), "kueue.x-k8s.io/") {
			continue
		}
		res, err := env.cp.Applier.Resource(o)
		if err != nil {
			t.Fatal(err)
		}
		live, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", controlplane.Describe(o), err)
		}
		for _, d := range notKept(o.Object["spec"], live.Object["spec"], "spec") {
			t.Errorf("%s (%s): %s", controlplane.Describe(o), o.GetAPIVersion(), d)
		}
		checked++
	}
	cq := find(t, objs, "ClusterQueue", "training")
	fungibility, _, _ := unstructured.NestedStringMap(cq.Object, "spec", "flavorFungibility")
	t.Logf("%d Kueue objects read back as rendered (%s); ClusterQueue flavorFungibility %v", checked, cq.GetAPIVersion(), fungibility)
}

// notKept lists the paths where got lacks or changes a value of want;
// fields only got has (defaults the server adds) are not differences.
func notKept(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: rendered %s, kept %s", path, short(want), short(got))}
		}
		var out []string
		for k, v := range w {
			out = append(out, notKept(v, g[k], path+"."+k)...)
		}
		sort.Strings(out)
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: rendered %s, kept %s", path, short(want), short(got))}
		}
		var out []string
		for i := range w {
			out = append(out, notKept(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: rendered %s, kept %s", path, short(want), short(got))}
}

// Check 3: a team running within its guarantee is admitted without
// borrowing, and so is every other team at the same time.
func TestWithinGuaranteeWithoutBorrowing(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	training := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "guaranteed", pods: 2, gpus: 8})
	research := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "guaranteed", pods: 1, gpus: 8})
	inference := submit(t, job{ns: "inference", queue: localQueueFor(t, objs, "inference"), name: "guaranteed", pods: 4, gpus: 2})
	if s := waitAdmitted(t, training); s.clusterQueue != "training" {
		t.Errorf("training's Job admitted to ClusterQueue %q", s.clusterQueue)
	}
	waitAdmitted(t, research)
	waitAdmitted(t, inference)
	waitUsage(t, "training", h100, gpu, usage{total: 16})
	waitUsage(t, "research", h100, gpu, usage{total: 8})
	waitUsage(t, "inference", h100, gpu, usage{total: 8})
	// Kueue lets the admitted Job start: it is no longer suspended.
	waitFor(t, "training Job unsuspended", func(ctx context.Context) (bool, string) {
		j, err := env.cp.Kube.BatchV1().Jobs("training").Get(ctx, "guaranteed", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return j.Spec.Suspend != nil && !*j.Spec.Suspend, fmt.Sprintf("suspend=%v", *j.Spec.Suspend)
	})
}

// Check 4: training borrows research's idle lendable GPUs, and the
// ClusterQueue status shows them as borrowed.
func TestBorrowingIdleLendableGPUs(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	q := localQueueFor(t, objs, "training")
	waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "own", pods: 2, gpus: 8}))
	borrower := submit(t, job{ns: "training", queue: q, name: "borrower", pods: 1, gpus: 8})
	waitAdmitted(t, borrower)
	waitUsage(t, "training", h100, gpu, usage{total: 24, borrowed: 8})
	waitUsage(t, "research", h100, gpu, usage{})
}

// Check 5: no team exceeds guaranteed + borrow. In the reference training
// stops at 16 + 8 and inference (borrow 0) at 8 while research is idle; in
// the limits variant training may borrow only 4 although research lends 8,
// so the borrow limit, not capacity, is what stops it.
func TestBorrowLimitsHold(t *testing.T) {
	begin(t)
	t.Run("reference", func(t *testing.T) {
		objs := reference(t)
		useAgreement(t, "reference", objs)
		q := localQueueFor(t, objs, "training")
		waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "own", pods: 2, gpus: 8}))
		waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "borrowed", pods: 1, gpus: 8}))
		over := submit(t, job{ns: "training", queue: q, name: "over", pods: 1, gpus: 1})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "training", h100, gpu, usage{total: 24, borrowed: 8})

		iq := localQueueFor(t, objs, "inference")
		waitAdmitted(t, submit(t, job{ns: "inference", queue: iq, name: "own", pods: 1, gpus: 8}))
		t.Logf("inference pending: %s", waitPending(t, submit(t, job{ns: "inference", queue: iq, name: "over", pods: 1, gpus: 1})))
		waitUsage(t, "inference", h100, gpu, usage{total: 8})
	})
	t.Run("borrow-4", func(t *testing.T) {
		objs := render(t, testdata("limits.toml"))
		useAgreement(t, "reference", objs)
		q := localQueueFor(t, objs, "training")
		waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "own", pods: 2, gpus: 8}))
		waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "borrowed", pods: 1, gpus: 4}))
		over := submit(t, job{ns: "training", queue: q, name: "over", pods: 1, gpus: 1})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "training", h100, gpu, usage{total: 20, borrowed: 4})
		waitUsage(t, "research", h100, gpu, usage{})
	})
}

// Check 6: lending limits hold. With research allowed to borrow 16, it still
// gets only the 8 training lends, although training's other 8 sit idle; and
// inference's 8 are never used by anyone else, even when everyone else is
// full and inference is idle.
func TestLendingLimitsHold(t *testing.T) {
	begin(t)
	t.Run("training-lends-at-most-8", func(t *testing.T) {
		objs := render(t, testdata("limits.toml"))
		useAgreement(t, "reference", objs)
		q := localQueueFor(t, objs, "research")
		waitAdmitted(t, submit(t, job{ns: "research", queue: q, name: "own", pods: 1, gpus: 8}))
		waitAdmitted(t, submit(t, job{ns: "research", queue: q, name: "borrowed", pods: 1, gpus: 8}))
		over := submit(t, job{ns: "research", queue: q, name: "over", pods: 1, gpus: 1})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "research", h100, gpu, usage{total: 16, borrowed: 8})
		waitUsage(t, "training", h100, gpu, usage{})
	})
	t.Run("inference-never-lent", func(t *testing.T) {
		objs := reference(t)
		useAgreement(t, "reference", objs)
		waitAdmitted(t, submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "own", pods: 1, gpus: 8}))
		q := localQueueFor(t, objs, "training")
		waitAdmitted(t, submit(t, job{ns: "training", queue: q, name: "own", pods: 2, gpus: 8}))
		over := submit(t, job{ns: "training", queue: q, name: "over", pods: 1, gpus: 1})
		t.Logf("pending: %s", waitPending(t, over))
		waitUsage(t, "training", h100, gpu, usage{total: 16})
		waitUsage(t, "inference", h100, gpu, usage{})
	})
}

// reclaimSetup has training run three 8-GPU Jobs: its guaranteed 16 and 8
// borrowed from research. Kueue charges borrowing to the ClusterQueue, not
// to one Workload, so when research reclaims, any one of the three may be
// the one preempted (Kueue takes the most recently admitted, and admission
// times have one-second resolution); with equal sizes, whichever it is,
// training is left with exactly its guarantee.
func reclaimSetup(t *testing.T, objs []*unstructuredObj) []*jobRef {
	t.Helper()
	q := localQueueFor(t, objs, "training")
	var jobs []*jobRef
	for _, name := range []string{"first", "second", "third"} {
		j := submit(t, job{ns: "training", queue: q, name: name, pods: 1, gpus: 8})
		waitAdmitted(t, j)
		jobs = append(jobs, j)
	}
	waitUsage(t, "training", h100, gpu, usage{total: 24, borrowed: 8})
	return jobs
}

// waitReclaimed waits until exactly one of jobs is preempted for
// reclamation and the others are still admitted, and returns it.
func waitReclaimed(t *testing.T, jobs []*jobRef) *jobRef {
	t.Helper()
	var victim *jobRef
	waitFor(t, "one training Workload preempted for reclamation", func(ctx context.Context) (bool, string) {
		victim = nil
		var states []string
		preempted, admitted := 0, 0
		for _, j := range jobs {
			s := state(t, j)
			states = append(states, fmt.Sprintf("%s: %+v", j.Name, s))
			if s.preemptedReason == "InCohortReclamation" {
				preempted++
				victim = j
			} else if s.admitted {
				admitted++
			}
		}
		return preempted == 1 && admitted == len(jobs)-1, strings.Join(states, "; ")
	})
	return victim
}

// Check 7: when research needs its lent GPUs back, one of training's
// Workloads is preempted with reason InCohortReclamation and research is
// admitted; training keeps its guaranteed 16 and borrows nothing.
func TestReclaimPreemptsBorrower(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	jobs := reclaimSetup(t, objs)
	owner := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "owner", pods: 1, gpus: 8})
	waitAdmitted(t, owner)
	victim := waitReclaimed(t, jobs)
	t.Logf("preempted for reclamation: training/%s", victim.Name)
	waitUsage(t, "training", h100, gpu, usage{total: 16})
	waitUsage(t, "research", h100, gpu, usage{total: 8})
}

// Check 8: with reclaim = "wait", research does not preempt the borrower; it
// is admitted once one of training's Jobs finishes.
func TestReclaimWaitDoesNotPreempt(t *testing.T) {
	begin(t)
	objs := render(t, testdata("reclaim-wait.toml"))
	if got, _, _ := unstructured.NestedString(find(t, objs, "ClusterQueue", "research").Object, "spec", "preemption", "reclaimWithinCohort"); got != "Never" {
		t.Fatalf("reclaim = \"wait\" renders reclaimWithinCohort %q, want Never", got)
	}
	useAgreement(t, "reference", objs)
	jobs := reclaimSetup(t, objs)
	owner := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "owner", pods: 1, gpus: 8})
	t.Logf("owner pending: %s", waitPending(t, owner))
	for _, j := range jobs {
		if s := state(t, j); !s.admitted || s.evicted || s.preemptedReason != "" {
			t.Fatalf("training Job %s was disturbed: %+v", j.Name, s)
		}
	}
	finish(t, jobs[2])
	waitAdmitted(t, owner)
	waitUsage(t, "training", h100, gpu, usage{total: 16})
	waitUsage(t, "research", h100, gpu, usage{total: 8})
}

// Check 9: the preempted Job is re-queued (same Workload, Job suspended
// again) and admitted again when the capacity frees.
func TestPreemptedJobRequeued(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	jobs := reclaimSetup(t, objs)
	uids := map[string]string{}
	for _, j := range jobs {
		w, err := workloadOf(ctxFor(t), j)
		if err != nil || w == nil {
			t.Fatalf("Workload of %s: %v", j.Name, err)
		}
		uids[j.Name] = string(w.GetUID())
	}
	owner := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "owner", pods: 1, gpus: 8})
	waitAdmitted(t, owner)
	victim := waitReclaimed(t, jobs)
	waitFor(t, victim.Name+" evicted, suspended and pending again", func(ctx context.Context) (bool, string) {
		s := state(t, victim)
		j, err := env.cp.Kube.BatchV1().Jobs("training").Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
		return s.exists && !s.admitted && s.evicted && suspended && j.Status.Active == 0,
			fmt.Sprintf("%+v suspended=%v active=%d", s, suspended, j.Status.Active)
	})
	finish(t, owner)
	waitAdmitted(t, victim)
	after, err := workloadOf(ctxFor(t), victim)
	if err != nil || after == nil {
		t.Fatalf("Workload of %s after re-admission: %v", victim.Name, err)
	}
	if string(after.GetUID()) != uids[victim.Name] {
		t.Errorf("%s's Workload was recreated (%s -> %s), not re-queued", victim.Name, uids[victim.Name], after.GetUID())
	}
	waitUsage(t, "training", h100, gpu, usage{total: 24, borrowed: 8})
}

// Check 10: within a team a higher WorkloadPriorityClass preempts a lower
// one (reason InClusterQueue); equal priority waits. Research is full, so
// training cannot borrow its way out.
func TestPriorityWithinTeam(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	waitAdmitted(t, submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "own", pods: 1, gpus: 8, priority: "standard"}))
	q := localQueueFor(t, objs, "training")
	low := submit(t, job{ns: "training", queue: q, name: "standard", pods: 2, gpus: 8, priority: "standard"})
	if s := waitAdmitted(t, low); s.priority != 100 {
		t.Errorf("standard Workload has priority %d, want 100", s.priority)
	}
	equal := submit(t, job{ns: "training", queue: q, name: "standard-2", pods: 1, gpus: 8, priority: "standard"})
	t.Logf("equal priority pending: %s", waitPending(t, equal))
	if s := state(t, low); !s.admitted || s.evicted {
		t.Fatalf("equal priority preempted the running Job: %+v", s)
	}
	high := submit(t, job{ns: "training", queue: q, name: "critical", pods: 1, gpus: 8, priority: "critical"})
	if s := waitAdmitted(t, high); s.priority != 1000 {
		t.Errorf("critical Workload has priority %d, want 1000", s.priority)
	}
	waitFor(t, "standard Job preempted within the ClusterQueue", func(ctx context.Context) (bool, string) {
		s := state(t, low)
		return s.preemptedReason == "InClusterQueue", fmt.Sprintf("%+v", s)
	})
	waitFor(t, "research untouched", func(ctx context.Context) (bool, string) {
		u, err := cqUsage(ctx, "research", h100, gpu)
		return err == nil && u == (usage{total: 8}), fmt.Sprintf("%+v %v", u, err)
	})
}

// Check 11: all or nothing. A 3-pod Job of 24 GPUs when training can get
// only 16 is not admitted at all (still suspended, no pods), then admitted
// whole when research's Job finishes and its 8 become borrowable.
func TestAllOrNothing(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	research := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "own", pods: 1, gpus: 8})
	waitAdmitted(t, research)
	gang := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "gang", pods: 3, gpus: 8})
	t.Logf("gang pending: %s", waitPending(t, gang))
	waitUsage(t, "training", h100, gpu, usage{})
	j, err := env.cp.Kube.BatchV1().Jobs("training").Get(ctxFor(t), "gang", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Suspend == nil || !*j.Spec.Suspend || j.Status.Active != 0 {
		t.Fatalf("pending gang Job started partly: suspend=%v active=%d", j.Spec.Suspend, j.Status.Active)
	}
	finish(t, research)
	s := waitAdmitted(t, gang)
	if s.pods != 3 {
		t.Errorf("gang admitted with %d pods, want 3", s.pods)
	}
	waitUsage(t, "training", h100, gpu, usage{total: 24, borrowed: 8})
}

// Check 12: a LocalQueue created in research's namespace that points at
// training's ClusterQueue gets nothing admitted: the ClusterQueue's
// namespace selector keeps other teams out.
//
// The guardrails refuse such a Job at the API server already (a queue that
// is not the team's); the check turns them off to show that the selector
// holds behind them.
func TestIsolationBetweenTeams(t *testing.T) {
	begin(t)
	objs := render(t, testdata("no-queue-admission.toml"))
	useAgreement(t, "reference", objs)
	ctx := ctxFor(t)
	lq := &unstructuredObj{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "LocalQueue",
		"metadata":   map[string]any{"name": "into-training", "namespace": "research"},
		"spec":       map[string]any{"clusterQueue": "training"},
	}}
	if _, err := env.cp.Dynamic.Resource(lqGVR).Namespace("research").Create(ctx, lq, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create LocalQueue: %v", err)
	}
	t.Cleanup(func() {
		clearWorkloads(t)
		_ = env.cp.Dynamic.Resource(lqGVR).Namespace("research").Delete(context.Background(), "into-training", metav1.DeleteOptions{})
	})
	// The API server drops the pruned policies from an informer, a moment
	// after they are deleted.
	probe := workload.JobOf("research", "sneaky", map[string]string{queueKey: "into-training"}, workload.GPUPodSpec(gpu, 1))
	waitFor(t, "the queue policies no longer enforced", func(ctx context.Context) (bool, string) {
		err := jobAttempt("probe", probe).Create(ctx)
		return err == nil, fmt.Sprint(err)
	})
	sneaky := submit(t, job{ns: "research", queue: "into-training", name: "sneaky", pods: 1, gpus: 1})
	msg := waitPending(t, sneaky)
	t.Logf("pending: %s", msg)
	if !strings.Contains(strings.ToLower(msg), "namespace") {
		t.Errorf("pending for another reason than the namespace selector: %q", msg)
	}
	waitUsage(t, "training", h100, gpu, usage{})
}

// Check 13: a change of the agreement (training 16 -> 20, research 8 -> 4),
// re-rendered and applied, changes those quotas live (and the teams' most in
// the queue policy), touches nothing else,
// and the new guarantee is usable at once.
func TestAgreementChangeAppliesLive(t *testing.T) {
	begin(t)
	before := reference(t)
	useAgreement(t, "reference", before)
	ctx := ctxFor(t)
	snapshot := func() map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, o := range before {
			res, err := env.cp.Applier.Resource(o)
			if err != nil {
				t.Fatal(err)
			}
			live, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s: %v", controlplane.Describe(o), err)
			}
			c := comparable(live)
			delete(c["metadata"].(map[string]any), "managedFields")
			out[controlplane.Describe(o)] = c
		}
		return out
	}
	old := snapshot()
	after := render(t, testdata("quota-change.toml"))
	if len(after) != len(before) {
		t.Fatalf("the change renders %d objects, the reference %d", len(after), len(before))
	}
	if _, err := env.cp.Applier.Apply(ctx, after, false); err != nil {
		t.Fatalf("apply changed agreement: %v", err)
	}
	now := snapshot()
	gpuQuota := ".spec.resourceGroups[0].flavors[0].resources[0]"
	want := map[string][]string{
		"ClusterQueue/training": {"metadata.generation", strings.TrimPrefix(gpuQuota, ".") + ".nominalQuota"},
		"ClusterQueue/research": {"metadata.generation", strings.TrimPrefix(gpuQuota, ".") + ".lendingLimit", strings.TrimPrefix(gpuQuota, ".") + ".nominalQuota"},
		// The guardrails' GPU quota holds only what a team may never use
		// (the queue caps the rest), so it does not change here. The queue
		// policy carries each team's most (guaranteed + borrow: training
		// 24 -> 28, research 16 -> 12), which refuses a workload larger
		// than its team can ever run, in one variable.
		"ValidatingAdmissionPolicy/gpu-pool-queues": {"metadata.generation", "spec.variables[5].expression"},
	}
	for key, o := range old {
		d := diffPaths(o, now[key], "")
		var paths []string
		for _, line := range d {
			paths = append(paths, line[:strings.Index(line, ":")])
		}
		if !reflect.DeepEqual(paths, want[key]) {
			t.Errorf("%s changed at %v, want %v (%s)", key, paths, want[key], strings.Join(d, "; "))
		}
	}
	// Training now runs 20 GPUs without borrowing, and research's 8 are gone:
	// 5 of them would exceed its 4.
	waitAdmitted(t, submit(t, job{ns: "training", queue: localQueueFor(t, after, "training"), name: "twenty", pods: 5, gpus: 4}))
	waitUsage(t, "training", h100, gpu, usage{total: 20})
	waitAdmitted(t, submit(t, job{ns: "research", queue: localQueueFor(t, after, "research"), name: "four", pods: 1, gpus: 4}))
	t.Logf("research over its new guarantee: %s", waitPending(t, submit(t, job{ns: "research", queue: localQueueFor(t, after, "research"), name: "fifth", pods: 1, gpus: 1})))
	waitUsage(t, "research", h100, gpu, usage{total: 4})
}

// Check 14: with vms = 1, training's ResourceQuota admits one KubeVirt
// VirtualMachine per namespace and rejects the second; research, without
// vms, is not limited.
func TestVirtualMachineQuota(t *testing.T) {
	begin(t)
	objs := render(t, testdata("vms.toml"))
	var quotas []*unstructuredObj
	for _, q := range byKind(objs, "ResourceQuota") {
		// The guardrails' GPU quota is in every team namespace; the VM
		// quota only where vms is set.
		if q.GetName() == "tenancy-virtualmachines" {
			quotas = append(quotas, q)
		}
	}
	if len(quotas) != 1 || quotas[0].GetNamespace() != "training" {
		t.Fatalf("want one VM ResourceQuota in namespace training, got %d", len(quotas))
	}
	useAgreement(t, "reference", objs)
	ctx := ctxFor(t)
	rq := quotas[0].GetName()
	waitFor(t, "quota controller has counted VirtualMachines", func(ctx context.Context) (bool, string) {
		q, err := env.cp.Kube.CoreV1().ResourceQuotas("training").Get(ctx, rq, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		used, ok := q.Status.Used["count/virtualmachines.kubevirt.io"]
		return ok && used.Value() == 0, fmt.Sprintf("hard %v used %v", q.Status.Hard, q.Status.Used)
	})
	vm := func(ns, name string) error {
		o := &unstructuredObj{Object: map[string]any{
			"apiVersion": "kubevirt.io/v1",
			"kind":       "VirtualMachine",
			"metadata":   map[string]any{"name": name, "namespace": ns},
			"spec":       map[string]any{"runStrategy": "Halted"},
		}}
		_, err := env.cp.Dynamic.Resource(vmGVR).Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		return err
	}
	t.Cleanup(func() {
		for _, ns := range []string{"training", "research"} {
			_ = env.cp.Dynamic.Resource(vmGVR).Namespace(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		}
	})
	if err := vm("training", "first"); err != nil {
		t.Fatalf("first VirtualMachine rejected: %v", err)
	}
	err := vm("training", "second")
	if err == nil {
		t.Fatal("second VirtualMachine in training accepted; the quota allows 1")
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("second VirtualMachine rejected for another reason: %v", err)
	}
	t.Logf("rejected as agreed: %v", err)
	for _, name := range []string{"first", "second"} {
		if err := vm("research", name); err != nil {
			t.Errorf("research has no VM limit, but %s was rejected: %v", name, err)
		}
	}
}

// Check 15: in the multi-flavor example a Job asking for MIG slices is
// admitted against the MIG flavor's quota, not the H100 one, and Kueue
// steers its pods to the flavor's nodes; a whole-GPU Job gets H100s.
func TestMultiFlavorMIG(t *testing.T) {
	begin(t)
	objs := render(t, filepath.Join("examples", "multi-flavor", "tenancy.toml"))
	useAgreement(t, "multi-flavor", objs)
	var migFlavor, migResource string
	for _, rf := range byKind(objs, "ResourceFlavor") {
		if strings.Contains(rf.GetName(), "mig") {
			migFlavor = rf.GetName()
		}
	}
	if migFlavor == "" {
		t.Fatal("multi-flavor render has no MIG ResourceFlavor")
	}
	migResource = "nvidia.com/mig-1g.10gb"
	// The guardrails refuse GPU resources the agreement does not share
	// until the API server has this agreement's policy in force.
	waitParams(t, podAttempt("a MIG pod on the notebooks queue", workload.PodOf("notebooks", "mig-probe", map[string]string{queueKey: localQueueFor(t, objs, "notebooks")}, workload.GPUPodSpec(corev1.ResourceName(migResource), 1))))
	nb := submit(t, job{ns: "notebooks", queue: localQueueFor(t, objs, "notebooks"), name: "notebook", pods: 1, gpus: 7, resource: corev1.ResourceName(migResource)})
	s := waitAdmitted(t, nb)
	if s.flavors[migResource] != migFlavor {
		t.Errorf("MIG Job got flavor %q for %s, want %s", s.flavors[migResource], migResource, migFlavor)
	}
	waitUsage(t, "notebooks", migFlavor, corev1.ResourceName(migResource), usage{total: 7})
	waitUsage(t, "notebooks", h100, gpu, usage{})
	waitUsage(t, "notebooks", h100, corev1.ResourceName(migResource), usage{})

	wantLabels, _, _ := unstructured.NestedStringMap(find(t, objs, "ResourceFlavor", migFlavor).Object, "spec", "nodeLabels")
	waitFor(t, "MIG Job's pods steered to the MIG nodes", func(ctx context.Context) (bool, string) {
		j, err := env.cp.Kube.BatchV1().Jobs("notebooks").Get(ctx, "notebook", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		sel := j.Spec.Template.Spec.NodeSelector
		for k, v := range wantLabels {
			if sel[k] != v {
				return false, fmt.Sprintf("nodeSelector %v, want %v", sel, wantLabels)
			}
		}
		return true, ""
	})

	whole := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "whole", pods: 1, gpus: 8})
	if s := waitAdmitted(t, whole); s.flavors[string(gpu)] != h100 {
		t.Errorf("whole-GPU Job got flavor %q, want %s", s.flavors[string(gpu)], h100)
	}
	waitUsage(t, "training", h100, gpu, usage{total: 8})
}

// Check 16: the topology example's Topology and flavors render and apply,
// every flavor refers to the Topology, and Kueue accepts the ClusterQueues
// built on them as active.
func TestTopologyApplies(t *testing.T) {
	begin(t)
	objs := render(t, filepath.Join("examples", "topology", "tenancy.toml"))
	topologies := byKind(objs, "Topology")
	if len(topologies) != 1 {
		t.Fatalf("want one Topology, got %d", len(topologies))
	}
	useAgreement(t, "topology", objs)
	ctx := ctxFor(t)
	topo := topologies[0]
	live, err := env.cp.Dynamic.Resource(kueueRes("topologies")).Get(ctx, topo.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Topology not in the cluster: %v", err)
	}
	wantLevels, _, _ := unstructured.NestedSlice(topo.Object, "spec", "levels")
	gotLevels, _, _ := unstructured.NestedSlice(live.Object, "spec", "levels")
	if !reflect.DeepEqual(wantLevels, gotLevels) {
		t.Errorf("Topology levels %v, want %v", gotLevels, wantLevels)
	}
	for _, rf := range byKind(objs, "ResourceFlavor") {
		got, err := env.cp.Dynamic.Resource(kueueRes("resourceflavors")).Get(ctx, rf.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name, _, _ := unstructured.NestedString(got.Object, "spec", "topologyName"); name != topo.GetName() {
			t.Errorf("ResourceFlavor %s has topologyName %q, want %q", rf.GetName(), name, topo.GetName())
		}
	}
}

// An edit that drops a flavor's node labels applies like any other change.
// The first render of a flavor without labels, spec: {}, was refused by a
// server-side apply over a flavor that had them (spec became null).
func TestNodeLabelsDropped(t *testing.T) {
	begin(t)
	ref, err := os.ReadFile(filepath.Join(env.repoRoot, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	labelled := strings.Replace(string(ref), "capacity = 32\n",
		"capacity = 32\nnode_labels = { \"nvidia.com/gpu.product\" = \"NVIDIA-H100-80GB-HBM3\" }\n", 1)
	if labelled == string(ref) {
		t.Fatal("the reference agreement no longer has capacity = 32 for its flavor; update this test")
	}
	path := filepath.Join(t.TempDir(), "tenancy.toml")
	if err := os.WriteFile(path, []byte(labelled), 0o644); err != nil {
		t.Fatal(err)
	}
	useAgreement(t, "reference", render(t, path))
	useAgreement(t, "reference", reference(t))
	ctx := ctxFor(t)
	live, err := env.cp.Dynamic.Resource(kueueRes("resourceflavors")).Get(ctx, h100, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if labels, _, _ := unstructured.NestedStringMap(live.Object, "spec", "nodeLabels"); len(labels) != 0 {
		t.Errorf("ResourceFlavor %s still has node labels %v after they were dropped from the agreement", h100, labels)
	}
}

// Check 17: with the KAI Scheduler CRDs from ../shared/crds/kai installed
// (and the SchedulingShard's from KAI's source), the KAI render of every
// example is accepted by the API server (namespaces applied, everything
// else server-side dry-run): multi-flavor and large as a node pool per
// flavor.
func TestKAIRenderAccepted(t *testing.T) {
	begin(t)
	installKAICRDs(t)
	ex := examples(t)
	for _, name := range sortedKeys(ex) {
		t.Run(name, func(t *testing.T) {
			objs := render(t, "--backend", "kai", ex[name])
			if _, err := env.cp.Applier.Apply(ctxFor(t), byKind(objs, "Namespace"), false); err != nil {
				t.Fatalf("namespaces: %v", err)
			}
			if _, err := env.cp.Applier.Apply(ctxFor(t), objs, true); err != nil {
				t.Fatalf("KAI render rejected: %v", err)
			}
			t.Logf("%d objects accepted: %s", len(objs), kindCounts(objs))
		})
	}
}
