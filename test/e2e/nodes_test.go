package e2e

// Checks on simulated Nodes: the real kube-scheduler binds the pods of the
// Jobs Kueue admits to Nodes that KWOK keeps Ready (KWOK stands in for the
// kubelets: no container runs, a bound pod is marked Running). Each check
// declares its Nodes and removes them when it ends, so the quota-only checks
// never see a Node.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

const (
	// simulatedLabel marks the Nodes the suite creates, so it can list and
	// delete them (KWOK's own marker is an annotation, which no selector
	// can list by).
	simulatedLabel = "tenancy.dev/e2e-simulated-node"
	hostnameLabel  = "kubernetes.io/hostname"
	productLabel   = "nvidia.com/gpu.product"
	rackLabel      = "cloud.example.com/topology-rack"
	blockLabel     = "cloud.example.com/topology-block"
	migResource    = corev1.ResourceName("nvidia.com/mig-1g.10gb")
	h100Product    = "NVIDIA-H100-80GB-HBM3"
)

// gpuTaint is what GPU operators put on GPU nodes; the multi-flavor
// example's flavors tolerate it.
var gpuTaint = corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}

// simNode is a simulated Node: a name, labels, taints and how many of one
// GPU resource it offers (besides ample cpu, memory and pods).
type simNode struct {
	name   string
	labels map[string]string
	taints []corev1.Taint
	res    corev1.ResourceName
	count  int64
}

func (n simNode) node() *corev1.Node {
	labels := map[string]string{simulatedLabel: "true", hostnameLabel: n.name}
	for k, v := range n.labels {
		labels[k] = v
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		n.res:                 *resource.NewQuantity(n.count, resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.name,
			Labels:      labels,
			Annotations: map[string]string{controlplane.KwokNodeAnnotation: controlplane.KwokNodeValue},
		},
		Spec: corev1.NodeSpec{Taints: n.taints},
		// KWOK's node-initialize Stage keeps capacity and allocatable as
		// created and adds the Ready condition, addresses and node info.
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// referenceNodes are the lab's 4 workers x 8 GPUs: the reference's 32 H100s
// (its flavor has no node labels).
func referenceNodes() []simNode {
	var out []simNode
	for i := range 4 {
		out = append(out, simNode{name: fmt.Sprintf("gpu-%d", i), res: gpu, count: 8})
	}
	return out
}

// useNodes makes nodes the cluster's simulated Nodes for the rest of the
// check: it replaces whatever Nodes there are with nodes and waits until
// each is Ready with its GPUs allocatable. When the check ends the Nodes go
// again, so every other check sees a cluster without Nodes, as before.
func useNodes(t *testing.T, nodes []simNode) {
	t.Helper()
	ctx := ctxFor(t)
	kube := env.cp.Kube.CoreV1()
	removeNodes(t)
	t.Cleanup(func() { removeNodes(t) })
	for _, n := range nodes {
		if _, err := kube.Nodes().Create(ctx, n.node(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node %s: %v", n.name, err)
		}
	}
	for _, n := range nodes {
		waitFor(t, "Node "+n.name+" Ready", func(ctx context.Context) (bool, string) {
			got, err := kube.Nodes().Get(ctx, n.name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			q := got.Status.Allocatable[n.res]
			ready := false
			for _, c := range got.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			tainted := len(got.Spec.Taints) > len(n.taints)
			return ready && !tainted && q.Value() == n.count, fmt.Sprintf("ready %v, allocatable %s %s, taints %v", ready, q.String(), n.res, got.Spec.Taints)
		})
	}
}

// removeNodes clears every Job, waits until their pods are gone (a pod
// bound to a Node that is deleted would never be cleaned up: its "kubelet"
// is gone), then deletes the simulated Nodes and waits until they are gone.
func removeNodes(t *testing.T) {
	t.Helper()
	ctx := ctxFor(t)
	kube := env.cp.Kube.CoreV1()
	clearWorkloads(t)
	waitFor(t, "no Job pods left", func(ctx context.Context) (bool, string) {
		pods, err := kube.Pods("").List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d pods left", len(pods.Items))
	})
	old, err := kube.Nodes().List(ctx, metav1.ListOptions{LabelSelector: simulatedLabel})
	if err != nil {
		t.Fatalf("list nodes: %v", err)
	}
	for _, n := range old.Items {
		if err := kube.Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete node %s: %v", n.Name, err)
		}
	}
	waitFor(t, "simulated Nodes gone", func(ctx context.Context) (bool, string) {
		list, err := kube.Nodes().List(ctx, metav1.ListOptions{LabelSelector: simulatedLabel})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items))
	})
}

// podsOf lists j's pods.
func podsOf(ctx context.Context, j *batchv1.Job) ([]corev1.Pod, error) {
	list, err := env.cp.Kube.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(j.UID)})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitRunning waits until n pods of j run on Nodes, and returns them.
