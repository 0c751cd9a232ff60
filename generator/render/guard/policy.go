package guard

import (
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenancy-dev/tenancy/generator/render"
)

// Labels and annotations of KAI that the KAI policy guards (KAI v0.17.0,
// pkg/podgrouper/podgrouper/plugins/constants and pkg/common/constants).
const (
	kaiPreemptibilityLabel = "kai.scheduler/preemptibility"
	kaiPriorityLabel       = "priorityClassName"
)

// kaiGroupingAnnotations make a pod join a PodGroup of the requester's
// choice instead of the one KAI's podgrouper builds from the queue label.
var kaiGroupingAnnotations = []string{"pod-group-name", "kai.scheduler/skip-podgrouper"}

// kaiFractionAnnotations ask KAI for part of a GPU, with no GPU resource.
var kaiFractionAnnotations = []string{"gpu-fraction", "gpu-memory"}

// PolicyName names the queue policy of the pool, and its binding.
func PolicyName(pool string) string { return pool + "-queues" }

// inNamespace ends a message with where and under which agreement (the
// variable where).
const inNamespace = "variables.where"

// cel helpers: the object is read as dyn, so every field access is a
// runtime question guarded by has() or an optional (.?, [?]).

// resourceKeys is true when a container's requests or limits hold a key
// satisfying pred (a CEL expression over k).
func resourceKeys(c, pred string) string {
	return c + ".?resources.?requests.orValue({}).exists(k, " + pred + ") || " +
		c + ".?resources.?limits.orValue({}).exists(k, " + pred + ")"
}

// containers lists a pod template's containers and init containers.
func containers(t string) string {
	return "(" + t + ".?spec.?containers.orValue([]) + " + t + ".?spec.?initContainers.orValue([]))"
}

// asksGPU is true when pod template t asks for a GPU in any way the
// guardrails know: a GPU resource of the agreement or any nvidia.com/
// resource (MIG profiles included), a DRA claim, or KAI's fractional
// annotations.
func asksGPU(t string) string {
	return containers(t) + ".exists(c, " + resourceKeys("c", "k in variables.gpus || k.startsWith('nvidia.com/')") + ") || " +
		"size(" + t + ".?spec.?resourceClaims.orValue([])) > 0 || " +
		t + ".?metadata.?annotations.orValue({}).exists(k, k in " + celList(kaiFractionAnnotations) + ")"
}

// rayPods lists a Ray cluster spec's head and worker pod templates.
func rayPods(spec string) string {
	return "[" + spec + ".?headGroupSpec.?template.orValue({})] + " + spec + ".?workerGroupSpecs.orValue([]).map(w, w.?template.orValue({}))"
}

// templatesExpr lists the pod templates of the object, found by the fields
// each family has (a Pod is its own template). A TrainJob's pods come from
// its runtime: only its resourcesPerNode is read, and without one it is
// taken as GPU work (requestsGPU), like an AppWrapper, whose components are
// free-form.
const templatesExpr = "variables.r == 'pods' ? [variables.o] : " +
	"!has(variables.o.spec) ? [] : " +
	"variables.r == 'cronjobs' ? [variables.o.spec.?jobTemplate.?spec.?template.orValue({})] : " +
	"has(variables.o.spec.template) ? [variables.o.spec.template] : " +
	"has(variables.o.spec.replicatedJobs) ? variables.o.spec.replicatedJobs.map(j, j.?template.?spec.?template.orValue({})) : " +
	"has(variables.o.spec.leaderWorkerTemplate) ? [variables.o.spec.leaderWorkerTemplate.?workerTemplate.orValue({}), variables.o.spec.leaderWorkerTemplate.?leaderTemplate.orValue({})] : " +
	"has(variables.o.spec.rayClusterSpec) ? " + "RAY(variables.o.spec.rayClusterSpec)" + " : " +
	"has(variables.o.spec.rayClusterConfig) ? " + "RAY(variables.o.spec.rayClusterConfig)" + " : " +
	"has(variables.o.spec.headGroupSpec) ? " + "RAY(variables.o.spec)" + " : " +
	"variables.r == 'trainjobs' ? (has(variables.o.spec.trainer) && has(variables.o.spec.trainer.resourcesPerNode) ? [{'spec': {'containers': [{'resources': variables.o.spec.trainer.resourcesPerNode}]}}] : []) : " +
	"size(variables.replicaSpecs) > 0 ? variables.o.spec[variables.replicaSpecs[0]].map(t, variables.o.spec[variables.replicaSpecs[0]][t].?template.orValue({})) : []"

