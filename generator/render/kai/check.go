package kai

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Check reports what KAI refuses of a plan, as errors, and what it can only
// approximate, as warnings, each at the origin of the value it is about.
// Messages start with "kai: " so a reader knows which backend says so; each
// says the numbers KAI will use.
func (Renderer) Check(p *plan.Agreement) diag.List {
	r := &diag.Reporter{File: p.File}
	flavorChecks(p, r)
	poolChecks(p, r)
	priorityChecks(p, r)
	// Each queue tree is checked as it is rendered: the agreement's only
	// one, or each pool's from its flavor's part, with the pool's names.
	pools := Pools(p)
	trees := []tree{{p: p}}
	if pools != nil {
		trees = trees[:0]
		for _, pool := range pools {
			trees = append(trees, poolTree(p, pool))
		}
	}
	claims := queueClaims{}
	for _, tr := range trees {
		queueChecks(tr, r, claims)
		departmentChecks(tr, r, claims)
	}
	if pools != nil {
		waitChecks(p, r)
	}
	return r.List
}

// flavorChecks: resources KAI does not count, counts too large for KAI's
// float quotas, and the one GPU quota per queue that several flavors share
// where the agreement renders unsharded: quotas on one counted flavor
// beside others nobody holds. Quotas on several are a pool per flavor.
func flavorChecks(p *plan.Agreement, r *diag.Reporter) {
	var countedFlavors []plan.Flavor
	for _, f := range p.Flavors {
		per := gpu.PerUnit(f.Resource)
		if per == 0 {
			r.Warnf(field.ErrorTypeNotSupported, f.ResourceOrigin.Pos, f.ResourceOrigin.Path,
				"kai: KAI queues count whole GPUs (%s) and MIG slices (nvidia.com/mig-<N>g.<M>gb) only: the quotas of flavor %s (%s) are not expressed", gpu.WholeGPU, f.Name, f.Resource)
			continue
		}
		if f.Capacity > gpu.MaxExact/per {
			r.Errorf(field.ErrorTypeInvalid, f.CapacityOrigin.Pos, f.CapacityOrigin.Path,
				"kai: KAI counts %s as %d GPUs each: %d of them are more GPUs than KAI's quotas hold exactly (2^53)", f.Resource, per, f.Capacity)
			continue
		}
		countedFlavors = append(countedFlavors, f)
	}
	if len(countedFlavors) < 2 || Pools(p) != nil {
		// One flavor, or a node pool per flavor that carries quotas
		// (Pools): each queue's one GPU quota is one flavor's.
		return
	}
	// Quotas on one counted flavor, beside flavors nobody holds: KAI still
	// lets a team spend its quota on any of them.
	for i := range p.Teams {
		t := &p.Teams[i]
		g, limit := quotaAndLimit(p, t)
		if limit == 0 {
			continue
		}
		var parts, over []string
		for _, f := range countedFlavors {
			q := t.Quota(f.Name)
			fg, fb := q.Guaranteed, q.Borrow
			per := gpu.PerUnit(f.Resource)
			part := fmt.Sprintf("%s %d+%d", f.Name, fg, fb)
			if per > 1 {
				part += fmt.Sprintf(" x %d GPUs", per)
			}
			parts = append(parts, part)
			if most := min(limit/per, f.Capacity); most > fg+fb {
				over = append(over, fmt.Sprintf("%d %s (agreed %d)", most, f.Name, fg+fb))
			}
		}
		msg := fmt.Sprintf("kai: KAI keeps one GPU quota per queue, not one per flavor: team %s gets quota %d and limit %d GPUs (guaranteed+borrow: %s)",
			t.Name, g, limit, strings.Join(parts, ", "))
		if len(over) > 0 {
			msg += "; it may use up to " + strings.Join(over, ", ")
		}
		if g > 0 {
			msg += fmt.Sprintf("; its guarantee of %d GPUs may be met with any flavor, not the one agreed", g)
		}
		r.Warnf(field.ErrorTypeNotSupported, t.Origin.Pos, t.Origin.Path, "%s", msg)
	}
}

