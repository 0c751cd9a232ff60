package kai

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

// The agreements of the checks. kai-scheduling.toml is the reference
// (training 16 guaranteed, lends 8, borrows 8; research 8, lends all,
// borrows 8; inference 8, never lent, borrows nothing; 32 H100) with the
// GPU ResourceQuota off, so that KAI, not the quota, holds every limit.
var (
	reference  = "tenancy.toml"
	scheduling = testdata("kai-scheduling.toml")
)

// reset gives a check the reference nodes and an agreement, with no work.
func reset(t *testing.T, agreement string) []*obj {
	t.Helper()
	clearWorkloads(t)
	useNodes(t, h100Nodes())
	objs := render(t, agreement)
	applyAgreement(t, objs)
	return objs
}

var (
	training  = work{ns: "training", queue: "training", priority: "standard"}
	research  = work{ns: "research", queue: "research", priority: "standard"}
	inference = work{ns: "inference", queue: "inference", priority: "standard"}
)

func withPriority(w work, p string) work { w.priority = p; return w }

// --- The render in KAI -----------------------------------------------------

func TestKAIRenderAccepted(t *testing.T) {
	begin(t)
	for _, f := range []string{reference, "examples/topology/tenancy.toml", scheduling, testdata("kai-weights.toml"), testdata("kai-mig.toml")} {
		objs := render(t, f)
		if _, err := env.cp.Applier.Apply(ctxFor(t), objs, true); err != nil {
			t.Errorf("%s: KAI render refused by the API server with KAI's CRDs: %v", f, err)
		}
	}
}

func TestKAIQueuesAsRendered(t *testing.T) {
	begin(t)
	objs := reset(t, reference)
	for _, o := range objs {
		if o.GetKind() != "Queue" {
			continue
		}
		live, err := env.cp.Dynamic.Resource(queueGVR).Get(ctxFor(t), o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(kaiwork.Normalized(t, o.Object["spec"]), kaiwork.Normalized(t, live.Object["spec"])); diff != "" {
			t.Errorf("Queue %s: the server keeps another spec than rendered (-rendered +live):\n%s", o.GetName(), diff)
		}
	}
}

func TestKAINoPhantomDrift(t *testing.T) {
	begin(t)
	for _, f := range []string{reference, scheduling} {
		objs := reset(t, f)
		again, err := env.cp.Applier.Apply(ctxFor(t), objs, true)
		if err != nil {
			t.Fatalf("%s: second apply: %v", f, err)
		}
		for i, o := range objs {
			res, err := env.cp.Applier.Resource(o)
			if err != nil {
				t.Fatal(err)
			}
			live, err := res.Get(ctxFor(t), o.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s: %v", o.GetName(), err)
			}
			if diff := cmp.Diff(stable(live), stable(again[i])); diff != "" {
				t.Errorf("%s: %s %s changes on a second apply (-live +again):\n%s", f, o.GetKind(), o.GetName(), diff)
			}
		}
	}
}

// stable strips what changes without anyone changing the object: status
// (KAI's queue controller writes it), the resource version and the
// managed-field bookkeeping.
func stable(o *obj) map[string]any {
	c := o.DeepCopy().Object
	delete(c, "status")
	unstructured.RemoveNestedField(c, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c, "metadata", "managedFields")
	return c
}

// --- Guarantees -------------------------------------------------------------

func TestKAIGuaranteeTraining(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "g", 16)
	reached(t, "training", "g", 16) // every pod: no settle can fail
}

func TestKAIGuaranteeResearch(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, research, "g", 8)
	reached(t, "research", "g", 8)
}

func TestKAIGuaranteeInference(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, inference, "g", 8)
	reached(t, "inference", "g", 8)
}

func TestKAIAllGuaranteesAtOnce(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "g", 16)
	pods(t, research, "g", 8)
	pods(t, inference, "g", 8)
	reachedAll(t, bound{"training", "g", 16}, bound{"research", "g", 8}, bound{"inference", "g", 8})
}

// --- Borrowing up to the limit, never beyond --------------------------------

func TestKAIBorrowUpToLimitTraining(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "b", 32)
	// 16 + 8 borrowed: research's idle GPUs; inference's 8 stay out of reach.
	waitBound(t, "training", "b", 24)
	waitFor(t, "queue training to report 24 GPUs allocated", func(ctx context.Context) (bool, string) {
		got, err := queueAllocatedGPUs(ctx, "training")
		return err == nil && got == 24, fmt.Sprintf("%v (%v)", got, err)
	})
}

