package kai

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// guardAdmin applies the agreement (a file of test/e2e/testdata) and returns
// training's namespace admin for dry-run probes, once the agreement's queue
// policy is in force.
func guardAdmin(t *testing.T, agreement string) *probe.TeamAdmin {
	t.Helper()
	begin(t)
	objs := reset(t, testdata(agreement))
	alice := newTeamAdmin(t, "training", "alice")
	alice.Real = false
	waitGuardrails(t, objs, alice)
	return alice
}

// onKAIScheduler puts a pod spec on KAI's scheduler.
func onKAIScheduler(s corev1.PodSpec) corev1.PodSpec { s.SchedulerName = "kai-scheduler"; return s }

// Check: the queue policy admits part of a GPU only on a flavor that shares
// its GPUs by fraction. With the flavor sharing ([kai] gpu_sharing =
// "fraction"), a gpu-fraction or gpu-memory pod on the team's queue is
// admitted by the real API server, and still refused without a queue or on
// another team's; the reference, which says nothing of sharing, refuses it
// naming the flavor (TestKAIGuardrails). Dry runs: admission is what is
// checked, not binding (the fractional suite binds).
func TestKAIGuardFractions(t *testing.T) {
	alice := guardAdmin(t, "kai-guard-sharing.toml")
	own := map[string]string{"kai.scheduler/queue": "training"}
	other := map[string]string{"kai.scheduler/queue": "research"}
	annotated := func(k, v string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = map[string]string{k: v} }
	}
	cpu := onKAIScheduler(workload.CPUPodSpec())
	probe.Try(t, ctxFor(t), []probe.Attempt{
		alice.Probe(t, "half a GPU on its team's queue", workload.Pods, workload.PodWith(own, cpu, annotated("gpu-fraction", "0.5"))),
		alice.Probe(t, "GPU memory on its team's queue", workload.Pods, workload.PodWith(own, cpu, annotated("gpu-memory", "4000"))),
		alice.Probe(t, "half a GPU without a queue", workload.Pods, workload.PodWith(nil, cpu, annotated("gpu-fraction", "0.5")), "add the label kai.scheduler/queue: training"),
		alice.Probe(t, "half a GPU on another team's queue", workload.Pods, workload.PodWith(other, cpu, annotated("gpu-fraction", "0.5")), "queue research is not this team's"),
	})
}

// Check: on an agreement of two node pools the real API server holds GPU
// work to its team's queue of a pool and that pool's label, each read
// where KAI reads it: work on training-h100 labelled h100 is admitted
// (the labels on a Job, or the queue on a Deployment and the pool on its
// pod template); refused are work without the pool label, the H100 queue
// with the A100 pool's label, a MIG slice on the H100 pool, the team's
// bare name (no queue on pools), a fraction on the A100 pool (its flavor
// does not share) and a PodGroup whose pool label is not its queue's.
// Half an H100 on the team's H100 queue is admitted. Dry runs.
func TestKAIGuardNodePools(t *testing.T) {
	alice := guardAdmin(t, "kai-guard-pools.toml")
	placed := func(queue, pool string) map[string]string {
		l := map[string]string{"kai.scheduler/queue": queue}
		if pool != "" {
			l["kai.scheduler/node-pool"] = pool
		}
		return l
	}
	half := func(p *corev1.Pod) { p.Annotations = map[string]string{"gpu-fraction": "0.5"} }
	h100, mig, cpu := onKAIScheduler(workload.GPUPodSpec(gpu, 1)), onKAIScheduler(workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1)), onKAIScheduler(workload.CPUPodSpec())
	podGroup := func(queue, pool string) *unstructured.Unstructured {
		return workload.Custom(map[string]string{"kai.scheduler/node-pool": pool}, map[string]any{"queue": queue, "minMember": int64(1)})
	}
	probe.Try(t, ctxFor(t), []probe.Attempt{
		alice.Probe(t, "a GPU pod on its H100 queue and pool", workload.Pods, workload.PodWith(placed("training-h100", "h100"), h100, nil)),
		alice.Probe(t, "MIG slices on its A100 queue and pool", workload.Pods, workload.PodWith(placed("training-a100", "a100-mig"), mig, nil)),
		alice.Probe(t, "a GPU Job labelled with its queue and pool", workload.Jobs, workload.JobOf("", "probe", placed("training-h100", "h100"), h100)),
		alice.Probe(t, "a GPU pod without the pool label", workload.Pods, workload.PodWith(placed("training-h100", ""), h100, nil),
			"add the label kai.scheduler/node-pool with its queue's node pool (h100 for queue training-h100, a100-mig for queue training-a100)"),
		alice.Probe(t, "the H100 queue with the A100 pool's label", workload.Pods, workload.PodWith(placed("training-h100", "a100-mig"), h100, nil),
			"queue training-h100 is in node pool h100, but the label kai.scheduler/node-pool says a100-mig"),
		alice.Probe(t, "a MIG slice on the H100 pool", workload.Pods, workload.PodWith(placed("training-h100", "h100"), mig, nil),
			"asks for nvidia.com/mig-1g.10gb, which node pool h100 (flavor h100) does not hold"),
		alice.Probe(t, "the team's bare name as its queue", workload.Pods, workload.PodWith(placed("training", "h100"), h100, nil),
			"queue training is not this team's", "set the label kai.scheduler/queue: training-h100 or training-a100"),
		alice.Probe(t, "half an H100 on its H100 queue", workload.Pods, workload.PodWith(placed("training-h100", "h100"), cpu, half)),
		alice.Probe(t, "half a GPU on the A100 pool", workload.Pods, workload.PodWith(placed("training-a100", "a100-mig"), cpu, half),
			"flavor a100 does not share its GPUs by fraction", "use a node pool that shares by fraction (h100)"),
		alice.Probe(t, "a PodGroup on its H100 queue and pool", workload.PodGroups, podGroup("training-h100", "h100")),
		alice.Probe(t, "a PodGroup on its H100 queue with the A100 pool's label", workload.PodGroups, podGroup("training-h100", "a100-mig"),
			"PodGroup queue training-h100 is in node pool h100, but its label kai.scheduler/node-pool says a100-mig"),
	})
}

