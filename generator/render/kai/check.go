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
	queueChecks(p, r)
	departmentChecks(p, r)
	return r.List
}

// flavorChecks: resources KAI does not count, counts too large for KAI's
// float quotas, and the one GPU quota per queue that several flavors share.
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
	if len(countedFlavors) < 2 {
		return
	}
	// One gpu quota and limit per queue: KAI would add a team's flavors up
	// and let it spend the sum on any of them, so per-flavor guarantees,
	// limits and never-lent GPUs would not hold (issue 19: a team ran 48
	// A100s where it was allowed 28). Where the teams' quotas are on two or
	// more counted flavors the agreement is refused, with the numbers KAI
	// would have used; quotas on one flavor beside others that nobody is
	// guaranteed or may borrow are only warned about.
	var quoted []plan.Flavor
	for _, f := range countedFlavors {
		for i := range p.Teams {
			if q := p.Teams[i].Quota(f.Name); q.Guaranteed+q.Borrow > 0 {
				quoted = append(quoted, f)
				break
			}
		}
	}
	if len(quoted) >= 2 {
		// One error, at the second flavor the teams hold quotas on, with
		// the team KAI would let stray furthest as the example.
		var example string
		var worst int64 = -1
		for i := range p.Teams {
			t := &p.Teams[i]
			g, limit := quotaAndLimit(p, t)
			var parts []string
			for _, f := range countedFlavors {
				if q := t.Quota(f.Name); q.Guaranteed+q.Borrow > 0 {
					parts = append(parts, fmt.Sprintf("%s %d+%d", f.Name, q.Guaranteed, q.Borrow))
				}
			}
			if limit > worst {
				worst = limit
				example = fmt.Sprintf("team %s would get one quota of %d and a limit of %d GPUs of any flavor (guaranteed+borrow: %s)", t.Name, g, limit, strings.Join(parts, ", "))
			}
		}
		names := make([]string, len(quoted))
		for i, f := range quoted {
			names[i] = f.Name
		}
		r.Errorf(field.ErrorTypeNotSupported, quoted[1].Origin.Pos, quoted[1].Origin.Path,
			"kai: KAI keeps one GPU quota per queue, not one per flavor: the teams' quotas on flavors %s would be summed, and per-flavor guarantees, limits and never-lent GPUs would not hold (%s); render this agreement with --backend kueue, or give KAI an agreement whose quotas are on one counted flavor",
			strings.Join(names, ", "), example)
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

// queueChecks: queue names that collide, and what the queue tree cannot say
// of lending, borrowing and reclaim.
func queueChecks(p *plan.Agreement, r *diag.Reporter) {
	name := p.Name
	queues := map[string]string{name: "the pool queue"}
	claim := func(q, what string, o diag.Origin) {
		if prev, ok := queues[q]; ok {
			r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path, "kai: queue name %q is used both by %s and by %s", q, prev, what)
		}
		queues[q] = what
	}
	shared, reserved := len(p.Departments) > 0, false
	for i := range p.Teams {
		if p.Teams[i].Department != "" {
			continue // under its department's queue
		}
		if gpu.TeamSum(p, &p.Teams[i], gpu.InGPUs, nil).NeverLends() {
			reserved = true
		} else {
			shared = true
		}
	}
	if shared {
		claim(name+SharedSuffix, "the shared subtree", p.NameOrigin)
	}
	if reserved {
		claim(name+ReservedSuffix, "the reserved subtree", p.NameOrigin)
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		claim(t.Name, "team "+t.Name, t.Origin)
		s := gpu.TeamSum(p, t, gpu.InGPUs, nil)
		if s.NeverLends() && t.Department == "" {
			if s.Borrow > 0 {
				o := firstWith(p, t, func(q plan.Quota) (int64, diag.Origin) { return q.Borrow, q.Origin.Borrow })
				r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
					"kai: a team that never lends sits in the %s%s subtree, whose limit equals its quota: it cannot borrow the %d GPUs the agreement allows", name, ReservedSuffix, s.Borrow)
			}
		} else if s.Lendable > 0 && s.Lendable < s.Guaranteed {
			o := firstWith(p, t, func(q plan.Quota) (int64, diag.Origin) { return q.Lendable, q.Origin.Lendable })
			r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
				"kai: KAI has no lending limit: all %d idle guaranteed GPUs may be lent, not only %d; they are reclaimed when the team needs them", s.Guaranteed, s.Lendable)
		}
		if t.Reclaim == plan.ReclaimWait {
			r.Warnf(field.ErrorTypeNotSupported, t.ReclaimOrigin.Pos, t.ReclaimOrigin.Path,
				`kai: KAI always reclaims lent GPUs by preempting borrowers; "wait" is not expressed. The closest KAI setting, a Queue's reclaimMinRuntime, only shields a borrower for a fixed time after it starts, from every reclaimer alike, and the agreement gives no time: it is not rendered (docs/kai.md)`)
		}
	}
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