func TestKAIBorrowUpToLimitResearch(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, research, "b", 24)
	waitBound(t, "research", "b", 16)
}

func TestKAIBorrowLimitHoldsWithIdleGPUs(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	// Training and research flood the pool: together they reach their
	// shared subtree's 24, never the 32 GPUs there are.
	pods(t, training, "f", 24)
	pods(t, research, "f", 16)
	waitFor(t, "training and research to hold 24 GPUs", func(ctx context.Context) (bool, string) {
		a, _ := countPods(ctx, "training", "f")
		b, _ := countPods(ctx, "research", "f")
		return a.bound+b.bound == 24, fmt.Sprintf("training %s, research %s", a, b)
	})
	never(t, "training or research beyond their limits, or together beyond 24", func(ctx context.Context) (bool, string) {
		a, _ := countPods(ctx, "training", "f")
		b, _ := countPods(ctx, "research", "f")
		return a.bound > 24 || b.bound > 16 || a.bound+b.bound > 24, fmt.Sprintf("training %s, research %s", a, b)
	})
}

// --- Never lent -------------------------------------------------------------

func TestKAINeverLentInference(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "n", 32)
	waitBound(t, "training", "n", 24)
	// Inference's 8 GPUs were idle the whole time and are its at once.
	pods(t, inference, "n", 8)
	waitBound(t, "inference", "n", 8)
	c, _ := countPods(ctxFor(t), "training", "n")
	if c.bound != 24 {
		t.Errorf("training lost GPUs to inference's own guarantee: %s", c)
	}
}

func TestKAIInferenceNeverBorrows(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, inference, "n", 16)
	waitBound(t, "inference", "n", 8)
}

// --- Reclaim ----------------------------------------------------------------

// reclaimTimes holds the measured times to reclaim, for docs/kai.md.
var reclaimTimes = map[string]time.Duration{}

func reclaim(t *testing.T, agreement string) time.Duration {
	t.Helper()
	reset(t, agreement)
	pods(t, training, "r", 24)
	reached(t, "training", "r", 24)
	start := time.Now()
	pods(t, research, "r", 8)
	waitFor(t, "research to get its 8 guaranteed GPUs back", func(ctx context.Context) (bool, string) {
		c, err := countPods(ctx, "research", "r")
		return err == nil && c.bound == 8, c.String()
	})
	took := time.Since(start)
	waitBound(t, "training", "r", 16)
	return took
}

func TestKAIReclaimPreemptsBorrower(t *testing.T) {
	begin(t)
	took := reclaim(t, scheduling)
	reclaimTimes["preempt"] = took
	t.Logf("KAI reclaimed research's 8 GPUs from training in %s", took.Round(100*time.Millisecond))
}

func TestKAIReclaimWaitIsNotHeld(t *testing.T) {
	begin(t)
	// reclaim = "wait" has no KAI counterpart: the render warns, and KAI
	// reclaims as for "preempt". This check pins that, so a change in KAI
	// or the render shows.
	_, stderr, err := renderRaw(testdata("kai-reclaim-wait.toml"))
	if err != nil || !strings.Contains(stderr, `"wait" is not expressed`) {
		t.Fatalf("the render does not warn that wait is not kept: %v\n%s", err, stderr)
	}
	took := reclaim(t, testdata("kai-reclaim-wait.toml"))
	reclaimTimes["wait"] = took
	t.Logf("with reclaim = \"wait\" KAI still reclaimed within %s (the agreement wants the owner to wait until the borrower ends)", took.Round(100*time.Millisecond))
}

func TestKAIReclaimKeepsBorrowersGuarantee(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "k", 24)
	reached(t, "training", "k", 24)
	pods(t, research, "k", 16)
	waitBoundAll(t, bound{"research", "k", 8}, bound{"training", "k", 16})
}

// --- Priority within a queue and the preemptible setting ---------------------

func TestKAIPriorityPreemptsInQueue(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "s", 24)
	reached(t, "training", "s", 24)
	start := time.Now()
	pods(t, withPriority(training, "critical"), "c", 8)
	reached(t, "training", "c", 8)
	t.Logf("critical preempted standard in %s", time.Since(start).Round(100*time.Millisecond))
	waitBoundAll(t, bound{"training", "c", 8}, bound{"training", "s", 16})
}

func TestKAIEqualPriorityWaits(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "s", 24)
	reached(t, "training", "s", 24)
	pods(t, training, "t", 4)
	waitBoundAll(t, bound{"training", "t", 0}, bound{"training", "s", 24})
}