// Check: the pool label reaches the PodGroup as the policy reads it. KAI's
// podgrouper labels a PodGroup with the top owner's pool label, else the
// pod's (pkg/podgrouper/pod_controller.go addNodePoolLabel): a Job labelled
// with queue and pool, and a Deployment with its queue on itself and its
// pool on its pod template only, each get a PodGroup on training-h100
// labelled h100, which the H100 shard schedules. Made for real.
func TestKAIGuardPoolLabelReachesPodGroup(t *testing.T) {
	alice := guardAdmin(t, "kai-guard-pools.toml")
	alice.Real = true
	t.Cleanup(func() {
		if err := alice.DeleteMade(context.Background(), env.cp.Dynamic); err != nil {
			t.Error(err)
		}
	})
	queue := map[string]string{"kai.scheduler/queue": "training-h100"}
	pool := map[string]string{"kai.scheduler/node-pool": "h100"}
	both := map[string]string{"kai.scheduler/queue": "training-h100", "kai.scheduler/node-pool": "h100"}
	h100 := onKAIScheduler(workload.GPUPodSpec(gpu, 1))
	job := workload.JobOf("", "probe", both, h100)
	job.Spec.Suspend = nil // JobOf's Jobs wait for Kueue; this one runs
	probe.Try(t, ctxFor(t), []probe.Attempt{
		alice.Probe(t, "a Job labelled with its queue and pool", workload.Jobs, job),
		alice.Probe(t, "a Deployment with its pool on its pod template only", workload.Deployments, workload.DeploymentOf("probe", queue, pool, workload.RestartAlways(h100))),
	})
	if len(alice.Made) != 2 {
		t.Fatalf("%d objects made, want the Job and the Deployment", len(alice.Made))
	}
	for _, m := range alice.Made {
		p := firstPod(t, "training", m.Name+"-")
		pg := waitPodGroup(t, "training", p.Name)
		q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue")
		if got := pg.GetLabels()["kai.scheduler/node-pool"]; q != "training-h100" || got != "h100" {
			t.Errorf("%s: PodGroup %s on queue %q with pool label %q, want training-h100 and h100", m.What, pg.GetName(), q, got)
		} else {
			t.Logf("%s: KAI's podgrouper put pod %s in PodGroup %s on queue %s, labelled %s", m.What, p.Name, pg.GetName(), q, got)
		}
	}
}
