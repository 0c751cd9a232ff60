package guard_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenancy-dev/tenancy/generator"
)

// Requesters: kube-controller-manager's controllers (with and without
// service account credentials), an operator of the default trusted list, a
// team's own service account named like a controller, and a pod-grouper.
const (
	jobController  = "system:serviceaccount:kube-system:job-controller"
	kcm            = "system:kube-controller-manager"
	deployCtrl     = "system:serviceaccount:kube-system:replicaset-controller"
	kuberay        = "system:serviceaccount:ray-system:kuberay-operator"
	lookalike      = "system:serviceaccount:training:job-controller"
	podGrouper     = "system:serviceaccount:kai-scheduler:pod-grouper"
	deploymentCtrl = "system:serviceaccount:kube-system:deployment-controller"
)

var (
	jaxGVR        = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "jaxjobs"}
	mpiV1GVR      = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}
	mpiGVR        = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}
	raySvcGVR     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
	trainJobGVR   = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	appWrapperGVR = schema.GroupVersionResource{Group: "workload.codeflare.dev", Version: "v1beta2", Resource: "appwrappers"}
	dsGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	rsGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	rcGVR         = schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}
	podGroupGVR   = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
)

func owned(p *corev1.Pod, kind string) *corev1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: "o", UID: "u", Controller: ptrTrue()}}
	return p
}

// forgedOwner gives d a controller owner, as a user may write one.
func forgedOwner(d *appsv1.Deployment) *appsv1.Deployment {
	d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u", Controller: ptrTrue()}}
	return d
}

// plainOwned gives p an owner that is no controller's.
func plainOwned(p *corev1.Pod) *corev1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}}
	return p
}

func withSpec(p *corev1.Pod, f func(*corev1.PodSpec)) *corev1.Pod { f(&p.Spec); return p }

func withAnnotations(p *corev1.Pod, kv ...string) *corev1.Pod {
	p.Annotations = labels(kv...)
	return p
}

func cronJob(jobLabels map[string]string, c corev1.Container) *batchv1.CronJob {
	return &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "training"},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: jobLabels}, Spec: job(nil, c).Spec,
		}},
	}
}

func deployment(l, templateLabels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "training", Labels: l},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: templateLabels}, Spec: spec}},
	}
}

func spec(c corev1.Container) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{c}}
}

func replicated(kind string, c corev1.Container) runtime.Object {
	tmpl := corev1.PodTemplateSpec{Spec: spec(c)}
	switch kind {
	case "DaemonSet":
		return &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "training"}, Spec: appsv1.DaemonSetSpec{Template: tmpl}}
	case "ReplicaSet":
		return &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "training", Labels: labels("kueue.x-k8s.io/queue-name", "training")}, Spec: appsv1.ReplicaSetSpec{Template: tmpl}}
	default:
		return &corev1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}, ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "training"}, Spec: corev1.ReplicationControllerSpec{Template: &tmpl}}
	}
}

func kubeflowJob(apiVersion, kind, specs string, l map[string]string, res string) runtime.Object {
	return crd(apiVersion, kind, l, map[string]any{specs: map[string]any{"Worker": map[string]any{"replicas": int64(2), "template": template(res)}}})
}

type policyCase struct {
	req  request
	want []string // substrings of each refusal, in order; nil: admitted
}

func runCases(t *testing.T, r rendered, tests map[string]policyCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wantRefusals(t, r.admit(t, tc.req, "training", "training"), tc.want)
		})
	}
}

