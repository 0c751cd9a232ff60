package kaipools

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

// The checks' teams, one work per team and pool (testdata/kai-pools.toml).
var (
	trainingH100  = work{"training", "h100"}
	researchH100  = work{"research", "h100"}
	trainingA100  = work{"training", "a100"}
	researchA100  = work{"research", "a100"}
	inferenceA100 = work{"inference", "a100"}
)

var shardGVR = schema.GroupVersionResource{Group: "kai.scheduler", Version: "v1", Resource: "schedulingshards"}

// --- The render in KAI ----------------------------------------------------------

// kaiGroups are the API groups of KAI's CRDs the render writes.
var kaiGroups = []string{"scheduling.run.ai", "kai.scheduler"}

func TestKAIPoolsRenderAccepted(t *testing.T) {
	begin(t)
	for _, c := range []struct {
		file string
		// shards are each SchedulingShard's name and partitionLabelValue
		// (a flavor's node_pool, by default its name).
		shards []string
	}{
		{agreementFile, []string{"a100 a100", "h100 h100"}},
		{"examples/multi-flavor/tenancy.toml", []string{"a100-mig a100-mig", "h100 h100"}},
		{"examples/large/tenancy.toml", []string{"a100 a100", "h100 h100"}},
	} {
		objs := env.Render(t, c.file)
		var shards []string
		var kai []*obj
		for _, o := range objs {
			if o.GetKind() == "SchedulingShard" {
				v, _, _ := unstructured.NestedString(o.Object, "spec", "partitionLabelValue")
				shards = append(shards, o.GetName()+" "+v)
			}
			// KAI's kinds, all cluster-scoped: a dry run of the namespaced
			// objects would need their namespaces to exist, and those kinds
			// are the single-pool render's, applied in the KAI suite.
			if slices.Contains(kaiGroups, o.GroupVersionKind().Group) {
				kai = append(kai, o)
			}
		}
		sort.Strings(shards)
		if diff := cmp.Diff(c.shards, shards); diff != "" {
			t.Errorf("%s: SchedulingShards, name and partitionLabelValue (-want +got):\n%s", c.file, diff)
		}
		if _, err := env.CP.Applier.Apply(kaiwork.Ctx(t), kai, true); err != nil {
			t.Errorf("%s: KAI's CRDs refuse the render's %d Queues and SchedulingShards: %v", c.file, len(kai), err)
		}
	}
}

func TestKAIPoolsShardsAsRendered(t *testing.T) {
	begin(t)
	objs := agreement(t)
	var values []string
	for _, o := range objs {
		switch o.GetKind() {
		case "SchedulingShard":
			live, err := env.CP.Dynamic.Resource(shardGVR).Get(kaiwork.Ctx(t), o.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(kaiwork.Normalized(t, o.Object["spec"]), kaiwork.Normalized(t, live.Object["spec"])); diff != "" {
				t.Errorf("SchedulingShard %s: the server keeps another spec than rendered (-rendered +live):\n%s", o.GetName(), diff)
			}
			v, _, _ := unstructured.NestedString(o.Object, "spec", "partitionLabelValue")
			values = append(values, v)
			// The suite runs each shard's scheduler with the chart
			// default's configuration (binpack); a render asking for
			// another would not be what runs here.
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			for k, v := range spec {
				switch k {
				case "partitionLabelValue":
				case "placementStrategy":
					if diff := cmp.Diff(map[string]any{"cpu": "binpack", "gpu": "binpack"}, kaiwork.Normalized(t, v)); diff != "" {
						t.Errorf("SchedulingShard %s asks for placement %v; the suite's shard schedulers run binpack", o.GetName(), v)
					}
				default:
					t.Errorf("SchedulingShard %s sets %s, which the suite's shard schedulers do not run with", o.GetName(), k)
				}
			}
		case "Queue":
			// A team's Queue in a pool is <team>-<pool>; the pool's root and
			// its subtrees are <agreement>-<pool>[-shared|-reserved].
			pool, team := o.GetLabels()[poolKey], o.GetLabels()["tenancy.dev/team"]
			named := strings.Contains(o.GetName()+"-", "-"+pool+"-")
			if team != "" {
				named = o.GetName() == team+"-"+pool
			}
			if !slices.Contains(poolValues, pool) || !named {
				t.Errorf("Queue %s: pool label %q; want one of %v, and the pool in the name", o.GetName(), pool, poolValues)
			}
		}
	}
	sort.Strings(values)
	want := slices.Sorted(slices.Values(poolValues))
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("the render's partitionLabelValues are not the pools the suite runs a scheduler for (-suite +render):\n%s", diff)
	}
}