func templates() string {
	s := templatesExpr
	for _, spec := range []string{"variables.o.spec.rayClusterSpec", "variables.o.spec.rayClusterConfig", "variables.o.spec"} {
		s = strings.Replace(s, "RAY("+spec+")", rayPods(spec), 1)
	}
	return s
}

const replicaSpecs = "has(variables.o.spec) ? variables.o.spec.filter(k, k.endsWith('ReplicaSpecs')) : []"

// appWrapperOrTrainJob is true for the kinds taken as GPU work without a
// template to read (templates: their pod templates' variable).
func appWrapperOrTrainJob(templates string) string {
	return "variables.r == 'appwrappers' || variables.r == 'trainjobs' && size(" + templates + ") == 0"
}

// oldOf reads expr, written for the object, on the old object of an update.
func oldOf(expr string) string {
	r := strings.NewReplacer("variables.o.", "variables.old.", "variables.o]", "variables.old]", "variables.replicaSpecs", "variables.oldReplicaSpecs",
		"variables.templates", "variables.oldTemplates", "variables.metas", "variables.oldMetas")
	return r.Replace(expr)
}

func variables(d agreementData, b render.Backend) []admissionv1.Variable {
	// Kueue reads a CronJob's queue from the Jobs it makes, and so does
	// KAI's CronJob grouper (the Job is its top owner): the Jobs carry
	// spec.jobTemplate's labels, not the CronJob's.
	meta := "variables.r == 'cronjobs' ? variables.o.spec.?jobTemplate.?metadata.orValue({}) : variables.o.metadata"
	metas := "[variables.o.metadata] + variables.templates.map(t, t.?metadata.orValue({}))"
	owned := "variables.o.metadata.?ownerReferences.orValue([]).exists(x, x.?controller.orValue(false))"
	queueLabel := celString(KueueQueueLabel)
	queues := "[variables.labels[?" + queueLabel + "].orValue('')]"
	classes := "variables.gpuTemplates.map(t, t.?spec.?priorityClassName.orValue(''))"
	if b == render.KAI {
		// KAI reads priority and preemptibility labels of every owner: a
		// CronJob's Jobs' too.
		metas = "[variables.o.metadata] + (variables.r == 'cronjobs' ? [variables.o.spec.?jobTemplate.?metadata.orValue({})] : []) + variables.templates.map(t, t.?metadata.orValue({}))"
		// KAI reads the top owner's label, else the pod's. A kind whose
		// pod templates the policy cannot read (an AppWrapper, a TrainJob
		// without resourcesPerNode) must carry the label itself: with no
		// template, no queue is named.
		queueLabel = celString(KAIQueueLabel)
		queues = queueLabel + " in variables.labels ? [variables.labels[" + queueLabel + "]] : size(variables.templates) == 0 ? [''] : " +
			"variables.templates.map(t, t.?metadata.?labels[?" + queueLabel + "].orValue(''))"
		// KAI's podgrouper walks ownerReferences[0] up to the top owner and
		// reads its queue label, whether or not the reference is a
		// controller's: any owner a user writes could name another queue.
		owned = "size(variables.o.metadata.?ownerReferences.orValue([])) > 0"
		classes += " + variables.metas.map(m, m.?labels[?" + celString(kaiPriorityLabel) + "].orValue(''))"
	}
	vs := []admissionv1.Variable{
		// The agreement's data, first: the rest of the policy is the same
		// for every agreement of a backend.
		{Name: "pool", Expression: celString(d.pool)},
		{Name: "gpus", Expression: celList(d.gpus)},
		{Name: "priorities", Expression: celList(d.priorities)},
		{Name: "queueNames", Expression: celList(d.queues)},
		{Name: "trustedControllers", Expression: celList(d.trusted)},
		{Name: "o", Expression: "dyn(object)"},
		{Name: "r", Expression: "request.resource.resource"},
		{Name: "team", Expression: "namespaceObject.metadata.?labels[?" + celString(render.TeamLabel) + "].orValue('')"},
		// kube-controller-manager's controllers, with or without
		// --use-service-account-credentials, then the configured list.
		{Name: "where", Expression: "' in namespace ' + namespaceObject.metadata.name + ' of team ' + variables.team + ' (tenancy agreement ' + variables.pool + ')'"},
		{Name: "trusted", Expression: "request.userInfo.username == 'system:kube-controller-manager' || " +
			"request.userInfo.username.startsWith('system:serviceaccount:kube-system:') && request.userInfo.username.endsWith('-controller') || " +
			"request.userInfo.username in variables.trustedControllers"},
		{Name: "replicaSpecs", Expression: replicaSpecs},
		{Name: "templates", Expression: templates()},
		{Name: "gpuTemplates", Expression: "variables.templates.filter(t, " + asksGPU("t") + ")"},
		{Name: "requestsGPU", Expression: "size(variables.gpuTemplates) > 0 || " + appWrapperOrTrainJob("variables.templates")},
		{Name: "meta", Expression: meta},
		{Name: "labels", Expression: "variables.meta.?labels.orValue({})"},
		{Name: "metas", Expression: metas},
		{Name: "queues", Expression: queues},
		{Name: "classes", Expression: classes},
		{Name: "owned", Expression: owned},
		// Exempt from naming a queue: a trusted controller's request, or an
		// update of an owned GPU object whose owners do not change (a GPU
		// object with owners was made by a controller, or before the
		// guardrails): Kueue lifting a Job pod's scheduling gate, whoever
		// runs it. Not an update that makes an owned object ask for GPUs:
		// a user may create an owned CPU object. Variables are evaluated
		// when first used, so a create never reads the old object.
		{Name: "old", Expression: "dyn(oldObject)"},
		{Name: "oldReplicaSpecs", Expression: oldOf(replicaSpecs)},
		{Name: "oldTemplates", Expression: oldOf(templates())},
		{Name: "oldRequestsGPU", Expression: "variables.oldTemplates.exists(t, " + asksGPU("t") + ") || " + appWrapperOrTrainJob("variables.oldTemplates")},
		{Name: "exempt", Expression: "variables.trusted || request.operation == 'UPDATE' && variables.owned && " +
			"variables.old.metadata.?ownerReferences.orValue([]) == variables.o.metadata.?ownerReferences.orValue([]) && variables.oldRequestsGPU"},
	}
	if b == render.KAI {
		// The PodGroup annotations of every metadata, as a list per
		// metadata, and the old object's.
		var values []string
		for _, a := range kaiGroupingAnnotations {
			values = append(values, "m.?annotations[?"+celString(a)+"].orValue('')")
		}
		grouping := "variables.metas.map(m, [" + strings.Join(values, ", ") + "])"
		vs = append(vs,
			admissionv1.Variable{Name: "grouping", Expression: grouping},
			admissionv1.Variable{Name: "oldMetas", Expression: oldOf(metas)},
			admissionv1.Variable{Name: "oldGrouping", Expression: oldOf(grouping)},
		)
	}
	return vs
}