func waitRunning(t *testing.T, j *batchv1.Job, n int) []corev1.Pod {
	t.Helper()
	var running []corev1.Pod
	waitFor(t, fmt.Sprintf("%d pods of %s/%s running on nodes", n, j.Namespace, j.Name), func(ctx context.Context) (bool, string) {
		pods, err := podsOf(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		running = running[:0]
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		return len(running) == n, podSummary(pods)
	})
	return running
}

// waitNoPods waits until j has no pods at all (not even terminating ones).
func waitNoPods(t *testing.T, j *batchv1.Job) {
	t.Helper()
	waitFor(t, "no pods of "+j.Namespace+"/"+j.Name, func(ctx context.Context) (bool, string) {
		pods, err := podsOf(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		return len(pods) == 0, podSummary(pods)
	})
}

func podSummary(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		why := ""
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
				why = fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
		if len(p.Spec.SchedulingGates) > 0 {
			why += fmt.Sprintf(" gated %v", p.Spec.SchedulingGates)
		}
		parts = append(parts, fmt.Sprintf("%s %s on %q%s", p.Name, p.Status.Phase, p.Spec.NodeName, why))
	}
	sort.Strings(parts)
	return fmt.Sprintf("pods: [%s]", strings.Join(parts, ", "))
}

// nodesOf returns the distinct Nodes the pods run on, sorted.
func nodesOf(pods []corev1.Pod) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods {
		if !seen[p.Spec.NodeName] {
			seen[p.Spec.NodeName] = true
			out = append(out, p.Spec.NodeName)
		}
	}
	sort.Strings(out)
	return out
}

// Node check 1: in the multi-flavor example, the pods of an admitted Job
// land only on Nodes of the flavor Kueue assigned: MIG pods on the A100 MIG
// Nodes, whole-GPU pods on the H100 Nodes and never on the MIG Nodes nor on
// an untainted GPU Node without the flavor's labels. Every GPU Node but
// that decoy is tainted, so a pod runs only with the flavor's tolerations.
func TestPodsLandOnFlavorNodes(t *testing.T) {
	begin(t)
	objs := render(t, filepath.Join("examples", "multi-flavor", "tenancy.toml"))
	useAgreement(t, "multi-flavor", objs)
	migLabels := map[string]string{productLabel: "NVIDIA-A100-SXM4-40GB", "nvidia.com/mig.config": "all-1g.10gb"}
	var nodes []simNode
	for i := range 4 {
		nodes = append(nodes, simNode{name: fmt.Sprintf("h100-%d", i), res: gpu, count: 8, labels: map[string]string{productLabel: h100Product}, taints: []corev1.Taint{gpuTaint}})
	}
	for i := range 2 {
		nodes = append(nodes, simNode{name: fmt.Sprintf("a100-mig-%d", i), res: migResource, count: 28, labels: migLabels, taints: []corev1.Taint{gpuTaint}})
	}
	nodes = append(nodes, simNode{name: "l4-decoy", res: gpu, count: 8, labels: map[string]string{productLabel: "NVIDIA-L4"}})
	useNodes(t, nodes)

	mig := submit(t, job{ns: "notebooks", queue: localQueueFor(t, objs, "notebooks"), name: "mig", pods: 2, gpus: 14, resource: migResource})
	whole := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "whole", pods: 3, gpus: 8})
	migPods := waitRunning(t, mig, 2)
	wholePods := waitRunning(t, whole, 3)
	for _, p := range migPods {
		if !strings.HasPrefix(p.Spec.NodeName, "a100-mig-") {
			t.Errorf("MIG pod %s runs on %s, not on a MIG node", p.Name, p.Spec.NodeName)
		}
	}
	for _, p := range wholePods {
		if !strings.HasPrefix(p.Spec.NodeName, "h100-") {
			t.Errorf("whole-GPU pod %s runs on %s, not on an H100 node", p.Name, p.Spec.NodeName)
		}
	}
	t.Logf("MIG pods on %v, whole-GPU pods on %v", nodesOf(migPods), nodesOf(wholePods))
}

