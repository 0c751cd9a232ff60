package guard

import (
	"slices"
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

// deviceEnvNames are the variables the NVIDIA container toolkit reads to
// choose the devices it gives a container (its legacy and CDI modes alike):
// the GPUs, MIG configuration and monitoring capabilities, and IMEX
// channels. CUDA_VISIBLE_DEVICES is not one: it only narrows, inside the
// container, the devices the container already has.
var deviceEnvNames = []string{"NVIDIA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_IMEX_CHANNELS"}

// hidingValues give a container no device at all ("" and void: no GPU
// support; none: the driver without a device), so setting them is safe.
var hidingValues = []string{"", "void", "none"}

// kueueMinParallelism is the annotation that lets Kueue admit a Job with
// fewer pods than its parallelism (partial admission).
const kueueMinParallelism = "kueue.x-k8s.io/job-min-parallelism"

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

// allContainers lists every container of a pod template, ephemeral ones
// (kubectl debug) included: each gets its environment.
func allContainers(t string) string {
	return "(" + t + ".?spec.?containers.orValue([]) + " + t + ".?spec.?initContainers.orValue([]) + " + t + ".?spec.?ephemeralContainers.orValue([]))"
}

// usesDevicePlugin is true when container c asks NVIDIA's device plugin for
// a device (a nonzero nvidia.com/ resource): the plugin then sets the
// container's devices itself, whatever its environment says.
func usesDevicePlugin(c string) string {
	nonzero := func(m string) string {
		return c + ".?resources.?" + m + ".orValue({}).exists(k, k.startsWith('nvidia.com/') && string(" + c + ".resources." + m + "[k]) != '0')"
	}
	return nonzero("requests") + " || " + nonzero("limits")
}

// choosesDevices is true when env var e makes the NVIDIA container toolkit
// give devices: one of its device variables, set to a value that is not a
// hiding one, or read from elsewhere (valueFrom), which admission cannot see.
func choosesDevices(e string) string {
	return e + ".?name.orValue('') in " + celList(deviceEnvNames) + " && (has(" + e + ".valueFrom) || !(" + e + ".?value.orValue('') in " + celList(hidingValues) + "))"
}

// deviceEnvExpr lists, per pod template, "container X sets VAR" for each
// container that chooses devices through its environment without asking
// the device plugin for any. Under KAI the variables its admission webhook
// gives a fractional pod are not counted (kaiSharedGPUEnv).
func deviceEnvExpr(b render.Backend) string {
	chooses := choosesDevices("e")
	if b == render.KAI {
		chooses = "(" + chooses + ") && !(" + kaiSharedGPUEnv("t", "e") + ")"
	}
	return "variables.templates.map(t, " + allContainers("t") + ".filter(c, !(" + usesDevicePlugin("c") + ") && c.?env.orValue([]).exists(e, " + chooses + "))" +
		".map(c, 'container ' + c.?name.orValue('') + ' sets ' + c.env.filter(e, " + chooses + ")[0].name))"
}

// kaiSharedGPUConfigMap is the annotation in which KAI's admission webhook
// names a fractional pod's GPU-sharing ConfigMaps, one per container,
// <name>-<index> (pkg/binder/common/gpusharingconfigmap).
const kaiSharedGPUConfigMap = "runai/shared-gpu-configmap"

// kaiSharedGPUEnv is true when env var e of pod template t is KAI's own
// wiring of a fractional GPU: t asks KAI for part of a GPU, and e reads
// from one of the ConfigMaps the template's annotation names, into which
// KAI's binder writes the GPU it reserved for the pod (its reservation pod
// holds the whole GPU through the device plugin, in KAI's namespace). KAI's
// admission webhook adds NVIDIA_VISIBLE_DEVICES so to every fractional
// pod, before this policy sees it.
func kaiSharedGPUEnv(t, e string) string {
	named := t + ".?metadata.?annotations[?" + celString(kaiSharedGPUConfigMap) + "].orValue('')"
	return t + ".?metadata.?annotations.orValue({}).exists(k, k in " + celList(kaiFractionAnnotations) + ") && " +
		named + " != '' && " + e + ".?valueFrom.?configMapKeyRef.?name.orValue('').startsWith(" + named + " + '-')"
}

// gpusOf is container c's count of GPU resource res (its request, else
// its limit, as Kubernetes defaults it); 0 for what is no whole number.
func gpusOf(c, res string) string {
	return "[string(" + c + ".?resources.?requests[?" + res + "].orValue(" + c + ".?resources.?limits[?" + res + "].orValue('0')))]" +
		".map(s, isQuantity(s) && quantity(s).isInteger() ? quantity(s).asInteger() : 0)[0]"
}

// podGPUs is what one pod of template t asks of res, as Kubernetes counts
// a pod's requests: the larger of its containers' sum (with the sidecars,
// init containers that keep running) and its largest init container.
func podGPUs(t, res string) string {
	inits := t + ".?spec.?initContainers.orValue([])"
	return "([" + t + ".?spec.?containers.orValue([]).map(c, " + gpusOf("c", res) + ").sum() + " +
		inits + ".filter(c, c.?restartPolicy.orValue('') == 'Always').map(c, " + gpusOf("c", res) + ").sum()] + " +
		inits + ".map(c, " + gpusOf("c", res) + ")).max()"
}

// jobPods is how many pods of a Job spec Kueue must admit at once: its
// parallelism (1 by default), no more than its completions, or the
// minimum its partial-admission annotation (on meta) allows.
func jobPods(spec, meta string) string {
	return "[" + meta + ".?annotations[?" + celString(kueueMinParallelism) + "].orValue('')].map(a, a.matches('^[1-9][0-9]{0,8}$') ? int(a) : " +
		"[" + spec + "].map(s, ([s.?parallelism.orValue(1)] + (has(s.completions) ? [s.completions] : [])).min())[0])[0]"
}

// sizesExpr lists [resource, count] for each GPU resource of the
// agreement (count as a string: a CEL list holds one type): what the object
// needs at once. A pod is the unit under both schedulers; Kueue admits a
// Job (and a CronJob's Jobs) whole, so its pods count together there. KAI
// starts a standard Job's pods one by one (its PodGroup's minMember is 1).
func sizesExpr(b render.Backend) string {
	count := "1"
	if b == render.Kueue {
		count = "(variables.r == 'jobs' ? " + jobPods("variables.o.spec", "variables.o.metadata") + " : variables.r == 'cronjobs' ? " +
			jobPods("variables.o.spec.?jobTemplate.?spec.orValue({})", "variables.o.spec.?jobTemplate.?metadata.orValue({})") + " : 1)"
	}
	return "variables.gpus.map(res, [res, string(" + count + " * ([0] + variables.templates.map(t, " + podGPUs("t", "res") + ")).max())])"
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
		{Name: "most", Expression: celMost(d.most)},
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
		// What the object needs of each GPU resource at once, against what
		// the team can ever use; compared with the old object's on updates.
		{Name: "teamMost", Expression: "variables.most[?variables.team].orValue({})"},
		{Name: "sizes", Expression: sizesExpr(b)},
		{Name: "tooLarge", Expression: "variables.sizes.filter(p, int(p[1]) > variables.teamMost[?p[0]].orValue(0))"},
		{Name: "oldSizes", Expression: oldOf(sizesExpr(b))},
		{Name: "deviceEnv", Expression: deviceEnvExpr(b)},
		{Name: "oldDeviceEnv", Expression: oldOf(deviceEnvExpr(b))},
		{Name: "exempt", Expression: "variables.trusted || request.operation == 'UPDATE' && variables.owned && " +
			"variables.old.metadata.?ownerReferences.orValue([]) == variables.o.metadata.?ownerReferences.orValue([]) && variables.oldRequestsGPU"},
	}
	// A worker's data follows the agreement's.
	afterData := slices.IndexFunc(vs, func(v admissionv1.Variable) bool { return v.Name == "most" }) + 1
	vs = slices.Insert(vs, afterData, workerVariables(d.worker)...)
	if b == render.KAI {
		vs = slices.Insert(vs, afterData, poolVariables(d.pools)...)
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
		vs = append(vs, kaiPoolVariables()...)
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
	// The queue a message tells the team to name: on KAI, one per node
	// pool the team holds quota in.
	teamQueue := "variables.team"
	if b == render.KAI {
		ownQueue = "q == '' || q in variables.ownQueues || q in variables.queueNames"
		teamQueue = "variables.ownQueues.join(' or ')"
	}
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
		// A CronJob labelled on its own metadata only: the label is there,
		// but not where the scheduler reads it.
		v("variables.exempt || !variables.requestsGPU || variables.r in "+celList(unqueued(b))+" || variables.queues.all(q, q != '')",
			"variables.r == 'cronjobs' && "+celString(queueLabel)+" in variables.o.metadata.?labels.orValue({}) ? "+
				"'this CronJob requests GPUs and carries the label "+queueLabel+" on its own metadata only' + "+inNamespace+" + ': "+cronJobQueue(b)+"; put the label "+queueLabel+": ' + "+teamQueue+" + ' on spec.jobTemplate.metadata.labels' : "+
				"'this ' + variables.o.kind + ' requests GPUs' + "+inNamespace+" + ': add the label "+queueLabel+": ' + "+teamQueue),
		// Trusted requests too: a label, where present, routes quota.
		v("variables.queues.all(q, "+ownQueue+")",
			"'queue ' + variables.queues.filter(q, !("+ownQueue+"))[0] + ' is not this team\\'s' + "+inNamespace+" + ': set the label "+queueLabel+": ' + "+teamQueue),
		v("!variables.gpuTemplates.exists(t, "+containers("t")+".exists(c, "+resourceKeys("c", "k.startsWith('nvidia.com/') && !(k in variables.gpus)")+"))",
			"'this ' + variables.o.kind + ' asks for an nvidia.com/ resource that the agreement does not share' + "+inNamespace+" + ': ask for one of ' + variables.gpus.join(', ')"),
		// On create only: the scheduler's binding sets nodeName later.
		v("request.operation != 'CREATE' || !variables.gpuTemplates.exists(t, t.?spec.?nodeName.orValue('') != '')",
			"'this ' + variables.o.kind + ' requests GPUs and sets spec.nodeName, which skips the scheduler and the team\\'s queue' + "+inNamespace+" + ': use a nodeSelector instead'"),
		v("!variables.requestsGPU || variables.classes.all(c, c == '' || c in variables.priorities)",
			"'priority class ' + variables.classes.filter(c, c != '' && !(c in variables.priorities))[0] + ' is not a priority of the agreement ' + variables.pool + ' (' + variables.priorities.join(', ') + ')' + "+inNamespace),
	}
	out = append(out,
		// Trusted requests too (a controller's pods of a kind whose
		// templates the policy cannot read); on updates, only when what
		// the object needs changes.
		v("size(variables.tooLarge) == 0 || request.operation == 'UPDATE' && variables.sizes == variables.oldSizes",
			"'this ' + variables.o.kind + ' needs ' + variables.tooLarge[0][1] + ' ' + variables.tooLarge[0][0] + ' at once, but team ' + variables.team + ' can use at most ' + "+
				"string(variables.teamMost[?variables.tooLarge[0][0]].orValue(0)) + ' (guaranteed + borrow, in any lending window too)' + "+inNamespace+" + ': it would wait in the queue forever; ask for at most ' + "+
				"string(variables.teamMost[?variables.tooLarge[0][0]].orValue(0))"),
		// Whoever asks: the toolkit reads the variable on any container.
		v("variables.deviceEnv.all(l, size(l) == 0) || request.operation == 'UPDATE' && variables.deviceEnv == variables.oldDeviceEnv",
			"'in this ' + variables.o.kind + ', ' + variables.deviceEnv.filter(l, size(l) > 0)[0][0] + ' without requesting a GPU through the device plugin' + "+inNamespace+
				" + ': the NVIDIA container toolkit reads it to choose the GPUs the container sees, which would be GPUs outside any quota or queue; request an nvidia.com/ resource (the device plugin then sets it) or set it to void'"),
	)
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
			v("variables.exempt || variables.r != 'podgroups' || variables.o.spec.?queue.orValue('') in variables.ownQueues",
				"'PodGroup queue ' + variables.o.spec.?queue.orValue('') + ' is not this team\\'s' + "+inNamespace+" + ': set spec.queue: ' + "+teamQueue),
		)
		out = append(out, poolValidations(celList(unqueued(b)), v)...)
	}
	return out
}

