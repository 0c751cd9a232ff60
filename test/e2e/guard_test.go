package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// The guardrails' checks: the rendered ValidatingAdmissionPolicies, Pod
// Security labels and GPU ResourceQuotas, in the real kube-apiserver (and
// the quota controller of kube-controller-manager), refuse what escapes the
// agreement and let through what it wants. Requests are server-side dry
// runs unless a check needs the object to exist.

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// gpuPodSpec is a pod spec asking for n of res, with cpu and memory.
func gpuPodSpec(res corev1.ResourceName, n int64) corev1.PodSpec {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.invalid/tenancy-e2e:never-pulled",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{res: q, corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{res: q},
			},
		}},
	}
}

func cpuPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.invalid/tenancy-e2e:never-pulled",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}},
	}
}

func guardJob(ns, name string, labels map[string]string, spec corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To(int32(1)), Completions: ptr.To(int32(1)),
			Template: corev1.PodTemplateSpec{Spec: spec},
		},
	}
}

func guardPod(ns, name string, labels map[string]string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: spec}
}

// attempt is one request a check expects refused (with every want in the
// message) or let through (want nil).
type attempt struct {
	what   string
	create func(ctx context.Context) error
	want   []string
}

func jobAttempt(what string, j *batchv1.Job, want ...string) attempt {
	return attempt{what, func(ctx context.Context) error {
		_, err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Create(ctx, j, dryRun)
		return err
	}, want}
}

func podAttempt(what string, p *corev1.Pod, want ...string) attempt {
	return attempt{what, func(ctx context.Context) error {
		_, err := env.cp.Kube.CoreV1().Pods(p.Namespace).Create(ctx, p, dryRun)
		return err
	}, want}
}

// try runs the attempts and reports each outcome that is not the expected
// one; every refusal's message is logged, for the report.
func try(t *testing.T, attempts []attempt) {
	t.Helper()
	for _, a := range attempts {
		err := a.create(ctxFor(t))
		switch {
		case a.want == nil && err != nil:
			t.Errorf("%s: refused, want it let through: %v", a.what, err)
		case a.want != nil && err == nil:
			t.Errorf("%s: let through, want it refused", a.what)
		case a.want != nil:
			for _, w := range a.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: refused with %q, want the message to contain %q", a.what, err, w)
				}
			}
			t.Logf("%s: refused: %v", a.what, err)
		default:
			t.Logf("%s: let through", a.what)
		}
	}
}

