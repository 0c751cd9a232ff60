package gpu

import "github.com/tenancy-dev/tenancy/generator/plan"

// Pool is one KAI node pool of an agreement whose quotas are on several
// flavors: the flavor's Nodes (those whose Agreement.NodePoolLabel is
// Value), the SchedulingShard that schedules them, and a tree of Queues
// holding that flavor's quotas alone. KAI keeps one GPU quota per Queue,
// so a pool per flavor is what keeps per-flavor guarantees apart
// (KAI-scheduler issues #133 and #145). The naming lives here, in the
// vocabulary, because every family names a pool's Queues the same way
// (render/kai renders them; the guardrails, the dashboard and the windows
// controller name them) and no family imports another.
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
func Pools(p *plan.Agreement) []Pool {
	var out []Pool
	for i := range p.Flavors {
		f := &p.Flavors[i]
		if KAICounts(f) && Held(p, f.Name) {
			out = append(out, Pool{Flavor: f, Name: f.Name, Value: PoolValue(f)})
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

// HasQueue reports whether team t has a Queue in the pool: a guarantee or a
// borrow limit on the pool's flavor.
func (pool Pool) HasQueue(t *plan.Team) bool {
	q := t.Quota(pool.Flavor.Name)
	return q.Guaranteed+q.Borrow > 0
}

// KAICounts reports whether KAI's queues count the flavor's resource and
// can hold its capacity exactly.
func KAICounts(f *plan.Flavor) bool {
	per := PerUnit(f.Resource)
	return per > 0 && f.Capacity <= MaxExact/per
}

// Held reports whether a team or a department is guaranteed, or may
// borrow, some of the flavor.
func Held(p *plan.Agreement, flavor string) bool {
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
// tests) uses the flavor's name, the format's default.
func PoolValue(f *plan.Flavor) string {
	if f.NodePool == "" {
		return f.Name
	}
	return f.NodePool
}

// UnshardedFlavor is the flavor whose GPUs an agreement that renders as one
// queue tree (Pools is nil) holds quotas on: the first flavor KAI counts
// that a team or a department holds, else the first flavor KAI counts,
// else the first flavor (nil without flavors). The guardrails read its
// gpu_sharing for a pod that asks for part of a GPU.
func UnshardedFlavor(p *plan.Agreement) *plan.Flavor {
	var first *plan.Flavor
	for i := range p.Flavors {
		f := &p.Flavors[i]
		if !KAICounts(f) {
			continue
		}
		if Held(p, f.Name) {
			return f
		}
		if first == nil {
			first = f
		}
	}
	if first == nil && len(p.Flavors) > 0 {
		first = &p.Flavors[0]
	}
	return first
}
