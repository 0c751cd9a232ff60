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

func departments(a *plan.Agreement) []plan.Department {
	if a == nil {
		return nil
	}
	return a.Departments
}

func findDepartment(a *plan.Agreement, name string) *plan.Department {
	if a == nil {
		return nil
	}
	return a.Department(name)
}

// compareDepartments compares the departments of both sides, by name; nil
// when neither side has any, so agreements without departments report as
// they always did.
func compareDepartments(old, new *plan.Agreement) []DepartmentChange {
	names := func(ds []plan.Department) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name)
		}
		return out
	}
	all := union(names(departments(old)), names(departments(new)))
	slices.Sort(all)
	var out []DepartmentChange
	for _, name := range all {
		od, nd := findDepartment(old, name), findDepartment(new, name)
		c := DepartmentChange{Name: name}
		if od != nil {
			c.Weight.Old = &od.Weight
		}
		if nd != nil {
			c.Weight.New = &nd.Weight
		}
		changed := c.Weight.Changed()
		for _, fl := range union(flavorNames(old), flavorNames(new)) {
			var q DepartmentQuotas
			q.Flavor = fl
			if od != nil && old.Flavor(fl) != nil {
				v, s := od.Quota(fl), old.Surplus(od, fl)
				q.Guaranteed.Old, q.Lendable.Old, q.Borrow.Old, q.Surplus.Old = &v.Guaranteed, &v.Lendable, &v.Borrow, &s
			}
			if nd != nil && new.Flavor(fl) != nil {
				v, s := nd.Quota(fl), new.Surplus(nd, fl)
				q.Guaranteed.New, q.Lendable.New, q.Borrow.New, q.Surplus.New = &v.Guaranteed, &v.Lendable, &v.Borrow, &s
			}
			q.Op = Changed
			if q.sameNumbers() && deref(q.Surplus.Old) == deref(q.Surplus.New) {
				q.Op = Unchanged
			}
			changed = changed || q.Op != Unchanged
			c.Quotas = append(c.Quotas, q)
		}
		c.Op = opOf(od != nil, nd != nil, changed)
		out = append(out, c)
	}
	return out
}

func flavorNames(a *plan.Agreement) []string {
	var out []string
	for _, f := range flavors(a) {
		out = append(out, f.Name)
	}
	return out
}

// moves lists the teams of both sides whose department changes, by name.
func moves(old, new *plan.Agreement) []Move {
	var out []Move
	for _, nt := range teams(new) {
		if ot := findTeam(old, nt.Name); ot != nil && ot.Department != nt.Department {
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
