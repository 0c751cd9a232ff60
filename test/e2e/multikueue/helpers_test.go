package multikueue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
)

// Deadlines for polling, and the names the checks' Jobs use. Kueue admits
// within a second here, and MultiKueue adds a round trip to a worker and
// back; the polls are tight because most of every check is waiting for the
// controllers. settle is how long a "nothing happens" check keeps watching
// after the controllers have visibly decided.
const (
	poll       = 100 * time.Millisecond
	eventually = 45 * time.Second
	settle     = 3 * time.Second

	gpu      = corev1.ResourceName("nvidia.com/gpu")
	queueKey = "kueue.x-k8s.io/queue-name"
	prioKey  = "kueue.x-k8s.io/priority-class"
)

var deleteInBkg = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waits is how the checks wait (internal/await), failing with the state of
// every running cluster.
var waits = await.Waits{Timeout: eventually, Interval: poll, Settle: settle, State: fleetState}

// waitFor polls cond until it holds, failing the check with cond's last
// explanation and the fleet's state when the deadline passes.
func waitFor(t *testing.T, what string, cond await.Cond) {
	t.Helper()
	waits.Until(t, ctxFor(t), what, cond)
}

// never watches cond for the settle period and fails the moment it holds.
func never(t *testing.T, what string, cond await.Cond) {
	t.Helper()
	waits.Never(t, ctxFor(t), what, cond)
}

// job is a Job a check submits: pods pods of gpus GPUs each, with cpu and
// memory requests alongside, suspended for Kueue to admit.
type job struct {
	ns, name string
	pods     int32
	gpus     int64
	// queue is the LocalQueue; empty means the one the render puts in ns.
	queue string
	// priority is a WorkloadPriorityClass of the agreement, optional.
	priority string
}

func (j job) object(queue string) *batchv1.Job {
	req := corev1.ResourceList{
		gpu:                   *resource.NewQuantity(j.gpus, resource.DecimalSI),
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
	}
	labels := map[string]string{queueKey: queue}
	if j.priority != "" {
		labels[prioKey] = j.priority
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend:     ptr.To(true),
			Parallelism: ptr.To(j.pods),
			Completions: ptr.To(j.pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:      "work",
					Image:     "registry.invalid/tenancy-e2e:never-pulled",
					Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{gpu: req[gpu]}},
				}},
			}},
		},
	}
}

// submit creates the Job in cluster c and returns it as the API server
// answered (with its UID and what the webhooks set).
func submit(t *testing.T, c *cluster, j job) *batchv1.Job {
	t.Helper()
	queue := j.queue
	if queue == "" {
		queue = localQueueFor(t, c, j.ns)
	}
	got, err := c.cp.Kube.BatchV1().Jobs(j.ns).Create(ctxFor(t), j.object(queue), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s: create Job %s/%s: %v", c.name, j.ns, j.name, err)
	}
	return got
}

// submitAll submits n Jobs name-1 .. name-n of the same shape on the
// manager.
func submitAll(t *testing.T, j job, n int) []*batchv1.Job {
	t.Helper()
	var out []*batchv1.Job
	for i := 1; i <= n; i++ {
		ji := j
		ji.name = fmt.Sprintf("%s-%d", j.name, i)
		out = append(out, submit(t, fleet.manager, ji))
	}
	return out
}

// localQueueFor returns the name of the LocalQueue c's render puts in ns.
func localQueueFor(t *testing.T, c *cluster, ns string) string {
	t.Helper()
	for _, o := range byKind(c.objs, "LocalQueue") {
		if o.GetNamespace() == ns {
			return o.GetName()
		}
	}
	t.Fatalf("the render of %s has no LocalQueue in namespace %s", c.name, ns)
	return ""
}

