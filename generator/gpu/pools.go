package gpu

import "github.com/tenancy-dev/tenancy/generator/plan"

// Pool is one KAI node pool of an agreement whose quotas are on several
// flavors: the flavor's Nodes (those whose Agreement.NodePoolLabel is
// Value), the SchedulingShard that schedules them, and a tree of Queues
// holding that flavor's quotas alone. KAI keeps one GPU quota per Queue,
// so a pool per flavor is what keeps per-flavor guarantees apart
// (KAI-scheduler issues #133 and #145). It is here, beside the team sums,
// so that every family (render/kai's queues, the guardrails naming a
// team's queue, the windows) and contention name pools and queues alike.
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

// Pools returns the agreement's KAI node pools, in flavor order: one per
// flavor KAI counts (whole GPUs or MIG slices, within KAI's exact range)
// that a team or a department is guaranteed or may borrow, when there are
// two or more such flavors. Otherwise it returns nil, and the agreement
// renders as one unsharded queue tree, as it did before pools existed.
func Pools(p *plan.Agreement) []Pool {
	var out []Pool
	for i := range p.Flavors {
		f := &p.Flavors[i]
		if KAICounts(f) && held(p, f.Name) {
			out = append(out, Pool{Flavor: f, Name: f.Name, Value: PoolValue(f)})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// PoolOf returns the pool of the named flavor; nil when the agreement
// renders unsharded or the flavor is no pool.
func PoolOf(p *plan.Agreement, flavor string) *Pool {
	for _, pool := range Pools(p) {
		if pool.Name == flavor {
			return &pool
		}
	}
	return nil
}

// QueueName is the name of the KAI Queue called base (the agreement's
// name, a department's or a team's) in flavor f's pool: base itself when
// the agreement renders unsharded (Pools is nil), else base-<pool>, e.g.
// training-h100. The pool's subtrees are QueueName(p, p.Name, f) followed
// by -shared and -reserved.
func QueueName(p *plan.Agreement, base string, f *plan.Flavor) string {
	if Pools(p) == nil {
		return base
	}
	return PoolQueueName(base, f.Name)
}

// PoolQueueName is base's Queue name in the pool named pool.
func PoolQueueName(base, pool string) string { return base + "-" + pool }

// KAICounts reports whether KAI's queues count the flavor's resource and
// can hold its capacity exactly (render/kai's check reports the others).
func KAICounts(f *plan.Flavor) bool {
	per := PerUnit(f.Resource)
	return per > 0 && f.Capacity <= MaxExact/per
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

// PoolValue is the flavor's pool label value; a plan built without one (in
// tests) has the flavor's name, the format's default.
func PoolValue(f *plan.Flavor) string {
	if f.NodePool == "" {
		return f.Name
	}
	return f.NodePool
}