// TestKueueQueuePolicy: the API server refuses GPU workloads in a team
// namespace that name no queue or another team's, that escape the queue
// some other way (an owner the user wrote, a kind no queue holds, a node
// chosen by hand, a GPU resource or priority outside the agreement); it
// lets through what the agreement wants, and what a trusted controller
// makes from a checked parent.
func TestKueueQueuePolicy(t *testing.T) {
	r := renderGuard(t, reference, generator.Options{})
	gpu := gpuContainer("nvidia.com/gpu", 8)
	own := labels("kueue.x-k8s.io/queue-name", "training")
	other := labels("kueue.x-k8s.io/queue-name", "research")
	req := func(gvr schema.GroupVersionResource, obj runtime.Object) request { return request{gvr: gvr, obj: obj} }
	by := func(user string, gvr schema.GroupVersionResource, obj runtime.Object) request {
		return request{gvr: gvr, obj: obj, user: user}
	}
	update := func(user string, old, obj runtime.Object) request {
		return request{gvr: podsGVR, obj: obj, old: old, user: user}
	}
	preGuard := pod(nil, gpu) // a GPU pod that predates the guardrails
	preGuard.Finalizers = []string{"batch.kubernetes.io/job-tracking"}
	finalized := preGuard.DeepCopy()
	finalized.Finalizers = nil
	relabelled := preGuard.DeepCopy()
	relabelled.Labels = labels("app", "x")
	dra := withSpec(pod(nil, cpuContainer()), func(s *corev1.PodSpec) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptrString("gpu")}}
	})
	draOwn := dra.DeepCopy()
	draOwn.Labels = own
	tests := map[string]policyCase{
		"GPU Job without a queue":             {req(jobsGVR, job(nil, gpu)), []string{"this Job requests GPUs in namespace training of team training (tenancy agreement gpu-pool): add the label kueue.x-k8s.io/queue-name: training"}},
		"GPU Job naming another team's queue": {req(jobsGVR, job(other, gpu)), []string{"queue research is not this team's in namespace training of team training (tenancy agreement gpu-pool): set the label kueue.x-k8s.io/queue-name: training"}},
		"GPU Job on its own queue":            {req(jobsGVR, job(own, gpu)), nil},
		"an init container's GPUs count too": {req(jobsGVR, func() runtime.Object {
			j := job(nil, cpuContainer())
			j.Spec.Template.Spec.InitContainers = []corev1.Container{gpu}
			return j
		}()), []string{"add the label"}},
		"CPU-only Job without a queue": {req(jobsGVR, job(nil, cpuContainer())), nil},
		"bare GPU Pod without a queue": {req(podsGVR, pod(nil, gpu)), []string{"this Pod requests GPUs"}},
		"CPU Pod without a queue":      {req(podsGVR, pod(nil, cpuContainer())), nil},

		// Trust by who asks.
		"GPU Pod with a forged owner, by a user":    {req(podsGVR, owned(pod(nil, gpu), "ConfigMap")), []string{"names a controller owner, but alice is not a trusted controller", "add the label"}},
		"GPU Pod with a forged owner, on its queue": {req(podsGVR, owned(pod(own, gpu), "Job")), []string{"names a controller owner"}},
		"GPU Job with a forged JobSet owner": {req(jobsGVR, func() runtime.Object {
			j := job(own, gpu)
			j.OwnerReferences = owned(pod(nil, gpu), "JobSet").OwnerReferences
			return j
		}()), []string{"names a controller owner"}},
		"GPU Pod by the Job controller":                 {by(jobController, podsGVR, owned(pod(nil, gpu), "Job")), nil},
		"GPU Pod by kube-controller-manager":            {by(kcm, podsGVR, owned(pod(nil, gpu), "Job")), nil},
		"GPU Pod by KubeRay":                            {by(kuberay, podsGVR, owned(pod(nil, gpu), "RayCluster")), nil},
		"GPU Pod by a team's look-alike account":        {by(lookalike, podsGVR, owned(pod(nil, gpu), "Job")), []string{"names a controller owner", "add the label"}},
		"trusted controller, another team's queue":      {by(jobController, podsGVR, owned(pod(other, gpu), "Job")), []string{"queue research is not this team's"}},
		"ReplicaSet of a Deployment, by its controller": {by(deploymentCtrl, rsGVR, replicated("ReplicaSet", gpu)), nil},
		"pods of a ReplicaSet, by its controller":       {by(deployCtrl, podsGVR, owned(pod(nil, gpu), "ReplicaSet")), nil},

		// Priorities.
		"unknown priority":                   {req(jobsGVR, job(labels("kueue.x-k8s.io/queue-name", "training", "kueue.x-k8s.io/priority-class", "urgent"), gpu)), []string{"priority urgent is not a priority of the agreement gpu-pool (critical, standard)"}},
		"known priority":                     {req(jobsGVR, job(labels("kueue.x-k8s.io/queue-name", "training", "kueue.x-k8s.io/priority-class", "critical"), gpu)), nil},
		"system-node-critical":               {req(podsGVR, withSpec(pod(own, gpu), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" })), []string{"priority class system-node-critical is not a priority of the agreement gpu-pool"}},
		"priorityClassName of the agreement": {req(podsGVR, withSpec(pod(own, gpu), func(s *corev1.PodSpec) { s.PriorityClassName = "standard" })), nil},
		"system-node-critical on a CPU pod":  {req(podsGVR, withSpec(pod(nil, cpuContainer()), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" })), nil},

		// CronJobs carry their Jobs' labels in spec.jobTemplate.
		"GPU CronJob without a queue":            {req(cronJobsGVR, cronJob(nil, gpu)), []string{"this CronJob requests GPUs"}},
		"GPU CronJob with its jobTemplate queue": {req(cronJobsGVR, cronJob(own, gpu)), nil},
		"GPU CronJob labelled on itself only": {req(cronJobsGVR, func() runtime.Object {
			c := cronJob(nil, gpu)
			c.Labels = own
			return c
		}()), []string{"carries the label kueue.x-k8s.io/queue-name on its own metadata only in namespace training of team training (tenancy agreement gpu-pool): Kueue reads the queue of the Jobs the CronJob makes, whose labels come from spec.jobTemplate.metadata.labels; put the label kueue.x-k8s.io/queue-name: training on spec.jobTemplate.metadata.labels"}},
		"GPU CronJob, another team's jobTemplate queue": {req(cronJobsGVR, cronJob(other, gpu)), []string{"queue research is not this team's"}},
		"GPU CronJob, unknown jobTemplate priority":     {req(cronJobsGVR, cronJob(labels("kueue.x-k8s.io/queue-name", "training", "kueue.x-k8s.io/priority-class", "urgent"), gpu)), []string{"priority urgent is not a priority"}},
		"Job of a CronJob, by its controller": {by("system:serviceaccount:kube-system:cronjob-controller", jobsGVR, func() runtime.Object {
			j := job(own, gpu)
			j.OwnerReferences = owned(pod(nil, gpu), "CronJob").OwnerReferences
			return j
		}()), nil},

		// Every kind that makes pods.
		"GPU Deployment without a queue": {req(deployGVR, deployment(nil, nil, spec(gpu))), []string{"this Deployment requests GPUs"}},
		"GPU Deployment on its queue":    {req(deployGVR, deployment(own, nil, spec(gpu))), nil},
		"GPU DaemonSet":                  {req(dsGVR, replicated("DaemonSet", gpu)), []string{"a DaemonSet that requests GPUs cannot wait in a queue"}},
		"CPU DaemonSet":                  {req(dsGVR, replicated("DaemonSet", cpuContainer())), nil},
		"GPU ReplicationController":      {req(rcGVR, replicated("ReplicationController", gpu)), []string{"a ReplicationController that requests GPUs cannot wait in a queue"}},
		"GPU ReplicaSet by a user":       {req(rsGVR, replicated("ReplicaSet", gpu)), []string{"a ReplicaSet that requests GPUs cannot wait in a queue"}},
		"JobSet without a queue": {req(jobSetsGVR, crd("jobset.x-k8s.io/v1alpha2", "JobSet", nil, map[string]any{
			"replicatedJobs": []any{map[string]any{"name": "r", "template": map[string]any{"spec": map[string]any{"template": template("nvidia.com/gpu")}}}},
		})), []string{"this JobSet requests GPUs"}},
		"PyTorchJob without a queue":  {req(pytorchGVR, kubeflowJob("kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", nil, "nvidia.com/gpu")), []string{"this PyTorchJob requests GPUs"}},
		"PyTorchJob on its queue":     {req(pytorchGVR, kubeflowJob("kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", own, "nvidia.com/gpu")), nil},
		"JAXJob without a queue":      {req(jaxGVR, kubeflowJob("kubeflow.org/v1", "JAXJob", "jaxReplicaSpecs", nil, "nvidia.com/gpu")), []string{"this JAXJob requests GPUs"}},
		"CPU JAXJob without a queue":  {req(jaxGVR, kubeflowJob("kubeflow.org/v1", "JAXJob", "jaxReplicaSpecs", nil, "cpu")), nil},
		"kubeflow.org/v1 MPIJob":      {req(mpiV1GVR, kubeflowJob("kubeflow.org/v1", "MPIJob", "mpiReplicaSpecs", nil, "nvidia.com/gpu")), []string{"this MPIJob requests GPUs"}},
		"kubeflow.org/v2beta1 MPIJob": {req(mpiGVR, kubeflowJob("kubeflow.org/v2beta1", "MPIJob", "mpiReplicaSpecs", other, "nvidia.com/gpu")), []string{"queue research is not this team's"}},
		"RayJob with GPU workers": {req(rayJobsGVR, crd("ray.io/v1", "RayJob", nil, map[string]any{"rayClusterSpec": map[string]any{
			"headGroupSpec":    map[string]any{"template": template("cpu")},
			"workerGroupSpecs": []any{map[string]any{"template": template("nvidia.com/gpu")}},
		}})), []string{"this RayJob requests GPUs"}},
		"RayService with GPU workers": {req(raySvcGVR, crd("ray.io/v1", "RayService", nil, map[string]any{"rayClusterConfig": map[string]any{
			"headGroupSpec":    map[string]any{"template": template("cpu")},
			"workerGroupSpecs": []any{map[string]any{"template": template("nvidia.com/gpu")}},
		}})), []string{"this RayService requests GPUs"}},
		"RayCluster with a CPU head only": {req(rayClusterGVR, crd("ray.io/v1", "RayCluster", nil, map[string]any{
			"headGroupSpec": map[string]any{"template": template("cpu")},
		})), nil},
		"LeaderWorkerSet without a queue": {req(lwsGVR, crd("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", nil, map[string]any{
			"leaderWorkerTemplate": map[string]any{"workerTemplate": template("nvidia.com/gpu")},
		})), []string{"this LeaderWorkerSet requests GPUs"}},
		"LeaderWorkerSet with a GPU leader only": {req(lwsGVR, crd("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", nil, map[string]any{
			"leaderWorkerTemplate": map[string]any{"workerTemplate": template("cpu"), "leaderTemplate": template("nvidia.com/gpu")},
		})), []string{"this LeaderWorkerSet requests GPUs"}},
		"TrainJob asking GPUs per node": {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", nil, map[string]any{
			"runtimeRef": map[string]any{"name": "torch"}, "trainer": map[string]any{"resourcesPerNode": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "8"}}},
		})), []string{"this TrainJob requests GPUs"}},
		"CPU TrainJob without a queue": {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", nil, map[string]any{
			"runtimeRef": map[string]any{"name": "torch"}, "trainer": map[string]any{"resourcesPerNode": map[string]any{"limits": map[string]any{"cpu": "8"}}},
		})), nil},
		"TrainJob leaving resources to its runtime": {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", nil, map[string]any{
			"runtimeRef": map[string]any{"name": "torch"},
		})), []string{"this TrainJob requests GPUs"}},
		"TrainJob on its queue":      {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", own, map[string]any{"runtimeRef": map[string]any{"name": "torch"}})), nil},
		"AppWrapper without a queue": {req(appWrapperGVR, crd("workload.codeflare.dev/v1beta2", "AppWrapper", nil, map[string]any{"components": []any{}})), []string{"this AppWrapper requests GPUs"}},
		"AppWrapper on its queue":    {req(appWrapperGVR, crd("workload.codeflare.dev/v1beta2", "AppWrapper", own, map[string]any{"components": []any{}})), nil},

		// Every way of asking for a GPU.
		"a MIG profile the agreement does not share": {req(podsGVR, pod(own, gpuContainer("nvidia.com/mig-1g.10gb", 1))), []string{"asks for an nvidia.com/ resource that the agreement does not share in namespace training of team training (tenancy agreement gpu-pool): ask for one of nvidia.com/gpu"}},
		"another nvidia.com/ resource, no queue":     {req(podsGVR, pod(nil, gpuContainer("nvidia.com/gpu.shared", 1))), []string{"add the label", "does not share"}},
		"a resource that is no GPU":                  {req(podsGVR, pod(nil, gpuContainer("example.com/fpga", 1))), nil},
		"a DRA claim without a queue":                {req(podsGVR, dra), []string{"this Pod requests GPUs"}},
		"a DRA claim on its queue":                   {req(podsGVR, draOwn), nil},
		"KAI's gpu-fraction without a queue":         {req(podsGVR, withAnnotations(pod(nil, cpuContainer()), "gpu-fraction", "0.5")), []string{"this Pod requests GPUs"}},
		"spec.nodeName on a GPU pod":                 {req(podsGVR, withSpec(pod(own, gpu), func(s *corev1.PodSpec) { s.NodeName = "node-1" })), []string{"sets spec.nodeName"}},
		"spec.nodeName on a CPU pod":                 {req(podsGVR, withSpec(pod(nil, cpuContainer()), func(s *corev1.PodSpec) { s.NodeName = "node-1" })), nil},

		// Updates are checked only when a guarded field changes.
		"a finalizer removed from a pre-guardrails pod": {update(jobController, preGuard, finalized), nil},
		"the same, by a user":                           {update("alice", preGuard, finalized), nil},
		"labels changed on a pre-guardrails pod":        {update("alice", preGuard, relabelled), []string{"add the label"}},
		"a queue label switched to another team's":      {update("alice", pod(own, gpu), pod(other, gpu)), []string{"queue research is not this team's"}},
		"a scheduling gate lifted from a Job's pod by an untrusted account": {update("kueue-as-admin", withSpec(owned(pod(nil, gpu), "Job"), func(s *corev1.PodSpec) {
			s.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}
		}), owned(pod(nil, gpu), "Job")), nil},
		"an owner added by update": {update("alice", pod(own, gpu), owned(pod(own, gpu), "Job")), []string{"names a controller owner"}},
		// A user may create an owned CPU object; made to ask for GPUs by an
		// update, it is checked as a create: its owner could name another
		// queue, or make Kueue skip it.
		"an owned CPU Deployment updated to ask for GPUs": {request{gvr: deployGVR, user: "alice",
			old: forgedOwner(deployment(own, nil, spec(cpuContainer()))), obj: forgedOwner(deployment(own, nil, spec(gpu)))}, []string{"names a controller owner"}},
		"an owned GPU Deployment relabelled by a user": {request{gvr: deployGVR, user: "alice",
			old: forgedOwner(deployment(own, nil, spec(gpu))), obj: forgedOwner(deployment(labels("kueue.x-k8s.io/queue-name", "training", "app", "x"), nil, spec(gpu)))}, nil},
		"a bound pod relabelled on its queue": {update("alice", withSpec(pod(own, gpu), func(s *corev1.PodSpec) { s.NodeName = "n" }), withSpec(pod(labels("kueue.x-k8s.io/queue-name", "training", "app", "x"), gpu), func(s *corev1.PodSpec) { s.NodeName = "n" })), nil},
	}
	runCases(t, r, tests)
}

