package kai

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

type obj = unstructured.Unstructured

const (
	gpu      = corev1.ResourceName("nvidia.com/gpu")
	mig1g    = corev1.ResourceName("nvidia.com/mig-1g.10gb")
	queueKey = "kai.scheduler/queue"
	// eventually bounds every wait: KAI schedules once a second.
	eventually = 60 * time.Second
	poll       = 200 * time.Millisecond
	// settle is how long a "nothing more happens" check keeps watching:
	// several of KAI's one-second scheduling cycles.
	settle = 3 * time.Second
	// outside is a namespace the agreement does not name.
	outside = "outside"
)

var (
	queueGVR    = kaiwork.QueueGVR
	podGroupGVR = kaiwork.PodGroupGVR
	pruneKinds  = kaiwork.PruneKinds
	// workNamespaces are every namespace a check runs work in.
	workNamespaces = []string{"training", "research", "inference", "notebooks", "a", "b", "c", "genomics", "physics", "music", "platform", outside}
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// cluster is the suite's cluster as internal/kaiwork's helpers take it.
func cluster() *kaiwork.Cluster {
	return &kaiwork.Cluster{CP: env.cp, Tenancy: env.tenancy, RepoRoot: env.repoRoot, Namespaces: workNamespaces, Waits: waits}
}

// render runs `tenancy render --backend kai` on an agreement (a path
// relative to the repository root) and parses the YAML.
func render(t *testing.T, file string, extra ...string) []*obj {
	t.Helper()
	return cluster().Render(t, file, extra...)
}

func renderRaw(file string, extra ...string) (stdout []byte, stderr string, err error) {
	return cluster().RenderRaw(file, extra...)
}

func testdata(name string) string { return filepath.Join("test", "e2e", "testdata", name) }

func find(t *testing.T, objs []*obj, kind, name string) *obj {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("render has no %s %q", kind, name)
	return nil
}

// applyAgreement makes objs the cluster's agreement once the check has
// cleared the workloads (clearWorkloads, before it changes the Nodes): objs
// are applied server-side, the tenancy-managed objects objs no longer holds
// are deleted, as a change of the agreement would, and it returns once the
// API server checks against objs' policy data.
func applyAgreement(t *testing.T, objs []*obj) {
	t.Helper()
	cluster().ApplyAgreement(t, objs)
	waitPolicyData(t, objs)
}

// waitPolicyData waits, when objs hold a queue policy, until the API server
// checks against this agreement's data: the admission plugin reads policies
// through an informer, so for a moment after an apply it still refuses a
// GPU resource or priority of the new agreement as the previous agreement's
// policy would. The probe is a dry-run pod in a team namespace on its
// queue, asking for each of the agreement's GPU resources, with each of its
// priorities; any refusal but the policy's (a quota's) means the policy let
// it through.
func waitPolicyData(t *testing.T, objs []*obj) {
	t.Helper()
	var vap, team *obj
	for _, o := range objs {
		switch {
		case o.GetKind() == "ValidatingAdmissionPolicy":
			vap = o
		case o.GetKind() == "Namespace" && o.GetLabels()["tenancy.dev/team"] != "" && team == nil:
			team = o
		}
	}
	if vap == nil || team == nil {
		return
	}
	// The policy's data variables are CEL literals of quoted strings,
	// lists and maps: JSON.
	variable := func(name string, into any) {
		vars, _, _ := unstructured.NestedSlice(vap.Object, "spec", "variables")
		for _, v := range vars {
			m, _ := v.(map[string]any)
			if m["name"] != name {
				continue
			}
			if err := json.Unmarshal([]byte(fmt.Sprint(m["expression"])), into); err != nil {
				t.Fatalf("policy variable %s is no JSON literal: %v", name, err)
			}
			return
		}
		t.Fatalf("the policy has no variable %s", name)
	}
	list := func(name string) []string {
		var out []string
		variable(name, &out)
		return out
	}
	name := team.GetLabels()["tenancy.dev/team"]
	// Where each resource goes: the team's queue, or on KAI's node pools
	// its queue of the pool holding the resource, with the pool's label.
	type placement struct{ queue, pool string }
	where := map[string]placement{}
	for _, res := range list("gpus") {
		where[res] = placement{queue: name}
	}
	pools := list("nodePools") // the suite renders for KAI only
	var label string
	if len(pools) > 0 {
		var teamQueues, poolGPUs map[string][]string
		var queuePools map[string]string
		variable("nodePoolLabel", &label)
		variable("teamQueues", &teamQueues)
		variable("queuePools", &queuePools)
		variable("poolGPUs", &poolGPUs)
		where = map[string]placement{}
		for _, q := range teamQueues[name] {
			for _, res := range poolGPUs[queuePools[q]] {
				where[res] = placement{queue: q, pool: queuePools[q]}
			}
		}
	}
	w := work{ns: team.GetName()}
	priorities := append(list("priorities"), "")
	for _, res := range slices.Sorted(maps.Keys(where)) {
		w.queue, w.labels = where[res].queue, nil
		if pool := where[res].pool; pool != "" {
			w.labels = map[string]string{label: pool}
		}
		for _, prio := range priorities {
			w.res, w.priority = corev1.ResourceName(res), prio
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "policy-data", Namespace: w.ns, Labels: w.podLabels()}, Spec: w.podSpec()}
			waitFor(t, fmt.Sprintf("the agreement's data in force (%s, priority %q)", res, prio), func(ctx context.Context) (bool, string) {
				_, err := env.cp.Kube.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy"), fmt.Sprint(err)
			})
		}
	}
}

