package guard_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenancy-dev/tenancy/generator"
)

// pooled is an agreement KAI renders as two node pools: h100 (whole GPUs,
// shared by fraction) and a100 (MIG slices, labelled a100-mig on its
// Nodes). Research holds no A100s, so it has no queue in that pool.
const pooled = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
gpu_sharing = "fraction"
[flavors.a100]
resource = "nvidia.com/mig-1g.10gb"
capacity = 56
node_pool = "a100-mig"
[priorities]
standard = 100
[teams.training.flavors.h100]
guaranteed = 16
[teams.training.flavors.a100]
guaranteed = 14
[teams.research.flavors.h100]
guaranteed = 8
`

// renderKAIGuard renders the agreement for KAI, node pools and all.
func renderKAIGuard(t *testing.T, src string) rendered {
	t.Helper()
	return renderGuard(t, src, generator.Options{Backend: generator.KAI})
}

// onPool is a GPU pod on KAI with the queue and node pool labels given
// ("" leaves a label out).
func onPool(queue, pool string, c corev1.Container) *corev1.Pod {
	l := map[string]string{}
	if queue != "" {
		l["kai.scheduler/queue"] = queue
	}
	if pool != "" {
		l["kai.scheduler/node-pool"] = pool
	}
	p := pod(l, c)
	p.Spec.SchedulerName = "kai-scheduler"
	return p
}

// TestKAINodePools: on an agreement of several node pools, a team's GPU
// work names one of its queues and that queue's pool, and asks only for
// what the pool holds.
func TestKAINodePools(t *testing.T) {
	r := renderKAIGuard(t, pooled)
	gpu, mig := gpuContainer("nvidia.com/gpu", 8), gpuContainer("nvidia.com/mig-1g.10gb", 2)
	fraction := func(p *corev1.Pod) *corev1.Pod { return withAnnotations(p, "gpu-fraction", "0.5") }
	req := func(gvr schema.GroupVersionResource, obj runtime.Object) request { return request{gvr: gvr, obj: obj} }
	podGroup := func(queue, pool string) runtime.Object {
		var l map[string]string
		if pool != "" {
			l = labels("kai.scheduler/node-pool", pool)
		}
		return crd("scheduling.run.ai/v2alpha2", "PodGroup", l, map[string]any{"queue": queue, "minMember": int64(1)})
	}
	splitDeployment := func() runtime.Object {
		s := spec(gpu)
		s.SchedulerName = "kai-scheduler"
		return deployment(labels("kai.scheduler/queue", "training-h100"), labels("kai.scheduler/node-pool", "h100"), s)
	}
	tests := map[string]struct {
		req      request
		ns, team string
		want     []string
	}{
		"H100s on the team's H100 queue and pool":        {req: req(podsGVR, onPool("training-h100", "h100", gpu))},
		"MIG slices on the team's A100 pool":             {req: req(podsGVR, onPool("training-a100", "a100-mig", mig))},
		"a queue on the owner, the pool on the template": {req: req(deployGVR, splitDeployment())},
		"without the pool label": {req: req(podsGVR, onPool("training-h100", "", gpu)), want: []string{
			"this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool): add the label kai.scheduler/node-pool with its queue's node pool (h100 for queue training-h100, a100-mig for queue training-a100)"}},
		"the H100 queue on the A100 pool": {req: req(podsGVR, onPool("training-h100", "a100-mig", gpu)), want: []string{
			"queue training-h100 is in node pool h100, but the label kai.scheduler/node-pool says a100-mig in namespace training of team training (tenancy agreement gpu-pool): set the label kai.scheduler/node-pool: h100, or use the team's queue of node pool a100-mig",
			"asks for nvidia.com/gpu, which node pool a100-mig (flavor a100) does not hold"}},
		"a MIG slice on the H100 pool": {req: req(podsGVR, onPool("training-h100", "h100", mig)), want: []string{
			"this Pod asks for nvidia.com/mig-1g.10gb, which node pool h100 (flavor h100) does not hold in namespace training of team training (tenancy agreement gpu-pool): ask for nvidia.com/gpu there, or use the node pool whose flavor holds nvidia.com/mig-1g.10gb"}},
		"the team's name, which is no queue of a pool": {req: req(podsGVR, onPool("training", "h100", gpu)), want: []string{
			"queue training is not this team's in namespace training of team training (tenancy agreement gpu-pool): set the label kai.scheduler/queue: training-h100 or training-a100"}},
		"another team's queue":               {req: req(podsGVR, onPool("research-h100", "h100", gpu)), want: []string{"queue research-h100 is not this team's"}},
		"a pool the team holds nothing in":   {req: req(podsGVR, onPool("research-a100", "a100-mig", mig)), ns: "research", team: "research", want: []string{"queue research-a100 is not this team's in namespace research of team research (tenancy agreement gpu-pool): set the label kai.scheduler/queue: research-h100", "can use at most 0"}},
		"no queue label":                     {req: req(podsGVR, onPool("", "h100", gpu)), want: []string{"add the label kai.scheduler/queue: training-h100 or training-a100"}},
		"a Job's pod, by the Job controller": {req: request{gvr: podsGVR, obj: owned(onPool("", "", gpu), "Job"), user: jobController}},
		"a CPU pod without labels":           {req: req(podsGVR, pod(nil, cpuContainer()))},
		// Fractions: only on a pool whose flavor shares.
		"half an H100 on the team's H100 queue": {req: req(podsGVR, fraction(onPool("training-h100", "h100", cpuContainer())))},
		"half a GPU on the A100 pool": {req: req(podsGVR, fraction(onPool("training-a100", "a100-mig", cpuContainer()))), want: []string{
			"this Pod asks for part of a GPU (annotation gpu-fraction or gpu-memory), but flavor a100 does not share its GPUs by fraction in namespace training of team training (tenancy agreement gpu-pool): ask for whole GPUs, or use a node pool that shares by fraction (h100), or set gpu_sharing = \"fraction\" on flavor a100 in the agreement"}},
		"half a GPU without a pool":          {req: req(podsGVR, fraction(onPool("training-h100", "", cpuContainer()))), want: []string{"add the label kai.scheduler/node-pool"}},
		"half a GPU on another team's queue": {req: req(podsGVR, fraction(onPool("research-h100", "h100", cpuContainer()))), want: []string{"queue research-h100 is not this team's"}},
		// A PodGroup names its queue and carries its pool's label.
		"a PodGroup on the team's H100 queue and pool": {req: req(podGroupGVR, podGroup("training-h100", "h100"))},
		"a PodGroup on the team's queue, another pool": {req: req(podGroupGVR, podGroup("training-h100", "a100-mig")), want: []string{
			"PodGroup queue training-h100 is in node pool h100, but its label kai.scheduler/node-pool says a100-mig"}},
		"a PodGroup without a pool": {req: req(podGroupGVR, podGroup("training-h100", "")), want: []string{"PodGroup queue training-h100 is in node pool h100, but its label kai.scheduler/node-pool says  in"}},
		"a PodGroup on the team's name": {req: req(podGroupGVR, podGroup("training", "h100")), want: []string{
			"PodGroup queue training is not this team's in namespace training of team training (tenancy agreement gpu-pool): set spec.queue: training-h100 or training-a100",
			"PodGroup queue training is in node pool , but its label"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, team := tc.ns, tc.team
			if ns == "" {
				ns, team = "training", "training"
			}
			wantRefusals(t, r.admit(t, tc.req, ns, team), tc.want)
		})
	}
}

// TestKAIFractions: on an agreement of one queue tree, a pod asks for part
// of a GPU only where the flavor shares by fraction, said on the flavor or
// for every flavor in [kai].
func TestKAIFractions(t *testing.T) {
	half := withAnnotations(onPool("training", "", cpuContainer()), "gpu-fraction", "0.5")
	memory := withAnnotations(onPool("training", "", cpuContainer()), "gpu-memory", "4000")
	tests := map[string]struct {
		src  string
		want []string
	}{
		"a flavor that says nothing": {reference, []string{
			"this Pod asks for part of a GPU (annotation gpu-fraction or gpu-memory), but flavor h100 does not share its GPUs by fraction in namespace training of team training (tenancy agreement gpu-pool): ask for whole GPUs, or set gpu_sharing = \"fraction\" on flavor h100 in the agreement"}},
		"the flavor shares":      {strings.Replace(reference, "capacity = 32\n", "capacity = 32\ngpu_sharing = \"fraction\"\n", 1), nil},
		"every flavor shares":    {reference + "[kai]\ngpu_sharing = \"fraction\"\n", nil},
		"[kai] shares, h100 not": {strings.Replace(reference, "capacity = 32\n", "capacity = 32\ngpu_sharing = \"none\"\n", 1) + "[kai]\ngpu_sharing = \"fraction\"\n", []string{"flavor h100 does not share"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := renderGuard(t, tc.src, generator.Options{Backend: generator.KAI})
			// Unsharded, a pool label is not read.
			labelled := withAnnotations(onPool("training", "a100", cpuContainer()), "gpu-fraction", "0.5")
			for _, p := range []*corev1.Pod{half, memory, labelled} {
				wantRefusals(t, r.admit(t, request{gvr: podsGVR, obj: p}, "training", "training"), tc.want)
			}
		})
	}
	// Kueue charges no fraction: its policy is as before, whatever the flavor says.
	r := renderGuard(t, reference, generator.Options{Backend: generator.Kueue})
	kueuePod := withAnnotations(pod(labels("kueue.x-k8s.io/queue-name", "training"), cpuContainer()), "gpu-fraction", "0.5")
	wantRefusals(t, r.admit(t, request{gvr: podsGVR, obj: kueuePod}, "training", "training"), nil)
}

// TestPoolPoliciesAreStatic: an agreement of several node pools renders the
// same KAI policy as one of a single queue tree, but for its data.
func TestPoolPoliciesAreStatic(t *testing.T) {
	a := renderKAIGuard(t, pooled).policies
	b := renderGuard(t, reference, generator.Options{Backend: generator.KAI}).policies
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("%d and %d policies, want 1 each", len(a), len(b))
	}
	if !equalSpecs(a[0], b[0]) {
		t.Error("the KAI policy of node pools differs from the unsharded one")
	}
}

// TestKAIPoolSizes: a workload runs in one node pool, so on two pools of
// whole GPUs what a team can ever use is its most in one pool (16 H100s),
// not its sum over both (24).
func TestKAIPoolSizes(t *testing.T) {
	src := `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 16
[teams.training.flavors.h100]
guaranteed = 16
[teams.training.flavors.a100]
guaranteed = 8
`
	r := renderKAIGuard(t, src)
	for n, want := range map[int64][]string{
		16: nil,
		17: {"this Pod needs 17 nvidia.com/gpu at once, but team training can use at most 16"},
	} {
		got := r.admit(t, request{gvr: podsGVR, obj: onPool("training-h100", "h100", gpuContainer("nvidia.com/gpu", n))}, "training", "training")
		wantRefusals(t, got, want)
	}
}