// cronJobQueue says why a CronJob's own queue label is not read.
func cronJobQueue(b render.Backend) string {
	if b == render.KAI {
		return "KAI\\'s CronJob grouper groups the pods by the Job the CronJob makes, and reads the Job\\'s labels, which come from spec.jobTemplate.metadata.labels"
	}
	return "Kueue reads the queue of the Jobs the CronJob makes, whose labels come from spec.jobTemplate.metadata.labels"
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
	// most is what each team can ever use of each GPU resource:
	// guaranteed + borrow, the largest over its lending windows.
	most map[string]map[string]int64
	// worker is set on a Kueue worker of a fleet, nil elsewhere.
	worker *workerData
	// pools is KAI's node pools and GPU sharing; unused on Kueue.
	pools poolData
}

// workerData is what a fleet's worker knows of the fleet: its name, the
// manager's, and the user the manager's MultiKueue acts as in it.
type workerData struct {
	cluster, manager, dispatcher string
}

// workerVariables are a worker's data, after the agreement's: only a
// worker's policy has them, so the others render as before.
func workerVariables(w *workerData) []admissionv1.Variable {
	if w == nil {
		return nil
	}
	return []admissionv1.Variable{
		{Name: "cluster", Expression: celString(w.cluster)},
		{Name: "manager", Expression: celString(w.manager)},
		{Name: "dispatcher", Expression: celString(w.dispatcher)},
	}
}