func validations(b render.Backend) []admissionv1.Validation {
	forbidden := metav1.StatusReasonForbidden
	queueLabel := KueueQueueLabel
	if b == render.KAI {
		queueLabel = KAIQueueLabel
	}
	ownQueue := "q == '' || q == variables.team || q in variables.queueNames"
	owner, unowned := "a controller owner", "without a controller ownerReference"
	if b == render.KAI {
		owner, unowned = "an owner", "without ownerReferences: KAI\\'s podgrouper reads the queue of the top owner"
	}
	v := func(expr, msg string) admissionv1.Validation {
		return admissionv1.Validation{Expression: expr, MessageExpression: msg, Reason: &forbidden}
	}
	out := []admissionv1.Validation{
		v("variables.exempt || !variables.requestsGPU || !(variables.r in "+celList(unqueued(b))+")",
			"'a '+ variables.o.kind + ' that requests GPUs cannot wait in a queue' + "+inNamespace+" + ': run GPU work as a Job, JobSet, Deployment or StatefulSet with the label "+queueLabel+": ' + variables.team"),
		// Only a controller makes owned objects: an owner the user wrote
		// would make the scheduler skip the object or read another
		// object's queue.
		v("variables.exempt || !variables.requestsGPU || !variables.owned",
			"'this ' + variables.o.kind + ' requests GPUs and names "+owner+", but ' + request.userInfo.username + ' is not a trusted controller' + "+inNamespace+" + ': create it "+unowned+"'"),
		v("variables.exempt || !variables.requestsGPU || variables.r in "+celList(unqueued(b))+" || variables.queues.all(q, q != '')",
			"'this ' + variables.o.kind + ' requests GPUs' + "+inNamespace+" + ': add the label "+queueLabel+": ' + variables.team"),
		// Trusted requests too: a label, where present, routes quota.
		v("variables.queues.all(q, "+ownQueue+")",
			"'queue ' + variables.queues.filter(q, !("+ownQueue+"))[0] + ' is not this team\\'s' + "+inNamespace+" + ': set the label "+queueLabel+": ' + variables.team"),
		v("!variables.gpuTemplates.exists(t, "+containers("t")+".exists(c, "+resourceKeys("c", "k.startsWith('nvidia.com/') && !(k in variables.gpus)")+"))",
			"'this ' + variables.o.kind + ' asks for an nvidia.com/ resource that the agreement does not share' + "+inNamespace+" + ': ask for one of ' + variables.gpus.join(', ')"),
		// On create only: the scheduler's binding sets nodeName later.
		v("request.operation != 'CREATE' || !variables.gpuTemplates.exists(t, t.?spec.?nodeName.orValue('') != '')",
			"'this ' + variables.o.kind + ' requests GPUs and sets spec.nodeName, which skips the scheduler and the team\\'s queue' + "+inNamespace+" + ': use a nodeSelector instead'"),
		v("!variables.requestsGPU || variables.classes.all(c, c == '' || c in variables.priorities)",
			"'priority class ' + variables.classes.filter(c, c != '' && !(c in variables.priorities))[0] + ' is not a priority of the agreement ' + variables.pool + ' (' + variables.priorities.join(', ') + ')' + "+inNamespace),
	}
	switch b {
	case render.Kueue:
		prio := celString(KueuePriorityLabel)
		out = append(out, v("variables.labels[?"+prio+"].orValue('') in variables.priorities + ['']",
			"'priority ' + variables.labels["+prio+"] + ' is not a priority of the agreement ' + variables.pool + ' (' + variables.priorities.join(', ') + '): set the label "+KueuePriorityLabel+" to one of them'"))
	case render.KAI:
		out = append(out,
			// A TrainJob's pods get their scheduler from its runtime: the
			// JobSet the trainer makes from it is checked here.
			v("variables.r == 'trainjobs' || variables.gpuTemplates.all(t, t.?spec.?schedulerName.orValue('') == "+celString(KAIScheduler)+")",
				"'this ' + variables.o.kind + ' requests GPUs' + "+inNamespace+" + ': set spec.schedulerName: "+KAIScheduler+"; on the default scheduler it would bypass the team\\'s queue'"),
			v("!variables.requestsGPU || variables.metas.all(m, m.?labels[?"+celString(kaiPreemptibilityLabel)+"].orValue('preemptible') == 'preemptible')",
				"'the label "+kaiPreemptibilityLabel+" may only make GPU work preemptible' + "+inNamespace+" + ': the agreement\\'s priorities decide what is not'"),
			// Not exempt by owner: a user re-pointing a controller's GPU
			// pod at another queue's PodGroup. An update that keeps the
			// podgrouper's annotation of a GPU object is not checked.
			v("variables.trusted || !variables.requestsGPU || (request.operation == 'UPDATE' && variables.oldRequestsGPU ? "+
				"variables.grouping == variables.oldGrouping : variables.grouping.all(g, g.all(a, a == '')))",
				"'this ' + variables.o.kind + ' chooses its own PodGroup (annotation pod-group-name or kai.scheduler/skip-podgrouper)' + "+inNamespace+" + ': leave grouping to KAI\\'s podgrouper, which reads the label "+KAIQueueLabel+"'"),
			v("variables.exempt || variables.r != 'podgroups' || variables.o.spec.?queue.orValue('') == variables.team",
				"'PodGroup queue ' + variables.o.spec.?queue.orValue('') + ' is not this team\\'s' + "+inNamespace+" + ': set spec.queue: ' + variables.team"),
		)
	}
	return out
}

