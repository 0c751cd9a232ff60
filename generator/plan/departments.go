package plan

import (
	"sort"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Department is a share of the pool that its teams (those whose Department
// names it) divide among themselves: the second level of the agreement.
type Department struct {
	Name string
	// Weight is the department's share of idle GPUs among borrowing
	// departments; 1 unless the agreement says otherwise.
	Weight int64
	Quotas []Quota // one per flavor of the agreement, in flavor order
	// Teams names the department's teams, sorted.
	Teams        []string
	Origin       diag.Origin // the department's table
	WeightOrigin diag.Origin // zero when the department does not write it
	Stewardship
}

// Quota returns the department's quota for a flavor; the zero Quota when
// absent.
func (d *Department) Quota(flavor string) Quota {
	for _, q := range d.Quotas {
		if q.Flavor == flavor {
			return q
		}
	}
	return Quota{Flavor: flavor}
}

// Department returns the named department, or nil.
func (a *Agreement) Department(name string) *Department {
	for i := range a.Departments {
		if a.Departments[i].Name == name {
			return &a.Departments[i]
		}
	}
	return nil
}

// Surplus is what the department is guaranteed of a flavor beyond its
// teams' guarantees, never below zero: what its teams borrow first, before
// anything outside the department.
func (a *Agreement) Surplus(d *Department, flavor string) int64 {
	left := d.Quota(flavor).Guaranteed
	for i := range a.Teams {
		if a.Teams[i].Department == d.Name {
			left -= a.Teams[i].Quota(flavor).Guaranteed
		}
	}
	return max(left, 0)
}

// buildDepartments plans the departments, sorted by name, each with the
// teams of p (already planned) that name it.
func buildDepartments(a *agreement.Agreement, p *Agreement) []Department {
	var out []Department
	for _, d := range a.Departments {
		pd := Department{Name: d.Name, Weight: 1, Origin: origin(d.Pos, d.Path), Quotas: quotas(p.Flavors, d.ByFlavor),
			Stewardship: buildStewardship(d.Stewardship, d.Pos)}
		if d.Weight.IsSet() {
			pd.Weight = d.Weight.Value
			pd.WeightOrigin = origin(d.Weight.Pos, d.Weight.Path)
		}
		for _, t := range p.Teams {
			if t.Department == d.Name {
				pd.Teams = append(pd.Teams, t.Name)
			}
		}
		out = append(out, pd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
