package kai

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Rules is the KAI backend's validation rule (a validate.Rule): what KAI
// refuses, as errors, and what it can only approximate, as warnings. It runs
// with the agreement's own rules, so each diagnostic points at the value it
// is about. Messages start with "kai:" so a reader knows which backend says
// so; each says the numbers KAI will use.
func Rules(a *agreement.Agreement, r *diag.Reporter) {
	flavorRules(a, r)
	priorityRules(a, r)
	queueRules(a, r)
}

// flavorRules: resources KAI does not count, counts too large for KAI's
// float quotas, and the one GPU quota per queue that several flavors share.
func flavorRules(a *agreement.Agreement, r *diag.Reporter) {
	var countedFlavors []*agreement.Flavor
	for _, f := range a.Flavors {
		res := f.Resource.Value
		per := GPUsPer(res)
		if per == 0 {
			r.Warnf(field.ErrorTypeNotSupported, f.Resource.Pos, f.Resource.Path,
				"kai: KAI queues count whole GPUs (%s) and MIG slices (nvidia.com/mig-<N>g.<M>gb) only: the quotas of flavor %s (%s) are not expressed", WholeGPU, f.Name, res)
			continue
		}
		if f.Capacity.Value > maxExact/per {
			r.Errorf(field.ErrorTypeInvalid, f.Capacity.Pos, f.Capacity.Path,
				"kai: KAI counts %s as %d GPUs each: %d of them are more GPUs than KAI's quotas hold exactly (2^53)", res, per, f.Capacity.Value)
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
	// more counted flavors the agreement is refused, per team, with the
	// numbers KAI would have used; quotas on one flavor beside others that
	// nobody is guaranteed or may borrow are only warned about.
	var quoted []string
	for _, f := range countedFlavors {
		for _, t := range a.Teams {
			if q := t.ByFlavor[f.Name]; q != nil && q.Guaranteed.Value+q.Borrow.Value > 0 {
				quoted = append(quoted, f.Name)
				break
			}
		}
	}
	if len(quoted) >= 2 {
		// One error, at the second flavor the teams hold quotas on, with
		// the team KAI would let stray furthest as the example.
		var example string
		var worst int64 = -1
		for _, t := range a.Teams {
			g, l, b, _ := teamSums(a, t)
			limit := g + b
			if neverLends(g, l) {
				limit = g
			}
			var parts []string
			for _, f := range countedFlavors {
				var fg, fb int64
				if q := t.ByFlavor[f.Name]; q != nil {
					fg, fb = q.Guaranteed.Value, q.Borrow.Value
				}
				if fg+fb > 0 {
					parts = append(parts, fmt.Sprintf("%s %d+%d", f.Name, fg, fb))
				}
			}
			if limit > worst {
				worst = limit
				example = fmt.Sprintf("team %s would get one quota of %d and a limit of %d GPUs of any flavor (guaranteed+borrow: %s)", t.Name, g, limit, strings.Join(parts, ", "))
			}
		}
		var second *agreement.Flavor
		for _, f := range countedFlavors {
			if f.Name == quoted[1] {
				second = f
			}
		}
		r.Errorf(field.ErrorTypeNotSupported, second.Pos, second.Path,
			"kai: KAI keeps one GPU quota per queue, not one per flavor: the teams' quotas on flavors %s would be summed, and per-flavor guarantees, limits and never-lent GPUs would not hold (%s); render this agreement with --backend kueue, or give KAI an agreement whose quotas are on one counted flavor",
			strings.Join(quoted, ", "), example)
		return
	}
	// Quotas on one counted flavor, beside flavors nobody holds: KAI still
	// lets a team spend its quota on any of them.
	for _, t := range a.Teams {
		g, l, b, _ := teamSums(a, t)
		limit := g + b
		if neverLends(g, l) {
			limit = g
		}
		if limit == 0 {
			continue
		}
		var parts, over []string
		for _, f := range countedFlavors {
			q := t.ByFlavor[f.Name]
			var fg, fb int64
			if q != nil {
				fg, fb = q.Guaranteed.Value, q.Borrow.Value
			}
			per := GPUsPer(f.Resource.Value)
			part := fmt.Sprintf("%s %d+%d", f.Name, fg, fb)
			if per > 1 {
				part += fmt.Sprintf(" x %d GPUs", per)
			}
			parts = append(parts, part)
			if most := min(limit/per, f.Capacity.Value); most > fg+fb {
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
		r.Warnf(field.ErrorTypeNotSupported, t.Pos, t.Path, "%s", msg)
	}
}

// priorityRules: names Kubernetes refuses, and KAI's preemptible and
// non-preemptible bands (ClassValues).
func priorityRules(a *agreement.Agreement, r *diag.Reporter) {
	ranks := make([]Rank, 0, len(a.Priorities))
	for _, pr := range a.Priorities {
		// Kubernetes reserves the system- prefix for its own
		// PriorityClasses and refuses any other by that name (Kueue's
		// WorkloadPriorityClass does not): refuse it here rather than fail
		// the sync halfway.
		if strings.HasPrefix(pr.Name, "system-") {
			r.Errorf(field.ErrorTypeForbidden, at(pr), path(pr), "kai: names starting with system- are reserved for Kubernetes' own PriorityClasses")
		}
		if pr.Value.State == agreement.Set {
			ranks = append(ranks, Rank{Name: pr.Name, Value: pr.Value.Value, Preemptible: pr.Preemptible.Value})
		}
	}
	byName := map[string]*agreement.Priority{}
	for _, pr := range a.Priorities {
		byName[pr.Name] = pr
	}
	// KAI ranks every non-preemptible PodGroup above every preemptible
	// one: an agreement that wants the reverse cannot be kept.
	var lowestNon, highestPre *Rank
	for i := range ranks {
		rk := &ranks[i]
		if rk.Preemptible && (highestPre == nil || rk.Value > highestPre.Value) {
			highestPre = rk
		}
		if !rk.Preemptible && (lowestNon == nil || rk.Value < lowestNon.Value) {
			lowestNon = rk
		}
	}
	if lowestNon != nil && highestPre != nil && highestPre.Value >= lowestNon.Value {
		pr := byName[highestPre.Name]
		r.Errorf(field.ErrorTypeInvalid, at(pr), path(pr),
			"kai: KAI ranks non-preemptible work (PriorityClass %d and above) above all preemptible work: preemptible %s (%d) must be lower than non-preemptible %s (%d)",
			NonPreemptibleFrom, highestPre.Name, highestPre.Value, lowestNon.Name, lowestNon.Value)
		return
	}
	values := ClassValues(ranks)
	var moved []string
	var first *agreement.Priority
	for _, pr := range a.Priorities {
		if v, ok := values[pr.Name]; ok && v != pr.Value.Value {
			moved = append(moved, fmt.Sprintf("%s %d -> %d", pr.Name, pr.Value.Value, v))
			if first == nil {
				first = pr
			}
		}
	}
	if first != nil {
		r.Warnf(field.ErrorTypeNotSupported, at(first), path(first),
			"kai: KAI treats PriorityClass values below %d as preemptible (may borrow) and the others as non-preemptible (quota only): the PriorityClasses get %s, in the agreement's order",
			NonPreemptibleFrom, strings.Join(moved, ", "))
	}
	// Non-preemptible work is never a victim, so among non-preemptible
	// priorities a higher one does not preempt a lower one.
	var non []Rank
	for _, rk := range ranks {
		if !rk.Preemptible {
			non = append(non, rk)
		}
	}
	slices.SortStableFunc(non, func(x, y Rank) int { return cmp.Compare(y.Value, x.Value) })
	for i := 1; i < len(non); i++ {
		if non[i].Value == non[0].Value {
			continue
		}
		pr := byName[non[i].Name]
		r.Warnf(field.ErrorTypeNotSupported, at(pr), path(pr),
			"kai: KAI never preempts non-preemptible work: running %s (%d) work is not preempted for %s (%d) work of its team, which waits for quota",
			non[i].Name, non[i].Value, non[0].Name, non[0].Value)
	}
}

// at and path point a priority's diagnostic at its value, or at its key
// when a table leaves the value out.
func at(pr *agreement.Priority) diag.Pos {
	if pr.Value.State == agreement.Unset {
		return pr.Pos
	}
	return pr.Value.Pos
}

func path(pr *agreement.Priority) *field.Path {
	if pr.Value.State == agreement.Unset {
		return pr.Path
	}
	return pr.Value.Path
}

// queueRules: queue names that collide, and what the queue tree cannot say
// of lending, borrowing and reclaim.
func queueRules(a *agreement.Agreement, r *diag.Reporter) {
	name := a.Name.Value
	queues := map[string]string{name: "the pool queue"}
	claim := func(q, what string, pos diag.Pos, path *field.Path) {
		if prev, ok := queues[q]; ok {
			r.Errorf(field.ErrorTypeDuplicate, pos, path, "kai: queue name %q is used both by %s and by %s", q, prev, what)
		}
		queues[q] = what
	}
	var shared, reserved bool
	for _, t := range a.Teams {
		g, l, _, _ := teamSums(a, t)
		if neverLends(g, l) {
			reserved = true
		} else {
			shared = true
		}
	}
	if shared {
		claim(name+SharedSuffix, "the shared subtree", a.Name.Pos, a.Name.Path)
	}
	if reserved {
		claim(name+ReservedSuffix, "the reserved subtree", a.Name.Pos, a.Name.Path)
	}
	for _, t := range a.Teams {
		claim(t.Name, "team "+t.Name, t.Pos, t.Path)
		g, l, b, qs := teamSums(a, t)
		if neverLends(g, l) {
			if b > 0 {
				q := firstWith(qs, func(q *agreement.Quota) agreement.Int { return q.Borrow })
				r.Warnf(field.ErrorTypeNotSupported, q.Pos, q.Path,
					"kai: a team that never lends sits in the %s%s subtree, whose limit equals its quota: it cannot borrow the %d GPUs the agreement allows", name, ReservedSuffix, b)
			}
		} else if l > 0 && l < g {
			q := firstWith(qs, func(q *agreement.Quota) agreement.Int { return q.Lendable })
			r.Warnf(field.ErrorTypeNotSupported, q.Pos, q.Path,
				"kai: KAI has no lending limit: all %d idle guaranteed GPUs may be lent, not only %d; they are reclaimed when the team needs them", g, l)
		}
		if t.Reclaim.IsSet() && t.Reclaim.Value == "wait" {
			r.Warnf(field.ErrorTypeNotSupported, t.Reclaim.Pos, t.Reclaim.Path,
				`kai: KAI always reclaims lent GPUs by preempting borrowers; "wait" is not expressed. The closest KAI setting, a Queue's reclaimMinRuntime, only shields a borrower for a fixed time after it starts, from every reclaimer alike, and the agreement gives no time: it is not rendered (docs/kai.md)`)
		}
	}
}

// teamSums adds up a team's quotas as the agreement states them, in the
// GPUs KAI counts, and returns the counted quotas in flavor order.
func teamSums(a *agreement.Agreement, t *agreement.Team) (guaranteed, lendable, borrow int64, quotas []*agreement.Quota) {
	for _, f := range a.Flavors {
		q := t.ByFlavor[f.Name]
		if q == nil || !counted(f.Resource.Value) {
			continue
		}
		guaranteed += inGPUs(f.Resource.Value, q.Guaranteed.Value)
		lendable += inGPUs(f.Resource.Value, q.Lendable.Value)
		borrow += inGPUs(f.Resource.Value, q.Borrow.Value)
		quotas = append(quotas, q)
	}
	return guaranteed, lendable, borrow, quotas
}

// firstWith returns the first of the quotas whose chosen count is positive,
// as an Int to point a diagnostic at.
func firstWith(quotas []*agreement.Quota, count func(*agreement.Quota) agreement.Int) agreement.Int {
	for _, q := range quotas {
		if n := count(q); n.Value > 0 {
			return n
		}
	}
	return count(quotas[0])
}