// TestKAIQueuePolicy: under KAI a GPU pod must use kai-scheduler, and the
// queue KAI reads (the top owner's label, else the pod's) must be its own
// team's; KAI's other ways around the queue are refused.
func TestKAIQueuePolicy(t *testing.T) {
	r := renderGuard(t, reference, generator.Options{Backend: generator.KAI})
	gpu := gpuContainer("nvidia.com/gpu", 8)
	onKAI := func(p *corev1.Pod) *corev1.Pod { p.Spec.SchedulerName = "kai-scheduler"; return p }
	kaiSpec := spec(gpu)
	kaiSpec.SchedulerName = "kai-scheduler"
	own := labels("kai.scheduler/queue", "training")
	req := func(gvr schema.GroupVersionResource, obj runtime.Object) request { return request{gvr: gvr, obj: obj} }
	kaiJob := func(l map[string]string) *batchv1.Job {
		j := job(l, gpu)
		j.Spec.Template.Spec.SchedulerName = "kai-scheduler"
		return j
	}
	podGroup := func(queue string) runtime.Object {
		return crd("scheduling.run.ai/v2alpha2", "PodGroup", nil, map[string]any{"queue": queue, "minMember": int64(1)})
	}
	grouped := withAnnotations(onKAI(pod(own, gpu)), "pod-group-name", "pg-research")
	kaiCron := func(l, jobLabels map[string]string) runtime.Object {
		c := cronJob(jobLabels, gpu)
		c.Labels = l
		c.Spec.JobTemplate.Spec.Template.Spec.SchedulerName = "kai-scheduler"
		return c
	}
	tests := map[string]policyCase{
		"GPU pod on the default scheduler":       {req(podsGVR, pod(own, gpu)), []string{"set spec.schedulerName: kai-scheduler"}},
		"GPU pod naming another team's queue":    {req(podsGVR, onKAI(pod(labels("kai.scheduler/queue", "research"), gpu))), []string{"queue research is not this team's"}},
		"bare GPU pod without a queue label":     {req(podsGVR, onKAI(pod(nil, gpu))), []string{"add the label kai.scheduler/queue: training"}},
		"GPU pod as the agreement wants":         {req(podsGVR, onKAI(pod(own, gpu))), nil},
		"GPU pod by the Job controller":          {request{gvr: podsGVR, obj: owned(onKAI(pod(nil, gpu)), "Job"), user: jobController}, nil},
		"a trusted pod on the default scheduler": {request{gvr: podsGVR, obj: owned(pod(nil, gpu), "Job"), user: jobController}, []string{"set spec.schedulerName"}},
		"a pod owned by a labelled ConfigMap":    {req(podsGVR, owned(onKAI(pod(own, gpu)), "ConfigMap")), []string{"names an owner, but alice is not a trusted controller in namespace training of team training (tenancy agreement gpu-pool): create it without ownerReferences: KAI's podgrouper reads the queue of the top owner"}},
		// KAI's podgrouper follows ownerReferences[0] whether or not it is
		// a controller's: a ConfigMap labelled with research's queue would
		// put this pod on research's queue.
		"a pod with a non-controller owner":     {req(podsGVR, plainOwned(onKAI(pod(own, gpu)))), []string{"names an owner"}},
		"a CPU pod with a non-controller owner": {req(podsGVR, plainOwned(pod(nil, cpuContainer()))), nil},
		"an owned CPU pod made to ask for a fractional GPU by update": {request{gvr: podsGVR, user: "alice",
			old: plainOwned(onKAI(pod(own, cpuContainer()))), obj: withAnnotations(plainOwned(onKAI(pod(own, cpuContainer()))), "gpu-fraction", "0.5")}, []string{"names an owner", "flavor h100 does not share its GPUs by fraction"}},
		// The PodGroup annotations are the podgrouper's, on updates of a
		// controller's pods too.
		"a user re-pointing a Job's GPU pod at another PodGroup": {request{gvr: podsGVR, user: "alice",
			old: withAnnotations(owned(onKAI(pod(nil, gpu)), "Job"), "pod-group-name", "pg-j"), obj: withAnnotations(owned(onKAI(pod(nil, gpu)), "Job"), "pod-group-name", "pg-research")}, []string{"chooses its own PodGroup"}},
		"a user making the podgrouper skip a Job's GPU pod": {request{gvr: podsGVR, user: "alice",
			old: owned(onKAI(pod(nil, gpu)), "Job"), obj: withAnnotations(owned(onKAI(pod(nil, gpu)), "Job"), "kai.scheduler/skip-podgrouper", "true")}, []string{"chooses its own PodGroup"}},
		"a user relabelling its grouped GPU pod": {request{gvr: podsGVR, user: "alice",
			old: grouped, obj: withAnnotations(onKAI(pod(labels("kai.scheduler/queue", "training", "app", "x"), gpu)), "pod-group-name", "pg-research")}, nil},
		"the podgrouper annotating a Job's pod": {request{gvr: podsGVR, obj: withAnnotations(owned(onKAI(pod(nil, gpu)), "Job"), "pod-group-name", "pg-j"), old: owned(onKAI(pod(nil, gpu)), "Job"), user: podGrouper}, nil},
		// No pod template to read a queue from: the label on the object.
		"an AppWrapper without a queue":  {req(appWrapperGVR, crd("workload.codeflare.dev/v1beta2", "AppWrapper", nil, map[string]any{"components": []any{}})), []string{"add the label kai.scheduler/queue: training"}},
		"an AppWrapper on its queue":     {req(appWrapperGVR, crd("workload.codeflare.dev/v1beta2", "AppWrapper", own, map[string]any{"components": []any{}})), nil},
		"a TrainJob without a queue":     {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", nil, map[string]any{"runtimeRef": map[string]any{"name": "torch"}})), []string{"add the label kai.scheduler/queue: training"}},
		"an AppWrapper on another queue": {req(appWrapperGVR, crd("workload.codeflare.dev/v1beta2", "AppWrapper", labels("kai.scheduler/queue", "research"), map[string]any{"components": []any{}})), []string{"queue research is not this team's"}},
		// Its runtime names the scheduler; the trainer's JobSet is checked.
		"a GPU TrainJob per node on its queue": {req(trainJobGVR, crd("trainer.kubeflow.org/v1alpha1", "TrainJob", own, map[string]any{
			"runtimeRef": map[string]any{"name": "torch"}, "trainer": map[string]any{"resourcesPerNode": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "8"}}},
		})), nil},
		"CPU pod on the default scheduler":                 {req(podsGVR, pod(nil, cpuContainer())), nil},
		"GPU Job without a queue label":                    {req(jobsGVR, kaiJob(nil)), []string{"add the label kai.scheduler/queue: training"}},
		"GPU Job with its queue label":                     {req(jobsGVR, kaiJob(own)), nil},
		"GPU Job on the default scheduler":                 {req(jobsGVR, job(own, gpu)), []string{"set spec.schedulerName: kai-scheduler"}},
		"a Deployment with the queue on its template only": {req(deployGVR, deployment(nil, own, kaiSpec)), nil},
		"a Deployment, another queue on its template":      {req(deployGVR, deployment(nil, labels("kai.scheduler/queue", "research"), kaiSpec)), []string{"queue research is not this team's"}},
		"a GPU ReplicaSet on its queue": {req(rsGVR, func() runtime.Object {
			rs := replicated("ReplicaSet", gpu).(*appsv1.ReplicaSet)
			rs.Labels = own
			rs.Spec.Template.Spec.SchedulerName = "kai-scheduler"
			return rs
		}()), nil},
		"the project label instead of the queue":         {req(podsGVR, onKAI(pod(labels("project", "research"), gpu))), []string{"add the label kai.scheduler/queue: training"}},
		"non-preemptible by label":                       {req(podsGVR, onKAI(pod(labels("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "non-preemptible"), gpu))), []string{"may only make GPU work preemptible"}},
		"preemptible by label":                           {req(podsGVR, onKAI(pod(labels("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "preemptible"), gpu))), nil},
		"a PodGroup chosen by annotation":                {req(podsGVR, grouped), []string{"chooses its own PodGroup"}},
		"skip-podgrouper":                                {req(podsGVR, withAnnotations(onKAI(pod(own, gpu)), "kai.scheduler/skip-podgrouper", "true")), []string{"chooses its own PodGroup"}},
		"the podgrouper annotating a pod":                {request{gvr: podsGVR, obj: grouped, old: onKAI(pod(own, gpu)), user: podGrouper}, nil},
		"a fractional GPU without a queue":               {req(podsGVR, withAnnotations(onKAI(pod(nil, cpuContainer())), "gpu-fraction", "0.5")), []string{"add the label kai.scheduler/queue", "does not share"}},
		"gpu-memory on the default scheduler":            {req(podsGVR, withAnnotations(pod(own, cpuContainer()), "gpu-memory", "4000")), []string{"set spec.schedulerName", "does not share"}},
		"a fractional GPU on h100, which is not shared":  {req(podsGVR, withAnnotations(onKAI(pod(own, cpuContainer())), "gpu-fraction", "0.5")), []string{"flavor h100 does not share its GPUs by fraction"}},
		"spec.nodeName on a GPU pod":                     {req(podsGVR, withSpec(onKAI(pod(own, gpu)), func(s *corev1.PodSpec) { s.NodeName = "node-1" })), []string{"sets spec.nodeName"}},
		"a priority label outside the agreement":         {req(jobsGVR, kaiJob(labels("kai.scheduler/queue", "training", "priorityClassName", "system-node-critical"))), []string{"priority class system-node-critical is not a priority"}},
		"a priority label of the agreement":              {req(jobsGVR, kaiJob(labels("kai.scheduler/queue", "training", "priorityClassName", "critical"))), nil},
		"Kueue's priority label is not KAI's":            {req(jobsGVR, kaiJob(labels("kai.scheduler/queue", "training", "kueue.x-k8s.io/priority-class", "urgent"))), nil},
		"a PodGroup on another team's queue":             {req(podGroupGVR, podGroup("research")), []string{"PodGroup queue research is not this team's"}},
		"a PodGroup on its team's queue":                 {req(podGroupGVR, podGroup("training")), nil},
		"the podgrouper's PodGroup on the default queue": {request{gvr: podGroupGVR, obj: podGroup("default-queue"), user: podGrouper}, nil},
		// KAI's CronJob grouper reads the Job's labels, which are the
		// jobTemplate's, then the pod's: never the CronJob's own.
		"a CronJob with its jobTemplate on its queue": {req(cronJobsGVR, kaiCron(nil, own)), nil},
		"a CronJob with the queue on itself only": {req(cronJobsGVR, kaiCron(own, nil)), []string{
			"this CronJob requests GPUs and carries the label kai.scheduler/queue on its own metadata only in namespace training of team training (tenancy agreement gpu-pool): " +
				"KAI's CronJob grouper groups the pods by the Job the CronJob makes, and reads the Job's labels, which come from spec.jobTemplate.metadata.labels; put the label kai.scheduler/queue: training on spec.jobTemplate.metadata.labels"}},
		"a CronJob with another team's queue on its jobTemplate": {req(cronJobsGVR, kaiCron(own, labels("kai.scheduler/queue", "research"))), []string{"queue research is not this team's"}},
		"a CronJob whose jobTemplate is non-preemptible": {req(cronJobsGVR, kaiCron(nil, labels("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "non-preemptible"))),
			[]string{"may only make GPU work preemptible"}},
	}
	runCases(t, r, tests)
}

// TestBindingSelectsPoolTeams: the binding selects the pool's team
// Namespaces by their labels, not a list of names: a new team's namespace
// is selected without touching the binding, another pool's is not.
func TestBindingSelectsPoolTeams(t *testing.T) {
	r := renderGuard(t, reference, generator.Options{})
	if len(r.bindings) != 1 {
		t.Fatalf("%d bindings, want 1", len(r.bindings))
	}
	sel, err := metav1.LabelSelectorAsSelector(r.bindings[0].Spec.MatchResources.NamespaceSelector)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		labels map[string]string
		want   bool
	}{
		"a team namespace of the pool":     {labels("tenancy.dev/pool", "gpu-pool", "tenancy.dev/team", "newteam"), true},
		"a team namespace of another pool": {labels("tenancy.dev/pool", "other", "tenancy.dev/team", "training"), false},
		"the pool's label without a team":  {labels("tenancy.dev/pool", "gpu-pool"), false},
		"kube-system":                      {labels("kubernetes.io/metadata.name", "kube-system"), false},
	}
	for name, tc := range tests {
		if got := sel.Matches(k8slabels.Set(tc.labels)); got != tc.want {
			t.Errorf("%s: selected %v, want %v", name, got, tc.want)
		}
	}
}

// TestPoliciesAreStatic: two agreements with different teams, GPUs and
// priorities render the same policy for a backend but for the variables
// that carry the agreement's data.
func TestPoliciesAreStatic(t *testing.T) {
	other := "version = 1\nname = \"gpu-pool\"\n[flavors.a100]\nresource = \"nvidia.com/mig-3g.40gb\"\ncapacity = 8\n[teams.vision]\nguaranteed = 8\n"
	for _, b := range []generator.Backend{generator.Kueue, generator.KAI} {
		a := renderGuard(t, reference, generator.Options{Backend: b}).policies
		c := renderGuard(t, other, generator.Options{Backend: b}).policies
		if len(a) != 1 || len(c) != 1 {
			t.Fatalf("%s: %d and %d policies, want 1 each", b, len(a), len(c))
		}
		if !equalSpecs(a[0], c[0]) {
			t.Errorf("%s: the policy differs between agreements", b)
		}
	}
}

func ptrString(s string) *string { return &s }

// TestTrustedControllers: the key replaces the default list, the policy
// trusts exactly what it names (kube-controller-manager's controllers
// always), and a name with a blank is an error at its position.
func TestTrustedControllers(t *testing.T) {
	src := reference + "[guardrails]\ntrusted_controllers = [\"system:serviceaccount:argo:argo-workflow-controller\"]\n"
	r := renderGuard(t, src, generator.Options{})
	gpuPod := owned(pod(nil, gpuContainer("nvidia.com/gpu", 1)), "Workflow")
	for user, want := range map[string][]string{
		"system:serviceaccount:argo:argo-workflow-controller": nil,
		jobController: nil,
		kuberay:       {"names a controller owner", "add the label"},
	} {
		if got := r.admit(t, request{gvr: podsGVR, obj: gpuPod, user: user}, "training", "training"); len(got) != len(want) {
			t.Errorf("%s: refusals %q, want %d", user, got, len(want))
		}
	}
	_, err := generator.Render(generator.Source{Data: []byte(reference + "[guardrails]\ntrusted_controllers = [\"a b\"]\n")}, generator.Options{})
	if err == nil || !strings.Contains(err.Error(), "guardrails.trusted_controllers[0]") {
		t.Errorf("a name with a blank: error %v, want one at guardrails.trusted_controllers[0]", err)
	}
}
