package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

type unstructuredObj = unstructured.Unstructured

// jobRef is a submitted Job as the API server returned it (with its UID).
type jobRef = batchv1.Job

// Deadlines for polling. Kueue admits within a second or two here; the
// ClusterQueue status lags admission by about a second.
const (
	eventually = 30 * time.Second
	poll       = 100 * time.Millisecond
	// settle is how long a "nothing happens" check keeps watching after
	// Kueue has visibly considered the workload and decided to leave it
	// pending.
	settle = 3 * time.Second
)

const (
	gpu       = corev1.ResourceName("nvidia.com/gpu")
	queueKey  = "kueue.x-k8s.io/queue-name"
	prioKey   = "kueue.x-k8s.io/priority-class"
	managedBy = "app.kubernetes.io/managed-by=tenancy"
)

var (
	cqGVR         = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	lqGVR         = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	wlGVR         = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	vmGVR         = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	vapGVR        = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	vapBindingGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
	pruneKinds    = []schema.GroupVersionResource{cqGVR, lqGVR, kueueRes("cohorts"), kueueRes("resourceflavors"), kueueRes("workloadpriorityclasses"), kueueRes("topologies"), {Version: "v1", Resource: "resourcequotas"},
		// The guardrails: an agreement that turns a part off loses its objects.
		vapGVR, vapBindingGVR, {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}}
	deleteInBkg = metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
)

func kueueRes(r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// render runs `tenancy render` with args and parses its YAML stream.
func render(t *testing.T, args ...string) []*unstructuredObj {
	t.Helper()
	if kueueAPI != "" && !slices.Contains(args, "--kueue-api") && !slices.Contains(args, "--backend") {
		// A run of the version matrix renders for its Kueue's API.
		args = append([]string{"--kueue-api", kueueAPI}, args...)
	}
	cmd := exec.Command(env.tenancy, append([]string{"render"}, args...)...)
	cmd.Dir = env.repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tenancy render %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	objs, err := controlplane.ParseManifests(stdout.Bytes())
	if err != nil {
		t.Fatalf("parse render of %v: %v", args, err)
	}
	if len(objs) == 0 {
		t.Fatalf("tenancy render %v produced no objects", args)
	}
	return objs
}

// testdata returns the path of a testdata file relative to the repo root,
// which is where render runs.
func testdata(name string) string {
	return filepath.Join("test", "e2e", "testdata", name)
}

// reference renders the root tenancy.toml.
func reference(t *testing.T) []*unstructuredObj {
	return render(t, "tenancy.toml")
}

// byKind returns the objects of one kind.
func byKind(objs []*unstructuredObj, kind string) []*unstructuredObj {
	var out []*unstructuredObj
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// find returns the object of kind and name from a render, failing when absent.
func find(t *testing.T, objs []*unstructuredObj, kind, name string) *unstructuredObj {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("render has no %s %q", kind, name)
	return nil
}

// localQueueFor returns the name of the LocalQueue the render puts in ns.
func localQueueFor(t *testing.T, objs []*unstructuredObj, ns string) string {
	t.Helper()
	for _, o := range byKind(objs, "LocalQueue") {
		if o.GetNamespace() == ns {
			return o.GetName()
		}
	}
	t.Fatalf("render has no LocalQueue in namespace %s", ns)
	return ""
}

// currentFamily is the agreement the cluster holds: the reference and its
// variants in testdata are one family (a change of the agreement, applied
// over it); each other example is a cluster of its own.
var currentFamily string

// useAgreement makes objs the cluster's agreement. It deletes every Job and
// Workload. Within the family already applied it applies objs server-side
// and then deletes the tenancy-managed Kueue objects and ResourceQuotas that
// objs no longer contains, as a change of the agreement would. Moving to
// another family it first deletes all of those, as a fresh cluster would
// have none (Kueue forbids some flavor changes in place, such as removing a
// topology). Namespaces stay. Finally it waits until Kueue reports every
// ClusterQueue active.
func useAgreement(t *testing.T, family string, objs []*unstructuredObj) {
	t.Helper()
	ctx := ctxFor(t)
	clearWorkloads(t)
	if family != currentFamily {
		currentFamily = ""
		prune(t, nil)
	}
	// Apply first: the new ClusterQueues stop referring to flavors that are
	// about to go, and Kueue keeps a flavor while a ClusterQueue uses it.
	if _, err := env.cp.Applier.Apply(ctx, objs, false); err != nil {
		t.Fatalf("apply agreement: %v", err)
	}
	currentFamily = family
	prune(t, objs)
	waitActive(t, objs)
}

// prune deletes the tenancy-managed Kueue objects and ResourceQuotas that
// are not in keep, and waits until they are gone.
func prune(t *testing.T, keep []*unstructuredObj) {
	t.Helper()
	ctx := ctxFor(t)
	objs := keep
	want := map[string]bool{}
	for _, o := range objs {
		want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	dyn := env.cp.Dynamic
	var doomed []unstructuredObj
	var doomedRes []schema.GroupVersionResource
	for _, gvr := range pruneKinds {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: managedBy})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range list.Items {
			if !want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
				doomed = append(doomed, o)
				doomedRes = append(doomedRes, gvr)
			}
		}
	}
	errs := make([]error, len(doomed))
	controlplane.Parallel(len(doomed), func(i int) {
		o := doomed[i]
		err := dyn.Resource(doomedRes[i]).Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs[i] = fmt.Errorf("prune %s: %w", controlplane.Describe(&o), err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, gvr := range pruneKinds {
		waitFor(t, "pruned "+gvr.Resource+" gone", func(ctx context.Context) (bool, string) {
			list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: managedBy})
			if err != nil {
				return false, err.Error()
			}
			var left []string
			for _, o := range list.Items {
				if !want[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
					left = append(left, o.GetName())
				}
			}
			return len(left) == 0, fmt.Sprintf("still there: %v", left)
		})
	}
	if len(doomed) > 0 {
		t.Logf("pruned %d objects of the previous agreement", len(doomed))
	}
}

// waitActive waits until Kueue reports every ClusterQueue in objs active for
// its current generation.
func waitActive(t *testing.T, objs []*unstructuredObj) {
	t.Helper()
	dyn := env.cp.Dynamic
	for _, cq := range byKind(objs, "ClusterQueue") {
		name := cq.GetName()
		waitFor(t, "ClusterQueue "+name+" active", func(ctx context.Context) (bool, string) {
			got, err := dyn.Resource(cqGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if got.GetGeneration() != observedGeneration(got, "Active") {
				return false, "Active condition not yet observed for the current generation"
			}
			return controlplane.HasCondition(got, "Active", "True"), controlplane.ConditionSummary(got)
		})
	}
}

// clearWorkloads deletes every Job and Workload and waits until no Workload is left, so quota is free.
func clearWorkloads(t *testing.T) {
	t.Helper()
	ctx := ctxFor(t)
	jobs, err := env.cp.Kube.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list jobs: %v", err)
	}
	for _, j := range jobs.Items {
		err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, deleteInBkg)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete job %s/%s: %v", j.Namespace, j.Name, err)
		}
	}
	wls, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list workloads: %v", err)
	}
	for _, w := range wls.Items {
		err := env.cp.Dynamic.Resource(wlGVR).Namespace(w.GetNamespace()).Delete(ctx, w.GetName(), deleteInBkg)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete workload %s/%s: %v", w.GetNamespace(), w.GetName(), err)
		}
	}
	waitFor(t, "no Workloads left", func(ctx context.Context) (bool, string) {
		list, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, w := range list.Items {
			names = append(names, w.GetNamespace()+"/"+w.GetName())
		}
		return len(list.Items) == 0, fmt.Sprintf("left: %v", names)
	})
}