// guardedChanged is the policy's match condition: a create, or an update
// that changes what the policy reads (spec, labels, annotations, owners).
// A controller removing a finalizer from a pod that predates the
// guardrails, or recording status, is not checked.
const guardedChanged = "request.operation != 'UPDATE' || dyn(object).spec != dyn(oldObject).spec || " +
	"dyn(object).metadata.?labels.orValue({}) != dyn(oldObject).metadata.?labels.orValue({}) || " +
	"dyn(object).metadata.?annotations.orValue({}) != dyn(oldObject).metadata.?annotations.orValue({}) || " +
	"dyn(object).metadata.?ownerReferences.orValue([]) != dyn(oldObject).metadata.?ownerReferences.orValue([])"

// agreementData is what the policy checks against: the agreement's data,
// as the first variables (CEL literals). A parameter object (paramKind)
// would hold it instead, but kube-apiserver stops updating a built-in
// paramKind's informer for good once no binding uses it for a moment
// (kubernetes/kubernetes#130887), and the policy then checks against stale
// data: see docs/decisions.md.
type agreementData struct {
	pool                              string
	gpus, priorities, queues, trusted []string
}

// policy is the pool's queue policy: the same for every agreement of a
// backend but for its data variables.
func policy(d agreementData, b render.Backend) *admissionv1.ValidatingAdmissionPolicy {
	pool := d.pool
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: render.Meta(pool, "", PolicyName(pool), ""),
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules:     resourceRules(b),
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       &equivalent,
			},
			MatchConditions: []admissionv1.MatchCondition{{Name: "guarded-fields-changed", Expression: guardedChanged}},
			Variables:       variables(d, b),
			Validations:     validations(b),
		},
	}
}

// binding applies the pool's policy in the namespaces that carry the pool's
// and a team's labels, which tenancy renders on every team Namespace (and
// which a namespace admin cannot change), so adding a team rewrites nothing
// here.
func binding(pool string) *admissionv1.ValidatingAdmissionPolicyBinding {
	equivalent := admissionv1.Equivalent
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: render.Meta(pool, "", PolicyName(pool), ""),
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        PolicyName(pool),
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			// The API server's defaults, written out.
			MatchResources: &admissionv1.MatchResources{
				NamespaceSelector: poolNamespaces(pool),
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       &equivalent,
			},
		},
	}
}

// poolNamespaces selects the team Namespaces of the pool.
func poolNamespaces(pool string) *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{render.PoolLabel: pool},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: render.TeamLabel, Operator: metav1.LabelSelectorOpExists}},
	}
}
