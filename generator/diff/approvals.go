package diff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tenancy-dev/tenancy/generator/owners"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/review"
)

// Approval is whose approval a change needs, by rule, and why: a team
// whose guarantee, lendable or borrow changes (or that is added or
// removed) needs its owners, and so does a team whose numbers did not
// change but whose outcome under contention drops (outcomeApprovals); a
// department's likewise; a change to a flavor or to the pool needs the
// pool's owners.
type Approval struct {
	// Part is "the pool", "department NAME" or "team NAME".
	Part string `json:"part"`
	// Owners are the part's owners (its own, else its department's, else
	// the pool's) on the old side, who answer for it now; the new side's
	// for a part the change adds. Empty when the agreement names none.
	Owners []string `json:"owners"`
	// Why lists what changed, one item each, such as "h100 guaranteed 16 → 8".
	Why []string `json:"why"`
}

// String says it in a line: "team a: @acme/a (h100 guaranteed 16 → 8)".
func (a Approval) String() string {
	who := strings.Join(a.Owners, " ")
	if who == "" {
		who = "no owners named"
	}
	return fmt.Sprintf("%s: %s (%s)", a.Part, who, strings.Join(a.Why, "; "))
}

// NeedsOwners reports whether any approval names owners: what diff
// --exit-code reports with its own status.
func (s Summary) NeedsOwners() bool {
	for _, a := range s.Approvals {
		if len(a.Owners) > 0 {
			return true
		}
	}
	return false
}

// NeedsOwners reports whether any cluster's changes need owners' approval.
func (r *FleetReport) NeedsOwners() bool {
	for _, c := range r.Clusters {
		if c.Report != nil && c.Report.Summary.NeedsOwners() {
			return true
		}
	}
	return false
}

// approvals applies the rules to a summary of old → new.
func approvals(old, new *plan.Agreement, s Summary) []Approval {
	out := []Approval{}
	var pool []string
	if s.Pool.Changed() {
		pool = append(pool, "pool "+s.Pool.String())
	}
	for _, f := range s.Flavors {
		switch {
		case f.Op == Added || f.Op == Removed:
			pool = append(pool, fmt.Sprintf("flavor %s %s", f.Name, opVerb(f.Op)))
		case f.Capacity.Changed():
			pool = append(pool, fmt.Sprintf("flavor %s capacity %s", f.Name, f.Capacity))
		case f.Resource.Changed():
			pool = append(pool, fmt.Sprintf("flavor %s resource %s", f.Name, f.Resource))
		}
	}
	if len(pool) > 0 {
		out = append(out, Approval{Part: "the pool", Owners: orEmpty(owners.Pool(sideOf(old, new))), Why: pool})
	}
	for _, d := range s.Departments {
		why := quotaReasons(d.Op, func(yield func(QuotaChange)) {
			for _, q := range d.Quotas {
				yield(q.QuotaChange)
			}
		})
		if len(why) > 0 {
			p := sideHaving(old, new, func(p *plan.Agreement) bool { return p.Department(d.Name) != nil })
			out = append(out, Approval{Part: "department " + d.Name, Owners: orEmpty(owners.Department(p, p.Department(d.Name))), Why: why})
		}
	}
	for _, t := range s.Teams {
		why := quotaReasons(t.Op, func(yield func(QuotaChange)) {
			for _, q := range t.Quotas {
				yield(q)
			}
		})
		if len(why) > 0 {
			p := sideHaving(old, new, func(p *plan.Agreement) bool { return teamNamed(p, t.Name) != nil })
			out = append(out, Approval{Part: "team " + t.Name, Owners: orEmpty(owners.Team(p, teamNamed(p, t.Name))), Why: why})
		}
	}
	return out
}