func observedGeneration(o *unstructuredObj, typ string) int64 {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			g, _ := m["observedGeneration"].(int64)
			return g
		}
	}
	return -1
}

// waits is how the checks wait (internal/await), failing with a summary of
// the queues.
var waits = await.Waits{Timeout: eventually, Interval: poll, Settle: settle, State: clusterState}

// waitFor polls cond until it holds, failing the test with cond's last
// explanation and a summary of the queues when the deadline passes.
func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	waits.Until(t, ctxFor(t), what, cond)
}

// never watches cond for the settle period and fails the moment it holds.
func never(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	waits.Never(t, ctxFor(t), what, cond)
}

// job is a Job submitted to a LocalQueue: pods pods of gpus GPUs each, with
// cpu and memory requests alongside, suspended for Kueue to admit.
type job struct {
	ns, queue, name string
	pods            int32
	gpus            int64
	resource        corev1.ResourceName // defaults to nvidia.com/gpu
	priority        string              // WorkloadPriorityClass, optional
	// podAnnotations go on the pod template, e.g. Kueue's topology request.
	podAnnotations map[string]string
}

// submit creates the Job and returns its UID.
func submit(t *testing.T, j job) *batchv1.Job {
	t.Helper()
	res := j.resource
	if res == "" {
		res = gpu
	}
	labels := map[string]string{queueKey: j.queue}
	if j.priority != "" {
		labels[prioKey] = j.priority
	}
	req := corev1.ResourceList{
		res:                   *resource.NewQuantity(j.gpus, resource.DecimalSI),
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
	}
	obj := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend:     ptr.To(true),
			Parallelism: ptr.To(j.pods),
			Completions: ptr.To(j.pods),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: j.podAnnotations}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:      "work",
					Image:     "registry.invalid/tenancy-e2e:never-pulled",
					Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{res: req[res]}},
				}},
			}},
		},
	}
	// Every Job a check submits is one the agreement in force allows. The
	// API server's admission plugin reads the policies through an
	// informer, so right after useAgreement it may still answer with the
	// previous agreement's data (seen in a cold run: a MIG Job refused by
	// the whole-GPU agreement applied before); such a refusal is retried
	// until the new policy is in force, any other error fails at once.
	var got *batchv1.Job
	var err error
	_ = wait.PollUntilContextTimeout(ctxFor(t), poll, eventually, true, func(ctx context.Context) (bool, error) {
		got, err = env.cp.Kube.BatchV1().Jobs(j.ns).Create(ctx, obj, metav1.CreateOptions{})
		return err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy"), nil
	})
	if err != nil {
		t.Fatalf("create Job %s/%s: %v", j.ns, j.name, err)
	}
	return got
}