// quotaAndLimit is what the checks' messages say a team's queue gets, in
// the GPUs KAI counts, summed over flavors: its guarantee, and a limit of
// the guarantee plus what it may borrow, or of the guarantee alone when it
// never lends (as outside departments, where Render puts such a team in the
// reserved subtree, which borrows nothing).
func quotaAndLimit(p *plan.Agreement, t *plan.Team) (quota, limit int64) {
	s := gpu.TeamSum(p, t, gpu.InGPUs, nil)
	if s.NeverLends() {
		return s.Guaranteed, s.Guaranteed
	}
	return s.Guaranteed, s.MostUsable()
}

// priorityChecks: names Kubernetes refuses, and KAI's preemptible and
// non-preemptible bands (ClassValues).
func priorityChecks(p *plan.Agreement, r *diag.Reporter) {
	// The messages list priorities in the agreement's order, which the
	// plan's (by value) is not: their origins keep it.
	prs := slices.SortedStableFunc(slices.Values(p.Priorities), func(x, y plan.Priority) int {
		switch {
		case x.Origin.Pos.Before(y.Origin.Pos):
			return -1
		case y.Origin.Pos.Before(x.Origin.Pos):
			return 1
		}
		return 0
	})
	for _, pr := range prs {
		// Kubernetes reserves the system- prefix for its own
		// PriorityClasses and refuses any other by that name (Kueue's
		// WorkloadPriorityClass does not): refuse it here rather than fail
		// the sync halfway.
		if strings.HasPrefix(pr.Name, "system-") {
			r.Errorf(field.ErrorTypeForbidden, pr.Origin.Pos, pr.Origin.Path, "kai: names starting with system- are reserved for Kubernetes' own PriorityClasses")
		}
	}
	// KAI ranks every non-preemptible PodGroup above every preemptible
	// one: an agreement that wants the reverse cannot be kept.
	var lowestNon, highestPre *plan.Priority
	for i := range prs {
		pr := &prs[i]
		if pr.Preemptible && (highestPre == nil || pr.Value > highestPre.Value) {
			highestPre = pr
		}
		if !pr.Preemptible && (lowestNon == nil || pr.Value < lowestNon.Value) {
			lowestNon = pr
		}
	}
	if lowestNon != nil && highestPre != nil && highestPre.Value >= lowestNon.Value {
		r.Errorf(field.ErrorTypeInvalid, highestPre.Origin.Pos, highestPre.Origin.Path,
			"kai: KAI ranks non-preemptible work (PriorityClass %d and above) above all preemptible work: preemptible %s (%d) must be lower than non-preemptible %s (%d)",
			NonPreemptibleFrom, highestPre.Name, highestPre.Value, lowestNon.Name, lowestNon.Value)
		return
	}
	values := ClassValues(prs)
	var moved []string
	var first *plan.Priority
	for i, pr := range prs {
		if v := values[pr.Name]; v != int64(pr.Value) {
			moved = append(moved, fmt.Sprintf("%s %d -> %d", pr.Name, pr.Value, v))
			if first == nil {
				first = &prs[i]
			}
		}
	}
	if first != nil {
		r.Warnf(field.ErrorTypeNotSupported, first.Origin.Pos, first.Origin.Path,
			"kai: KAI treats PriorityClass values below %d as preemptible (may borrow) and the others as non-preemptible (quota only): the PriorityClasses get %s, in the agreement's order",
			NonPreemptibleFrom, strings.Join(moved, ", "))
	}
	// Non-preemptible work is never a victim, so among non-preemptible
	// priorities a higher one does not preempt a lower one.
	var non []plan.Priority
	for _, pr := range prs {
		if !pr.Preemptible {
			non = append(non, pr)
		}
	}
	slices.SortStableFunc(non, func(x, y plan.Priority) int { return cmp.Compare(y.Value, x.Value) })
	for i := 1; i < len(non); i++ {
		if non[i].Value == non[0].Value {
			continue
		}
		r.Warnf(field.ErrorTypeNotSupported, non[i].Origin.Pos, non[i].Origin.Path,
			"kai: KAI never preempts non-preemptible work: running %s (%d) work is not preempted for %s (%d) work of its team, which waits for quota",
			non[i].Name, non[i].Value, non[0].Name, non[0].Value)
	}
}