// prune deletes the tenancy-managed objects of kinds that want does not hold.
func prune(t *testing.T, want map[string]bool, kinds []schema.GroupVersionResource) {
	t.Helper()
	cluster().Prune(t, want, kinds)
}

// clearWorkloads deletes every workload of a built-in kind and every Pod of
// the work namespaces and waits until no pod is left, nor any shared GPU's
// reservation pod, so KAI's queues start empty and every GPU is free.
func clearWorkloads(t *testing.T) {
	t.Helper()
	cluster().ClearWorkloads(t)
}

// work is one kind of pod a check submits.
type work struct {
	ns, queue, priority string
	res                 corev1.ResourceName
	gpus                int64
	labels              map[string]string
}

func (w work) podSpec() corev1.PodSpec {
	res := w.res
	if res == "" {
		res = gpu
	}
	n := w.gpus
	if n == 0 {
		n = 1
	}
	limits := corev1.ResourceList{res: *resource.NewQuantity(n, resource.DecimalSI)}
	if n < 0 {
		limits = nil // CPU-only
	}
	return corev1.PodSpec{
		SchedulerName:                 controlplane.KAISchedulerName,
		PriorityClassName:             w.priority,
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{
			Name:  "work",
			Image: "registry.example/train:1",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   limits,
			},
		}},
	}
}

func (w work) podLabels() map[string]string {
	l := map[string]string{}
	if w.queue != "" {
		l[queueKey] = w.queue
	}
	for k, v := range w.labels {
		l[k] = v
	}
	return l
}

// pods creates n pods of w named prefix-0 … prefix-(n-1).
func pods(t *testing.T, w work, prefix string, n int) {
	t.Helper()
	ctx := ctxFor(t)
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: w.ns, Labels: w.podLabels()},
			Spec:       w.podSpec(),
		}
		if _, err := env.cp.Kube.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s/%s: %v", w.ns, p.Name, err)
		}
	}
}

// createPod creates one pod of w and returns the API server's error.
func createPod(t *testing.T, w work, name string) error {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: w.podLabels()},
		Spec:       w.podSpec(),
	}
	_, err := env.cp.Kube.CoreV1().Pods(w.ns).Create(ctxFor(t), p, metav1.CreateOptions{})
	return err
}

