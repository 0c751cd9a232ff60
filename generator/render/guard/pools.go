package guard

import (
	"maps"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// poolData is what KAI's policy knows of the agreement's node pools and
// GPU sharing. An agreement that renders as one queue tree has no pools:
// its one "pool" is ” (no label asked for), whose flavor is the one its
// queues hold.
type poolData struct {
	// label is the node pool label (Agreement.NodePoolLabel).
	label string
	// values are the pools' label values, in flavor order; empty unsharded.
	values []string
	// teamQueues lists each team's Queues, one per pool it holds quota
	// in; queuePools maps every team Queue to its pool's value;
	// poolGPUs lists the GPU resources each pool holds. All empty
	// unsharded, where a team's queue is its name.
	teamQueues map[string][]string
	queuePools map[string]string
	poolGPUs   map[string][]string
	// flavors names each pool's flavor ('' unsharded); fractionPools are
	// the pools whose flavor shares its GPUs by fraction.
	flavors       map[string]string
	fractionPools []string
}

// pools gathers the policy's pool data from the naming the KAI Queues are
// rendered with (gpu.Pools, gpu.QueueName).
func pools(p *plan.Agreement) poolData {
	d := poolData{label: p.NodePoolLabel, teamQueues: map[string][]string{}, queuePools: map[string]string{},
		poolGPUs: map[string][]string{}, flavors: map[string]string{}}
	ps := gpu.Pools(p)
	if ps == nil {
		if f := gpu.UnshardedFlavor(p); f != nil {
			d.flavors[""] = f.Name
			if f.GPUSharing == plan.GPUSharingFraction {
				d.fractionPools = []string{""}
			}
		}
		return d
	}
	for _, pool := range ps {
		d.values = append(d.values, pool.Value)
		d.poolGPUs[pool.Value] = []string{pool.Flavor.Resource}
		d.flavors[pool.Value] = pool.Flavor.Name
		if pool.Flavor.GPUSharing == plan.GPUSharingFraction {
			d.fractionPools = append(d.fractionPools, pool.Value)
		}
		for i := range p.Teams {
			t := &p.Teams[i]
			if !pool.HasQueue(t) {
				continue
			}
			q := gpu.PoolQueueName(t.Name, pool.Name)
			d.teamQueues[t.Name] = append(d.teamQueues[t.Name], q)
			d.queuePools[q] = pool.Value
		}
	}
	return d
}

// poolVariables are KAI's pool data, as the first variables after the
// agreement's other data.
func poolVariables(d poolData) []admissionv1.Variable {
	return []admissionv1.Variable{
		{Name: "nodePoolLabel", Expression: celString(d.label)},
		{Name: "nodePools", Expression: celList(d.values)},
		{Name: "teamQueues", Expression: celListMap(d.teamQueues)},
		{Name: "queuePools", Expression: celStringMap(d.queuePools)},
		{Name: "poolGPUs", Expression: celListMap(d.poolGPUs)},
		{Name: "poolFlavors", Expression: celStringMap(d.flavors)},
		{Name: "fractionPools", Expression: celList(d.fractionPools)},
	}
}

// poolOf is the node pool template t goes to: KAI's podgrouper labels the
// PodGroup with the top owner's pool label, else the pod's
// (pkg/podgrouper/pod_controller.go addNodePoolLabel), as it reads the
// queue; unsharded, every template goes to the one pool ”.
func poolOf(t string) string {
	return "(size(variables.nodePools) == 0 ? '' : variables.nodePoolLabel in variables.labels ? variables.labels[variables.nodePoolLabel] : " +
		t + ".?metadata.?labels[?variables.nodePoolLabel].orValue(''))"
}

// queueOf is the queue template t goes to, read as KAI reads it.
func queueOf(t string) string {
	q := celString(KAIQueueLabel)
	return "(" + q + " in variables.labels ? variables.labels[" + q + "] : " + t + ".?metadata.?labels[?" + q + "].orValue(''))"
}

// kaiPoolVariables follow the object's: the team's queues; each pod
// template's queue and pool (the object's own labels where it has no
// template to read); each GPU template's pool followed by the agreement's
// GPU resources it asks for that the pool does not hold (a MIG slice on
// the H100 pool); and the pool of each template that asks for part of a
// GPU.
func kaiPoolVariables() []admissionv1.Variable {
	q, l := celString(KAIQueueLabel), "variables.nodePoolLabel"
	asks := func(t, k string) string {
		return containers(t) + ".exists(c, " + k + " in c.?resources.?requests.orValue({}) || " + k + " in c.?resources.?limits.orValue({}))"
	}
	return []admissionv1.Variable{
		{Name: "ownQueues", Expression: "variables.teamQueues[?variables.team].orValue([variables.team])"},
		{Name: "placements", Expression: "size(variables.templates) == 0 ? [[variables.labels[?" + q + "].orValue(''), size(variables.nodePools) == 0 ? '' : variables.labels[?" + l + "].orValue('')]] : " +
			"variables.templates.map(t, [" + queueOf("t") + ", " + poolOf("t") + "])"},
		{Name: "misfits", Expression: "variables.gpuTemplates.map(t, [" + poolOf("t") + "] + variables.gpus.filter(k, " + asks("t", "k") +
			" && !(k in variables.poolGPUs[?" + poolOf("t") + "].orValue(variables.gpus))))"},
		{Name: "fractionAsks", Expression: "variables.templates.filter(t, t.?metadata.?annotations.orValue({}).exists(k, k in " + celList(kaiFractionAnnotations) + ")).map(t, " + poolOf("t") + ")"},
	}
}

// poolValidations are KAI's node pool and GPU sharing rules.
func poolValidations(unqueuedKinds string, v func(expr, msg string) admissionv1.Validation) []admissionv1.Validation {
	label := "variables.nodePoolLabel"
	sharded := "size(variables.nodePools) > 0"
	mismatched := "p[0] != '' && p[1] != '' && p[0] in variables.queuePools && variables.queuePools[p[0]] != p[1]"
	// A fraction goes to a pool whose flavor shares; a template without a
	// pool of the agreement is refused by the pool label rules instead.
	shares := "a in variables.fractionPools || " + sharded + " && !(a in variables.nodePools)"
	return []admissionv1.Validation{
		// Each pool is a scheduler of its own, over the Nodes, Queues and
		// PodGroups that carry its label: without one, GPU work would wait
		// for a scheduler that never comes.
		v("variables.exempt || !variables.requestsGPU || variables.r in "+unqueuedKinds+" || !("+sharded+") || variables.placements.all(p, p[1] != '')",
			"'this ' + variables.o.kind + ' requests GPUs' + "+inNamespace+" + ': add the label ' + "+label+" + ' with its queue\\'s node pool (' + "+
				"variables.ownQueues.map(q, variables.queuePools[?q].orValue('') + ' for queue ' + q).join(', ') + ')'"),
		// Trusted requests too: a label, where present, routes work.
		v("variables.placements.all(p, !("+mismatched+"))",
			"[variables.placements.filter(p, "+mismatched+")[0]].map(p, 'queue ' + p[0] + ' is in node pool ' + variables.queuePools[p[0]] + ', but the label ' + "+label+" + ' says ' + p[1] + "+
				inNamespace+" + ': set the label ' + "+label+" + ': ' + variables.queuePools[p[0]] + ', or use the team\\'s queue of node pool ' + p[1])[0]"),
		v("variables.misfits.all(m, size(m) == 1)",
			"[variables.misfits.filter(m, size(m) > 1)[0]].map(m, 'this ' + variables.o.kind + ' asks for ' + m[1] + ', which node pool ' + m[0] + ' (flavor ' + variables.poolFlavors[?m[0]].orValue('') + ') does not hold' + "+inNamespace+
				" + ': ask for ' + variables.poolGPUs[?m[0]].orValue([]).join(', ') + ' there, or use the node pool whose flavor holds ' + m[1])[0]"),
		// Whoever asks: a fraction is charged as the pool's flavor shares.
		v("variables.fractionAsks.all(a, "+shares+")",
			"[variables.fractionAsks.filter(a, !("+shares+"))[0]].map(a, 'this ' + variables.o.kind + ' asks for part of a GPU (annotation gpu-fraction or gpu-memory), but flavor ' + variables.poolFlavors[?a].orValue('') + "+
				"' does not share its GPUs by fraction' + "+inNamespace+" + ': ask for whole GPUs' + "+
				"(size(variables.fractionPools) > 0 && "+sharded+" ? ', or use a node pool that shares by fraction (' + variables.fractionPools.join(', ') + ')' : '') + "+
				"', or set gpu_sharing = \"fraction\" on flavor ' + variables.poolFlavors[?a].orValue('') + ' in the agreement')[0]"),
		v("variables.exempt || variables.r != 'podgroups' || !("+sharded+") || variables.queuePools[?variables.o.spec.?queue.orValue('')].orValue('') == variables.labels[?"+label+"].orValue('')",
			"'PodGroup queue ' + variables.o.spec.?queue.orValue('') + ' is in node pool ' + variables.queuePools[?variables.o.spec.?queue.orValue('')].orValue('') + "+
				"', but its label ' + "+label+" + ' says ' + variables.labels[?"+label+"].orValue('') + "+inNamespace+" + ': set the label to its queue\\'s node pool'"),
	}
}

// celStringMap writes m as a CEL map literal of strings, keys sorted.
func celStringMap(m map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, celString(k)+": "+celString(m[k]))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// celListMap writes m as a CEL map literal of string lists, keys sorted.
func celListMap(m map[string][]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, celString(k)+": "+celList(m[k]))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}
