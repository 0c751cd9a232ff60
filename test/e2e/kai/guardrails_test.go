package kai

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// newTeamAdmin is the namespace admin sa of a team's namespace ns (KAI's
// PodGroups and the covered CRD kinds aggregated into admin, as installs
// that let teams make their own do), once the API server authorizes it to
// create PodGroups. Its probes are made for real: KAI's podgrouper and the
// workload controllers act on what is let through.
func newTeamAdmin(t *testing.T, ns, sa string) *probe.TeamAdmin {
	t.Helper()
	u, err := probe.NewTeamAdmin(ctxFor(t), env.cp.Kube, env.cp.Config, ns, sa,
		authorizationv1.ResourceAttributes{Group: "scheduling.run.ai", Resource: "podgroups"},
		authorizationv1.ResourceAttributes{Group: "kubeflow.org", Resource: "pytorchjobs"})
	if err != nil {
		t.Fatal(err)
	}
	u.Real = true
	return u
}

// bypass is one request of a check: refused with every want in the
// message, or let through (want nil).
func bypass(what string, create func(ctx context.Context) error, want []string) probe.Attempt {
	return probe.Attempt{What: what, Create: create, Want: want}
}

// Check: with the reference agreement's KAI render (guardrails on), the
// ways around a team's queue that KAI's own components open are closed to
// training's namespace admin, each refused on a real create: KAI's project
// label; an owner labelled with research's queue, a controller's reference
// or not (KAI's podgrouper reads the top owner's queue label first: for a
// CPU pod so owned it asks for a PodGroup on research's queue, which the
// policy refuses it); joining that PodGroup by the pod-group-name
// annotation, or skipping the podgrouper; a PodGroup naming
// research's queue; a fractional GPU without a queue or on research's. What
// the agreement wants runs: a Deployment with the queue label on its pod
// template only and a labelled Job are admitted, their controllers' pods
// too, KAI's podgrouper puts them on training's queue and they bind; so do
// a GPU pod on its queue and a CPU pod without one. Once grouped, a
// controller's GPU pod cannot be re-pointed at research's PodGroup, nor
// training's PodGroup moved to research's queue; the team's own pod can be
// relabelled.
func TestKAIGuardrailBypasses(t *testing.T) {
	begin(t)
	reset(t, reference)
	alice := newTeamAdmin(t, "training", "alice")
	ns := "training"
	pods := alice.Kube.CoreV1().Pods(ns)
	gpuPod := func(name string, labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}, Spec: training.podSpec()}
	}
	own := map[string]string{queueKey: "training"}
	other := map[string]string{queueKey: "research"}
	createPod := func(p *corev1.Pod) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := pods.Create(ctx, p, metav1.CreateOptions{}); return err }
	}
	waitFor(t, "the guardrails in force", func(ctx context.Context) (bool, string) {
		_, err := pods.Create(ctx, gpuPod("probe", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "add the label kai.scheduler/queue: training"), fmt.Sprint(err)
	})

	// A ConfigMap the team may create, labelled with research's queue,
	// owning a CPU pod (CPU work is not guarded): KAI's podgrouper reads
	// the top owner's label, and its PodGroup, in training's namespace,
	// would be research's; it carries the owner's labels, so the policy
	// refuses it even from the trusted podgrouper.
	cm, err := alice.Kube.CoreV1().ConfigMaps(ns).Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "queue-of-research", Labels: other}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().ConfigMaps(ns).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	ownedBy := func(p *corev1.Pod, controller bool) *corev1.Pod {
		ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
		if controller {
			ref.Controller = ptr.To(true)
		}
		p.OwnerReferences = []metav1.OwnerReference{ref}
		return p
	}
	cpu := (work{ns: ns, gpus: -1}).podSpec()
	decoy := ownedBy(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "decoy", Labels: own}, Spec: cpu}, false)
	if err := createPod(decoy)(ctxFor(t)); err != nil {
		t.Fatalf("a CPU pod owned by a ConfigMap was refused; CPU work is not the guardrails': %v", err)
	}
	// KAI names a PodGroup pg-<top owner>-<its UID>.
	researchPG := fmt.Sprintf("pg-%s-%s", cm.Name, cm.UID)
	waitFor(t, "KAI's podgrouper to be refused research's PodGroup for the decoy", func(ctx context.Context) (bool, string) {
		evs, err := env.cp.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=decoy"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, researchPG) && strings.Contains(e.Message, "queue research is not this team's") {
				t.Logf("the podgrouper, for the CPU pod owned by the ConfigMap labelled research: %s", e.Message)
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})

	podGroup := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg-of-research"},
		"spec":     map[string]any{"queue": "research", "minMember": int64(1)},
	}}
	refused := "add the label kai.scheduler/queue: training"
	chooses := "chooses its own PodGroup"
	ownerRefused := "names an owner, but " + alice.Name + " is not a trusted controller"
	attempts := []probe.Attempt{
		bypass("a GPU pod with KAI's project label naming research", createPod(gpuPod("project", map[string]string{"project": "research"}, nil)), []string{refused}),
		bypass("a GPU pod on its queue owned by the ConfigMap labelled research, as its controller", createPod(ownedBy(gpuPod("owned", own, nil), true)), []string{ownerRefused}),
		bypass("a GPU pod on its queue owned by the ConfigMap labelled research, not as its controller", createPod(ownedBy(gpuPod("referenced", own, nil), false)), []string{ownerRefused, "KAI's podgrouper reads the queue of the top owner"}),
		bypass("a GPU pod joining research's PodGroup by pod-group-name", createPod(gpuPod("joined", own, map[string]string{"pod-group-name": researchPG})), []string{chooses}),
		bypass("a GPU pod skipping the podgrouper", createPod(gpuPod("skipped", own, map[string]string{"kai.scheduler/skip-podgrouper": "true"})), []string{chooses}),
		bypass("a PodGroup naming research's queue", func(ctx context.Context) error {
			_, err := alice.Dyn.Resource(podGroupGVR).Namespace(ns).Create(ctx, podGroup, metav1.CreateOptions{})
			return err
		}, []string{"PodGroup queue research is not this team's", "set spec.queue: training"}),
		bypass("a fractional GPU without a queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fraction", Annotations: map[string]string{"gpu-fraction": "0.5"}}, Spec: cpu}), []string{refused}),
		bypass("a fractional GPU on research's queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fraction", Labels: other, Annotations: map[string]string{"gpu-fraction": "0.5"}}, Spec: cpu}), []string{"queue research is not this team's"}),
		bypass("a GPU pod on research's queue", createPod(gpuPod("research", other, nil)), []string{"queue research is not this team's"}),
		bypass("a fractional GPU added by update to the CPU pod owned by the ConfigMap", func(ctx context.Context) error {
			_, err := pods.Patch(ctx, "decoy", types.MergePatchType, []byte(`{"metadata":{"annotations":{"gpu-fraction":"0.5"}}}`), metav1.PatchOptions{})
			return err
		}, []string{ownerRefused}),

		// What the agreement wants.
		bypass("a Deployment with the queue label on its pod template only", func(ctx context.Context) error {
			tmpl := map[string]string{"app": "serve", queueKey: "training"}
			_, err := alice.Kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "serve"},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "serve"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl}, Spec: training.podSpec()},
				},
			}, metav1.CreateOptions{})
			return err
		}, nil),
		bypass("a Job with the queue label", func(ctx context.Context) error {
			spec := training.podSpec()
			spec.RestartPolicy = corev1.RestartPolicyNever
			_, err := alice.Kube.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "train", Labels: own},
				Spec: batchv1.JobSpec{
					Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2),
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: own}, Spec: spec},
				},
			}, metav1.CreateOptions{})
			return err
		}, nil),
		bypass("a GPU pod on its queue", createPod(gpuPod("own", own, nil)), nil),
		bypass("a CPU pod without a queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cpu"}, Spec: cpu}), nil),
	}
	probe.Try(t, ctxFor(t), attempts)

	// KAI's components do the rest under their own service accounts: the
	// ReplicaSet and Job controllers make the pods, the podgrouper groups
	// them on training's queue and annotates them, the binder binds them.
	made := []bound{{ns, "serve", 2}, {ns, "train", 2}, {ns, "own", 1}}
	waitBoundAll(t, append(made, bound{ns, "cpu", 1})...)
	for _, w := range made {
		p := firstPod(t, ns, w.prefix)
		pg := waitPodGroup(t, ns, p.Name)
		if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "training" {
			t.Errorf("%s's PodGroup %s is on queue %q, want training", p.Name, pg.GetName(), q)
		}
		t.Logf("%s*: %d bound, PodGroup %s on queue training", w.prefix, w.n, pg.GetName())
	}

	// Updates of what KAI grouped: re-pointing a controller's GPU pod at
	// research's PodGroup, or training's PodGroup at research's queue, is
	// refused; relabelling the team's own grouped pod is not.
	served := firstPod(t, ns, "serve")
	ownPG := waitPodGroup(t, ns, "own")
	patchPod := func(name, body string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := pods.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}
	}
	updates := []probe.Attempt{
		bypass("re-pointing the Deployment's GPU pod at research's PodGroup", patchPod(served.Name, `{"metadata":{"annotations":{"pod-group-name":"`+researchPG+`"}}}`), []string{chooses}),
		bypass("moving training's PodGroup to research's queue", func(ctx context.Context) error {
			_, err := alice.Dyn.Resource(podGroupGVR).Namespace(ns).Patch(ctx, ownPG.GetName(), types.MergePatchType, []byte(`{"spec":{"queue":"research"}}`), metav1.PatchOptions{})
			return err
		}, []string{"PodGroup queue research is not this team's"}),
		bypass("relabelling the team's own grouped GPU pod", patchPod("own", `{"metadata":{"labels":{"app":"relabelled"}}}`), nil),
	}
	probe.Try(t, ctxFor(t), updates)
	t.Logf("%d requests made for real by %s, the decoy among them; 5 GPU pods of the agreement's work and a CPU pod bound", len(attempts)+len(updates)+1, alice.Name)
}