func TestKAILowerPriorityWaits(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "s", 24)
	reached(t, "training", "s", 24)
	pods(t, withPriority(training, "scavenger"), "v", 4)
	waitBoundAll(t, bound{"training", "v", 0}, bound{"training", "s", 24})
}

func TestKAIPreemptibleBorrows(t *testing.T) {
	begin(t)
	reset(t, testdata("kai-nonpreemptible.toml"))
	pods(t, training, "p", 32) // standard: preemptible
	waitBound(t, "training", "p", 24)
}

func TestKAINonPreemptibleStaysWithinGuarantee(t *testing.T) {
	begin(t)
	reset(t, testdata("kai-nonpreemptible.toml"))
	pods(t, withPriority(training, "critical"), "n", 24)
	waitBound(t, "training", "n", 16)
}

func TestKAINonPreemptibleNeverReclaimed(t *testing.T) {
	begin(t)
	reset(t, testdata("kai-nonpreemptible.toml"))
	pods(t, withPriority(training, "critical"), "n", 16)
	reached(t, "training", "n", 16)
	pods(t, training, "p", 8) // borrowed, preemptible
	reached(t, "training", "p", 8)
	pods(t, research, "r", 8)
	// The reclaim took the borrowed preemptible work, not the critical.
	waitBoundAll(t, bound{"research", "r", 8}, bound{"training", "p", 0}, bound{"training", "n", 16})
}

func TestKAIPreemptibleLabelOverridesPriority(t *testing.T) {
	begin(t)
	reset(t, testdata("kai-nonpreemptible.toml"))
	// critical is non-preemptible, but KAI v0.17's preemptibility label
	// on the workload makes this one preemptible: it may borrow.
	w := withPriority(training, "critical")
	w.labels = map[string]string{"kai.scheduler/preemptibility": "preemptible"}
	pods(t, w, "l", 24)
	waitBound(t, "training", "l", 24)
}

// --- Work that names no priority -----------------------------------------------

func TestKAINoPriorityGetsAgreementDefault(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	// A Deployment without a priorityClassName: KAI's podgrouper would give
	// it the chart's non-preemptible "inference" class, held at the
	// guarantee. The render makes the agreement's lowest preemptible
	// priority the cluster default, so it may borrow like other work.
	w := training
	w.priority = ""
	deployment(t, w, "serve", 20)
	waitFor(t, "the Deployment's 20 pods bound (16 guaranteed + 4 borrowed)", func(ctx context.Context) (bool, string) {
		c, err := countPods(ctx, "training", "serve")
		return err == nil && c.bound == 20, c.String()
	})
	p := firstPod(t, "training", "serve")
	if p.Spec.PriorityClassName != "scavenger" {
		t.Errorf("a pod naming no priority got priorityClassName %q, want the agreement's lowest preemptible priority scavenger", p.Spec.PriorityClassName)
	}
}

// --- Gangs --------------------------------------------------------------------

func TestKAIGangAllOrNothing(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, research, "fill", 8)
	pods(t, inference, "fill", 8)
	pods(t, training, "fill", 14)
	reachedAll(t, bound{"training", "fill", 14}, bound{"research", "fill", 8}, bound{"inference", "fill", 8})
	// 2 GPUs free: a 3-pod gang does not start in part.
	job(t, training, "gang", 3, map[string]string{"kai.scheduler/batch-min-member": "3"})
	waitFor(t, "the gang's 3 pods to exist", func(ctx context.Context) (bool, string) {
		c, err := countPods(ctx, "training", "gang")
		return err == nil && c.pending == 3, c.String()
	})
	waitBound(t, "training", "gang", 0)
	// One GPU more frees: the gang starts whole.
	if err := env.cp.Kube.CoreV1().Pods("training").Delete(ctxFor(t), "fill-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	reached(t, "training", "gang", 3) // the whole gang: no settle can fail
}

func TestKAIGangPodGroupMinMember(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	job(t, training, "gang", 4, map[string]string{"kai.scheduler/batch-min-member": "4"})
	reached(t, "training", "gang", 4)
	p := firstPod(t, "training", "gang")
	pg := waitPodGroup(t, "training", p.Name)
	if n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember"); n != 4 {
		t.Errorf("PodGroup %s minMember = %d, want 4", pg.GetName(), n)
	}
}

// --- Weights ------------------------------------------------------------------