// outcomeApprovals adds to s.Approvals the owners of each team whose
// quota did not change but which runs less under contention after the
// change (ContentionChange.Less: a new borrower beside it, a lendable cut
// elsewhere): the change takes something from that team, so its owners
// must hear of it as surely as those of a team whose numbers moved. A team
// whose quota changed already needs its owners (approvals).
func outcomeApprovals(old, new *plan.Agreement, s *Summary) {
	added := false
	for _, c := range s.Contention {
		if c.QuotaChanged || !c.Less() {
			continue
		}
		why := fmt.Sprintf("%s outcome drops: alone %s, all busy %s", c.Flavor, c.Alone, c.AllBusy)
		if c.When != "" {
			why += " " + c.When
		}
		part := "team " + c.Team
		i := slices.IndexFunc(s.Approvals, func(a Approval) bool { return a.Part == part })
		if i < 0 {
			p := sideHaving(old, new, func(p *plan.Agreement) bool { return teamNamed(p, c.Team) != nil })
			s.Approvals = append(s.Approvals, Approval{Part: part, Owners: orEmpty(owners.Team(p, teamNamed(p, c.Team)))})
			i, added = len(s.Approvals)-1, true
		}
		s.Approvals[i].Why = append(s.Approvals[i].Why, why)
	}
	if added {
		// Teams in name order after the pool and the departments, as
		// approvals lists them.
		rank := func(a Approval) int {
			switch {
			case a.Part == "the pool":
				return 0
			case strings.HasPrefix(a.Part, "department "):
				return 1
			}
			return 2
		}
		slices.SortStableFunc(s.Approvals, func(a, b Approval) int {
			if r := rank(a) - rank(b); r != 0 {
				return r
			}
			if rank(a) == 2 {
				return strings.Compare(a.Part, b.Part)
			}
			return 0
		})
	}
}

// quotaReasons says what changed of a part's quotas: the part added or
// removed, or each flavor's guaranteed, lendable and borrow that differ.
func quotaReasons(op Op, quotas func(func(QuotaChange))) []string {
	if op == Added || op == Removed {
		return []string{opVerb(op)}
	}
	var why []string
	quotas(func(q QuotaChange) {
		for _, c := range []struct {
			name string
			v    Value[int64]
		}{{"guaranteed", q.Guaranteed}, {"lendable", q.Lendable}, {"borrow", q.Borrow}} {
			if c.v.Changed() {
				why = append(why, fmt.Sprintf("%s %s %s", q.Flavor, c.name, c.v))
			}
		}
	})
	return why
}

func opVerb(op Op) string {
	switch op {
	case Added:
		return "added"
	case Removed:
		return "removed"
	}
	return "changed"
}

// sideOf is the old side when there is one: its owners answer for what
// the change takes away; else the new side.
func sideOf(old, new *plan.Agreement) *plan.Agreement {
	if len(old.Flavors) > 0 || old.Name != "" {
		return old
	}
	return new
}

// sideHaving is the old side when it has the part, else the new side.
func sideHaving(old, new *plan.Agreement, has func(*plan.Agreement) bool) *plan.Agreement {
	if has(old) {
		return old
	}
	return new
}

func teamNamed(p *plan.Agreement, name string) *plan.Team {
	i := slices.IndexFunc(p.Teams, func(t plan.Team) bool { return t.Name == name })
	if i < 0 {
		return nil
	}
	return &p.Teams[i]
}

// orEmpty is owners, never nil: JSON holds [] for "nobody named".
func orEmpty(owners []string) []string {
	if owners == nil {
		return []string{}
	}
	return owners
}

// SetReviewsDue records the review_by dates of the new side (p) that today
// is past, in the summary's attention list.
func (s *Summary) SetReviewsDue(p *plan.Agreement, today time.Time) {
	if p == nil {
		return
	}
	for _, it := range review.Items(p, today) {
		if it.Overdue {
			who := strings.Join(it.Owners, " ")
			if who == "" {
				who = "no owners named"
			}
			s.ReviewsDue = append(s.ReviewsDue, fmt.Sprintf("%s was due on %s (%s ago; %s)", it.Part, it.Date.Format(time.DateOnly), review.Days(it.DaysOver), who))
		}
	}
}