// queueClaims are the Queue names a render takes, each with what takes it,
// across every tree: two pools' names may collide too.
type queueClaims map[string]string

// claim takes a Queue name for what, at o; a name taken twice, or too long
// for the label that names a workload's queue, is refused.
func (c queueClaims) claim(r *diag.Reporter, q, what string, o diag.Origin) {
	if prev, ok := c[q]; ok {
		r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path, "kai: queue name %q is used both by %s and by %s", q, prev, what)
	}
	c[q] = what
	// Unsharded, every name is a DNS label already (validate).
	if len(q) > maxQueueName {
		r.Errorf(field.ErrorTypeTooLong, o.Pos, o.Path, "kai: queue name %q of %s is %d characters: workloads name their queue in the label %s, whose value holds at most %d; shorten the name or the flavor's", q, what, len(q), QueueLabel, maxQueueName)
	}
}

// maxQueueName is the longest label value, which a workload's queue label
// (QueueLabel) is.
const maxQueueName = 63

// in says which tree a message is about: nothing for the agreement's only
// tree, the pool for a pool's.
func (tr tree) in() string {
	if tr.pool == nil {
		return ""
	}
	if tr.pool.Value != tr.pool.Name {
		return fmt.Sprintf(" in node pool %s (%s=%s)", tr.pool.Name, tr.label, tr.pool.Value)
	}
	return " in node pool " + tr.pool.Name
}

// queueChecks: queue names that collide, and what the queue tree cannot say
// of lending, borrowing and reclaim, with the tree's numbers: per team in
// the agreement's only tree, once per pool (listing its teams) in a pool's.
func queueChecks(tr tree, r *diag.Reporter, claims queueClaims) {
	p := tr.p
	root := tr.root()
	if tr.pool == nil {
		claims.claim(r, root, "the pool queue", p.NameOrigin)
	} else {
		claims.claim(r, root, "the pool queue of node pool "+tr.pool.Name, tr.pool.Flavor.Origin)
	}
	shared, reserved := false, false
	for i := range p.Departments {
		shared = shared || tr.holdsDepartment(&p.Departments[i])
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		if t.Department != "" || !tr.holds(t) {
			continue // under its department's queue, or not in this pool
		}
		if gpu.TeamSum(p, t, gpu.InGPUs, nil).NeverLends() {
			reserved = true
		} else {
			shared = true
		}
	}
	if shared {
		claims.claim(r, root+SharedSuffix, "the shared subtree"+tr.in(), p.NameOrigin)
	}
	if reserved {
		claims.claim(r, root+ReservedSuffix, "the reserved subtree"+tr.in(), p.NameOrigin)
	}
	var noBorrow, lends poolWarning
	for i := range p.Teams {
		t := &p.Teams[i]
		if !tr.holds(t) {
			continue
		}
		claims.claim(r, tr.name(t.Name), "team "+t.Name+tr.in(), t.Origin)
		s := gpu.TeamSum(p, t, gpu.InGPUs, nil)
		if s.NeverLends() && t.Department == "" {
			if s.Borrow > 0 {
				o := firstWith(p, t, func(q plan.Quota) (int64, diag.Origin) { return q.Borrow, q.Origin.Borrow })
				noBorrow.add(o, fmt.Sprintf("%s %d", t.Name, s.Borrow))
				if tr.pool == nil {
					r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
						"kai: a team that never lends sits in the %s%s subtree, whose limit equals its quota: it cannot borrow the %d GPUs the agreement allows", root, ReservedSuffix, s.Borrow)
				}
			}
		} else if s.Lendable > 0 && s.Lendable < s.Guaranteed {
			o := firstWith(p, t, func(q plan.Quota) (int64, diag.Origin) { return q.Lendable, q.Origin.Lendable })
			lends.add(o, fmt.Sprintf("%s all %d, not only %d", t.Name, s.Guaranteed, s.Lendable))
			if tr.pool == nil {
				r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
					"kai: KAI has no lending limit: all %d idle guaranteed GPUs may be lent, not only %d; they are reclaimed when the team needs them", s.Guaranteed, s.Lendable)
			}
		}
		if t.Reclaim == plan.ReclaimWait && tr.pool == nil {
			r.Warnf(field.ErrorTypeNotSupported, t.ReclaimOrigin.Pos, t.ReclaimOrigin.Path, "kai: %s", reclaimWait)
		}
	}
	if tr.pool == nil {
		return
	}
	noBorrow.warn(r, "kai: in node pool %s, a team that never lends sits in the %s%s subtree, whose limit equals its quota: it cannot borrow the GPUs the agreement allows (%%s)", tr.pool.Name, root, ReservedSuffix)
	lends.warn(r, "kai: KAI has no lending limit in node pool %s: a team's idle guaranteed GPUs may all be lent, not only its lendable ones, and are reclaimed when it needs them (%%s)", tr.pool.Name)
}