// job submits a Job of n parallel pods of w; annotations go on the Job.
func job(t *testing.T, w work, name string, n int32, annotations map[string]string) *batchv1.Job {
	t.Helper()
	spec := w.podSpec()
	spec.RestartPolicy = corev1.RestartPolicyNever
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: w.podLabels(), Annotations: annotations},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(n), Completions: ptr.To(n),
			BackoffLimit: ptr.To[int32](100),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: w.podLabels()}, Spec: spec},
		},
	}
	got, err := env.cp.Kube.BatchV1().Jobs(w.ns).Create(ctxFor(t), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create job %s/%s: %v", w.ns, name, err)
	}
	return got
}

// count is what a namespace's pods are doing.
type count struct{ bound, pending int }

func (c count) String() string { return fmt.Sprintf("%d bound, %d pending", c.bound, c.pending) }

// countPods counts the live pods of ns whose name starts with prefix (all
// when ""): bound to a Node, or not yet.
func countPods(ctx context.Context, ns, prefix string) (count, error) {
	list, err := env.cp.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return count{}, err
	}
	var c count
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil || !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		if p.Spec.NodeName != "" {
			c.bound++
		} else {
			c.pending++
		}
	}
	return c, nil
}

// bound is how many pods of a namespace whose names start with prefix a
// check expects bound.
type bound struct {
	ns, prefix string
	n          int
}

// waitBound waits until exactly want pods of ns (name prefix) are bound,
// then watches for settle that no more get bound.
func waitBound(t *testing.T, ns, prefix string, want int) {
	t.Helper()
	waitBoundAll(t, bound{ns, prefix, want})
}

// waitBoundAll waits until every count of want holds at once, then
// watches them together for settle that none gets more pods bound: a state
// a check reaches as a whole (each team's share, both sides of a reclaim)
// is settled once, not once per team, and each count is watched for at
// least settle after all of them held.
func waitBoundAll(t *testing.T, want ...bound) {
	t.Helper()
	reachedAll(t, want...)
	var names []string
	for _, w := range want {
		names = append(names, fmt.Sprintf("more than %d pods %s* bound in %s", w.n, w.prefix, w.ns))
	}
	never(t, strings.Join(names, ", or "), func(ctx context.Context) (bool, string) {
		n, saw, err := boundCounts(ctx, want)
		if err != nil {
			return false, err.Error()
		}
		for i, w := range want {
			if n[i] > w.n {
				return true, saw
			}
		}
		return false, saw
	})
}

// reached waits until exactly want pods of ns (name prefix) are bound,
// without waitBound's settle: for a state a check goes on from (work to
// reclaim from, a queue to fill), whose limit the check's own final
// waitBound, or a check of its own, settles.
func reached(t *testing.T, ns, prefix string, want int) {
	t.Helper()
	reachedAll(t, bound{ns, prefix, want})
}

func reachedAll(t *testing.T, want ...bound) {
	t.Helper()
	var names []string
	for _, w := range want {
		names = append(names, fmt.Sprintf("%d pods %s* bound in %s", w.n, w.prefix, w.ns))
	}
	waitFor(t, strings.Join(names, ", "), func(ctx context.Context) (bool, string) {
		n, saw, err := boundCounts(ctx, want)
		if err != nil {
			return false, err.Error()
		}
		for i, w := range want {
			if n[i] != w.n {
				return false, saw
			}
		}
		return true, saw
	})
}

// boundCounts counts the bound pods of each of want, and says what it saw
// of each.
func boundCounts(ctx context.Context, want []bound) (n []int, saw string, err error) {
	var seen []string
	for _, w := range want {
		c, err := countPods(ctx, w.ns, w.prefix)
		if err != nil {
			return nil, "", err
		}
		n = append(n, c.bound)
		seen = append(seen, fmt.Sprintf("%s %s*: %s", w.ns, w.prefix, c))
	}
	return n, strings.Join(seen, "; "), nil
}

