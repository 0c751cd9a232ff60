package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// kaiKeys are the keys of the [kai] table.
var kaiKeys = []string{"node_pool_label", "gpu_sharing"}

// DefaultNodePoolLabel is the label KAI Scheduler reads a node pool from
// when its Config's spec.global.nodePoolLabelKey is left alone (v0.17.0:
// the scheduler's --nodepool-label-key default).
const DefaultNodePoolLabel = "kai.scheduler/node-pool"

// GPU sharing of a flavor: whether pods may ask for a fraction of one of
// its GPUs (KAI's gpu-fraction and gpu-memory annotations).
const (
	// GPUSharingNone: a pod asks for whole GPUs (or MIG slices) only.
	GPUSharingNone = "none"
	// GPUSharingFraction: pods may share a GPU by fraction.
	GPUSharingFraction = "fraction"
)

// GPUSharingValues are the values gpu_sharing takes, in the order messages
// list them.
var GPUSharingValues = []string{GPUSharingNone, GPUSharingFraction}

// KAI is the [kai] table: what the agreement says to KAI Scheduler alone,
// read only when rendering for it. Absent keys hold their defaults (state
// Defaulted).
type KAI struct {
	Pos  Pos // the table's header; the file's start when absent
	Path *field.Path
	// NodePoolLabel is the Node (and Queue, PodGroup) label whose value
	// names a node pool: KAI's Config spec.global.nodePoolLabelKey.
	NodePoolLabel Str
	// GPUSharing is every flavor's gpu_sharing unless it writes its own.
	GPUSharing Str
}

// kai decodes the [kai] table; absent, it is all defaults (at the file's
// start, where a problem with a default is reported).
func (d *decoder) kai(v *load.Value) *KAI {
	k := &KAI{Path: field.NewPath("kai")}
	var t *load.Fields
	k.Pos, t = d.optionalTable(v, k.Path)
	d.unknown(t, k.Path, kaiKeys) // none when absent
	k.NodePoolLabel = d.str(t.Get("node_pool_label"), k.Path.Child("node_pool_label"))
	k.GPUSharing = d.str(t.Get("gpu_sharing"), k.Path.Child("gpu_sharing"))
	return k
}

// defaultKAI fills [kai]'s absent keys, then each flavor's node_pool (its
// name, at the flavor's table) and gpu_sharing ([kai]'s, at that key's
// value when written, so a problem with the inherited value points at the
// line that set it).
func defaultKAI(a *Agreement) {
	k := a.KAI
	if k.NodePoolLabel.State == Unset {
		k.NodePoolLabel = Str{Value: DefaultNodePoolLabel, State: Defaulted, Pos: k.Pos, Path: k.NodePoolLabel.Path}
	}
	if k.GPUSharing.State == Unset {
		k.GPUSharing = Str{Value: GPUSharingNone, State: Defaulted, Pos: k.Pos, Path: k.GPUSharing.Path}
	}
	for _, f := range a.Flavors {
		if f.NodePool.State == Unset {
			f.NodePool = Str{Value: f.Name, State: Defaulted, Pos: f.Pos, Path: f.NodePool.Path}
		}
		if f.GPUSharing.State == Unset {
			inherited := k.GPUSharing
			inherited.State = Defaulted
			if inherited.Pos == k.Pos {
				inherited.Pos = f.Pos // [kai]'s default: at the flavor
			}
			f.GPUSharing = inherited
		}
	}
}