// waitChecks says once, for every pool, which teams' reclaim = "wait" KAI
// does not hold: it is the team's, the same in each pool.
func waitChecks(p *plan.Agreement, r *diag.Reporter) {
	var wait poolWarning
	for i := range p.Teams {
		if t := &p.Teams[i]; t.Reclaim == plan.ReclaimWait {
			wait.add(t.ReclaimOrigin, t.Name)
		}
	}
	wait.warn(r, "kai: in every node pool (teams %%s): %s", reclaimWait)
}

// reclaimWait is what KAI does of reclaim = "wait".
const reclaimWait = `KAI always reclaims lent GPUs by preempting borrowers; "wait" is not expressed. The closest KAI setting, a Queue's reclaimMinRuntime, only shields a borrower for a fixed time after it starts, from every reclaimer alike, and the agreement gives no time: it is not rendered (docs/kai.md)`

// poolWarning gathers one thing KAI cannot hold in a pool's tree, for every
// team or department it concerns, so it is said once per pool with all
// their numbers (a large agreement would otherwise say it hundreds of
// times), at the first one's value.
type poolWarning struct {
	first diag.Origin
	items []string
}

// maxListed is how many teams a pool's warning names before it counts the
// rest.
const maxListed = 5

func (w *poolWarning) add(o diag.Origin, item string) {
	if len(w.items) == 0 {
		w.first = o
	}
	w.items = append(w.items, item)
}

// warn says it, if anything was gathered: format (with args) holds one %s
// (written %%s) for the list.
func (w *poolWarning) warn(r *diag.Reporter, format string, args ...any) {
	if len(w.items) == 0 {
		return
	}
	list := strings.Join(w.items[:min(len(w.items), maxListed)], "; ")
	if rest := len(w.items) - maxListed; rest > 0 {
		list += fmt.Sprintf("; and %d more", rest)
	}
	r.Warnf(field.ErrorTypeNotSupported, w.first.Pos, w.first.Path, fmt.Sprintf(format, args...), list)
}

// firstWith returns the origin of the first of the team's quotas, in flavor
// order and among the flavors KAI counts, whose chosen count is positive.
func firstWith(p *plan.Agreement, t *plan.Team, count func(plan.Quota) (int64, diag.Origin)) diag.Origin {
	for _, f := range p.Flavors {
		if !gpu.Counted(f.Resource) {
			continue
		}
		if n, o := count(t.Quota(f.Name)); n > 0 {
			return o
		}
	}
	return diag.Origin{}
}