// finish stands for a Job completing: with no kubelet its pods never run, so
// the Job is deleted, and the garbage collector deletes its Workload, which
// frees the quota.
func finish(t *testing.T, j *batchv1.Job) {
	t.Helper()
	if err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Delete(ctxFor(t), j.Name, deleteInBkg); err != nil {
		t.Fatalf("delete Job %s/%s: %v", j.Namespace, j.Name, err)
	}
	waitFor(t, "Workload of "+j.Name+" gone", func(ctx context.Context) (bool, string) {
		w, err := workloadOf(ctx, j)
		return w == nil && err == nil, fmt.Sprintf("workload %v, err %v", name(w), err)
	})
}

func name(o *unstructuredObj) string {
	if o == nil {
		return "<none>"
	}
	return o.GetName()
}

// workloadOf returns the Workload Kueue created for j, or nil.
func workloadOf(ctx context.Context, j *batchv1.Job) (*unstructuredObj, error) {
	list, err := env.cp.Dynamic.Resource(wlGVR).Namespace(j.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.UID == j.UID {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// workloadState is what the checks read from a Workload.
type workloadState struct {
	exists       bool
	admitted     bool
	clusterQueue string
	// pendingMessage is the QuotaReserved=False message: Kueue has
	// considered the workload and says why it waits.
	pendingMessage string
	// preemptedReason is the reason of the Preempted=True condition.
	preemptedReason string
	evicted         bool
	priority        int64
	// flavors maps resource name to the flavor assigned, over all pod sets.
	flavors map[string]string
	// pods is the count admitted over all pod sets.
	pods int64
}

func stateOf(w *unstructuredObj) workloadState {
	if w == nil {
		return workloadState{}
	}
	s := workloadState{exists: true, flavors: map[string]string{}}
	s.priority, _, _ = unstructured.NestedInt64(w.Object, "spec", "priority")
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch {
		case m["type"] == "Admitted" && m["status"] == "True":
			s.admitted = true
		case m["type"] == "QuotaReserved" && m["status"] == "False":
			s.pendingMessage, _ = m["message"].(string)
		case m["type"] == "Preempted" && m["status"] == "True":
			s.preemptedReason, _ = m["reason"].(string)
		case m["type"] == "Evicted" && m["status"] == "True":
			s.evicted = true
		}
	}
	s.clusterQueue, _, _ = unstructured.NestedString(w.Object, "status", "admission", "clusterQueue")
	psas, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
	for _, p := range psas {
		m, _ := p.(map[string]any)
		if fl, ok := m["flavors"].(map[string]any); ok {
			for r, f := range fl {
				s.flavors[r], _ = f.(string)
			}
		}
		if c, ok := m["count"].(int64); ok {
			s.pods += c
		}
	}
	return s
}

// state reads j's Workload now.
func state(t *testing.T, j *batchv1.Job) workloadState {
	t.Helper()
	w, err := workloadOf(ctxFor(t), j)
	if err != nil {
		t.Fatalf("read workload of %s: %v", j.Name, err)
	}
	return stateOf(w)
}

// waitAdmitted waits until j's Workload is admitted and returns its state.
func waitAdmitted(t *testing.T, j *batchv1.Job) workloadState {
	t.Helper()
	var s workloadState
	waitFor(t, j.Namespace+"/"+j.Name+" admitted", func(ctx context.Context) (bool, string) {
		w, err := workloadOf(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		s = stateOf(w)
		return s.admitted, fmt.Sprintf("%+v", s)
	})
	return s
}

// waitPending waits until Kueue has considered j's Workload and left it
// without quota (QuotaReserved=False with a message), then watches for the
// settle period that it is not admitted after all. It returns the message.
func waitPending(t *testing.T, j *batchv1.Job) string {
	t.Helper()
	var s workloadState
	waitFor(t, j.Namespace+"/"+j.Name+" considered and left pending", func(ctx context.Context) (bool, string) {
		w, err := workloadOf(ctx, j)
		if err != nil {
			return false, err.Error()
		}
		s = stateOf(w)
		if s.admitted {
			// The poll runs on the test's goroutine, so failing here is safe.
			t.Fatalf("%s/%s admitted; it must stay pending: %+v\n%s", j.Namespace, j.Name, s, clusterState(ctx))
		}
		return s.exists && s.pendingMessage != "", fmt.Sprintf("%+v", s)
	})
	never(t, j.Namespace+"/"+j.Name+" admitted", func(ctx context.Context) (bool, string) {
		w, err := workloadOf(ctx, j)
		if err != nil {
			return false, ""
		}
		st := stateOf(w)
		return st.admitted, fmt.Sprintf("%+v", st)
	})
	return s.pendingMessage
}

// usage is a ClusterQueue's reserved quota for one flavor and resource.
type usage struct {
	total, borrowed int64
}

// cqUsage reads status.flavorsReservation of a ClusterQueue.
func cqUsage(ctx context.Context, cq, flavor string, res corev1.ResourceName) (usage, error) {
	o, err := env.cp.Dynamic.Resource(cqGVR).Get(ctx, cq, metav1.GetOptions{})
	if err != nil {
		return usage{}, err
	}
	return usageIn(o, flavor, res), nil
}

func usageIn(o *unstructuredObj, flavor string, res corev1.ResourceName) usage {
	fls, _, _ := unstructured.NestedSlice(o.Object, "status", "flavorsReservation")
	for _, f := range fls {
		fm, _ := f.(map[string]any)
		if fm["name"] != flavor {
			continue
		}
		rs, _ := fm["resources"].([]any)
		for _, r := range rs {
			rm, _ := r.(map[string]any)
			if rm["name"] != string(res) {
				continue
			}
			return usage{total: quantity(rm["total"]), borrowed: quantity(rm["borrowed"])}
		}
	}
	return usage{}
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

// waitUsage waits until a ClusterQueue reports exactly want for flavor's GPUs.
func waitUsage(t *testing.T, cq, flavor string, res corev1.ResourceName, want usage) {
	t.Helper()
	waitFor(t, fmt.Sprintf("ClusterQueue %s using %d %s of %s, %d borrowed", cq, want.total, res, flavor, want.borrowed), func(ctx context.Context) (bool, string) {
		got, err := cqUsage(ctx, cq, flavor, res)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("got total %d borrowed %d", got.total, got.borrowed)
	})
}

// clusterState summarizes ClusterQueues and Workloads for failure messages.
func clusterState(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("cluster state:\n")
	cqs, err := env.cp.Dynamic.Resource(cqGVR).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, cq := range cqs.Items {
			fls, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
			var parts []string
			for _, f := range fls {
				fm, _ := f.(map[string]any)
				rs, _ := fm["resources"].([]any)
				for _, r := range rs {
					rm, _ := r.(map[string]any)
					if rm["name"] == "cpu" || rm["name"] == "memory" {
						continue
					}
					parts = append(parts, fmt.Sprintf("%v/%v total=%v borrowed=%v", fm["name"], rm["name"], rm["total"], rm["borrowed"]))
				}
			}
			fmt.Fprintf(&b, "  ClusterQueue %s: %s\n", cq.GetName(), strings.Join(parts, ", "))
		}
	}
	wls, err := env.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
	if err == nil {
		var lines []string
		for i := range wls.Items {
			w := &wls.Items[i]
			lines = append(lines, fmt.Sprintf("  Workload %s/%s: %s", w.GetNamespace(), w.GetName(), controlplane.ConditionSummary(w)))
		}
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}

// virtualMachineCRD is a minimal kubevirt.io/v1 VirtualMachine CRD: enough
// for the API server to store VirtualMachines and for the quota controller
// to count them.
func virtualMachineCRD() *unstructuredObj {
	return &unstructuredObj{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "virtualmachines.kubevirt.io"},
		"spec": map[string]any{
			"group": "kubevirt.io",
			"names": map[string]any{"kind": "VirtualMachine", "listKind": "VirtualMachineList", "plural": "virtualmachines", "singular": "virtualmachine", "shortNames": []any{"vm"}},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}
