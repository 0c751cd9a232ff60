package contention

import (
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// kueueSource is where the files kueueRules cite are.
const kueueSource = "sigs.k8s.io/kueue v0.17.0, pkg/"

// kueueRules are Kueue's rules as this file computes them, each with the
// source it rests on (sigs.k8s.io/kueue v0.17.0, pkg/).
var kueueRules = []string{
	"kueue: a ClusterQueue always gets its nominalQuota (guaranteed) back: a team below it reclaims lent GPUs from borrowers (preemption.reclaimWithinCohort Any, scheduler/preemption/preemption.go:543-549); with reclaim = \"wait\" (Never) it preempts no borrower: what it lent is first come while borrowers' work runs, so only the part it never lends is sure (a range)",
	"kueue: what a team may borrow is what the cohort tree makes available: the lendingLimit part of each idle team's guarantee, a department Cohort's nominalQuota (its surplus), capped by the team's borrowingLimit, by its department's borrowingLimit and by what the department lets leave (lendingLimit) (cache/scheduler/resource_node.go:63-71 localQuota, :104-118 available, :210-217 accumulateFromChild); capacity no team is guaranteed is in no ClusterQueue and never borrowed",
	"kueue: fair sharing is off (tenancy renders fairSharing.weight, but Kueue reads it only when its Configuration enables fairSharing, which tenancy does not render): among borrowers the split of what is left to borrow is first come (workloads that borrow are ordered after those that do not, then by priority, then by creation time: scheduler/scheduler.go:793-830), and borrowWithinCohort Never keeps one borrower from preempting another; a range is the least and the most a team gets over every arrival order (the least: what the others cannot take, computed as a polymatroid's f(all) - f(all but the team))",
	"kueue: a retiring team's ClusterQueue (stopPolicy HoldAndDrain) admits nothing, and its guarantee is still lent as agreed: a stopped ClusterQueue leaves the scheduler's snapshot (cache/scheduler/snapshot.go:178-181) while its quota stays in the Cohort (resource_node.go:194-197)",
	"kueue: each flavor is computed on its own; a workload asking for a resource two flavors share tries them in the agreement's order and stops at the first that fits, borrowing included (flavorFungibility whenCanBorrow MayStopSearch)",
}

// kueueTeam is one team's numbers in one flavor, as its ClusterQueue says
// them: nominalQuota, lendingLimit, borrowingLimit.
type kueueTeam struct {
	g, l, b int64
	// lent is what of the guarantee sits in the parent Cohort (the
	// guarantee beyond the localQuota, Kueue's g - max(0, g - l)).
	lent     int64
	dept     int // index in the plan's departments; -1 in the pool
	retiring bool
	// wait is reclaim = "wait" (reclaimWithinCohort Never): the team
	// takes back nothing a borrower holds, so its lent part is first
	// come while it is busy, as an idle team's is.
	wait bool
}

// held is what of a busy team's lent part is sure to come back: all of
// it with reclaim, none without (borrowers keep it while their work
// runs).
func (t kueueTeam) held() int64 {
	if t.wait {
		return 0
	}
	return t.lent
}

// sure is the part of a busy team's guarantee no arrival order takes
// away, and ask what it competes for beyond it: its borrow, and with
// reclaim = "wait" its lent part too.
func (t kueueTeam) sure() int64 { return t.g - t.lent + t.held() }
func (t kueueTeam) ask() int64  { return t.b + t.lent - t.held() }

// kueueDept is a department Cohort's numbers in one flavor.
type kueueDept struct {
	// subtree is the Cohort's SubtreeQuota: its surplus and what its
	// teams lend into it; local the part its lendingLimit keeps inside;
	// borrow its borrowingLimit.
	subtree, local, borrow int64
}

// kueueFlavor is one flavor's tree: the pool's Cohort (root), its
// departments and its teams.
type kueueFlavor struct {
	teams []kueueTeam
	depts []kueueDept
	root  int64 // the pool Cohort's SubtreeQuota
}

func newKueueFlavor(p *plan.Agreement, flavor string) kueueFlavor {
	k := kueueFlavor{teams: make([]kueueTeam, len(p.Teams)), depts: make([]kueueDept, len(p.Departments))}
	deptIndex := map[string]int{}
	for i := range p.Departments {
		d := &p.Departments[i]
		deptIndex[d.Name] = i
		q := d.Quota(flavor)
		k.depts[i] = kueueDept{subtree: p.Surplus(d, flavor), borrow: q.Borrow, local: q.Lendable}
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		q := t.Quota(flavor)
		kt := kueueTeam{g: q.Guaranteed, l: q.Lendable, b: q.Borrow, lent: min(q.Guaranteed, q.Lendable), dept: -1, retiring: t.Retiring, wait: t.Reclaim == plan.ReclaimWait}
		if t.Department != "" {
			kt.dept = deptIndex[t.Department]
			k.depts[kt.dept].subtree += kt.lent
		} else {
			k.root += kt.lent
		}
		k.teams[i] = kt
	}
	for i := range k.depts {
		d := &k.depts[i]
		lending := d.local // the department's lendingLimit, set above
		d.local = max(0, d.subtree-lending)
		k.root += d.subtree - d.local
	}
	return k
}

// kueueScenario is the tree with a set of teams busy at their guarantee:
// what is left to borrow, and where.
type kueueScenario struct {
	k *kueueFlavor
	// run marks the busy teams whose queues admit.
	run []bool
	// Per department: room is the most its busy teams may borrow
	// together (its subtree and borrowingLimit, less their lent parts in
	// use); free what they borrow without touching the pool's Cohort;
	// asked the sum of their borrowingLimits.
	room, free, asked []int64
	// in and out split min(asked, room) into what free covers and what
	// must come from the pool.
	in, out []int64
	// pool is what the pool's Cohort has left for borrowers; inSum and
	// outSum add in and out over departments, outSum also the loose busy
	// teams' borrowingLimits.
	pool, inSum, outSum int64
}

func (k *kueueFlavor) scenario(busy []bool) *kueueScenario {
	n := len(k.depts)
	s := &kueueScenario{k: k, run: make([]bool, len(k.teams)),
		room: make([]int64, n), free: make([]int64, n), asked: make([]int64, n), in: make([]int64, n), out: make([]int64, n)}
	used := make([]int64, n) // the busy teams' lent parts they are sure of, in use
	s.pool = k.root
	for i, t := range k.teams {
		if !busy[i] || t.retiring {
			continue
		}
		s.run[i] = true
		if t.dept < 0 {
			s.pool -= t.held()
			s.outSum += t.ask()
			continue
		}
		used[t.dept] += t.held()
		s.asked[t.dept] += t.ask()
	}
	for d, kd := range k.depts {
		s.room[d] = kd.subtree + kd.borrow - used[d]
		s.free[d] = max(0, kd.local-used[d])
		// What the busy teams' guarantees already take from the pool's
		// Cohort: their lent parts beyond the department's local quota.
		s.pool -= max(0, used[d]-kd.local)
		s.split(d)
		s.inSum += s.in[d]
		s.outSum += s.out[d]
	}
	s.pool = max(0, s.pool)
	return s
}

func (s *kueueScenario) split(d int) {
	a := min(s.room[d], s.asked[d])
	s.in[d] = min(a, s.free[d])
	s.out[d] = a - s.in[d]
}

// total is the most the busy teams borrow together, whatever the order:
// every order ends there (a polymatroid's rank), without would-be team x
// when x >= 0.
func (s *kueueScenario) total(without int) int64 {
	if without < 0 {
		return s.inSum + min(s.pool, s.outSum)
	}
	t := s.k.teams[without]
	if t.dept < 0 {
		return s.inSum + min(s.pool, s.outSum-t.ask())
	}
	d := t.dept
	a := min(s.room[d], s.asked[d]-t.ask())
	in := min(a, s.free[d])
	out := a - in
	return s.inSum - s.in[d] + in + min(s.pool, s.outSum-s.out[d]+out)
}

// share is what busy team i runs: the part of its guarantee it is sure
// of, plus the most it takes of what is first come when it comes first
// and the least when every other borrower came first.
func (s *kueueScenario) share(i int) Share {
	if !s.run[i] {
		return Share{}
	}
	t := s.k.teams[i]
	most := min(t.ask(), s.pool)
	if t.dept >= 0 {
		most = min(t.ask(), s.room[t.dept], s.free[t.dept]+s.pool)
	}
	least := s.total(-1) - s.total(i)
	return Share{Min: t.sure() + max(0, least), Max: t.sure() + max(0, most)}
}

// alone is scenario({i}).share(i) without building a scenario per team:
// with no other borrower, the team takes the most it may (its lent part
// back first, whatever its reclaim: nobody else holds it).
func (k *kueueFlavor) alone(i int) Share {
	t := k.teams[i]
	if t.retiring {
		return Share{}
	}
	most := min(t.b, k.root-t.lent)
	if t.dept >= 0 {
		d := k.depts[t.dept]
		pool := k.root - max(0, t.lent-d.local)
		most = min(t.b, d.subtree+d.borrow-t.lent, max(0, d.local-t.lent)+pool)
	}
	return Share{Min: t.g + max(0, most), Max: t.g + max(0, most)}
}

// admitted is every GPU the scenario's busy teams hold together: their
// guarantees and all they borrow (the same in every order).
func (s *kueueScenario) admitted() int64 {
	n := s.total(-1)
	for i, t := range s.k.teams {
		if s.run[i] {
			n += t.g
		}
	}
	return n
}

func kueueReport(p *plan.Agreement, busy []bool, nodes map[string]int64) ([]Flavor, []string) {
	var out []Flavor
	all := everyone(len(p.Teams))
	for _, f := range p.Flavors {
		k := newKueueFlavor(p, f.Name)
		everyBusy := k.scenario(all)
		var chosen *kueueScenario
		if busy != nil {
			chosen = k.scenario(busy)
		}
		fl := Flavor{Flavor: f.Name, Resource: f.Resource, Capacity: f.Capacity}
		// Kueue admits by quota alone; on fewer GPUs than the agreement
		// says, what runs is capped by the nodes (Query.Nodes).
		// admitted is what a scenario's teams hold together (alone: the
		// team's own share), -1 when the nodes are not cut.
		run := func(s Share, admitted int64) Share { return s }
		everyAdmitted, chosenAdmitted := int64(-1), int64(-1)
		if n, ok := nodes[f.Name]; ok {
			fl.Capacity = n
			run = func(s Share, admitted int64) Share { return onNodes(s, admitted, n) }
			everyAdmitted = everyBusy.admitted()
			if chosen != nil {
				chosenAdmitted = chosen.admitted()
			}
		}
		for i := range p.Teams {
			t := &p.Teams[i]
			if !holds(t.Quota(f.Name)) {
				continue
			}
			alone := k.alone(i)
			o := Outcome{Team: t.Name, Department: t.Department, Guaranteed: k.teams[i].g,
				Alone: run(alone, alone.Max), AllBusy: run(everyBusy.share(i), everyAdmitted)}
			if chosen != nil {
				s := run(chosen.share(i), chosenAdmitted)
				o.Busy = &s
			}
			if t.Retiring {
				o.Note = "retiring: its ClusterQueue admits nothing"
			}
			fl.Teams = append(fl.Teams, o)
		}
		sortTeams(&fl)
		out = append(out, fl)
	}
	return out, kueueRules
}