func weights(t *testing.T, agreement string, wantB, wantC int) {
	t.Helper()
	reset(t, agreement)
	b := work{ns: "b", queue: "b", priority: "standard"}
	c := work{ns: "c", queue: "c", priority: "standard"}
	pods(t, b, "w", 16)
	reached(t, "b", "w", 16)
	pods(t, c, "w", 16)
	waitFor(t, fmt.Sprintf("b %d and c %d GPUs: a's idle 8 shared by weight", wantB, wantC), func(ctx context.Context) (bool, string) {
		nb, _ := countPods(ctx, "b", "w")
		nc, _ := countPods(ctx, "c", "w")
		return nb.bound == wantB && nc.bound == wantC, fmt.Sprintf("b %s, c %s", nb, nc)
	})
	waitBoundAll(t, bound{"b", "w", wantB}, bound{"c", "w", wantC})
}

func TestKAIWeightsEqualShareSurplus(t *testing.T) {
	begin(t)
	weights(t, testdata("kai-weights-equal.toml"), 12, 12)
}

func TestKAIWeightsRenderedAsOverQuotaWeight(t *testing.T) {
	begin(t)
	objs := reset(t, testdata("kai-weights.toml"))
	for team, want := range map[string]int64{"a": 1, "b": 3, "c": 1} {
		find(t, objs, "Queue", team)
		live, err := env.cp.Dynamic.Resource(queueGVR).Get(ctxFor(t), team, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedInt64(live.Object, "spec", "resources", "gpu", "overQuotaWeight")
		if got != want {
			t.Errorf("Queue %s overQuotaWeight = %d, want the team's weight %d", team, got, want)
		}
	}
}

func TestKAIWeightsShareSurplus(t *testing.T) {
	begin(t)
	// b weighs 3, c 1: a's idle 8 GPUs split 6 : 2.
	weights(t, testdata("kai-weights.toml"), 14, 10)
}

// --- MIG and several flavors ----------------------------------------------------

func migNodes() []simNode {
	var out []simNode
	for i := range 8 {
		out = append(out, simNode{name: fmt.Sprintf("a100-%d", i), res: mig1g, count: 7, labels: map[string]string{
			"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/mig.strategy": "mixed"}})
	}
	return out
}

func TestKAIMIGSlicesWithinGuarantee(t *testing.T) {
	begin(t)
	clearWorkloads(t)
	useNodes(t, migNodes())
	applyAgreement(t, render(t, testdata("kai-mig.toml")))
	nb := work{ns: "notebooks", queue: "notebooks", priority: "standard", res: mig1g}
	inf := work{ns: "inference", queue: "inference", priority: "standard", res: mig1g}
	pods(t, nb, "m", 28)
	pods(t, inf, "m", 28)
	reachedAll(t, bound{"notebooks", "m", 28}, bound{"inference", "m", 28})
}

func TestKAIMIGSlicesBorrowUpToLimit(t *testing.T) {
	begin(t)
	clearWorkloads(t)
	useNodes(t, migNodes())
	applyAgreement(t, render(t, testdata("kai-mig.toml")))
	nb := work{ns: "notebooks", queue: "notebooks", priority: "standard", res: mig1g}
	pods(t, nb, "m", 46)
	// 28 guaranteed + 14 borrowed slices, a slice counted as one GPU.
	waitBound(t, "notebooks", "m", 42)
}

// --- Topology -----------------------------------------------------------------

func TestKAITopologyAgreementRuns(t *testing.T) {
	begin(t)
	// The topology example's render (64 H100, training 48, research 16):
	// its queues work in KAI. KAI's Topology object is not rendered (see
	// docs/kai.md), so placement by block and rack is the cluster's.
	var nodes []simNode
	for i := range 8 {
		nodes = append(nodes, simNode{name: fmt.Sprintf("h100-t%d", i), res: gpu, count: 8, labels: map[string]string{
			"nvidia.com/gpu.product":           "NVIDIA-H100-80GB-HBM3",
			"cloud.example.com/topology-block": fmt.Sprintf("b%d", i/4),
			"cloud.example.com/topology-rack":  fmt.Sprintf("r%d", i/2),
		}})
	}
	clearWorkloads(t)
	useNodes(t, nodes)
	applyAgreement(t, render(t, "examples/topology/tenancy.toml"))
	pods(t, training, "t", 48)
	pods(t, research, "t", 16)
	reachedAll(t, bound{"training", "t", 48}, bound{"research", "t", 16})
}

// --- Guardrails under KAI ------------------------------------------------------

func TestKAIGuardrailRefusesGPUPodWithoutQueue(t *testing.T) {
	begin(t)
	reset(t, reference)
	w := training
	w.queue = ""
	waitFor(t, "the guardrails to refuse a GPU pod without the queue label", func(ctx context.Context) (bool, string) {
		err := createPod(t, w, fmt.Sprintf("noq-%d", time.Now().UnixNano()))
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), fmt.Sprint(err)
	})
	err := createPod(t, w, "noq")
	if err == nil || !strings.Contains(err.Error(), "kai.scheduler/queue: training") {
		t.Errorf("refusal does not say which label to set: %v", err)
	}
}

