package kueue

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Kueue's ClusterQueue API allows at most 64 flavors in a resource group and
// 64 covered resources; cpu and memory take two of the latter.
const (
	maxFlavors   = 64
	maxResources = 62
	// maxCombinations is Kueue's webhook limit on flavor-resource pairs in
	// a resource group. The Kueue backend puts every flavor in one group,
	// each listing every GPU resource plus cpu and memory.
	maxCombinations = 512
)

// A Kueue ResourceFlavor holds at most 8 node labels and 8 tolerations
// (MaxProperties and MaxItems in its CRD); the API server rejects more.
const (
	maxNodeLabels  = 8
	maxTolerations = 8
)

// HostnameLabel is the node label Kueue accepts only as the finest topology
// level.
const HostnameLabel = corev1.LabelHostname

// Check reports what Kueue's API refuses of the plan: more flavors,
// resources or flavor-resource combinations than a ClusterQueue's resource
// group holds, ResourceFlavors with too many node labels or tolerations, and
// the hostname label anywhere but the finest topology level, and a team
// named like the default LocalQueue while default_queue renders it. Messages start
// with "kueue: ", as KAI's start with "kai: ", so a reader of tenancy check
// knows which backend says so.
func (Renderer) Check(p *plan.Agreement) diag.List {
	r := &diag.Reporter{File: p.File}
	if len(p.Flavors) > maxFlavors {
		o := p.Flavors[maxFlavors].Origin
		r.Errorf(field.ErrorTypeTooMany, o.Pos, o.Path, "kueue: at most %d flavors are supported (Kueue's limit per resource group)", maxFlavors)
	}
	resources := map[string]bool{}
	for _, f := range p.Flavors {
		resources[f.Resource] = true
		if len(f.NodeLabelOrigins) > maxNodeLabels {
			o := f.NodeLabelOrigins[maxNodeLabels]
			r.Errorf(field.ErrorTypeTooMany, o.Pos, o.Path, "kueue: a flavor can have at most %d node labels (Kueue's ResourceFlavor limit), got %d", maxNodeLabels, len(f.NodeLabelOrigins))
		}
		if len(f.Tolerations) > maxTolerations {
			o := f.Tolerations[maxTolerations].Origin
			r.Errorf(field.ErrorTypeTooMany, o.Pos, o.Path, "kueue: a flavor can have at most %d tolerations (Kueue's ResourceFlavor limit), got %d", maxTolerations, len(f.Tolerations))
		}
	}
	if len(p.Flavors) > 0 {
		first := p.Flavors[0].Origin.Pos
		if len(resources) > maxResources {
			r.Errorf(field.ErrorTypeTooMany, first, field.NewPath("flavors"), "kueue: at most %d distinct resources are supported", maxResources)
		} else if combos := len(p.Flavors) * (len(resources) + 2); combos > maxCombinations {
			r.Errorf(field.ErrorTypeTooMany, first, field.NewPath("flavors"), "kueue: %d flavors of %d GPU resources make %d flavor-resource combinations (each flavor lists every GPU resource, cpu and memory); Kueue allows at most %d", len(p.Flavors), len(resources), combos, maxCombinations)
		}
	}
	// Each team namespace holds a LocalQueue named after the team and, with
	// default_queue, one named default: a team named default would render
	// two LocalQueues of one name in each of its namespaces.
	if g := p.Guardrails; g.DefaultQueue {
		for _, t := range p.Teams {
			if t.Name == plan.DefaultQueueName {
				r.Errorf(field.ErrorTypeDuplicate, t.Origin.Pos, t.Origin.Path, "kueue: team %q has the name of the LocalQueue that guardrails.default_queue (line %d) puts in every team namespace: the team's own LocalQueue and the default one would be one object; rename the team, or turn default_queue off", t.Name, g.DefaultQueueOrigin.Pos.Line)
			}
		}
	}
	fractionChecks(p, r)
	if t := p.Topology; t != nil {
		for i, l := range t.Levels {
			if l == HostnameLabel && i < len(t.Levels)-1 {
				o := t.LevelOrigins[i]
				r.Errorf(field.ErrorTypeForbidden, o.Pos, o.Path, "kueue: %s can only be the last (finest) level: Kueue rejects it anywhere else", HostnameLabel)
			}
		}
	}
	return r.List
}

// fractionChecks: GPU sharing by fraction is KAI's (its admission webhook
// and binder share a GPU among pods that ask with an annotation and no GPU
// resource); Kueue counts only resources, so under Kueue such a pod would
// be charged nothing and get no GPU. Warned once per line that asks for it
// (a [kai] gpu_sharing the flavors inherit is one line).
func fractionChecks(p *plan.Agreement, r *diag.Reporter) {
	warned := map[diag.Pos]bool{}
	for _, f := range p.Flavors {
		o := f.GPUSharingOrigin
		if f.GPUSharing != plan.GPUSharingFraction || warned[o.Pos] {
			continue
		}
		warned[o.Pos] = true
		r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
			"kueue: GPU sharing by fraction is KAI Scheduler's: Kueue charges only resources, so a pod asking a fraction of flavor %s's GPUs (gpu-fraction or gpu-memory annotation) is charged nothing and gets no GPU; it holds under --backend kai", f.Name)
	}
}