// waitPoliciesEnforced waits until the API server enforces the rendered
// policies (its admission plugin picks them up from an informer) and has
// type-checked them against the matched kinds' schemas: a warning there is
// a CEL expression that refers to a field or function that does not exist.
func waitPoliciesEnforced(t *testing.T, objs []*unstructuredObj, probe attempt) {
	t.Helper()
	policies := byKind(objs, "ValidatingAdmissionPolicy")
	if len(policies) == 0 {
		t.Fatal("the render has no ValidatingAdmissionPolicy")
	}
	waitFor(t, "the queue policies enforced", func(ctx context.Context) (bool, string) {
		err := probe.create(ctx)
		return err != nil, fmt.Sprintf("%s still let through", probe.what)
	})
	for _, p := range policies {
		waitFor(t, "policy "+p.GetName()+" type-checked", func(ctx context.Context) (bool, string) {
			live, err := env.cp.Dynamic.Resource(vapGVR).Get(ctx, p.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			gen, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
			if gen != live.GetGeneration() {
				return false, fmt.Sprintf("observedGeneration %d of %d", gen, live.GetGeneration())
			}
			warnings, _, _ := unstructured.NestedSlice(live.Object, "status", "typeChecking", "expressionWarnings")
			for _, w := range warnings {
				t.Errorf("policy %s: the API server's type check warns: %v", p.GetName(), w)
			}
			return true, ""
		})
	}
}

// Check: with the reference agreement's Kueue render, the API server refuses
// GPU workloads that skip or misuse their team's queue, a privileged pod, a
// pod asking for more GPUs than its team may ever use and an unknown
// priority; it lets through the same workloads written as the agreement
// wants, CPU-only workloads without a queue, and a Kueue-admitted GPU Job's
// own pods.
func TestGuardrailsKueue(t *testing.T) {
	begin(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	own := map[string]string{queueKey: "training"}
	gpuJob := guardJob("training", "no-queue", nil, gpuPodSpec(gpu, 8))
	// The probe is refused by the Kueue render's policies only, not by the
	// KAI render's that an earlier check may have left behind.
	probe := guardJob("training", "probe", map[string]string{"kai.scheduler/queue": "training"}, gpuPodSpec(gpu, 1))
	waitPoliciesEnforced(t, objs, jobAttempt("probe", probe, "x"))

	// The quota check below needs training's GPU quota unused: pods of an
	// earlier check may still be terminating.
	waitFor(t, "training's GPU quota unused", func(ctx context.Context) (bool, string) {
		q, err := env.cp.Kube.CoreV1().ResourceQuotas("training").Get(ctx, "tenancy-gpus", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		used, ok := q.Status.Used["requests.nvidia.com/gpu"]
		return ok && used.Value() == 0, fmt.Sprintf("used %v", q.Status.Used)
	})
	privileged := cpuPodSpec()
	privileged.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	try(t, []attempt{
		jobAttempt("a GPU Job without a queue", gpuJob,
			"team training", "add the label kueue.x-k8s.io/queue-name: training"),
		jobAttempt("a GPU Job naming another team's queue", guardJob("training", "other", map[string]string{queueKey: "research"}, gpuPodSpec(gpu, 8)),
			"queue research is not this team's", "set the label kueue.x-k8s.io/queue-name: training"),
		podAttempt("a bare GPU Pod without a queue", guardPod("training", "bare", nil, gpuPodSpec(gpu, 1)),
			"team training", "kueue.x-k8s.io/queue-name: training"),
		jobAttempt("a GPU Job with a priority the agreement does not have", guardJob("training", "urgent", map[string]string{queueKey: "training", prioKey: "urgent"}, gpuPodSpec(gpu, 1)),
			"priority urgent is not a priority of the agreement"),
		podAttempt("a privileged pod in a team namespace", guardPod("training", "privileged", own, privileged),
			`violates PodSecurity "baseline:latest"`, "privileged"),
		podAttempt("a pod asking for more GPUs than training may ever use (16 + 8)", guardPod("training", "greedy", own, gpuPodSpec(gpu, 25)),
			"exceeded quota: tenancy-gpus", "requests.nvidia.com/gpu"),

		jobAttempt("a GPU Job on its team's queue", guardJob("training", "own", own, gpuPodSpec(gpu, 8))),
		jobAttempt("a GPU Job with a priority of the agreement", guardJob("training", "critical", map[string]string{queueKey: "training", prioKey: "critical"}, gpuPodSpec(gpu, 8))),
		jobAttempt("a CPU-only Job without a queue", guardJob("training", "cpu", nil, cpuPodSpec())),
		podAttempt("a CPU-only Pod without a queue", guardPod("training", "cpu", nil, cpuPodSpec())),
		podAttempt("a pod within training's most usable GPUs", guardPod("training", "fits", own, gpuPodSpec(gpu, 24))),
	})

	// A Job admitted by Kueue runs end to end: its pods, created by the Job
	// controller and owned by the Job, are not refused by the policies, the
	// Pod Security level or the GPU quota.
	j := submit(t, job{ns: "training", queue: "training", name: "admitted", pods: 2, gpus: 8})
	waitAdmitted(t, j)
	waitFor(t, "the admitted Job's 2 pods created", func(ctx context.Context) (bool, string) {
		pods, err := env.cp.Kube.CoreV1().Pods("training").List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=admitted"})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 2, fmt.Sprintf("%d pods", len(pods.Items))
	})
	finish(t, j)
}

// Check: the multi-flavor agreement's MIG slices are GPUs to the policies.
func TestGuardrailsMIG(t *testing.T) {
	begin(t)
	ex := examples(t)
	path, ok := ex["multi-flavor"]
	if !ok {
		t.Fatal("no multi-flavor example")
	}
	objs := render(t, path)
	useAgreement(t, "multi-flavor", objs)
	mig := guardPod("notebooks", "mig", nil, gpuPodSpec("nvidia.com/mig-1g.10gb", 1))
	waitPoliciesEnforced(t, objs, podAttempt("probe", mig, "x"))
	try(t, []attempt{
		podAttempt("a MIG pod without a queue", mig, "add the label kueue.x-k8s.io/queue-name: notebooks"),
		podAttempt("a MIG pod on its team's queue", guardPod("notebooks", "mig-own", map[string]string{queueKey: "notebooks"}, gpuPodSpec("nvidia.com/mig-1g.10gb", 1))),
	})
}

// Check: with the reference agreement's KAI render, a GPU pod on the
// default scheduler and a GPU pod naming another team's queue are refused;
// a GPU pod on kai-scheduler with its own queue label is let through.
func TestGuardrailsKAI(t *testing.T) {
	begin(t)
	installKAICRDs(t)
	objs := render(t, "--backend", "kai", "tenancy.toml")
	// The cluster no longer holds a Kueue agreement: the next check that
	// needs one starts from a clean slate, and the Kueue policies are back
	// in force before it runs (the API server picks policies up from an
	// informer, so a check right after would otherwise meet KAI's).
	currentFamily = ""
	t.Cleanup(func() {
		currentFamily = ""
		ref := reference(t)
		useAgreement(t, "reference", ref)
		probe := guardJob("training", "probe", map[string]string{"kai.scheduler/queue": "training"}, gpuPodSpec(gpu, 1))
		waitPoliciesEnforced(t, ref, jobAttempt("probe", probe, "x"))
	})
	if _, err := env.cp.Applier.Apply(ctxFor(t), objs, false); err != nil {
		t.Fatalf("apply the KAI render: %v", err)
	}
	kaiPod := func(name string, labels map[string]string, scheduler string) *corev1.Pod {
		p := guardPod("training", name, labels, gpuPodSpec(gpu, 1))
		p.Spec.SchedulerName = scheduler
		return p
	}
	own := map[string]string{"kai.scheduler/queue": "training"}
	// The probe is refused by the KAI render's policies only.
	waitPoliciesEnforced(t, objs, podAttempt("probe", kaiPod("probe", map[string]string{queueKey: "training"}, "kai-scheduler"), "x"))
	try(t, []attempt{
		podAttempt("a GPU pod on the default scheduler", kaiPod("default-scheduler", own, ""),
			"team training", "set spec.schedulerName: kai-scheduler"),
		podAttempt("a GPU pod naming another team's queue", kaiPod("other", map[string]string{"kai.scheduler/queue": "research"}, "kai-scheduler"),
			"queue research is not this team's", "kai.scheduler/queue: training"),
		podAttempt("a bare GPU pod without a queue label", kaiPod("bare", nil, "kai-scheduler"),
			"add the label kai.scheduler/queue: training"),
		podAttempt("a GPU pod on kai-scheduler with its own queue label", kaiPod("own", own, "kai-scheduler")),
		jobAttempt("a GPU Job with its own queue label", guardJob("training", "own", own, gpuPodSpec(gpu, 1))),
		jobAttempt("a GPU Job without a queue label", guardJob("training", "none", nil, gpuPodSpec(gpu, 1)),
			"add the label kai.scheduler/queue: training"),
	})
}

// installKAICRDs installs KAI's CRDs from ../shared/crds/kai.
func installKAICRDs(t *testing.T) {
	t.Helper()
	dir := filepath.Join(env.repoRoot, "..", "shared", "crds", "kai")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("KAI's CRDs are expected in %s (shared/ beside the repository): %v", dir, err)
		}
		t.Fatalf("no KAI CRDs in %s", dir)
	}
	var crds []*unstructuredObj
	for _, f := range files {
		objs, err := controlplane.ReadManifestFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, byKind(objs, "CustomResourceDefinition")...)
	}
	ctx := ctxFor(t)
	if _, err := env.cp.Applier.Apply(ctx, crds, false); err != nil {
		t.Fatalf("install KAI CRDs: %v", err)
	}
	if err := env.cp.Applier.WaitCRDsEstablished(ctx, eventually); err != nil {
		t.Fatal(err)
	}
}
