package kai

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Pool is one KAI node pool (gpu.Pool, where every family and contention
// read it).
type Pool = gpu.Pool

// Pools returns the agreement's node pools; nil for an agreement that
// renders unsharded (gpu.Pools).
func Pools(p *plan.Agreement) []Pool { return gpu.Pools(p) }

// QueueName is the name of the Queue called base in flavor f's pool
// (gpu.QueueName): base unsharded, else base-<pool>, e.g. training-h100.
func QueueName(p *plan.Agreement, base string, f *plan.Flavor) string {
	return gpu.QueueName(p, base, f)
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
		if !gpu.KAICounts(f) {
			continue
		}
		v := gpu.PoolValue(f)
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