// waits is how the checks wait (internal/await), failing with the pods and
// the KAI queues.
var waits = await.Waits{Timeout: eventually, Interval: poll, Settle: settle, State: clusterState}

// waitFor polls cond until it holds, failing with its last detail.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	waits.Until(t, ctxFor(t), what, cond)
}

// never watches for settle that cond does not happen.
func never(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	waits.Never(t, ctxFor(t), what, cond)
}

// clusterState summarizes pods per namespace and the KAI queues, for
// failure messages.
func clusterState(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("cluster state:")
	for _, ns := range workNamespaces {
		c, err := countPods(ctx, ns, "")
		if err == nil && c.bound+c.pending > 0 {
			fmt.Fprintf(&b, " %s: %s;", ns, c)
		}
	}
	list, err := env.cp.Dynamic.Resource(queueGVR).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, q := range list.Items {
			alloc, _, _ := unstructured.NestedFieldNoCopy(q.Object, "status", "allocated")
			fmt.Fprintf(&b, "\n  queue %s allocated %v", q.GetName(), alloc)
		}
	}
	return b.String()
}

// podGroupOf returns the PodGroup KAI's podgrouper made for a pod.
func podGroupOf(ctx context.Context, ns, pod string) (*obj, error) {
	return kaiwork.PodGroupOf(ctx, env.cp, ns, pod)
}

// waitPodGroup waits for a pod's PodGroup and returns it.
func waitPodGroup(t *testing.T, ns, pod string) *obj {
	t.Helper()
	var pg *obj
	waitFor(t, "the PodGroup of "+ns+"/"+pod, func(ctx context.Context) (bool, string) {
		var err error
		pg, err = podGroupOf(ctx, ns, pod)
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return pg
}

// queueAllocatedGPUs reads a Queue's status.allocated GPUs.
func queueAllocatedGPUs(ctx context.Context, name string) (float64, error) {
	q, err := env.cp.Dynamic.Resource(queueGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	v, found, _ := unstructured.NestedFieldNoCopy(q.Object, "status", "allocated", "nvidia.com/gpu")
	if !found {
		return 0, nil
	}
	qty, err := resource.ParseQuantity(fmt.Sprint(v))
	if err != nil {
		return 0, err
	}
	return qty.AsApproximateFloat64(), nil
}

// simNode is a simulated GPU Node.
type simNode struct {
	name   string
	labels map[string]string
	res    corev1.ResourceName
	count  int64
}

func (n simNode) kaiwork() kaiwork.Node {
	return kaiwork.Node{Name: n.name, Labels: n.labels, Res: n.res, Count: n.count}
}

// h100Nodes are the reference's 4 workers × 8 GPUs.
func h100Nodes() []simNode {
	var out []simNode
	for i := range 4 {
		out = append(out, simNode{name: fmt.Sprintf("h100-%d", i), res: gpu, count: 8,
			labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}})
	}
	return out
}

// useNodes makes nodes the cluster's Nodes: any others are deleted, and it
// waits until each is Ready and free of taints.
func useNodes(t *testing.T, nodes []simNode) {
	t.Helper()
	var kn []kaiwork.Node
	for _, n := range nodes {
		kn = append(kn, n.kaiwork())
	}
	cluster().UseNodes(t, kn)
}

// defaultQueue is the chart's default queue with a GPU limit (-1: the
// chart's default, unlimited).
var defaultQueue = kaiwork.DefaultQueue

type corePod = corev1.Pod

// deployment creates a Deployment of replicas pods of w, the queue label
// on the Deployment and its pod template.
func deployment(t *testing.T, w work, name string, replicas int32) {
	t.Helper()
	sel := map[string]string{"app": name}
	tmplLabels := w.podLabels()
	tmplLabels["app"] = name
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: w.podLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels}, Spec: w.podSpec()},
		},
	}
	if _, err := env.cp.Kube.AppsV1().Deployments(w.ns).Create(ctxFor(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment %s/%s: %v", w.ns, name, err)
	}
}