// --- The pool label, from the workload to its PodGroup ---------------------------

func TestKAIPoolLabelOnPodGroup(t *testing.T) {
	begin(t)
	fresh(t, "h100")
	// KAI's podgrouper gives the PodGroup its top owner's labels, and the
	// pod's pool label where the owner has none
	// (pkg/podgrouper/pod_controller.go addNodePoolLabel): both ways are
	// checked, since the shard's scheduler sees only PodGroups with its
	// pool's label.
	w := trainingH100
	onJob := gpuJob("pool-on-job", w.labels(), map[string]string{queueKey: w.queue()}, w.spec())
	onPod := gpuJob("pool-on-pod", map[string]string{queueKey: w.queue()}, w.labels(), w.spec())
	for _, j := range []*batchv1.Job{onJob, onPod} {
		if _, err := env.CP.Kube.BatchV1().Jobs(w.team).Create(kaiwork.Ctx(t), j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteJob(t, w.team, j.Name) })
	}
	for _, j := range []*batchv1.Job{onJob, onPod} {
		var detail string
		waits.Until(t, kaiwork.Ctx(t), "job "+j.Name+"'s pod bound on an H100 Node, its PodGroup carrying the pool label", func(ctx context.Context) (bool, string) {
			pods, err := env.CP.Kube.CoreV1().Pods(w.team).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + j.Name})
			if err != nil || len(pods.Items) != 1 {
				return false, fmt.Sprintf("pods: %v", err)
			}
			p := pods.Items[0]
			pg, err := kaiwork.PodGroupOf(ctx, env.CP, w.team, p.Name)
			if err != nil {
				return false, err.Error()
			}
			detail = fmt.Sprintf("PodGroup %s labels %v, pod on %q", pg.GetName(), pg.GetLabels(), p.Spec.NodeName)
			if pg.GetLabels()[poolKey] != "h100" || p.Spec.NodeName == "" {
				return false, detail
			}
			if poolNodes[p.Spec.NodeName].pool != "h100" {
				t.Fatalf("job %s's pod landed outside its pool: %s", j.Name, detail)
			}
			return true, detail
		})
		t.Logf("job %s: %s", j.Name, detail)
	}
}

// gpuJob is a one-pod Job with its own labels and its pod template's.
func gpuJob(name string, labels, podLabels map[string]string, spec corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: spec},
		},
	}
}

// deleteJob deletes a Job and waits until its pods are gone: a pod without
// the pool label would escape clearPool and hold a GPU of the next check.
func deleteJob(t *testing.T, ns, name string) {
	t.Helper()
	ctx := kaiwork.Ctx(t)
	_ = env.CP.Kube.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	waits.Until(t, kaiwork.Ctx(t), "job "+name+"'s pods to be gone", func(ctx context.Context) (bool, string) {
		pods, err := env.CP.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			_ = env.CP.Kube.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d left", len(pods.Items))
	})
}

// --- Across the two pools ---------------------------------------------------------

func TestKAIPoolsBorrowStaysInPool(t *testing.T) {
	begin(t)
	fresh(t, poolValues...)
	// research floods the H100 pool with the whole A100 pool idle, its own
	// 8 guaranteed A100s among them: it borrows training's idle 8 H100s,
	// its H100 limit, and the 8 pods more wait although 16 A100s are free.
	submit(t, researchH100, "b", 24)
	waitBound(t, "b", bound{researchH100, 16})
	c, err := count(kaiwork.Ctx(t), researchH100, "b")
	if err != nil || c.pending != 8 {
		t.Errorf("research's H100 pods: %v (%v), want 8 pending", c, err)
	}
}

