package guard

import (
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tenancy-dev/tenancy/generator/render"
)

// family is a workload kind that makes pods, as the queue policy matches it.
// One policy covers every family: its CEL reads the object as dyn and finds
// the pod templates by the fields each kind has (templatesExpr), so the API
// server's type check, which checks an expression against every matched
// kind's schema, has nothing to warn about whichever CRDs are installed.
type family struct {
	group, version, resource string
	// kueue is the name of Kueue's integration (its jobframework name, as
	// Kueue's controller_manager_config.yaml lists it), "" when Kueue has
	// none: the kind is covered because its pods would escape otherwise.
	kueue string
	// queued: a scheduler queue can hold the kind's pods. A GPU object of a
	// kind that is not queued is refused unless a trusted controller makes
	// it (a Deployment's ReplicaSets). Kueue has no ReplicaSet integration;
	// KAI groups any top owner's pods.
	queued map[render.Backend]bool
}

var (
	both     = map[render.Backend]bool{render.Kueue: true, render.KAI: true}
	kaiOnly  = map[render.Backend]bool{render.KAI: true}
	neitherQ = map[render.Backend]bool{}
)

// families are the kinds that make pods: every integration Kueue 0.17 ships
// enabled by default (TestFamiliesCoverKueue compares them with Kueue's own
// list), CronJobs, whose Jobs carry their jobTemplate, and the built-in
// kinds no queue holds. KAI's podgrouper groups any of them by its top owner
// (pkg/podgrouper/podgrouper/plugins/defaultgrouper, CalcPodGroupQueue). A
// policy naming a resource whose CRD is not installed is accepted by the API
// server and never matches, so every family is rendered whatever the
// cluster runs.
var families = []family{
	{"", "v1", "pods", "pod", both},
	{"", "v1", "replicationcontrollers", "", neitherQ},
	{"apps", "v1", "daemonsets", "", neitherQ},
	{"apps", "v1", "deployments", "deployment", both},
	{"apps", "v1", "replicasets", "", kaiOnly},
	{"apps", "v1", "statefulsets", "statefulset", both},
	{"batch", "v1", "cronjobs", "", both},
	{"batch", "v1", "jobs", "batch/job", both},
	{"jobset.x-k8s.io", "v1alpha2", "jobsets", "jobset.x-k8s.io/jobset", both},
	// Kubeflow training-operator v1 (MPIJob v1 too) and the MPI operator's
	// v2beta1 MPIJob: Kueue's kubeflow.org/mpijob is v2beta1, but v1
	// MPIJobs make pods as well.
	{"kubeflow.org", "v1", "jaxjobs", "kubeflow.org/jaxjob", both},
	{"kubeflow.org", "v1", "mpijobs", "", both},
	{"kubeflow.org", "v1", "paddlejobs", "kubeflow.org/paddlejob", both},
	{"kubeflow.org", "v1", "pytorchjobs", "kubeflow.org/pytorchjob", both},
	{"kubeflow.org", "v1", "tfjobs", "kubeflow.org/tfjob", both},
	{"kubeflow.org", "v1", "xgboostjobs", "kubeflow.org/xgboostjob", both},
	{"kubeflow.org", "v2beta1", "mpijobs", "kubeflow.org/mpijob", both},
	{"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "leaderworkerset.x-k8s.io/leaderworkerset", both},
	{"ray.io", "v1", "rayclusters", "ray.io/raycluster", both},
	{"ray.io", "v1", "rayjobs", "ray.io/rayjob", both},
	{"ray.io", "v1", "rayservices", "ray.io/rayservice", both},
	{"trainer.kubeflow.org", "v1alpha1", "trainjobs", "trainer.kubeflow.org/trainjob", both},
	{"workload.codeflare.dev", "v1beta2", "appwrappers", "workload.codeflare.dev/appwrapper", both},
}

// kaiPodGroups is matched under KAI only: a PodGroup a team creates itself
// (where RBAC lets it) must name the team's queue.
var kaiPodGroups = family{"scheduling.run.ai", "v2alpha2", "podgroups", "", neitherQ}

// resourceRules lists the families' resources, one rule per API group and
// version, in the order of families.
func resourceRules(b render.Backend) []admissionv1.NamedRuleWithOperations {
	all := admissionv1.AllScopes
	fs := slices.Clone(families)
	if b == render.KAI {
		fs = append(fs, kaiPodGroups)
	}
	var rules []admissionv1.NamedRuleWithOperations
	for _, f := range fs {
		if n := len(rules); n > 0 && rules[n-1].APIGroups[0] == f.group && rules[n-1].APIVersions[0] == f.version {
			rules[n-1].Resources = append(rules[n-1].Resources, f.resource)
			continue
		}
		rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule: admissionv1.Rule{
				APIGroups: []string{f.group}, APIVersions: []string{f.version}, Resources: []string{f.resource}, Scope: &all,
			},
		}})
		if f.resource == "pods" {
			// kubectl debug adds ephemeral containers through this
			// subresource, with the whole Pod as the object.
			rules[len(rules)-1].Resources = append(rules[len(rules)-1].Resources, "pods/ephemeralcontainers")
		}
	}
	return rules
}

// unqueued lists the resources whose GPU objects no queue of backend b holds.
func unqueued(b render.Backend) []string {
	var out []string
	for _, f := range families {
		if !f.queued[b] && !slices.Contains(out, f.resource) {
			out = append(out, f.resource)
		}
	}
	slices.Sort(out)
	return out
}
