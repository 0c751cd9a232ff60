package contention

import (
	"cmp"
	"math"
	"slices"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// kaiSource is where the files kaiRules cite are.
const kaiSource = "KAI Scheduler v0.17.0, pkg/scheduler/plugins/proportion/"

// kaiRules are KAI's rules as this file computes them, each with the source
// it rests on (KAI Scheduler v0.17.0, pkg/scheduler/plugins/proportion/).
var kaiRules = []string{
	"kai: one GPU count per queue, in GPUs (a MIG slice nvidia.com/mig-<N>g.<M>gb counts N); the queue tree is render's: the pool, POOL-shared (teams that lend, and departments with their teams) and POOL-reserved (teams that never lend, limit = quota)",
	"kai: the proportion plugin divides the cluster's GPUs level by level, each queue's fair share among its children (proportion.go:422-435 setFairShareForQueues): first each asking queue's deserved quota, up to its limit (resource_division/resource_division.go:96-113), then the rest by overQuotaWeight in rounds, each round's share rounded down (:168-226, :228-255), then the fractions left, one GPU each, largest fraction first (:268-285); a busy team runs its fair share, reclaiming from queues above theirs",
	"kai: fractions that tie are ordered by the queues' creation time, then UID (resource_division.go:339-361), which the agreement does not decide: such a team's range is its share and one GPU more",
	"kai: GPUs no fair share claims (a weight-0 queue gets no over-quota share) stay idle to anyone under its limits, first come (capacity_policy/capacity_policy.go IsJobOverQueueCapacity checks limits only): the range's most is the team's reach, its least what the others cannot all take",
	"kai: lending has no field: every idle guaranteed GPU of a team in POOL-shared may be used by others and is reclaimed when the team needs it; a window's lendable is not applied, its borrow is (the team's limit)",
}

// kaiQueue is a Queue of the rendered tree, in GPUs.
type kaiQueue struct {
	name                 string
	quota, limit, weight float64
	team                 int // the team's index in the plan; -1 for a parent queue
	children             []*kaiQueue
}

// kaiPoolTree is one queue tree of render/kai: the agreement's only one
// (pool nil), or a node pool's, whose plans are the flavor's parts.
type kaiPoolTree struct {
	pool  *gpu.Pool
	p, at *plan.Agreement
	root  *kaiQueue
}

// kaiTrees are render/kai's trees: one, or one per node pool (gpu.Pools),
// each computed from its flavor alone, as render/kai renders them.
func kaiTrees(p, at *plan.Agreement) []kaiPoolTree {
	pools := gpu.Pools(p)
	if pools == nil {
		return []kaiPoolTree{{p: p, at: at, root: kaiTree(p, at, nil)}}
	}
	out := make([]kaiPoolTree, 0, len(pools))
	for i := range pools {
		pool := &pools[i]
		pp, pat := p.FlavorPart(pool.Name), at.FlavorPart(pool.Name)
		out = append(out, kaiPoolTree{pool: pool, p: pp, at: pat, root: kaiTree(pp, pat, pool)})
	}
	return out
}

// kaiTree builds render/kai's tree: the structure and quotas from the plan
// (render's), each team's limit from at (what the windows controller sets
// at the instant: its limit in the render of at). In a pool (p and at the
// flavor's parts), only the teams and departments that hold some of the
// flavor have a queue, named with the pool's suffix.
func kaiTree(p, at *plan.Agreement, pool *gpu.Pool) *kaiQueue {
	name := func(base string) string { return base }
	inPool := func(q plan.Quota) bool { return true }
	if pool != nil {
		name = func(base string) string { return gpu.PoolQueueName(base, pool.Name) }
		inPool = holds
	}
	capacity := float64(gpu.Capacity(p, gpu.InGPUs, nil))
	var sharedQuota, reservedQuota float64
	var shared, reserved []*kaiQueue
	leaf := func(i int) *kaiQueue {
		s := gpu.TeamSum(p, &p.Teams[i], gpu.InGPUs, nil)
		w := gpu.TeamSum(at, &at.Teams[i], gpu.InGPUs, nil)
		limit := w.MostUsable()
		if p.Teams[i].Department == "" && w.NeverLends() {
			limit = w.Guaranteed
		}
		return &kaiQueue{name: name(p.Teams[i].Name), quota: float64(s.Guaranteed), limit: float64(limit), weight: float64(p.Teams[i].Weight), team: i}
	}
	teamIn := func(t *plan.Team) bool { return pool == nil || inPool(t.Quota(pool.Name)) }
	for i := range p.Teams {
		t := &p.Teams[i]
		if t.Department != "" || !teamIn(t) {
			continue
		}
		q := leaf(i)
		if gpu.TeamSum(p, t, gpu.InGPUs, nil).NeverLends() {
			reserved = append(reserved, q)
			reservedQuota += q.quota
		} else {
			shared = append(shared, q)
			sharedQuota += q.quota
		}
	}
	for i := range p.Departments {
		d := &p.Departments[i]
		s := gpu.DepartmentSum(p, d, gpu.InGPUs, nil)
		dq := &kaiQueue{name: name(d.Name), quota: float64(s.Guaranteed), limit: float64(s.MostUsable()), weight: float64(d.Weight), team: -1}
		for j := range p.Teams {
			if p.Teams[j].Department == d.Name && teamIn(&p.Teams[j]) {
				dq.children = append(dq.children, leaf(j))
			}
		}
		if pool != nil && len(dq.children) == 0 && !inPool(d.Quota(pool.Name)) {
			continue // render/kai gives it no queue in this pool
		}
		shared = append(shared, dq)
		sharedQuota += dq.quota
	}
	root := &kaiQueue{name: name(p.Name), quota: sharedQuota + reservedQuota, limit: capacity, weight: 1, team: -1}
	if len(shared) > 0 {
		root.children = append(root.children, &kaiQueue{name: root.name + "-shared", quota: sharedQuota, limit: capacity - reservedQuota, weight: 1, team: -1, children: shared})
	}
	if len(reserved) > 0 {
		root.children = append(root.children, &kaiQueue{name: root.name + "-reserved", quota: reservedQuota, limit: reservedQuota, weight: 0, team: -1, children: reserved})
	}
	return root
}

// kaiScenario is the tree's fair shares with a set of teams busy.
type kaiScenario struct {
	busy []bool
	// fair is each busy team's fair share, ties broken in the tree's
	// order; tie is +1 for a team that may get one GPU more and -1 for
	// one that may get one less, as creation order decides.
	fair []float64
	tie  []int
	// asks marks the queues with a busy team under them: only those ask
	// for GPUs (KAI's Request bubbles up to every parent).
	asks map[*kaiQueue]bool
	// used is the fair shares of the busy teams under each queue.
	used map[*kaiQueue]float64
}

func kaiScenarioOf(root *kaiQueue, capacity float64, busy []bool) *kaiScenario {
	s := &kaiScenario{busy: busy, fair: make([]float64, len(busy)), tie: make([]int, len(busy)),
		asks: map[*kaiQueue]bool{}, used: map[*kaiQueue]float64{}}
	s.mark(root)
	if s.asks[root] {
		// The top level: the pool's queue alone, given the cluster's GPUs.
		s.divide(capacity, []*kaiQueue{root})
	}
	return s
}

func (s *kaiScenario) mark(q *kaiQueue) bool {
	asks := q.team >= 0 && s.busy[q.team]
	for _, c := range q.children {
		asks = s.mark(c) || asks
	}
	if asks {
		s.asks[q] = true
	}
	return asks
}

// divide is setResourceShare for one level's asking queues, then each
// queue's share divided among its own children (setFairShareForQueues).
// Every asking queue floods: its requestable share is its limit.
func (s *kaiScenario) divide(total float64, queues []*kaiQueue) {
	fair := make([]float64, len(queues))
	tie := make([]int, len(queues))
	rest := total
	for i, q := range queues {
		fair[i] = math.Min(q.quota, q.limit) // setDeservedResource
		rest -= fair[i]
	}
	if rest > 0 {
		divideOverQuota(rest, queues, fair, tie)
	}
	for i, q := range queues {
		if q.team >= 0 {
			s.fair[q.team] = fair[i]
			s.tie[q.team] = tie[i]
			continue
		}
		var asking []*kaiQueue
		for _, c := range q.children {
			if s.asks[c] {
				asking = append(asking, c)
			}
		}
		s.divide(fair[i], asking)
		if tie[i] != 0 {
			// The queue may get one GPU more or less: so may each child.
			for _, c := range asking {
				s.markTie(c, tie[i])
			}
		}
	}
}

func (s *kaiScenario) markTie(q *kaiQueue, dir int) {
	if q.team >= 0 && s.tie[q.team] == 0 {
		s.tie[q.team] = dir
	}
	for _, c := range q.children {
		if s.asks[c] {
			s.markTie(c, dir)
		}
	}
}

// kValue is the proportion plugin's default (proportion.go:77); with no
// usage history a queue's share weight is its normalized weight times
// 1 + kValue, which normalizing again cancels.
const kValue = 1.0

// divideOverQuota is divideUpToFairShare and divideRemainingResource
// (resource_division.go:115-285) for queues of one priority (tenancy
// renders no queue priority), in the same float64 operations, the queues
// in the tree's order.
func divideOverQuota(total float64, queues []*kaiQueue, fair []float64, tie []int) {
	remaining := map[int]float64{} // the fraction each queue was rounded down by
	unsatisfied := func(i int) bool { return queues[i].limit > fair[i] }
	for {
		again := false
		round := total
		var totalWeights float64
		for i, q := range queues {
			if unsatisfied(i) {
				totalWeights += q.weight
			}
		}
		if totalWeights == 0 {
			break
		}
		weights := make([]float64, len(queues))
		var sum float64
		for i, q := range queues {
			if !unsatisfied(i) {
				continue
			}
			n := q.weight / totalWeights
			weights[i] = math.Max(0, n+kValue*(n-0))
			sum += weights[i]
		}
		if sum == 0 {
			break
		}
		for i, q := range queues {
			if total == 0 {
				break
			}
			if !unsatisfied(i) || q.weight == 0 {
				continue
			}
			requested := q.limit - fair[i]
			share := round * (weights[i] / sum)
			var give float64
			if requested <= share {
				give = requested
				delete(remaining, i)
			} else {
				give = math.Floor(share)
				if share-give > 0 {
					remaining[i] = share - give
				}
			}
			if give == 0 {
				continue
			}
			fair[i] += give
			total -= give
			again = again || requested < share
		}
		if !again || total == 0 {
			break
		}
	}
	if total <= 0 || len(remaining) == 0 {
		return
	}
	// One GPU each, largest fraction first; equal fractions in creation
	// order, which the agreement does not say.
	order := make([]int, 0, len(remaining))
	for i := range remaining {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(remaining[b], remaining[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	given := min(len(order), int(math.Ceil(total)))
	for k, i := range order {
		if k < given {
			fair[i] += math.Min(1, total)
			total -= math.Min(1, total)
		}
	}
	if given > 0 && given < len(order) && remaining[order[given-1]] == remaining[order[given]] {
		edge := remaining[order[given]]
		for k, i := range order {
			if remaining[i] == edge {
				tie[i] = 1
				if k < given {
					tie[i] = -1
				}
			}
		}
	}
}

// reach is what busy team i could take beyond its fair share of GPUs no
// fair share claims: the least room under its own limit, each ancestor's
// and the cluster's.
func (s *kaiScenario) reach(root *kaiQueue, capacity float64) []float64 {
	out := make([]float64, len(s.busy))
	var walk func(q *kaiQueue, room float64) float64
	// walk returns the fair shares used under q and fills out.
	walk = func(q *kaiQueue, room float64) float64 {
		if q.team >= 0 {
			if s.busy[q.team] {
				out[q.team] = math.Max(0, math.Min(room, q.limit-s.fair[q.team]))
				return s.fair[q.team]
			}
			return 0
		}
		room = math.Min(room, q.limit-s.used[q])
		var sum float64
		for _, c := range q.children {
			if s.asks[c] {
				sum += walk(c, room)
			}
		}
		return sum
	}
	s.sumUsed(root)
	walk(root, capacity-s.used[root])
	return out
}

func (s *kaiScenario) sumUsed(q *kaiQueue) float64 {
	var u float64
	if q.team >= 0 {
		if s.busy[q.team] {
			u = s.fair[q.team]
		}
	}
	for _, c := range q.children {
		if s.asks[c] {
			u += s.sumUsed(c)
		}
	}
	s.used[q] = u
	return u
}

// shares is each busy team's range: its fair share, one more where a tie
// decides, and what idle GPUs it may reach first come.
func (s *kaiScenario) shares(root *kaiQueue, capacity float64) []Share {
	reach := s.reach(root, capacity)
	var allReach float64
	for _, r := range reach {
		allReach += r
	}
	out := make([]Share, len(s.busy))
	for i, busy := range s.busy {
		if !busy {
			continue
		}
		least := s.fair[i] + math.Max(0, reach[i]-(allReach-reach[i]))
		most := s.fair[i] + reach[i]
		switch s.tie[i] {
		case 1:
			most++
		case -1:
			least--
		}
		out[i] = Share{Min: int64(math.Round(least)), Max: int64(math.Round(most))}
	}
	return out
}

// kaiAlone is what a team runs alone: the one asking queue at each level
// gets all it may, so the least limit on its path and the cluster's GPUs.
func kaiAlone(root *kaiQueue, capacity float64, n int) []Share {
	out := make([]Share, n)
	var walk func(q *kaiQueue, most float64)
	walk = func(q *kaiQueue, most float64) {
		most = math.Min(most, q.limit)
		if q.team >= 0 {
			v := int64(math.Round(math.Max(0, most)))
			out[q.team] = Share{Min: v, Max: v}
		}
		for _, c := range q.children {
			walk(c, most)
		}
	}
	walk(root, capacity)
	return out
}

// kaiReport computes each tree's outcomes: the agreement's only one, named
// after the flavor that holds the quotas, or one per node pool, named after
// its flavor (pools do not interact: each shard's scheduler divides its own
// Nodes among its own Queues).
func kaiReport(p, at *plan.Agreement, busy []bool) ([]Flavor, []string) {
	var out []Flavor
	trees := kaiTrees(p, at)
	for _, tr := range trees {
		out = append(out, kaiFlavor(tr, busy))
	}
	if trees[0].pool != nil {
		return out, append(slices.Clip(kaiRules), kaiPoolRule)
	}
	return out, kaiRules
}

// kaiPoolRule is said of an agreement rendered as node pools.
const kaiPoolRule = "kai: quotas on several flavors are a node pool per flavor, each a SchedulingShard whose scheduler takes only the Nodes, Queues and PodGroups with its pool label (KAI v0.17.0 pkg/scheduler/conf/scheduler_conf.go, GetLabelSelector): each pool's tree (POOL-<flavor>, its teams <team>-<flavor>) is divided alone, from its flavor's capacity and quotas; no GPU is lent or borrowed across pools"

// kaiFlavor is one tree's outcomes, for the teams with a queue in it.
func kaiFlavor(tr kaiPoolTree, busy []bool) Flavor {
	p := tr.p
	fl := Flavor{Resource: "gpu (KAI counts GPUs)", Capacity: gpu.Capacity(p, gpu.InGPUs, nil)}
	for _, f := range p.Flavors {
		if !gpu.Counted(f.Resource) {
			continue
		}
		if fl.Flavor == "" {
			fl.Flavor, fl.Resource = f.Name, f.Resource
		}
		if s := gpu.FlavorSum(p, gpu.InGPUs, gpu.Flavor(f.Name)); s.Guaranteed+s.Borrow > 0 {
			fl.Flavor, fl.Resource = f.Name, f.Resource
			break
		}
	}
	root := tr.root
	capacity := float64(fl.Capacity)
	alone := kaiAlone(root, capacity, len(p.Teams))
	allBusy := kaiScenarioOf(root, capacity, everyone(len(p.Teams))).shares(root, capacity)
	var chosen []Share
	if busy != nil {
		chosen = kaiScenarioOf(root, capacity, busy).shares(root, capacity)
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		s := gpu.TeamSum(p, t, gpu.InGPUs, nil)
		if s.Guaranteed+s.Borrow == 0 {
			continue
		}
		o := Outcome{Team: t.Name, Department: t.Department, Guaranteed: s.Guaranteed, Alone: alone[i], AllBusy: allBusy[i]}
		if chosen != nil {
			c := chosen[i]
			o.Busy = &c
		}
		fl.Teams = append(fl.Teams, o)
	}
	sortTeams(&fl)
	return fl
}