// workerValidations is a worker's first rule: GPU work in a team namespace
// comes from the manager, whose MultiKueue admitted it against the
// fleet-wide quotas and creates its copy here as the dispatcher. Anyone
// else (a namespace admin submitting to the worker's LocalQueue, which
// holds the worker's share, not the fleet's) would bypass those quotas.
// The trusted controllers make pods and child objects from the copies, as
// on any cluster; an update that leaves what a GPU object asks for as it
// was (Kueue starting a copy, a label) is let through.
func workerValidations(w *workerData) []admissionv1.Validation {
	if w == nil {
		return nil
	}
	forbidden := metav1.StatusReasonForbidden
	return []admissionv1.Validation{{
		Expression: "variables.exempt || !variables.requestsGPU || request.userInfo.username == variables.dispatcher || " +
			"request.operation == 'UPDATE' && variables.oldRequestsGPU && variables.sizes == variables.oldSizes",
		MessageExpression: "'this ' + variables.o.kind + ' requests GPUs' + " + inNamespace + " + ', on cluster ' + variables.cluster + ', a worker of the fleet: " +
			"GPU work comes from the manager ' + variables.manager + ', whose MultiKueue admits it against the fleet-wide quotas and dispatches it here as ' + variables.dispatcher + " +
			"'; submit it on ' + variables.manager + ' to LocalQueue ' + variables.team + ' instead'",
		Reason: &forbidden,
	}}
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
			Validations:     append(workerValidations(d.worker), validations(b)...),
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