// wlState is what the checks read from a Workload.
type wlState struct {
	name                                string
	exists, reserved, admitted, evicted bool
	finished                            bool
	clusterQueue                        string
	// cluster is status.clusterName: on the manager, the worker the
	// Workload was dispatched to.
	cluster string
	// check is the state of its admission check (MultiKueue's, on the
	// manager), with its message.
	check, checkMessage string
	// checkSince is when its admission check last changed state (to
	// Ready, for a dispatched Workload): MultiKueue keeps a Workload
	// whose worker is lost admitted until workerLostTimeout after it.
	checkSince time.Time
	// pending is the QuotaReserved=False message: Kueue has considered
	// the Workload and says why it waits.
	pending string
	// preempted is the reason of the Preempted=True condition.
	preempted string
	// gpus is what its admission reserves, over every pod set.
	gpus int64
}

func (s wlState) String() string {
	if !s.exists {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reserved=%v admitted=%v", s.reserved, s.admitted)
	if s.clusterQueue != "" {
		fmt.Fprintf(&b, " cq=%s", s.clusterQueue)
	}
	if s.cluster != "" {
		fmt.Fprintf(&b, " in=%s", s.cluster)
	}
	if s.check != "" {
		fmt.Fprintf(&b, " check=%s (%s)", s.check, s.checkMessage)
	}
	if s.evicted {
		b.WriteString(" evicted")
	}
	if s.finished {
		b.WriteString(" finished")
	}
	if s.preempted != "" {
		fmt.Fprintf(&b, " preempted=%s", s.preempted)
	}
	if s.pending != "" {
		fmt.Fprintf(&b, " pending=%q", s.pending)
	}
	return b.String()
}

func stateOf(w *unstructuredObj) wlState {
	if w == nil {
		return wlState{}
	}
	s := wlState{name: w.GetName(), exists: true}
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		on := m["status"] == "True"
		switch m["type"] {
		case "QuotaReserved":
			s.reserved = on
			if !on {
				s.pending, _ = m["message"].(string)
			}
		case "Admitted":
			s.admitted = on
		case "Evicted":
			s.evicted = on
		case "Finished":
			s.finished = on
		case "Preempted":
			if on {
				s.preempted, _ = m["reason"].(string)
			}
		}
	}
	s.clusterQueue, _, _ = unstructured.NestedString(w.Object, "status", "admission", "clusterQueue")
	s.cluster, _, _ = unstructured.NestedString(w.Object, "status", "clusterName")
	checks, _, _ := unstructured.NestedSlice(w.Object, "status", "admissionChecks")
	for _, c := range checks {
		m, _ := c.(map[string]any)
		s.check, _ = m["state"].(string)
		s.checkMessage, _ = m["message"].(string)
		if ts, ok := m["lastTransitionTime"].(string); ok {
			s.checkSince, _ = time.Parse(time.RFC3339, ts)
		}
	}
	if s.reserved {
		psas, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
		for _, p := range psas {
			m, _ := p.(map[string]any)
			usage, _ := m["resourceUsage"].(map[string]any)
			s.gpus += quantity(usage[string(gpu)])
		}
	}
	return s
}