func TestKAIGuardrailAdmitsGPUPodWithQueue(t *testing.T) {
	begin(t)
	reset(t, reference)
	if err := createPod(t, training, "withq"); err != nil {
		t.Fatalf("a GPU pod with the team's queue label was refused: %v", err)
	}
	reached(t, "training", "withq", 1)
}

func TestKAIGuardrailRefusesOtherTeamsQueue(t *testing.T) {
	begin(t)
	reset(t, reference)
	w := training
	w.queue = "research"
	err := createPod(t, w, "otherq")
	if err == nil {
		t.Fatalf("a GPU pod in training naming research's queue was admitted")
	}
}

// --- Namespace routing and the default queue -----------------------------------

func TestKAIPodGroupInTeamQueue(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	pods(t, training, "pg", 1)
	pg := waitPodGroup(t, "training", "pg-0")
	if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "training" {
		t.Errorf("PodGroup %s queue = %q, want training", pg.GetName(), q)
	}
	reached(t, "training", "pg", 1)
}

func TestKAIJobInTeamQueue(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	job(t, research, "j", 2, nil)
	waitBound(t, "research", "j", 2)
	p := firstPod(t, "research", "j")
	pg := waitPodGroup(t, "research", p.Name)
	if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "research" {
		t.Errorf("the Job's PodGroup queue = %q, want research", q)
	}
}

func TestKAIDefaultQueueHoldsNoGPUs(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	// A namespace outside the agreement, no queue label: KAI puts the pod
	// in default-queue, whose GPU limit is 0 as the README says to install
	// it; the pool's GPUs are all idle and the pod gets none.
	w := work{ns: outside, priority: "standard"}
	pods(t, w, "o", 1)
	pg := waitPodGroup(t, outside, "o-0")
	if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "default-queue" {
		t.Errorf("PodGroup queue = %q, want default-queue", q)
	}
	waitBound(t, outside, "o", 0)
}

func TestKAIDefaultQueueRunsCPUWork(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	w := work{ns: outside, gpus: -1}
	pods(t, w, "cpu", 2)
	reached(t, outside, "cpu", 2)
}

func TestKAIDefaultQueueChartDefaultLeaks(t *testing.T) {
	begin(t)
	reset(t, scheduling)
	// KAI's chart default (gpu limit -1): the same pod runs on the pool's
	// idle GPUs. This is why the README's install sets the limit to 0.
	if _, err := env.cp.Applier.Apply(ctxFor(t), []*obj{defaultQueue("default-queue", "default-parent-queue", -1), defaultQueue("default-parent-queue", "", -1)}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = env.cp.Applier.Apply(context.Background(), []*obj{defaultQueue("default-queue", "default-parent-queue", 0), defaultQueue("default-parent-queue", "", 0)}, false)
	})
	pods(t, work{ns: outside, priority: "standard"}, "leak", 2)
	reached(t, outside, "leak", 2)
}

// --- An agreement change, live -------------------------------------------------

func TestKAIAgreementChangeAppliesLive(t *testing.T) {
	begin(t)
	reset(t, reference)
	applyAgreement(t, render(t, testdata("quota-change.toml")))
	live, err := env.cp.Dynamic.Resource(queueGVR).Get(ctxFor(t), "training", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q, _, _ := unstructured.NestedInt64(live.Object, "spec", "resources", "gpu", "quota"); q != 20 {
		t.Fatalf("training's queue quota = %d after the change, want 20", q)
	}
	pods(t, training, "c", 20)
	pods(t, research, "c", 4)
	pods(t, inference, "c", 8)
	reachedAll(t, bound{"training", "c", 20}, bound{"research", "c", 4}, bound{"inference", "c", 8})
}

// --- helpers used only here ----------------------------------------------------

func firstPod(t *testing.T, ns, prefix string) *corePod {
	t.Helper()
	var out *corePod
	waitFor(t, "a pod "+prefix+"* in "+ns, func(ctx context.Context) (bool, string) {
		list, err := env.cp.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].Name, prefix) {
				out = &list.Items[i]
				return true, ""
			}
		}
		return false, "none yet"
	})
	return out
}