// Node check 2: in the topology example (8 Nodes of 8 H100s, two per rack,
// two racks per block), a Job that requires one rack gets all its pods on
// one rack's Nodes, and one that needs more than a rack holds waits although
// the team's quota has room: Kueue's topology-aware scheduling counts the
// Nodes' capacity.
func TestTopologyOneRack(t *testing.T) {
	begin(t)
	objs := render(t, filepath.Join("examples", "topology", "tenancy.toml"))
	useAgreement(t, "topology", objs)
	var nodes []simNode
	for i := range 8 {
		nodes = append(nodes, simNode{name: fmt.Sprintf("tas-%d", i), res: gpu, count: 8, labels: map[string]string{
			productLabel: h100Product,
			blockLabel:   fmt.Sprintf("block-%d", i/4),
			rackLabel:    fmt.Sprintf("rack-%d", i/2),
		}})
	}
	useNodes(t, nodes)
	oneRack := map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
	queue := localQueueFor(t, objs, "training")

	fits := submit(t, job{ns: "training", queue: queue, name: "one-rack", pods: 2, gpus: 8, podAnnotations: oneRack})
	pods := waitRunning(t, fits, 2)
	racks := map[string]bool{}
	for _, p := range pods {
		n, err := env.cp.Kube.CoreV1().Nodes().Get(ctxFor(t), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		racks[n.Labels[rackLabel]] = true
	}
	if len(racks) != 1 {
		t.Errorf("pods of a one-rack Job run on racks %v, want one", racks)
	}

	// 24 GPUs in one rack of 16: within training's 48 but on no rack.
	tooBig := submit(t, job{ns: "training", queue: queue, name: "too-big-for-a-rack", pods: 3, gpus: 8, podAnnotations: oneRack})
	msg := waitPending(t, tooBig)
	t.Logf("one-rack Job on %v; 24-GPU one-rack Job waits: %s", nodesOf(pods), msg)
	if pods, err := podsOf(ctxFor(t), tooBig); err != nil || len(pods) != 0 {
		t.Errorf("the waiting Job has pods (%v): %s", err, podSummary(pods))
	}
}

// Node check 3: all or nothing with real pods. Research runs its 8, so
// training can reach 16 and no more; a 3 x 8 gang (24, borrowing research's
// 8) gets no pod at all, not two of three; when research finishes, all
// three pods start, on three Nodes.
func TestGangStartsWhole(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	useNodes(t, referenceNodes())
	research := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "research", pods: 1, gpus: 8})
	waitRunning(t, research, 1)
	gang := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "gang", pods: 3, gpus: 8})
	waitPending(t, gang)
	if pods, err := podsOf(ctxFor(t), gang); err != nil || len(pods) != 0 {
		t.Fatalf("the gang that does not fit has pods (%v): %s", err, podSummary(pods))
	}
	finish(t, research)
	pods := waitRunning(t, gang, 3)
	if got := nodesOf(pods); len(got) != 3 {
		t.Errorf("gang pods on %v, want three Nodes of 8 GPUs", got)
	}
}