// workloadOf returns the manager's Workload of Job j, or nil.
func workloadOf(ctx context.Context, j *batchv1.Job) (*unstructuredObj, error) {
	list, err := fleet.manager.cp.Dynamic.Resource(wlGVR).Namespace(j.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return ownedBy(list.Items, string(j.UID)), nil
}

// state reads the manager's Workload of j now.
func state(ctx context.Context, j *batchv1.Job) (wlState, error) {
	w, err := workloadOf(ctx, j)
	return stateOf(w), err
}

// remoteState reads the Workload named name in worker w: MultiKueue
// creates it there under the manager's Workload's name.
func remoteState(ctx context.Context, w *cluster, ns, name string) (wlState, error) {
	o, err := w.cp.Dynamic.Resource(wlGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return wlState{}, nil
	}
	return stateOf(o), err
}

// waitDispatched waits until j's Workload is admitted on the manager and
// MultiKueue names the worker that admitted it, and returns its state.
func waitDispatched(t *testing.T, j *batchv1.Job) wlState {
	t.Helper()
	var s wlState
	waitFor(t, j.Namespace+"/"+j.Name+" admitted on the manager and dispatched", func(ctx context.Context) (bool, string) {
		var err error
		s, err = state(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		return s.admitted && s.cluster != "", s.String()
	})
	return s
}

// waitAllDispatched waits for each of jobs (see waitDispatched) and
// returns their states in order.
func waitAllDispatched(t *testing.T, jobs []*batchv1.Job) []wlState {
	t.Helper()
	out := make([]wlState, len(jobs))
	for i, j := range jobs {
		out[i] = waitDispatched(t, j)
	}
	return out
}

// usage is a ClusterQueue's reserved GPUs.
type usage struct{ total, borrowed int64 }

// usageIn reads the GPUs of status.flavorsReservation, over every flavor.
func usageIn(cq *unstructuredObj) usage {
	var u usage
	fls, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
	for _, f := range fls {
		fm, _ := f.(map[string]any)
		rs, _ := fm["resources"].([]any)
		for _, r := range rs {
			rm, _ := r.(map[string]any)
			if rm["name"] == string(gpu) {
				u.total += quantity(rm["total"])
				u.borrowed += quantity(rm["borrowed"])
			}
		}
	}
	return u
}

func quantity(v any) int64 {
	s, _ := v.(string)
	if s == "" {
		return 0
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return -1
	}
	return q.Value()
}

// cqUsage reads a ClusterQueue's GPU usage in cluster c.
func cqUsage(ctx context.Context, c *cluster, cq string) (usage, error) {
	o, err := c.cp.Dynamic.Resource(cqGVR).Get(ctx, cq, metav1.GetOptions{})
	if err != nil {
		return usage{}, err
	}
	return usageIn(o), nil
}

// waitUsage waits until ClusterQueue cq in c reports exactly want.
func waitUsage(t *testing.T, c *cluster, cq string, want usage) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s: ClusterQueue %s using %d GPUs, %d borrowed", c.name, cq, want.total, want.borrowed), func(ctx context.Context) (bool, string) {
		got, err := cqUsage(ctx, c, cq)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("got %d GPUs, %d borrowed", got.total, got.borrowed)
	})
}

// clearFleet deletes every Job and Workload on the manager, waits until
// MultiKueue has removed their copies from the workers (deleting what is
// left there too), and waits until no Workload, Job or Job pod is left
// anywhere, so each check starts with the fleet's quota free.
func clearFleet(t *testing.T) {
	t.Helper()
	ctx := ctxFor(t)
	for _, c := range running() {
		if err := deleteJobsAndWorkloads(ctx, c); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		waitFor(t, c.name+": no Workloads, Jobs or Job pods left", func(ctx context.Context) (bool, string) {
			left, err := leftovers(ctx, c)
			if err != nil {
				return false, err.Error()
			}
			return len(left) == 0, fmt.Sprintf("left: %v", left)
		})
	}
}

// deleteJobsAndWorkloads deletes every Job (its pods with it) and every
// Workload in c.
func deleteJobsAndWorkloads(ctx context.Context, c *cluster) error {
	var errs []error
	jobs, err := c.cp.Kube.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, j := range jobs.Items {
		if err := c.cp.Kube.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, deleteInBkg); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	wls, err := c.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, w := range wls.Items {
		if err := c.cp.Dynamic.Resource(wlGVR).Namespace(w.GetNamespace()).Delete(ctx, w.GetName(), deleteInBkg); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// leftovers names the Workloads, Jobs and Job pods in c.
func leftovers(ctx context.Context, c *cluster) ([]string, error) {
	var left []string
	wls, err := c.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, w := range wls.Items {
		left = append(left, "Workload "+w.GetNamespace()+"/"+w.GetName())
	}
	jobs, err := c.cp.Kube.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, j := range jobs.Items {
		left = append(left, "Job "+j.Namespace+"/"+j.Name)
	}
	pods, err := c.cp.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		left = append(left, "Pod "+p.Namespace+"/"+p.Name)
	}
	return left, nil
}
