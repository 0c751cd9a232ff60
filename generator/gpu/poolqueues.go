package gpu

import "github.com/tenancy-dev/tenancy/generator/plan"

// HasQueue reports whether team t has a Queue in the pool: a guarantee or a
// borrow limit on the pool's flavor (render/kai renders no Queue for a team
// without either).
func (pool Pool) HasQueue(t *plan.Team) bool {
	q := t.Quota(pool.Flavor.Name)
	return q.Guaranteed+q.Borrow > 0
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
		if held(p, f.Name) {
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
