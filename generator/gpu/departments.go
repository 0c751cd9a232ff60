package gpu

import "github.com/tenancy-dev/tenancy/generator/plan"

// DepartmentSum adds up a department's own quotas (not its teams') over the
// flavors of selects, each in u.
func DepartmentSum(p *plan.Agreement, d *plan.Department, u Units, of Of) Sum {
	return quotaSum(p, d.Quota, u, of)
}

// Committed is what the pool has guaranteed of the flavors of selects, in u:
// the departments' guarantees (which cover their teams') and the guarantees
// of teams without a department. Without departments it is FlavorSum's
// Guaranteed.
func Committed(p *plan.Agreement, u Units, of Of) int64 {
	var n int64
	for i := range p.Departments {
		n += DepartmentSum(p, &p.Departments[i], u, of).Guaranteed
	}
	for i := range p.Teams {
		if p.Teams[i].Department == "" {
			n += TeamSum(p, &p.Teams[i], u, of).Guaranteed
		}
	}
	return n
}
