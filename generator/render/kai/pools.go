package kai

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
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

// DefaultShard is the SchedulingShard KAI's Helm chart installs (v0.17.0
// templates/default-shard.yaml): partitionLabelValue "", whose scheduler
// takes the Nodes, Queues and PodGroups without the pool label.
const DefaultShard = "default"

// poolChecks: a pool that would take the default shard's name, and two
// flavors KAI counts that share one pool value. Two pools
// of one value would be two schedulers over the same Nodes, each counting
// all of them as its own: refused. Where at most one of them is a pool,
// the other's Nodes would silently join it: a warning.
func poolChecks(p *plan.Agreement, r *diag.Reporter) {
	pools := map[string]bool{}
	for _, pool := range Pools(p) {
		pools[pool.Name] = true
		if pool.Name == DefaultShard {
			o := pool.Flavor.Origin
			r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path,
				"kai: flavor %s would be a node pool whose SchedulingShard is named %q, the name of the shard KAI's Helm chart installs for the Nodes without a pool label: rename the flavor", pool.Name, DefaultShard)
		}
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

// tree is one queue tree and how its Queues are named and labelled: the
// agreement's only tree (pool nil: names as written, no label), or a
// pool's, counted from its flavor's part of the plan, every name ending in
// -<pool> and every Queue carrying the pool label.
type tree struct {
	p     *plan.Agreement // the agreement, or the pool's FlavorPart
	pool  *Pool
	label string // the pool label's key (Agreement.NodePoolLabel)
}

// poolTree is the queue tree of one pool of p.
func poolTree(p *plan.Agreement, pool Pool) tree {
	return tree{p: p.FlavorPart(pool.Flavor.Name), pool: &pool, label: p.NodePoolLabel}
}

// name is the tree's name of the Queue called base.
func (tr tree) name(base string) string {
	if tr.pool == nil {
		return base
	}
	return gpu.PoolQueueName(base, tr.pool.Name)
}

// root is the tree's top Queue: the agreement's name, or name-<pool>; the
// subtrees are root-shared and root-reserved.
func (tr tree) root() string { return tr.name(tr.p.Name) }

// holds reports whether the team has a Queue in the tree: every team in the
// agreement's only tree; in a pool, a team guaranteed some of the pool's
// flavor or allowed to borrow it.
func (tr tree) holds(t *plan.Team) bool {
	if tr.pool == nil {
		return true
	}
	return tr.pool.HasQueue(t)
}

// holdsDepartment: every department in the agreement's only tree; in a
// pool, a department that holds some of the pool's flavor or has a team
// that does.
func (tr tree) holdsDepartment(d *plan.Department) bool {
	if tr.pool == nil {
		return true
	}
	if q := d.Quota(tr.pool.Flavor.Name); q.Guaranteed+q.Borrow > 0 {
		return true
	}
	for i := range tr.p.Teams {
		if t := &tr.p.Teams[i]; t.Department == d.Name && tr.holds(t) {
			return true
		}
	}
	return false
}

// SchedulingShardAPIVersion and SchedulingShardKind are KAI's
// kai.scheduler/v1 SchedulingShard (v0.17.0 CRD
// deployments/kai-scheduler/crds/kai.scheduler_schedulingshards.yaml).
const (
	SchedulingShardAPIVersion = "kai.scheduler/v1"
	SchedulingShardKind       = "SchedulingShard"
)

// SchedulingShard is the part of KAI's SchedulingShard that tenancy
// writes: for each one, KAI's operator runs a scheduler over the Nodes,
// Queues and PodGroups whose node pool label ([kai] node_pool_label, which
// must be the cluster's Config spec.global.nodePoolLabelKey) has the
// shard's partitionLabelValue. Everything else is left to the operator's
// defaults (SchedulingShardSpec.SetDefaultsWhereNeeded, applied in memory,
// never written back: the CRD itself defaults nothing, so the API server
// adds nothing Argo CD would see as drift), which are the chart's default
// shard's too.
type SchedulingShard = object[SchedulingShardSpec]

// SchedulingShardSpec is a SchedulingShard's spec.
type SchedulingShardSpec struct {
	PartitionLabelValue string `json:"partitionLabelValue"`
}

// schedulingShard is the pool's SchedulingShard, named as the pool.
func schedulingShard(p *plan.Agreement, pool Pool) *SchedulingShard {
	return &SchedulingShard{
		TypeMeta:   metav1.TypeMeta{APIVersion: SchedulingShardAPIVersion, Kind: SchedulingShardKind},
		ObjectMeta: render.Meta(p.Name, "", pool.Name, ""),
		Spec:       SchedulingShardSpec{PartitionLabelValue: pool.Value},
	}
}
