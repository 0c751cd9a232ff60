package multikueue

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// The fleet of examples/fleet/tenancy.toml, as the checks use it: the
// manager hub and two workers of 16 H100 each (32 in the fleet). Training
// is guaranteed 16, all in east, lends 8 and borrows 8; research is
// guaranteed 8 in west and lends them all; inference is guaranteed 8 in
// west and never lends. So training's 16-GPU gang fits east only, and what
// it borrows runs in west on research's idle GPUs. TestFleetPartsAgree
// checks the renders say so.
const (
	training  = "training"
	research  = "research"
	inference = "inference"
	east      = "east"
	west      = "west"
)

// wantQuota is each part's GPU quota per team, as examples/fleet renders it.
var wantQuota = map[string]map[string]quota{
	managerPart: {training: {16, 8, 8}, research: {8, 8, 8}, inference: {8, 0, 0}},
	// Training's guarantee and its lendable 8 sit in east, where nothing
	// is left to borrow; research may borrow training's 8 there.
	east: {training: {16, 8, 0}, research: {0, 0, 8}, inference: {0, 0, 0}},
	// Training may borrow research's 8 in west; inference's 8 are never lent.
	west: {training: {0, 0, 8}, research: {8, 8, 8}, inference: {8, 0, 0}},
}

// quota is a ClusterQueue's GPUs for one flavor as its render says.
type quota struct{ nominal, lending, borrowing int64 }

// quotaOf reads the GPU quota of ClusterQueue name in objs (one flavor).
func quotaOf(t *testing.T, objs []*unstructuredObj, name string) quota {
	t.Helper()
	for _, cq := range byKind(objs, "ClusterQueue") {
		if cq.GetName() != name {
			continue
		}
		var q quota
		groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
		for _, g := range groups {
			fls, _ := g.(map[string]any)["flavors"].([]any)
			for _, f := range fls {
				rs, _ := f.(map[string]any)["resources"].([]any)
				for _, r := range rs {
					rm, _ := r.(map[string]any)
					if rm["name"] != string(gpu) {
						continue
					}
					q.nominal += quantity(rm["nominalQuota"])
					q.lending += quantityOr(rm["lendingLimit"], quantity(rm["nominalQuota"]))
					q.borrowing += quantityOr(rm["borrowingLimit"], -1)
				}
			}
		}
		return q
	}
	t.Fatalf("render has no ClusterQueue %s", name)
	return quota{}
}

func quantityOr(v any, def int64) int64 {
	if v == nil {
		return def
	}
	return quantity(v)
}

// admissionChecksOf lists the admission checks ClusterQueue cq names.
func admissionChecksOf(cq *unstructuredObj) []string {
	var out []string
	rules, _, _ := unstructured.NestedSlice(cq.Object, "spec", "admissionChecksStrategy", "admissionChecks")
	for _, r := range rules {
		if n, ok := r.(map[string]any)["name"].(string); ok {
			out = append(out, n)
		}
	}
	plain, _, _ := unstructured.NestedStringSlice(cq.Object, "spec", "admissionChecks")
	return append(out, plain...)
}

