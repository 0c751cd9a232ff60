package multikueue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// outsider is a namespace that is no team's: the renders do not make it,
// and it carries no team label.
const outsider = "outsider"

// Check: a Job in a namespace that is no team's gets nothing, on the
// manager and on each worker, even through a LocalQueue that a cluster
// admin points at training's ClusterQueue: Kueue leaves it pending on the
// namespace selector the render wrote, and the manager sends it to no
// worker. (The guardrails are bound to the teams' namespaces only; the
// ClusterQueues' selectors are what keeps other namespaces out.)
func TestFleetOutsiderNamespace(t *testing.T) {
	begin(t)
	ctx := ctxFor(t)
	for _, c := range running() {
		if _, err := c.cp.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: outsider}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: create namespace %s: %v", c.name, outsider, err)
		}
		lq := &unstructuredObj{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "LocalQueue",
			"metadata":   map[string]any{"name": "into-training", "namespace": outsider},
			"spec":       map[string]any{"clusterQueue": training},
		}}
		if _, err := c.cp.Dynamic.Resource(lqGVR).Namespace(outsider).Create(ctx, lq, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: create LocalQueue: %v", c.name, err)
		}
	}
	for _, c := range running() {
		j := submit(t, c, job{ns: outsider, name: "stray-" + c.name, pods: 1, gpus: 1, queue: "into-training"})
		var s wlState
		waitFor(t, c.name+": "+j.Name+" considered and left pending", func(ctx context.Context) (bool, string) {
			w, err := c.cp.Dynamic.Resource(wlGVR).Namespace(outsider).List(ctx, metav1.ListOptions{})
			if err != nil || len(w.Items) == 0 {
				return false, fmt.Sprint("no Workload yet ", err)
			}
			s = stateOf(ownedBy(w.Items, string(j.UID)))
			return s.exists && s.pending != "", s.String()
		})
		t.Logf("%s: %s pending: %s", c.name, j.Name, s.pending)
		if !strings.Contains(strings.ToLower(s.pending), "namespace") {
			t.Errorf("%s: %s pending for another reason than the namespace selector: %q", c.name, j.Name, s.pending)
		}
	}
	never(t, "a stray Job reserved anywhere, or copied to a worker", func(ctx context.Context) (bool, string) {
		for _, c := range running() {
			w, err := c.cp.Dynamic.Resource(wlGVR).Namespace(outsider).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			if !c.isManager() && len(w.Items) > 1 {
				return true, fmt.Sprintf("%s holds %d Workloads in %s: a copy of the manager's", c.name, len(w.Items), outsider)
			}
			for i := range w.Items {
				if s := stateOf(&w.Items[i]); s.reserved {
					return true, c.name + ": " + s.String()
				}
			}
		}
		return false, ""
	})
	waitUsage(t, fleet.manager, training, usage{})
}

// ownedBy returns the object of items owned by uid, or nil.
func ownedBy(items []unstructured.Unstructured, uid string) *unstructuredObj {
	for i := range items {
		for _, ref := range items[i].GetOwnerReferences() {
			if string(ref.UID) == uid {
				return &items[i]
			}
		}
	}
	return nil
}