func TestKAIPoolsNeverLentA100WhileH100Lends(t *testing.T) {
	begin(t)
	fresh(t, poolValues...)
	// research floods both pools. In the H100 pool it borrows training's
	// idle 8 (training lends them); in the A100 pool it gets its 8 and
	// inference's idle 4, never training's 4 (never lent), although its
	// own limit there is 16.
	submit(t, researchH100, "n", 24)
	submit(t, researchA100, "n", 24)
	waitBound(t, "n", bound{researchH100, 16}, bound{researchA100, 12})
	// training's A100s were idle the whole time: its 4 pods bind without
	// a reclaim, research keeps its 12.
	submit(t, trainingA100, "n", 4)
	waitBound(t, "n", bound{trainingA100, 4}, bound{researchA100, 12})
	// training takes its lent H100s back: a reclaim in the H100 pool only;
	// research's 12 A100 pods stay bound throughout.
	start := time.Now()
	submit(t, trainingH100, "n", 8)
	waits.Until(t, kaiwork.Ctx(t), "training's 8 H100s back by reclaim", func(ctx context.Context) (bool, string) {
		if a, err := count(ctx, researchA100, "n"); err == nil && a.bound != 12 {
			t.Fatalf("a reclaim in the H100 pool moved research's A100 pods: %s", a)
		}
		c, err := count(ctx, trainingH100, "n")
		return err == nil && c.bound == 8, c.String()
	})
	t.Logf("KAI reclaimed training's 8 lent H100s from research in %s; research's A100s untouched", time.Since(start).Round(100*time.Millisecond))
	waitBound(t, "n", bound{trainingH100, 8}, bound{researchH100, 8}, bound{researchA100, 12})
}

// --- Each pool on its own, the two at once ------------------------------------------

// TestKAIPoolH100 and TestKAIPoolA100 run at once (t.Parallel), each pool's
// checks one after the other on its own Nodes, Queues and scheduler.
func TestKAIPoolH100(t *testing.T) {
	t.Parallel()
	poolChecks(t, "h100", []bound{{trainingH100, 8}, {researchH100, 8}}, trainingH100, researchH100, 16, 8)
}

func TestKAIPoolA100(t *testing.T) {
	t.Parallel()
	poolChecks(t, "a100", []bound{{trainingA100, 4}, {researchA100, 8}, {inferenceA100, 4}}, researchA100, inferenceA100, 12, 4)
}

// poolChecks runs one pool's own checks: every team at its guarantee at
// once; then borrower reaching top and owner reclaiming what it is owed.
func poolChecks(t *testing.T, pool string, guarantees []bound, borrower, owner work, top, owed int) {
	t.Run("GuaranteeEachTeam", func(t *testing.T) {
		begin(t)
		fresh(t, pool)
		for _, g := range guarantees {
			submit(t, g.w, "g", g.n)
		}
		waitBound(t, "g", guarantees...)
	})
	t.Run("ReclaimInPool", func(t *testing.T) {
		begin(t)
		fresh(t, pool)
		reclaim(t, borrower, owner, top, owed)
	})
}

// reclaim: borrower floods the pool and reaches top (its guarantee and the
// owner's idle GPUs); the owner then asks for its guarantee and gets it by
// KAI reclaiming from the borrower, who is left at top minus that.
func reclaim(t *testing.T, borrower, owner work, top, owed int) {
	t.Helper()
	submit(t, borrower, "r", top+4)
	waitBound(t, "r", bound{borrower, top})
	start := time.Now()
	submit(t, owner, "r", owed)
	waits.Until(t, kaiwork.Ctx(t), fmt.Sprintf("%s's %d guaranteed GPUs back", owner.queue(), owed), func(ctx context.Context) (bool, string) {
		c, err := count(ctx, owner, "r")
		return err == nil && c.bound == owed, c.String()
	})
	t.Logf("KAI reclaimed %s's %d GPUs from %s in %s", owner.queue(), owed, borrower.queue(), time.Since(start).Round(100*time.Millisecond))
	waitBound(t, "r", bound{borrower, top - owed}, bound{owner, owed})
}
