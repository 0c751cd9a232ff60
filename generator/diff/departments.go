package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// DepartmentChange is one department before and after.
type DepartmentChange struct {
	Name   string             `json:"name"`
	Op     Op                 `json:"op"`
	Weight Value[int64]       `json:"weight"`
	Quotas []DepartmentQuotas `json:"quotas"`
}

// DepartmentQuotas is a department's share of one flavor before and after,
// with its surplus over its teams' guarantees.
type DepartmentQuotas struct {
	QuotaChange
	Surplus Value[int64] `json:"surplus"`
}

// Move is a team on both sides whose department changes; an empty From or
// To is the pool itself (no department).
type Move struct {
	Team string `json:"team"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// String reads as a sentence for reviewers.
func (m Move) String() string {
	switch {
	case m.From == "":
		return fmt.Sprintf("team %s joins department %s: its guarantee now counts against the department's, and it borrows the department's surplus first", m.Team, m.To)
	case m.To == "":
		return fmt.Sprintf("team %s leaves department %s for the pool: its guarantee counts against the pool's capacity directly, and the department's surplus and borrow no longer apply to it", m.Team, m.From)
	}
	return fmt.Sprintf("team %s moves from department %s to department %s: its guarantee now counts against %s's, and it borrows %s's surplus first", m.Team, m.From, m.To, m.To, m.To)
}

// compareDepartments compares the departments of both sides, by name; nil
// when neither side has any, so agreements without departments report as
// they always did.
func compareDepartments(old, new *plan.Agreement) []DepartmentChange {
	all := union(names(old.Departments, departmentName), names(new.Departments, departmentName))
	slices.Sort(all)
	flavors := union(names(old.Flavors, flavorName), names(new.Flavors, flavorName))
	var out []DepartmentChange
	for _, name := range all {
		od, nd := old.Department(name), new.Department(name)
		c := DepartmentChange{Name: name}
		if od != nil {
			c.Weight.Old = &od.Weight
		}
		if nd != nil {
			c.Weight.New = &nd.Weight
		}
		for _, fl := range flavors {
			c.Quotas = append(c.Quotas, departmentQuotaChange(fl, old, new, od, nd))
		}
		c.Op = opOf(od != nil, nd != nil, c.Weight.Changed() || slices.ContainsFunc(c.Quotas, DepartmentQuotas.changed))
		out = append(out, c)
	}
	return out
}

// departmentQuotaChange is a department's quota of one flavor and its
// surplus before and after. A department holds a quota of every flavor of
// its side (zero when it writes none), so the row is a change, never an
// addition or removal, unless every number stays.
func departmentQuotaChange(flavor string, old, new *plan.Agreement, od, nd *plan.Department) DepartmentQuotas {
	oq, os := departmentQuota(old, od, flavor)
	nq, ns := departmentQuota(new, nd, flavor)
	q := DepartmentQuotas{QuotaChange: quotaChange(flavor, oq, nq), Surplus: pair(os, ns)}
	q.Op = Changed
	if q.sameNumbers() && deref(os) == deref(ns) {
		q.Op = Unchanged
	}
	return q
}

// departmentQuota returns the department's quota of a flavor of a and its
// surplus over its teams' guarantees; nil when the department is absent or
// a has no such flavor.
func departmentQuota(a *plan.Agreement, d *plan.Department, flavor string) (*plan.Quota, *int64) {
	if d == nil || a.Flavor(flavor) == nil {
		return nil, nil
	}
	q, s := d.Quota(flavor), a.Surplus(d, flavor)
	return &q, &s
}

// moves lists the teams of both sides whose department changes, by name.
func moves(old, new *plan.Agreement) []Move {
	var out []Move
	oldTeams := teamsByName(old)
	for _, nt := range new.Teams {
		if ot := oldTeams[nt.Name]; ot != nil && ot.Department != nt.Department {
			out = append(out, Move{Team: nt.Name, From: ot.Department, To: nt.Department})
		}
	}
	return out
}

// departmentLines says in words what changes of the departments: each
// department added, removed or changed, with its numbers, then each team
// that moves. Empty when nothing does.
func departmentLines(s Summary) []string {
	var out []string
	for _, d := range s.Departments {
		switch d.Op {
		case Added:
			out = append(out, fmt.Sprintf("department %s is added: %s; weight %d", d.Name, departmentNumbers(d, func(v Value[int64]) *int64 { return v.New }), deref(d.Weight.New)))
		case Removed:
			out = append(out, fmt.Sprintf("department %s is removed (it had %s): its Kueue Cohort and KAI queue are deleted", d.Name, departmentNumbers(d, func(v Value[int64]) *int64 { return v.Old })))
		case Changed:
			var parts []string
			for _, q := range d.Quotas {
				if q.Op == Unchanged {
					continue
				}
				var changes []string
				for _, f := range []struct {
					name string
					v    Value[int64]
				}{{"guaranteed", q.Guaranteed}, {"surplus over its teams", q.Surplus}, {"lendable outside it", q.Lendable}, {"borrow for all its teams", q.Borrow}} {
					if deref(f.v.Old) != deref(f.v.New) {
						changes = append(changes, fmt.Sprintf("%s %d → %d", f.name, deref(f.v.Old), deref(f.v.New)))
					}
				}
				parts = append(parts, q.Flavor+" "+strings.Join(changes, ", "))
			}
			if d.Weight.Changed() {
				parts = append(parts, fmt.Sprintf("weight %d → %d", deref(d.Weight.Old), deref(d.Weight.New)))
			}
			out = append(out, fmt.Sprintf("department %s changes: %s", d.Name, strings.Join(parts, "; ")))
		}
	}
	for _, m := range s.Moves {
		out = append(out, m.String())
	}
	return out
}

// departmentNumbers lists one side's non-zero quotas of a department.
func departmentNumbers(d DepartmentChange, side func(Value[int64]) *int64) string {
	var parts []string
	for _, q := range d.Quotas {
		g, l, b, s := deref(side(q.Guaranteed)), deref(side(q.Lendable)), deref(side(q.Borrow)), deref(side(q.Surplus))
		if g == 0 && b == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s guaranteed %d (surplus %d over its teams), lendable %d, borrow %d", q.Flavor, g, s, l, b))
	}
	if len(parts) == 0 {
		return "no GPUs"
	}
	return strings.Join(parts, "; ")
}