// Check: with the reference agreement's KAI render, in the real KAI
// Scheduler, a team's namespace admin cannot run GPU work outside the
// agreement by any of the ways the Kueue check probes, nor by KAI's own: the
// default scheduler, no queue label or another team's on any covered kind
// (on the object or, as KAI reads it, on its pod templates; a CronJob's on
// its jobTemplate), KAI's project label, a preemptibility override, a
// PodGroup of its choosing by annotation or by creating one on another
// queue, a fractional GPU outside the queue, an owner it wrote (a
// controller's or not: KAI's podgrouper reads the queue of the top owner
// either way), a node, priority, GPU resource or DRA claim outside the
// agreement. Every request is made for real: what is let through (the same
// work written as the agreement wants, CPU-only work without a queue)
// exists, the workload controllers make the pods of the built-in kinds
// under their own service accounts, and KAI's podgrouper puts those that
// ask for GPUs on training's queue.
func TestKAIGuardrails(t *testing.T) {
	begin(t)
	workload.InstallCRDs(t, ctxFor(t), env.cp.Applier)
	// The policies are made again with every covered kind's CRD installed,
	// so the API server's type check sees their schemas.
	prune(t, nil, pruneKinds[3:4])
	objs := reset(t, reference)
	alice := newTeamAdmin(t, "training", "alice")
	// A team's own account named like a kube-controller-manager controller.
	lookalike := newTeamAdmin(t, "training", "job-controller")
	t.Cleanup(func() {
		if err := alice.DeleteMade(context.Background(), env.cp.Dynamic); err != nil {
			t.Error(err)
		}
	})
	waitGuardrails(t, objs, alice)
	onKAI := func(s corev1.PodSpec) corev1.PodSpec { s.SchedulerName = "kai-scheduler"; return s }
	own := map[string]string{"kai.scheduler/queue": "training"}
	other := map[string]string{"kai.scheduler/queue": "research"}
	labelled := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	annotated := func(kv ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = labelled(kv...) }
	}
	podGroup := func(queue string) *unstructured.Unstructured {
		return workload.Custom(nil, map[string]any{"queue": queue, "minMember": int64(1)})
	}
	refused := "add the label kai.scheduler/queue: training"
	// The builders of the Kueue check, with KAI's scheduler on every pod
	// template that asks for GPUs.
	kaiGPU := onKAI(workload.GPUPodSpec(gpu, 1))
	kaiGPU8 := onKAI(workload.GPUPodSpec(gpu, 8))
	kaiAlways := workload.RestartAlways(kaiGPU)
	withSpec := func(f func(*corev1.PodSpec)) corev1.PodSpec { return workload.SpecWith(kaiGPU, f) }
	ray := func(worker corev1.PodSpec) map[string]any {
		return workload.RayCluster(t, workload.RestartAlways(workload.CPUPodSpec()), workload.RestartAlways(worker))
	}
	lws := func(worker corev1.PodSpec) map[string]any {
		return map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": workload.PodTemplate(t, worker)}}
	}
	jobSet := func(spec corev1.PodSpec, templateLabels map[string]string) map[string]any {
		tmpl := workload.PodTemplate(t, spec)
		if templateLabels != nil {
			tmpl["metadata"] = map[string]any{"labels": workload.ToAny(templateLabels)}
		}
		return map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "workers", "replicas": int64(1), "template": map[string]any{"spec": map[string]any{"template": tmpl}},
		}}}
	}
	trainJob := func(res map[string]any) map[string]any {
		s := map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}}
		if res != nil {
			s["trainer"] = map[string]any{"resourcesPerNode": map[string]any{"limits": res}}
		}
		return s
	}
	appWrapper := map[string]any{"components": []any{map[string]any{"template": map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "wrapped"}, "spec": workload.PodTemplate(t, kaiGPU)["spec"],
	}}}}
	dra := workload.SpecWith(onKAI(workload.CPUPodSpec()), func(s *corev1.PodSpec) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
		s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	})
	nvidiaClaim := map[string]any{"devices": map[string]any{"requests": []any{map[string]any{
		"name": "gpu", "exactly": map[string]any{"deviceClassName": "gpu.nvidia.com"},
	}}}}
	privileged := workload.CPUPodSpec()
	privileged.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	initGPU := onKAI(workload.CPUPodSpec())
	initGPU.InitContainers = workload.GPUPodSpec(gpu, 1).Containers
	initGPU.InitContainers[0].Name = "setup"
	// An ownerReference that is no controller's: KAI's podgrouper follows
	// ownerReferences[0] all the same.
	plainOwner := func(p *corev1.Pod) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "queue-of-research", UID: "0a0a0a0a-0000-0000-0000-000000000001"}}
		return p
	}
	podWithTemplateLabels := func(j *batchv1.Job, l map[string]string) *batchv1.Job { j.Spec.Template.Labels = l; return j }
	ownedBy := "names an owner, but system:serviceaccount:training:alice is not a trusted controller"
	// An owned CPU-only Deployment the team may create (CPU work is not
	// guarded), owned by a ConfigMap of its own labelled with research's
	// queue: an update asking for GPUs is checked as a create would be.
	cm, err := alice.Kube.CoreV1().ConfigMaps("training").Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "queue-of-research", Labels: other}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().ConfigMaps("training").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	cpuOwned := workload.DeploymentOf("cpu-owned", own, nil, workload.CPUAlways())
	cpuOwned.Spec.Replicas = ptr.To(int32(0))
	cpuOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}}
	alice.Create(t, ctxFor(t), workload.Deployments, cpuOwned)
	t.Cleanup(func() {
		_ = env.cp.Kube.AppsV1().Deployments("training").Delete(context.Background(), "cpu-owned", metav1.DeleteOptions{})
	})
	patchDeployment := func(what, body string, want ...string) probe.Attempt {
		return probe.Attempt{What: what, Create: func(ctx context.Context) error {
			_, err := alice.Kube.AppsV1().Deployments("training").Patch(ctx, "cpu-owned", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}, Want: want}
	}
	toGPU := `{"spec":{"template":{"spec":{"schedulerName":"kai-scheduler","containers":[{"name":"work","resources":{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}}]}}}}`
	attempts := []probe.Attempt{
		patchDeployment("an owned CPU Deployment updated to ask for GPUs", toGPU, "this Deployment requests GPUs and names an owner"),
		patchDeployment("an owned CPU Deployment relabelled", `{"metadata":{"labels":{"app":"relabelled"}}}`),

		// Pods: the queue, the scheduler, KAI's labels and annotations.
		alice.Probe(t, "a GPU pod on the default scheduler", workload.Pods, workload.PodWith(own, workload.GPUPodSpec(gpu, 1), nil), "team training", "set spec.schedulerName: kai-scheduler"),
		alice.Probe(t, "a GPU pod naming another team's queue", workload.Pods, workload.PodWith(other, kaiGPU, nil), "queue research is not this team's", "kai.scheduler/queue: training"),
		alice.Probe(t, "a bare GPU pod without a queue label", workload.Pods, workload.PodWith(nil, kaiGPU, nil), "this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool)", refused),
		alice.Probe(t, "a GPU pod on kai-scheduler with its own queue label", workload.Pods, workload.PodWith(own, kaiGPU, nil)),
		alice.Probe(t, "a CPU pod on the default scheduler", workload.Pods, workload.PodWith(nil, workload.CPUPodSpec(), nil)),
		alice.Probe(t, "a CPU pod on kai-scheduler without a queue", workload.Pods, workload.PodWith(nil, onKAI(workload.CPUPodSpec()), nil)),
		alice.Probe(t, "KAI's project label instead of the queue label", workload.Pods, workload.PodWith(labelled("project", "research"), kaiGPU, nil), refused),
		alice.Probe(t, "KAI's project label beside its own queue label", workload.Pods, workload.PodWith(labelled("kai.scheduler/queue", "training", "project", "research"), kaiGPU, nil)),
		alice.Probe(t, "a non-preemptible override", workload.Pods, workload.PodWith(labelled("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "non-preemptible"), kaiGPU, nil), "may only make GPU work preemptible"),
		alice.Probe(t, "a preemptible override", workload.Pods, workload.PodWith(labelled("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "preemptible"), kaiGPU, nil)),
		alice.Probe(t, "joining a PodGroup by annotation", workload.Pods, workload.PodWith(own, kaiGPU, annotated("pod-group-name", "pg-of-research")), "chooses its own PodGroup"),
		alice.Probe(t, "skipping the podgrouper", workload.Pods, workload.PodWith(own, kaiGPU, annotated("kai.scheduler/skip-podgrouper", "true")), "chooses its own PodGroup"),
		alice.Probe(t, "a fractional GPU without a queue label", workload.Pods, workload.PodWith(nil, onKAI(workload.CPUPodSpec()), annotated("gpu-fraction", "0.5")), refused),
		alice.Probe(t, "a fractional GPU on another team's queue", workload.Pods, workload.PodWith(other, onKAI(workload.CPUPodSpec()), annotated("gpu-fraction", "0.5")), "queue research is not this team's"),
		alice.Probe(t, "a gpu-memory pod on the default scheduler", workload.Pods, workload.PodWith(own, workload.CPUPodSpec(), annotated("gpu-memory", "4000")), "set spec.schedulerName"),
		// The reference's h100 does not share by fraction (gpu_sharing).
		alice.Probe(t, "a fractional GPU on its team's queue, of a flavor that does not share", workload.Pods, workload.PodWith(own, onKAI(workload.CPUPodSpec()), annotated("gpu-fraction", "0.5")),
			"this Pod asks for part of a GPU (annotation gpu-fraction or gpu-memory), but flavor h100 does not share its GPUs by fraction", `set gpu_sharing = "fraction" on flavor h100`),
		alice.Probe(t, "spec.nodeName on a GPU pod", workload.Pods, workload.PodWith(own, withSpec(func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil), "sets spec.nodeName"),
		alice.Probe(t, "spec.nodeName on a CPU pod", workload.Pods, workload.PodWith(nil, workload.SpecWith(workload.CPUPodSpec(), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil)),
		alice.Probe(t, "GPUs in an init container", workload.Pods, workload.PodWith(nil, initGPU, nil), refused),
		alice.Probe(t, "a pod asking for more GPUs than the pool has, on its queue", workload.Pods, workload.PodWith(own, onKAI(workload.GPUPodSpec(gpu, 64)), nil), "this Pod needs 64 nvidia.com/gpu at once, but team training can use at most 24"),
		alice.Probe(t, "a pod asking for one GPU more than its team can ever use", workload.Pods, workload.PodWith(own, onKAI(workload.GPUPodSpec(gpu, 25)), nil),
			"this Pod needs 25 nvidia.com/gpu at once, but team training can use at most 24 (guaranteed + borrow, in any lending window too)", "it would wait in the queue forever; ask for at most 24"),
		// A dry run: a real Job would hold the nodes' GPUs for later probes.
		{What: "a Job of 4 pods of 8 GPUs, which KAI may start one by one", Create: func(ctx context.Context) error {
			j := workload.JobOf("training", "probe-parallel", own, kaiGPU8)
			j.Spec.Parallelism, j.Spec.Completions = ptr.To(int32(4)), ptr.To(int32(4))
			_, err := alice.Kube.BatchV1().Jobs("training").Create(ctx, j, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},

		// NVIDIA's device variables: the toolkit would hand the node's GPUs
		// to a container the device plugin gave none.
		alice.Probe(t, "a CPU pod setting NVIDIA_VISIBLE_DEVICES=all", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "NVIDIA_VISIBLE_DEVICES", "all"), nil),
			"in this Pod, container", "sets NVIDIA_VISIBLE_DEVICES without requesting a GPU through the device plugin", "the NVIDIA container toolkit reads it"),
		alice.Probe(t, "a CPU pod hiding GPUs with NVIDIA_VISIBLE_DEVICES=none", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "NVIDIA_VISIBLE_DEVICES", "none"), nil)),
		alice.Probe(t, "a GPU pod the device plugin serves, setting NVIDIA_VISIBLE_DEVICES", workload.Pods, workload.PodWith(own, workload.WithEnv(kaiGPU, "NVIDIA_VISIBLE_DEVICES", "all"), nil)),

		// Owners: only a trusted controller makes owned GPU objects.
		alice.Probe(t, "a GPU pod owned by a ConfigMap labelled with its queue", workload.Pods, workload.WithOwner(workload.PodWith(own, kaiGPU, nil), "ConfigMap"), ownedBy, "KAI's podgrouper reads the queue of the top owner"),
		alice.Probe(t, "a GPU pod with a forged Job owner", workload.Pods, workload.WithOwner(workload.PodWith(nil, kaiGPU, nil), "Job"), ownedBy),
		alice.Probe(t, "a GPU pod with a non-controller owner", workload.Pods, plainOwner(workload.PodWith(own, kaiGPU, nil)), ownedBy),
		alice.Probe(t, "a CPU pod with a non-controller owner", workload.Pods, plainOwner(workload.PodWith(nil, workload.CPUPodSpec(), nil))),
		lookalike.Probe(t, "a GPU pod by the team's own account named job-controller", workload.Pods, workload.WithOwner(workload.PodWith(nil, kaiGPU, nil), "Job"), "system:serviceaccount:training:job-controller is not a trusted controller"),
		alice.Probe(t, "a GPU Job on its queue with a forged JobSet owner", workload.Jobs, workload.WithOwner(workload.JobOf("", "probe", own, kaiGPU), "JobSet"), "this Job requests GPUs and names an owner"),
		alice.Probe(t, "a GPU Deployment on its queue with a forged owner", workload.Deployments, workload.WithOwner(workload.DeploymentOf("probe", own, nil, kaiAlways), "ConfigMap"), "this Deployment requests GPUs and names an owner"),

		// GPUs the agreement does not share, DRA, priorities, Pod Security.
		alice.Probe(t, "a MIG profile the agreement does not share", workload.Pods, workload.PodWith(own, onKAI(workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1)), nil), "asks for an nvidia.com/ resource that the agreement does not share", "ask for one of nvidia.com/gpu"),
		alice.Probe(t, "another nvidia.com/ resource", workload.Pods, workload.PodWith(own, onKAI(workload.GPUPodSpec("nvidia.com/gpu.shared", 1)), nil), "does not share"),
		alice.Probe(t, "a resource that is no GPU, without a queue", workload.Pods, workload.PodWith(nil, workload.GPUPodSpec("example.com/fpga", 1), nil)),
		alice.Probe(t, "a DRA claim without a queue", workload.Pods, workload.PodWith(nil, dra, nil), refused),
		alice.Probe(t, "a DRA claim on the default scheduler", workload.Pods, workload.PodWith(own, workload.SpecWith(dra, func(s *corev1.PodSpec) { s.SchedulerName = "" }), nil), "set spec.schedulerName"),
		alice.Probe(t, "a DRA claim on its team's queue", workload.Pods, workload.PodWith(own, dra, nil)),
		alice.Probe(t, "a ResourceClaim of NVIDIA's DRA GPU class", workload.ResourceClaims, workload.Custom(nil, nvidiaClaim), "exceeded quota: tenancy-gpus", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"),
		// A template claims nothing: the claims made from it meet the quota.
		alice.Probe(t, "a ResourceClaimTemplate of NVIDIA's DRA GPU class", workload.ResourceClaimTemplates, workload.Custom(nil, map[string]any{"spec": nvidiaClaim})),
		alice.Probe(t, "priorityClassName system-node-critical on a GPU pod", workload.Pods, workload.PodWith(own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil), "priority class system-node-critical is not a priority of the agreement gpu-pool"),
		alice.Probe(t, "priorityClassName system-node-critical on a CPU pod", workload.Pods, workload.PodWith(nil, workload.SpecWith(workload.CPUPodSpec(), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil)),
		alice.Probe(t, "priorityClassName of the agreement on a GPU pod", workload.Pods, workload.PodWith(own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "critical" }), nil)),
		alice.Probe(t, "a priority label outside the agreement", workload.Jobs, workload.JobOf("", "probe", labelled("kai.scheduler/queue", "training", "priorityClassName", "system-node-critical"), kaiGPU), "priority class system-node-critical is not a priority"),
		alice.Probe(t, "a priority label of the agreement", workload.Jobs, workload.JobOf("", "probe", labelled("kai.scheduler/queue", "training", "priorityClassName", "critical"), kaiGPU)),
		alice.Probe(t, "Kueue's priority label is not KAI's", workload.Jobs, workload.JobOf("", "probe", labelled("kai.scheduler/queue", "training", "kueue.x-k8s.io/priority-class", "urgent"), kaiGPU)),
		alice.Probe(t, "a privileged pod in a team namespace", workload.Pods, workload.PodWith(own, privileged, nil), `violates PodSecurity "baseline:latest"`, "privileged"),

		// Jobs.
		alice.Probe(t, "a GPU Job without a queue label", workload.Jobs, workload.JobOf("", "probe", nil, kaiGPU), "this Job requests GPUs", refused),
		alice.Probe(t, "a GPU Job with its own queue label", workload.Jobs, workload.JobOf("", "probe", own, kaiGPU)),
		alice.Probe(t, "a GPU Job naming another team's queue", workload.Jobs, workload.JobOf("", "probe", other, kaiGPU), "queue research is not this team's"),
		alice.Probe(t, "a GPU Job on the default scheduler", workload.Jobs, workload.JobOf("", "probe", own, workload.GPUPodSpec(gpu, 1)), "set spec.schedulerName: kai-scheduler"),
		alice.Probe(t, "a CPU-only Job without a queue", workload.Jobs, workload.JobOf("", "probe", nil, workload.CPUPodSpec())),
		alice.Probe(t, "a GPU Job with the queue on its pod template only", workload.Jobs, podWithTemplateLabels(workload.JobOf("", "probe", nil, kaiGPU), own)),
		alice.Probe(t, "a GPU Job with another team's queue on its pod template", workload.Jobs, podWithTemplateLabels(workload.JobOf("", "probe", nil, kaiGPU), other), "queue research is not this team's"),
		alice.Probe(t, "a GPU Job whose template sets nodeName", workload.Jobs, workload.JobOf("", "probe", own, withSpec(func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" })), "sets spec.nodeName"),
		alice.Probe(t, "a GPU Job asking for an unshared MIG profile", workload.Jobs, workload.JobOf("", "probe", own, onKAI(workload.GPUPodSpec("nvidia.com/mig-3g.40gb", 1))), "does not share"),
		alice.Probe(t, "a GPU Job whose template has a priority outside the agreement", workload.Jobs, workload.JobOf("", "probe", own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "system-cluster-critical" })), "priority class system-cluster-critical is not a priority"),
		alice.Probe(t, "a GPU Job whose pod template is non-preemptible", workload.Jobs, podWithTemplateLabels(workload.JobOf("", "probe", own, kaiGPU), labelled("kai.scheduler/preemptibility", "non-preemptible")), "may only make GPU work preemptible"),

		// CronJobs: KAI takes their Jobs, which carry spec.jobTemplate's
		// labels, for the top owner.
		alice.Probe(t, "a GPU CronJob without a queue", workload.CronJobs, workload.CronJobOf(nil, nil, kaiGPU), "this CronJob requests GPUs", refused),
		alice.Probe(t, "a GPU CronJob with the queue on itself, not its jobTemplate", workload.CronJobs, workload.CronJobOf(own, nil, kaiGPU),
			"carries the label kai.scheduler/queue on its own metadata only", "KAI's CronJob grouper groups the pods by the Job the CronJob makes", "put the label kai.scheduler/queue: training on spec.jobTemplate.metadata.labels"),
		alice.Probe(t, "a GPU CronJob with its jobTemplate on its queue", workload.CronJobs, workload.CronJobOf(nil, own, kaiGPU)),
		alice.Probe(t, "a GPU CronJob with another team's jobTemplate queue", workload.CronJobs, workload.CronJobOf(own, other, kaiGPU), "queue research is not this team's"),
		alice.Probe(t, "a GPU CronJob with a jobTemplate priority label outside the agreement", workload.CronJobs, workload.CronJobOf(nil, labelled("kai.scheduler/queue", "training", "priorityClassName", "system-node-critical"), kaiGPU), "priority class system-node-critical is not a priority"),

		// Built-in kinds that make pods.
		alice.Probe(t, "a GPU Deployment without a queue", workload.Deployments, workload.DeploymentOf("probe", nil, nil, kaiAlways), "this Deployment requests GPUs", refused),
		alice.Probe(t, "a GPU Deployment on its team's queue", workload.Deployments, workload.DeploymentOf("probe", own, nil, kaiAlways)),
		alice.Probe(t, "a GPU Deployment with the queue on its pod template only", workload.Deployments, workload.DeploymentOf("probe", nil, own, kaiAlways)),
		alice.Probe(t, "a GPU Deployment naming another team's queue", workload.Deployments, workload.DeploymentOf("probe", other, nil, kaiAlways), "queue research is not this team's"),
		alice.Probe(t, "a GPU Deployment with another team's queue on its template", workload.Deployments, workload.DeploymentOf("probe", nil, other, kaiAlways), "queue research is not this team's"),
		alice.Probe(t, "a GPU Deployment on the default scheduler", workload.Deployments, workload.DeploymentOf("probe", own, nil, workload.GPUAlways(1)), "set spec.schedulerName: kai-scheduler"),
		alice.Probe(t, "a CPU-only Deployment without a queue", workload.Deployments, workload.DeploymentOf("probe", nil, nil, workload.CPUAlways())),
		alice.Probe(t, "a GPU StatefulSet without a queue", workload.StatefulSets, workload.StatefulSetOf(nil, kaiAlways), "this StatefulSet requests GPUs", refused),
		alice.Probe(t, "a GPU StatefulSet on its team's queue", workload.StatefulSets, workload.StatefulSetOf(own, kaiAlways)),
		alice.Probe(t, "a GPU StatefulSet naming another team's queue", workload.StatefulSets, workload.StatefulSetOf(other, kaiAlways), "queue research is not this team's"),
		alice.Probe(t, "a GPU ReplicaSet on its team's queue", workload.ReplicaSets, workload.ReplicaSetOf(own, kaiAlways)),
		alice.Probe(t, "a GPU ReplicaSet without a queue", workload.ReplicaSets, workload.ReplicaSetOf(nil, kaiAlways), "this ReplicaSet requests GPUs", refused),
		alice.Probe(t, "a CPU-only ReplicaSet", workload.ReplicaSets, workload.ReplicaSetOf(nil, workload.CPUAlways())),
		alice.Probe(t, "a GPU DaemonSet", workload.DaemonSets, workload.DaemonSetOf(kaiAlways), "a DaemonSet that requests GPUs cannot wait in a queue"),
		alice.Probe(t, "a CPU-only DaemonSet", workload.DaemonSets, workload.DaemonSetOf(workload.CPUAlways())),
		alice.Probe(t, "a GPU ReplicationController", workload.ReplicationControllers, workload.ReplicationControllerOf(kaiAlways), "a ReplicationController that requests GPUs cannot wait in a queue"),
		alice.Probe(t, "a CPU-only ReplicationController", workload.ReplicationControllers, workload.ReplicationControllerOf(workload.CPUAlways())),

		// Kubeflow training-operator v1.
		alice.Probe(t, "a GPU PyTorchJob without a queue", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", nil, kaiGPU), "this PyTorchJob requests GPUs", refused),
		alice.Probe(t, "a GPU PyTorchJob on its team's queue", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, kaiGPU)),
		alice.Probe(t, "a GPU PyTorchJob naming another team's queue", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", other, kaiGPU), "queue research is not this team's"),
		alice.Probe(t, "a GPU PyTorchJob on the default scheduler", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, workload.GPUPodSpec(gpu, 1)), "set spec.schedulerName: kai-scheduler"),
		alice.Probe(t, "a GPU TFJob without a queue", workload.TFJobs, workload.KubeflowJob(t, "tfReplicaSpecs", "Worker", nil, kaiGPU), "this TFJob requests GPUs"),
		alice.Probe(t, "a GPU TFJob on its team's queue", workload.TFJobs, workload.KubeflowJob(t, "tfReplicaSpecs", "Worker", own, kaiGPU)),
		alice.Probe(t, "a GPU XGBoostJob without a queue", workload.XGBoostJobs, workload.KubeflowJob(t, "xgbReplicaSpecs", "Worker", nil, kaiGPU), "this XGBoostJob requests GPUs"),
		alice.Probe(t, "a GPU XGBoostJob on its team's queue", workload.XGBoostJobs, workload.KubeflowJob(t, "xgbReplicaSpecs", "Worker", own, kaiGPU)),
		alice.Probe(t, "a GPU PaddleJob without a queue", workload.PaddleJobs, workload.KubeflowJob(t, "paddleReplicaSpecs", "Worker", nil, kaiGPU), "this PaddleJob requests GPUs"),
		alice.Probe(t, "a GPU PaddleJob naming another team's queue", workload.PaddleJobs, workload.KubeflowJob(t, "paddleReplicaSpecs", "Worker", other, kaiGPU), "queue research is not this team's"),
		alice.Probe(t, "a GPU JAXJob without a queue", workload.JAXJobs, workload.KubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, kaiGPU), "this JAXJob requests GPUs"),
		alice.Probe(t, "a GPU JAXJob on its team's queue", workload.JAXJobs, workload.KubeflowJob(t, "jaxReplicaSpecs", "Worker", own, kaiGPU)),
		alice.Probe(t, "a CPU-only JAXJob without a queue", workload.JAXJobs, workload.KubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, workload.CPUPodSpec())),
		alice.Probe(t, "a GPU kubeflow.org/v1 MPIJob without a queue", workload.MPIJobs, workload.KubeflowJob(t, "mpiReplicaSpecs", "Launcher", nil, kaiGPU), "this MPIJob requests GPUs"),
		alice.Probe(t, "a GPU kubeflow.org/v1 MPIJob on its team's queue", workload.MPIJobs, workload.KubeflowJob(t, "mpiReplicaSpecs", "Launcher", own, kaiGPU)),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob without a queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", nil, kaiGPU), "this MPIJob requests GPUs", refused),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob on its team's queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", own, kaiGPU)),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob naming another team's queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", other, kaiGPU), "queue research is not this team's"),

		// KubeRay, LeaderWorkerSet, JobSet, Trainer v2, AppWrapper.
		alice.Probe(t, "a RayJob with GPU workers without a queue", workload.RayJobs, workload.Custom(nil, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)}), "this RayJob requests GPUs", refused),
		alice.Probe(t, "a RayJob with GPU workers on its queue", workload.RayJobs, workload.Custom(own, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)})),
		alice.Probe(t, "a RayJob naming another team's queue", workload.RayJobs, workload.Custom(other, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)}), "queue research is not this team's"),
		alice.Probe(t, "a CPU-only RayCluster without a queue", workload.RayClusters, workload.Custom(nil, ray(workload.CPUPodSpec()))),
		alice.Probe(t, "a RayCluster with GPU workers without a queue", workload.RayClusters, workload.Custom(nil, ray(kaiGPU)), "this RayCluster requests GPUs"),
		alice.Probe(t, "a RayCluster with GPU workers on its queue", workload.RayClusters, workload.Custom(own, ray(kaiGPU))),
		alice.Probe(t, "a RayCluster with GPU workers on the default scheduler", workload.RayClusters, workload.Custom(own, ray(workload.GPUPodSpec(gpu, 1))), "set spec.schedulerName: kai-scheduler"),
		alice.Probe(t, "a RayService with GPU workers without a queue", workload.RayServices, workload.Custom(nil, map[string]any{"rayClusterConfig": ray(kaiGPU)}), "this RayService requests GPUs"),
		alice.Probe(t, "a RayService with GPU workers on its queue", workload.RayServices, workload.Custom(own, map[string]any{"rayClusterConfig": ray(kaiGPU)})),
		alice.Probe(t, "a GPU LeaderWorkerSet without a queue", workload.LeaderWorkerSets, workload.Custom(nil, lws(kaiAlways)), "this LeaderWorkerSet requests GPUs"),
		alice.Probe(t, "a GPU LeaderWorkerSet on its team's queue", workload.LeaderWorkerSets, workload.Custom(own, lws(kaiAlways))),
		alice.Probe(t, "a GPU LeaderWorkerSet naming another team's queue", workload.LeaderWorkerSets, workload.Custom(other, lws(kaiAlways)), "queue research is not this team's"),
		alice.Probe(t, "a GPU JobSet without a queue", workload.JobSets, workload.Custom(nil, jobSet(kaiGPU, nil)), "this JobSet requests GPUs", refused),
		alice.Probe(t, "a GPU JobSet on its team's queue", workload.JobSets, workload.Custom(own, jobSet(kaiGPU, nil))),
		alice.Probe(t, "a GPU JobSet with the queue on its pod template only", workload.JobSets, workload.Custom(nil, jobSet(kaiGPU, own))),
		alice.Probe(t, "a GPU JobSet naming another team's queue", workload.JobSets, workload.Custom(other, jobSet(kaiGPU, nil)), "queue research is not this team's"),
		alice.Probe(t, "a CPU-only JobSet without a queue", workload.JobSets, workload.Custom(nil, jobSet(workload.CPUPodSpec(), nil))),
		alice.Probe(t, "a TrainJob leaving resources to its runtime, without a queue", workload.TrainJobs, workload.Custom(nil, trainJob(nil)), "this TrainJob requests GPUs", refused),
		alice.Probe(t, "a TrainJob with GPUs per node on its team's queue", workload.TrainJobs, workload.Custom(own, trainJob(map[string]any{"nvidia.com/gpu": "1"}))),
		alice.Probe(t, "a TrainJob naming another team's queue", workload.TrainJobs, workload.Custom(other, trainJob(map[string]any{"nvidia.com/gpu": "1"})), "queue research is not this team's"),
		alice.Probe(t, "a CPU-only TrainJob without a queue", workload.TrainJobs, workload.Custom(nil, trainJob(map[string]any{"cpu": "4"}))),
		alice.Probe(t, "an AppWrapper without a queue", workload.AppWrappers, workload.Custom(nil, appWrapper), "this AppWrapper requests GPUs", refused),
		alice.Probe(t, "an AppWrapper on its team's queue", workload.AppWrappers, workload.Custom(own, appWrapper)),
		alice.Probe(t, "an AppWrapper naming another team's queue", workload.AppWrappers, workload.Custom(other, appWrapper), "queue research is not this team's"),

		// PodGroups a team makes itself.
		alice.Probe(t, "a PodGroup on another team's queue", workload.PodGroups, podGroup("research"), "PodGroup queue research is not this team's"),
		alice.Probe(t, "a PodGroup on its team's queue", workload.PodGroups, podGroup("training")),
	}

	probe.Try(t, ctxFor(t), attempts)
	t.Logf("%d requests made for real by %s; %d objects let through", len(attempts), alice.Name, len(alice.Made))

	// What was let through runs: the Deployment, StatefulSet, ReplicaSet
	// and ReplicationController controllers make the pods, KAI's
	// podgrouper groups those that ask for GPUs on training's queue.
	controllers := 0
	for _, m := range alice.Made {
		if !m.MadeByController() {
			continue
		}
		controllers++
		p := firstPod(t, "training", m.Name+"-")
		if !asksForGPUs(p) {
			t.Logf("%s: the controller made pod %s", m.What, p.Name)
			continue
		}
		pg := waitPodGroup(t, "training", p.Name)
		if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "training" {
			t.Errorf("%s: pod %s's PodGroup %s is on queue %q, want training", m.What, p.Name, pg.GetName(), q)
		} else {
			t.Logf("%s: the controller made pod %s, KAI grouped it on training's queue (%s)", m.What, p.Name, pg.GetName())
		}
	}
	if controllers != 7 {
		t.Errorf("%d objects of the built-in pod-making kinds let through, want the 7 the table expects", controllers)
	}
	// A fractional GPU let through passed KAI's admission webhook, which
	// wired it to its GPU-sharing ConfigMap; binding fractions is the
	// TestKAISharing checks' (sharing_test.go).
}

// waitGuardrails waits until the API server enforces the render's queue
// policy for u (it picks policies up from an informer), and has the policy
// type checker's verdict on every policy of objs read when the check ends
// (probe.TypeCheckAtEnd).
func waitGuardrails(t *testing.T, objs []*obj, u *probe.TeamAdmin) {
	t.Helper()
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: training.podSpec()}
	waitFor(t, "the guardrails in force", func(ctx context.Context) (bool, string) {
		_, err := u.Kube.CoreV1().Pods(u.NS).Create(ctx, bare, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "add the label kai.scheduler/queue: "+u.NS), fmt.Sprint(err)
	})
	var policies []string
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicy" {
			policies = append(policies, o.GetName())
		}
	}
	if len(policies) == 0 {
		t.Fatal("the render has no ValidatingAdmissionPolicy")
	}
	probe.TypeCheckAtEnd(t, env.cp, waits, policies)
}

// asksForGPUs reports whether one of p's containers asks for an nvidia.com/
// resource.
func asksForGPUs(p *corePod) bool {
	for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
		for r := range c.Resources.Requests {
			if strings.HasPrefix(string(r), "nvidia.com/") {
				return true
			}
		}
	}
	return false
}
