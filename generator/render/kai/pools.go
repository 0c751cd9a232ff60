package kai

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Pool is one KAI node pool of an agreement whose quotas are on several
// flavors: the flavor's Nodes (those whose Agreement.NodePoolLabel is
// Value), the SchedulingShard that schedules them, and a tree of Queues
// holding that flavor's quotas alone. KAI keeps one GPU quota per Queue,
// so a pool per flavor is what keeps per-flavor guarantees apart
// (KAI-scheduler issues #133 and #145).
type Pool struct {
	Flavor *plan.Flavor
	// Name names the pool's SchedulingShard and ends its Queues' names
	// (QueueName): the flavor's name, a DNS label, where Value may be any
	// label value (NVIDIA-H100-80GB-HBM3 is one, and no object name).
	Name string
	// Value is the pool label's value on the pool's Nodes, Queues and
	// workloads, the shard's partitionLabelValue: Flavor.NodePool.
	Value string
}

// Pools returns the agreement's node pools, in flavor order: one per flavor
// KAI counts (whole GPUs or MIG slices, within KAI's exact range) that a
// team or a department holds a guarantee or a borrow limit on, when there
// are two or more such flavors. Otherwise it returns nil, and the agreement
// renders as one unsharded queue tree, as it did before pools existed.
// Guardrails, explain, report and windows name a team's queue in a pool
// with QueueName.
func Pools(p *plan.Agreement) []Pool {
	var out []Pool
	for i := range p.Flavors {
		f := &p.Flavors[i]
		if counted(f) && held(p, f.Name) {
			out = append(out, Pool{Flavor: f, Name: f.Name, Value: poolValue(f)})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// QueueName is the name of the Queue called base (the agreement's name, a
// department's, a team's, or a subtree's such as name-shared) in flavor f's
// pool: base itself when the agreement renders unsharded (Pools is nil),
// else base-<pool>, e.g. training-h100.
func QueueName(p *plan.Agreement, base string, f *plan.Flavor) string {
	if Pools(p) == nil {
		return base
	}
	return base + "-" + f.Name
}

// counted reports whether KAI's queues count the flavor's resource and can
// hold its capacity exactly (flavorChecks reports the others).
func counted(f *plan.Flavor) bool {
	per := gpu.PerUnit(f.Resource)
	return per > 0 && f.Capacity <= gpu.MaxExact/per
}

// held reports whether a team or a department is guaranteed, or may borrow,
// some of the flavor.
func held(p *plan.Agreement, flavor string) bool {
	for i := range p.Teams {
		if q := p.Teams[i].Quota(flavor); q.Guaranteed+q.Borrow > 0 {
			return true
		}
	}
	for i := range p.Departments {
		if q := p.Departments[i].Quota(flavor); q.Guaranteed+q.Borrow > 0 {
			return true
		}
	}
	return false
}

// poolValue is the flavor's pool label value; a plan built without one (in
// tests) uses the flavor's name, the format's default.
func poolValue(f *plan.Flavor) string {
	if f.NodePool == "" {
		return f.Name
	}
	return f.NodePool
}

// poolChecks: two flavors KAI counts that share one pool value. Two pools
// of one value would be two schedulers over the same Nodes, each counting
// all of them as its own: refused. Where at most one of them is a pool,
// the other's Nodes would silently join it: a warning.
func poolChecks(p *plan.Agreement, r *diag.Reporter) {
	pools := map[string]bool{}
	for _, pool := range Pools(p) {
		pools[pool.Name] = true
	}
	first := map[string]*plan.Flavor{}
	for i := range p.Flavors {
		f := &p.Flavors[i]
		if !counted(f) {
			continue
		}
		v := poolValue(f)
		prev, ok := first[v]
		if !ok {
			first[v] = f
			continue
		}
		o := f.NodePoolOrigin
		if pools[prev.Name] && pools[f.Name] {
			r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path,
				"kai: flavors %s (line %d) and %s are both node pools with the value %q of %s: their two SchedulingShards would schedule the same Nodes, each counting all of them; give each flavor its own node_pool",
				prev.Name, prev.Origin.Pos.Line, f.Name, v, p.NodePoolLabel)
			continue
		}
		r.Warnf(field.ErrorTypeDuplicate, o.Pos, o.Path,
			"kai: flavors %s (line %d) and %s share the node pool value %q of %s: KAI sees their Nodes as one pool; give each flavor its own node_pool",
			prev.Name, prev.Origin.Pos.Line, f.Name, v, p.NodePoolLabel)
	}
}