// Check: the guardrails hold on every cluster of the fleet. Training's
// namespace admin (a ServiceAccount bound to the built-in admin role there,
// as clusters give teams rights) cannot bypass the queue on the manager or
// on a worker: a GPU Job without the queue label, a GPU Job in research's
// queue, a bare GPU Pod and one naming a Job owner it forged are refused
// on each. A GPU Job in training's queue is let through on the manager
// only: on a worker it would be admitted against that worker's share
// alone, past the manager's fleet-wide quotas, so the worker's guardrails
// let only MultiKueue (the dispatcher, multikueue-sa) create GPU work
// there and tell the admin to submit on the manager. MultiKueue's own
// requests pass the same guardrails (every other check runs its Jobs
// through them; here, dry runs with the worker's kubeconfig): each
// worker's guardrails hold that worker's share, so training's 16-GPU gang
// is let through in east and refused in west, where training can use at
// most the 8 it may borrow.
func TestFleetGuardrails(t *testing.T) {
	begin(t)
	own := map[string]string{queueKey: training}
	other := map[string]string{queueKey: research}
	for _, c := range running() {
		t.Run(c.name, func(t *testing.T) {
			u, err := probe.NewTeamAdmin(ctxFor(t), c.cp.Kube, c.cp.Config, training, "alice",
				authorizationv1.ResourceAttributes{Group: "batch", Resource: "jobs"})
			if err != nil {
				t.Fatal(err)
			}
			gangJob := workload.JobOf("", "gang", own, workload.GPUPodSpec(gpu, 4))
			gangJob.Spec.Parallelism, gangJob.Spec.Completions = ptr.To(int32(4)), ptr.To(int32(4))
			ownJob := workload.JobOf("", "probe", own, workload.GPUPodSpec(gpu, 1))
			// On a worker, the API server answers every GPU request of
			// the admin with the worker's rule (the first refusal is the
			// one it reports).
			refused := func(onManager ...string) []string {
				if c.isManager() {
					return onManager
				}
				return []string{"on cluster " + c.name + ", a worker of the fleet", "submit it on " + managerPart + " to LocalQueue training"}
			}
			attempts := []probe.Attempt{
				u.Probe(t, "a GPU Job without a queue", workload.Jobs, workload.JobOf("", "probe", nil, workload.GPUPodSpec(gpu, 1)),
					refused("requests GPUs", "add the label "+queueKey+": training")...),
				u.Probe(t, "a GPU Job in research's queue", workload.Jobs, workload.JobOf("", "probe", other, workload.GPUPodSpec(gpu, 1)),
					refused("queue research is not this team's")...),
				u.Probe(t, "a bare GPU Pod without a queue", workload.Pods, workload.PodOf("", "probe", nil, workload.GPUPodSpec(gpu, 1)),
					refused("this Pod requests GPUs")...),
				u.Probe(t, "a GPU Pod with a forged Job owner", workload.Pods, workload.WithOwner(workload.PodOf("", "probe", nil, workload.GPUPodSpec(gpu, 1)), "Job"),
					refused("names a controller owner", "is not a trusted controller")...),
				// The bypass: the team's own queue, on a worker.
				u.Probe(t, "a GPU Job in training's queue", workload.Jobs, ownJob, refused()...),
				u.Probe(t, "training's 16-GPU gang", workload.Jobs, gangJob, refused()...),
			}
			switch c.name {
			case east:
				attempts = append(attempts,
					u.Probe(t, "a bare GPU Pod in training's queue", workload.Pods, workload.PodOf("", "probe", own, workload.GPUPodSpec(gpu, 1)), refused()...),
					dispatch(t, c, "a GPU Job in training's queue", ownJob),
					dispatch(t, c, "training's 16-GPU gang", gangJob))
			case west:
				attempts = append(attempts,
					dispatch(t, c, "a GPU Job in training's queue", ownJob),
					dispatch(t, c, "training's 16-GPU gang", gangJob, "needs 16 nvidia.com/gpu at once", "at most 8"))
			}
			probe.Try(t, ctxFor(t), attempts)
		})
	}
}

// dispatch is a server-side dry run of MultiKueue creating j's copy in
// training's namespace of worker c: with the worker's kubeconfig, the
// manager's Kueue's identity there.
func dispatch(t *testing.T, c *cluster, what string, j *batchv1.Job, want ...string) probe.Attempt {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(c.kubeconfig)
	if err != nil {
		t.Fatalf("%s: the worker's kubeconfig: %v", c.name, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	copied := j.DeepCopy()
	copied.Namespace = training
	return probe.Attempt{What: what + ", by MultiKueue (" + multiKueueSA + ")", Want: want, Create: func(ctx context.Context) error {
		_, err := kube.BatchV1().Jobs(training).Create(ctx, copied, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}}
}