// Check: the parts render one fleet, as MultiKueue needs it. The manager
// holds the fleet-wide quota with MultiKueue's AdmissionCheck on every
// team's ClusterQueue and a MultiKueueConfig naming both workers; each
// worker has the same Namespaces and LocalQueues (names identical, as
// MultiKueue copies Jobs into the namespace and queue they name on the
// manager), no admission check, and per team the workers' guarantees add
// up to the manager's. Kueue, on every cluster, accepted every object and
// reports every queue active (set-up waits for it); here the numbers the
// other checks rely on are checked too.
func TestFleetPartsAgree(t *testing.T) {
	begin(t)
	m := fleet.manager
	acs := byKind(m.objs, "AdmissionCheck")
	if len(acs) != 1 {
		t.Fatalf("the manager's render has %d AdmissionChecks, want 1", len(acs))
	}
	if got, _, _ := unstructured.NestedString(acs[0].Object, "spec", "controllerName"); got != multiKueueController {
		t.Errorf("AdmissionCheck %s: controllerName %q, want %q", acs[0].GetName(), got, multiKueueController)
	}
	var cfgClusters []string
	for _, cfg := range byKind(m.objs, "MultiKueueConfig") {
		cs, _, _ := unstructured.NestedStringSlice(cfg.Object, "spec", "clusters")
		cfgClusters = append(cfgClusters, cs...)
	}
	sort.Strings(cfgClusters)
	if !slices.Equal(cfgClusters, workerParts) {
		t.Errorf("MultiKueueConfig clusters %v, want the workers %v", cfgClusters, workerParts)
	}
	for _, cq := range byKind(m.objs, "ClusterQueue") {
		if got := admissionChecksOf(cq); !slices.Equal(got, []string{acs[0].GetName()}) {
			t.Errorf("manager: ClusterQueue %s has admission checks %v, want [%s]", cq.GetName(), got, acs[0].GetName())
		}
	}
	queues := func(c *cluster) []string {
		var out []string
		for _, o := range append(byKind(c.objs, "LocalQueue"), byKind(c.objs, "Namespace")...) {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
		sort.Strings(out)
		return out
	}
	for _, w := range fleet.workers {
		if n := len(byKind(w.objs, "AdmissionCheck")) + len(byKind(w.objs, "MultiKueueConfig")) + len(byKind(w.objs, "MultiKueueCluster")); n != 0 {
			t.Errorf("%s: the worker's render has %d MultiKueue objects, want none", w.name, n)
		}
		for _, cq := range byKind(w.objs, "ClusterQueue") {
			if got := admissionChecksOf(cq); len(got) != 0 {
				t.Errorf("%s: ClusterQueue %s has admission checks %v, want none", w.name, cq.GetName(), got)
			}
		}
		if got, want := queues(w), queues(m); !slices.Equal(got, want) {
			t.Errorf("%s: namespaces and LocalQueues %v, want the manager's %v", w.name, got, want)
		}
	}
	for _, c := range all() {
		for team, want := range wantQuota[c.name] {
			if got := quotaOf(t, c.objs, team); got != want {
				t.Errorf("%s: ClusterQueue %s GPUs %+v, want %+v (the checks rely on examples/fleet's numbers)", c.name, team, got, want)
			}
		}
	}
	for team, want := range wantQuota[managerPart] {
		var sum int64
		for _, w := range fleet.workers {
			sum += quotaOf(t, w.objs, team).nominal
		}
		if sum != want.nominal {
			t.Errorf("ClusterQueue %s: the workers' guarantees add up to %d, the manager's is %d", team, sum, want.nominal)
		}
	}
}

// Check: a Job submitted on the manager to training's LocalQueue gets
// spec.managedBy kueue.x-k8s.io/multikueue from Kueue's webhook, is
// admitted on the manager against the fleet's quota, and runs in a worker:
// MultiKueue makes the Job there (labelled with the manager's Workload) and
// the worker's Kueue admits it in that worker's training ClusterQueue, the
// worker's job controller makes its pods, and the other worker keeps no
// copy. The manager's job controller leaves the Job alone (no pod on the
// manager); the worker's Job status comes back to it, running and then, when
// its pods succeed in the worker, complete, and the manager's Workload
// finishes.
func TestFleetDispatch(t *testing.T) {
	begin(t)
	m := fleet.manager
	j := submit(t, m, job{ns: training, name: "dispatch", pods: 2, gpus: 2})
	if got := ptr.Deref(j.Spec.ManagedBy, ""); got != multiKueueController {
		t.Fatalf("the manager's Job has spec.managedBy %q, want %q", got, multiKueueController)
	}
	s := waitDispatched(t, j)
	t.Logf("manager: Workload %s %s", s.name, s)
	if s.clusterQueue != training || s.gpus != 4 {
		t.Errorf("manager: Workload admitted in %q for %d GPUs, want training's ClusterQueue for 4", s.clusterQueue, s.gpus)
	}
	w, other := worker(s.cluster), otherWorker(s.cluster)
	if w == nil {
		t.Fatalf("dispatched to %q, which is no worker of the fleet", s.cluster)
	}

	waitFor(t, w.name+": the Job's copy, admitted", func(ctx context.Context) (bool, string) {
		rj, err := w.cp.Kube.BatchV1().Jobs(training).Get(ctx, j.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if rj.Labels[prebuiltWorkload] != s.name || rj.Labels[originLabel] == "" {
			return false, fmt.Sprintf("labels %v", rj.Labels)
		}
		if rj.Spec.ManagedBy != nil {
			return false, "spec.managedBy " + *rj.Spec.ManagedBy
		}
		rs, err := remoteState(ctx, w, training, s.name)
		if err != nil {
			return false, err.Error()
		}
		return rs.admitted && rs.clusterQueue == training && rs.gpus == 4, "Workload " + rs.String()
	})
	waitFor(t, other.name+": no copy", func(ctx context.Context) (bool, string) {
		left, err := copiesIn(ctx, other, training, j.Name, s.name)
		return err == nil && len(left) == 0, fmt.Sprintf("%v %v", left, err)
	})
	pods := waitPods(t, w, training, j.Name, 2)

	waitFor(t, "manager: the worker's Job status (2 active)", func(ctx context.Context) (bool, string) {
		mj, err := m.cp.Kube.BatchV1().Jobs(training).Get(ctx, j.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return mj.Status.Active == 2, fmt.Sprintf("active %d, ready %v", mj.Status.Active, ptr.Deref(mj.Status.Ready, 0))
	})
	if n := podsOf(t, m, training, j.Name); n != 0 {
		t.Errorf("manager: %d pods of the Job; its job controller must leave a Job managed by MultiKueue alone", n)
	}

	// No kubelet runs the pods: the check stands in for one and reports
	// them succeeded.
	ctx := ctxFor(t)
	for i := range pods {
		p := &pods[i]
		p.Status.Phase = corev1.PodSucceeded
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"})
		if _, err := w.cp.Kube.CoreV1().Pods(training).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: mark pod %s succeeded: %v", w.name, p.Name, err)
		}
	}
	waitFor(t, "manager: the Job complete and its Workload finished", func(ctx context.Context) (bool, string) {
		mj, err := m.cp.Kube.BatchV1().Jobs(training).Get(ctx, j.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		st, err := state(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		return jobComplete(mj) && mj.Status.Succeeded == 2 && st.finished,
			fmt.Sprintf("Job succeeded %d, complete %v; Workload %s", mj.Status.Succeeded, jobComplete(mj), st)
	})
	waitUsage(t, m, training, usage{})
}

// fillTraining submits training's 16-GPU gang (critical) and n 4-GPU Jobs
// (standard), and checks where MultiKueue runs them: the gang in east,
// the only worker with room for it (west can give training 8), the others
// in west, as east is then full. It returns the gang and the others.
func fillTraining(t *testing.T, n int) (*batchv1.Job, []*batchv1.Job) {
	t.Helper()
	gang := submit(t, fleet.manager, job{ns: training, name: "gang", pods: 4, gpus: 4, priority: "critical"})
	if s := waitDispatched(t, gang); s.cluster != east {
		t.Fatalf("training's 16-GPU gang runs in %s, want east, the only worker with room for it: %s", s.cluster, s)
	}
	more := submitAll(t, job{ns: training, name: "more", pods: 1, gpus: 4, priority: "standard"}, n)
	for _, j := range more {
		if s := waitDispatched(t, j); s.cluster != west {
			t.Errorf("%s runs in %s, want west: east is full with the gang: %s", j.Name, s.cluster, s)
		}
	}
	return gang, more
}

// Check: MultiKueue runs a Job in the worker that has room. Training's
// 16-GPU gang runs in east, the only worker where training can hold 16;
// two more 4-GPU Jobs, admitted on the manager as borrowing (24 of
// training's 16 + 8), run in west on research's idle GPUs, as east is
// full; east keeps no copy of them.
func TestFleetWorkerWithRoom(t *testing.T) {
	begin(t)
	_, more := fillTraining(t, 2)
	w := worker(east)
	for _, j := range more {
		waitFor(t, "east: no copy of "+j.Name, func(ctx context.Context) (bool, string) {
			s, err := state(ctx, j)
			if err != nil {
				return false, err.Error()
			}
			left, err := copiesIn(ctx, w, training, j.Name, s.name)
			return err == nil && len(left) == 0, fmt.Sprintf("%v %v", left, err)
		})
	}
	waitUsage(t, fleet.manager, training, usage{total: 24, borrowed: 8})
	waitUsage(t, w, training, usage{total: 16})
	waitUsage(t, worker(west), training, usage{total: 8, borrowed: 8})
}

// Check: training fills its guarantee (the gang, in east) and borrows
// research's idle 8 (two 4-GPU Jobs, in west); research then submits its
// guarantee and reclaims: the manager preempts training's two borrowing
// Jobs, MultiKueue removes their copies from west, and research's Jobs run
// there; the gang is not touched. At the end every cluster agrees:
// training 16 and research 8 on the manager and in the workers, and no
// worker holds a copy of a Job the manager has not admitted.
func TestFleetReclaim(t *testing.T) {
	begin(t)
	m := fleet.manager
	gang, more := fillTraining(t, 2)
	waitUsage(t, m, training, usage{total: 24, borrowed: 8})

	rjobs := submitAll(t, job{ns: research, name: "reclaim", pods: 1, gpus: 4}, 2)
	for _, s := range waitAllDispatched(t, rjobs) {
		if s.cluster != west {
			t.Errorf("research's %s runs in %s, want west, where its guarantee is: %s", s.name, s.cluster, s)
		}
	}
	for _, j := range more {
		waitFor(t, "manager: "+j.Name+" preempted to reclaim research's GPUs, and pending", func(ctx context.Context) (bool, string) {
			s, err := state(ctx, j)
			if err != nil {
				return false, err.Error()
			}
			return !s.reserved && s.preempted == "InCohortReclamation", s.String()
		})
	}
	if s, err := state(ctxFor(t), gang); err != nil || !s.admitted || s.cluster != east || s.evicted {
		t.Errorf("training's gang no longer runs in east as it did: %s %v", s, err)
	}
	waitUsage(t, m, training, usage{total: 16})
	waitUsage(t, m, research, usage{total: 8})
	waitNoStrayCopies(t, append([]*batchv1.Job{gang}, append(more, rjobs...)...))
	waitUsage(t, worker(east), training, usage{total: 16})
	waitUsage(t, worker(west), training, usage{})
	waitUsage(t, worker(west), research, usage{total: 8})
}

// Check: inference's GPUs are never lent, fleet-wide. With research and
// inference idle, training runs its gang in east and borrows research's 8
// in west (two 4-GPU Jobs); a third 4-GPU Job waits on the manager, though
// inference's 8 in west are idle, and is sent to no worker. Inference then
// submits its 8: both Jobs run at once, in west, and none of training's is
// preempted anywhere.
func TestFleetNeverLent(t *testing.T) {
	begin(t)
	m := fleet.manager
	gang, more := fillTraining(t, 2)
	extra := submit(t, m, job{ns: training, name: "extra", pods: 1, gpus: 4, priority: "standard"})
	var ws wlState
	waitFor(t, "manager: "+extra.Name+" considered and left pending", func(ctx context.Context) (bool, string) {
		var err error
		ws, err = state(ctx, extra)
		if err != nil {
			return false, err.Error()
		}
		return ws.exists && ws.pending != "" && !ws.reserved, ws.String()
	})
	t.Logf("manager: %s waits: %s", extra.Name, ws.pending)
	never(t, "a copy of the pending "+extra.Name+" in a worker, or its admission", func(ctx context.Context) (bool, string) {
		if s, err := state(ctx, extra); err == nil && s.reserved {
			return true, "manager: " + s.String()
		}
		for _, w := range fleet.workers {
			left, err := copiesIn(ctx, w, training, extra.Name, ws.name)
			if err == nil && len(left) > 0 {
				return true, fmt.Sprintf("%s: %v", w.name, left)
			}
		}
		return false, ""
	})
	waitUsage(t, m, training, usage{total: 24, borrowed: 8})
	waitUsage(t, worker(west), inference, usage{})

	ijobs := submitAll(t, job{ns: inference, name: "serve", pods: 1, gpus: 4}, 2)
	for _, s := range waitAllDispatched(t, ijobs) {
		if s.cluster != west {
			t.Errorf("inference's %s runs in %s, want west, where its GPUs are: %s", s.name, s.cluster, s)
		}
	}
	ctx := ctxFor(t)
	for _, j := range append([]*batchv1.Job{gang}, more...) {
		s, err := state(ctx, j)
		if err != nil {
			t.Fatal(err)
		}
		if !s.admitted || s.preempted != "" || s.evicted {
			t.Errorf("manager: training's %s no longer running as it was: %s", j.Name, s)
		}
	}
	waitUsage(t, m, inference, usage{total: 8})
	waitUsage(t, worker(west), inference, usage{total: 8})
	waitUsage(t, worker(west), training, usage{total: 8, borrowed: 8})
	waitUsage(t, worker(east), training, usage{total: 16})
	waitNoStrayCopies(t, append(append([]*batchv1.Job{gang, extra}, more...), ijobs...))
}

// otherWorker returns the worker that is not name.
func otherWorker(name string) *cluster {
	for _, w := range fleet.workers {
		if w.name != name {
			return w
		}
	}
	return nil
}

// copiesIn names what MultiKueue made in worker w for a Job: the Job
// named jobName and the Workload named wlName in ns.
func copiesIn(ctx context.Context, w *cluster, ns, jobName, wlName string) ([]string, error) {
	var left []string
	if _, err := w.cp.Kube.BatchV1().Jobs(ns).Get(ctx, jobName, metav1.GetOptions{}); err == nil {
		left = append(left, "Job "+jobName)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if s, err := remoteState(ctx, w, ns, wlName); err != nil {
		return nil, err
	} else if s.exists {
		left = append(left, "Workload "+wlName+" "+s.String())
	}
	return left, nil
}

// waitNoStrayCopies waits until no running worker holds a copy of a Job
// of jobs that the manager has not admitted, and each admitted one has
// its copy admitted in exactly the worker the manager names.
func waitNoStrayCopies(t *testing.T, jobs []*batchv1.Job) {
	t.Helper()
	waitFor(t, "the workers hold copies of exactly the admitted Jobs", func(ctx context.Context) (bool, string) {
		var wrong []string
		for _, j := range jobs {
			s, err := state(ctx, j)
			if err != nil {
				return false, err.Error()
			}
			for _, w := range running() {
				if w.isManager() {
					continue
				}
				left, err := copiesIn(ctx, w, j.Namespace, j.Name, s.name)
				if err != nil {
					return false, err.Error()
				}
				in := s.admitted && s.cluster == w.name
				if in && len(left) != 2 || !in && len(left) > 0 {
					wrong = append(wrong, fmt.Sprintf("%s (manager: %s) in %s: %v", j.Name, s, w.name, left))
				}
			}
		}
		return len(wrong) == 0, strings.Join(wrong, "; ")
	})
}

// waitPods waits until c holds n pods of Job name in ns and returns them.
func waitPods(t *testing.T, c *cluster, ns, name string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitFor(t, fmt.Sprintf("%s: %d pods of Job %s", c.name, n, name), func(ctx context.Context) (bool, string) {
		list, err := c.cp.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
		if err != nil {
			return false, err.Error()
		}
		pods = list.Items
		return len(pods) == n, fmt.Sprintf("%d pods", len(pods))
	})
	return pods
}

// podsOf counts c's pods of Job name in ns.
func podsOf(t *testing.T, c *cluster, ns, name string) int {
	t.Helper()
	list, err := c.cp.Kube.CoreV1().Pods(ns).List(ctxFor(t), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + name})
	if err != nil {
		t.Fatalf("%s: list pods: %v", c.name, err)
	}
	return len(list.Items)
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