// Node check 4: preemption on Nodes. Research runs two 8-GPU Jobs, one of
// them on training's lendable GPUs, and inference runs its 8: every Node is
// full. Training reclaims with a 16-GPU Job: Kueue preempts one research
// Job, its pod leaves its Node, and training's pods start, one of them on
// that Node, while research keeps its guaranteed 8 running.
func TestPreemptionFreesNodes(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	useNodes(t, referenceNodes())
	rq := localQueueFor(t, objs, "research")
	r1 := submit(t, job{ns: "research", queue: rq, name: "r1", pods: 1, gpus: 8})
	r2 := submit(t, job{ns: "research", queue: rq, name: "r2", pods: 1, gpus: 8})
	serve := submit(t, job{ns: "inference", queue: localQueueFor(t, objs, "inference"), name: "serve", pods: 1, gpus: 8})
	nodeOf := map[*batchv1.Job]string{}
	for _, j := range []*batchv1.Job{r1, r2, serve} {
		nodeOf[j] = waitRunning(t, j, 1)[0].Spec.NodeName
	}
	waitUsage(t, "research", h100, gpu, usage{total: 16, borrowed: 8})

	owner := submit(t, job{ns: "training", queue: localQueueFor(t, objs, "training"), name: "owner", pods: 2, gpus: 8})
	pods := waitRunning(t, owner, 2)
	var preempted, kept *batchv1.Job
	for _, j := range []*batchv1.Job{r1, r2} {
		if s := state(t, j); s.preemptedReason != "" || s.evicted || !s.admitted {
			preempted = j
		} else {
			kept = j
		}
	}
	if preempted == nil || kept == nil {
		t.Fatalf("want exactly one research Job preempted; states %+v, %+v", state(t, r1), state(t, r2))
	}
	waitNoPods(t, preempted)
	waitRunning(t, kept, 1)
	waitRunning(t, serve, 1)
	if on := nodesOf(pods); !slices.Contains(on, nodeOf[preempted]) {
		t.Errorf("training's pods on %v; want one on %s, the Node the preempted pod left", on, nodeOf[preempted])
	}
	t.Logf("research/%s preempted, its pod left %s; training's pods on %v", preempted.Name, nodeOf[preempted], nodesOf(pods))
}

// Node check 5: the agreement's guarantee holds in running pods. Training
// and research saturate what they may use (24 of 32; more training work
// waits); inference's 8 GPUs are still free on the Nodes, and its 8-GPU Job
// runs at once without preempting anyone, filling the last Node.
func TestInferenceGuaranteeOnNodes(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	useNodes(t, referenceNodes())
	tq := localQueueFor(t, objs, "training")
	train := submit(t, job{ns: "training", queue: tq, name: "train", pods: 2, gpus: 8})
	research := submit(t, job{ns: "research", queue: localQueueFor(t, objs, "research"), name: "research", pods: 1, gpus: 8})
	waitRunning(t, train, 2)
	waitRunning(t, research, 1)
	more := submit(t, job{ns: "training", queue: tq, name: "more", pods: 1, gpus: 8})
	waitPending(t, more)

	inference := submit(t, job{ns: "inference", queue: localQueueFor(t, objs, "inference"), name: "serve", pods: 1, gpus: 8})
	waitRunning(t, inference, 1)
	for _, j := range []*batchv1.Job{train, research} {
		if s := state(t, j); !s.admitted || s.preemptedReason != "" {
			t.Errorf("%s/%s disturbed by inference: %+v", j.Namespace, j.Name, s)
		}
	}
	if s := state(t, more); s.admitted {
		t.Errorf("training's extra Job admitted on inference's GPUs: %+v", s)
	}
	// Every GPU of the 4 Nodes is in a running pod: 2 + 1 + 1 pods of 8.
	all, err := env.cp.Kube.CoreV1().Pods("").List(ctxFor(t), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel})
	if err != nil {
		t.Fatal(err)
	}
	var running []corev1.Pod
	for _, p := range all.Items {
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	if got := nodesOf(running); len(running) != 4 || len(got) != 4 {
		t.Errorf("want 4 running pods on 4 Nodes, got %d on %v", len(running), got)
	}
}
