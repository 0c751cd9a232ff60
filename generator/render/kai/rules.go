package kai

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Rules is the KAI backend's validation rule (a validate.Rule): what KAI
// refuses, as errors, and what it can only approximate, as warnings. It runs
// with the agreement's own rules, so each diagnostic points at the value it
// is about. Messages start with "kai:" so a reader knows which backend says
// so.
func Rules(a *agreement.Agreement, r *diag.Reporter) {
	var countedNames []string
	for _, f := range a.Flavors {
		if !counted(f.Resource.Value) {
			r.Warnf(field.ErrorTypeNotSupported, f.Resource.Pos, f.Resource.Path,
				"kai: KAI queues count whole GPUs (%s) only: the quotas of flavor %s (%s) are not expressed", WholeGPU, f.Name, f.Resource.Value)
			continue
		}
		countedNames = append(countedNames, f.Name)
	}
	if len(countedNames) > 1 {
		r.Warnf(field.ErrorTypeNotSupported, a.Flavors[0].Pos, field.NewPath("flavors"),
			"kai: KAI quotas are not per flavor: flavors %s are summed into one GPU quota per team", strings.Join(countedNames, ", "))
	}

	for _, pr := range a.Priorities {
		// Kubernetes reserves the system- prefix for its own
		// PriorityClasses and refuses any other by that name (Kueue's
		// WorkloadPriorityClass does not): refuse it here rather than fail
		// the sync halfway.
		if strings.HasPrefix(pr.Name, "system-") {
			r.Errorf(field.ErrorTypeForbidden, pr.Value.Pos, pr.Value.Path, "kai: names starting with system- are reserved for Kubernetes' own PriorityClasses")
		}
		if pr.Value.IsSet() && pr.Value.Value > maxUserPriority {
			r.Errorf(field.ErrorTypeInvalid, pr.Value.Pos, pr.Value.Path, "kai: %d is above %d, the highest priority Kubernetes accepts for a PriorityClass", pr.Value.Value, maxUserPriority)
		}
	}

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
				`kai: KAI always reclaims lent GPUs by preempting borrowers; "wait" is not expressed`)
		}
	}
}

// teamSums adds up a team's whole-GPU quotas as the agreement states them,
// and returns those quotas in flavor order.
func teamSums(a *agreement.Agreement, t *agreement.Team) (guaranteed, lendable, borrow int64, quotas []*agreement.Quota) {
	for _, f := range a.Flavors {
		q := t.ByFlavor[f.Name]
		if q == nil || !counted(f.Resource.Value) {
			continue
		}
		guaranteed += q.Guaranteed.Value
		lendable += q.Lendable.Value
		borrow += q.Borrow.Value
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
