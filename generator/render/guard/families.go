package guard

// family is a group of workload kinds whose pod templates sit at the same
// place, so one policy's CEL fits all of them and type-checks against each.
type family struct {
	name      string
	resources []gvr
	// podSpecs is a CEL list of the pod specs the object will create.
	podSpecs string
	// kueueLabels is the CEL path of the metadata whose labels Kueue reads
	// the queue and priority from.
	kueueLabels string
	// pods marks the Pod family: KAI's scheduler-name rule checks pods.
	pods bool
}

type gvr struct{ group, version, resource string }

// families are the workload kinds Kueue integrates with that GPU teams use
// (Kueue's jobframework integrations), for both backends: KAI groups pods by
// their top owner and reads the queue from its labels
// (pkg/podgrouper/podgrouper/plugins/defaultgrouper, CalcPodGroupQueue), so
// the same kinds are checked for KAI's label. A policy naming a resource whose
// CRD is not installed is accepted by the API server and never matches, so
// every family is rendered whatever the cluster runs.
var families = []family{
	{
		name:      "pods",
		resources: []gvr{{"", "v1", "pods"}},
		podSpecs:  "[object.spec]", kueueLabels: "object.metadata", pods: true,
	},
	{
		name: "workloads",
		resources: []gvr{
			{"batch", "v1", "jobs"},
			{"apps", "v1", "deployments"}, {"apps", "v1", "statefulsets"}, {"apps", "v1", "replicasets"},
		},
		podSpecs: "[object.spec.template.spec]", kueueLabels: "object.metadata",
	},
	{
		// A CronJob's Jobs carry its jobTemplate's labels.
		name:      "cronjobs",
		resources: []gvr{{"batch", "v1", "cronjobs"}},
		podSpecs:  "[object.spec.jobTemplate.spec.template.spec]", kueueLabels: "object.spec.jobTemplate.metadata",
	},
	{
		name:      "jobsets",
		resources: []gvr{{"jobset.x-k8s.io", "v1alpha2", "jobsets"}},
		podSpecs:  "object.spec.replicatedJobs.map(r, r.template.spec.template.spec)", kueueLabels: "object.metadata",
	},
	kubeflow("pytorchjobs", "v1", "pytorchReplicaSpecs"),
	kubeflow("tfjobs", "v1", "tfReplicaSpecs"),
	kubeflow("xgboostjobs", "v1", "xgbReplicaSpecs"),
	kubeflow("paddlejobs", "v1", "paddleReplicaSpecs"),
	kubeflow("mpijobs", "v2beta1", "mpiReplicaSpecs"),
	{
		name:        "rayjobs",
		resources:   []gvr{{"ray.io", "v1", "rayjobs"}},
		podSpecs:    "has(object.spec.rayClusterSpec) ? " + rayPods("object.spec.rayClusterSpec") + " : []",
		kueueLabels: "object.metadata",
	},
	{
		name:        "rayclusters",
		resources:   []gvr{{"ray.io", "v1", "rayclusters"}},
		podSpecs:    rayPods("object.spec"),
		kueueLabels: "object.metadata",
	},
	{
		name:      "leaderworkersets",
		resources: []gvr{{"leaderworkerset.x-k8s.io", "v1", "leaderworkersets"}},
		podSpecs: "[object.spec.leaderWorkerTemplate.workerTemplate.spec] + " +
			"(has(object.spec.leaderWorkerTemplate.leaderTemplate) ? [object.spec.leaderWorkerTemplate.leaderTemplate.spec] : [])",
		kueueLabels: "object.metadata",
	},
}

// kubeflow is a Kubeflow training job: a map of replica types to specs.
func kubeflow(resource, version, specs string) family {
	m := "object.spec." + specs
	return family{
		name:        resource,
		resources:   []gvr{{"kubeflow.org", version, resource}},
		podSpecs:    m + ".map(k, " + m + "[k].template.spec)",
		kueueLabels: "object.metadata",
	}
}

// rayPods lists a Ray cluster spec's head and worker pod specs.
func rayPods(spec string) string {
	return "[" + spec + ".headGroupSpec.template.spec] + (has(" + spec + ".workerGroupSpecs) ? " +
		spec + ".workerGroupSpecs.map(w, w.template.spec) : [])"
}
