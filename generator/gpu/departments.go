package gpu

import "github.com/tenancy-dev/tenancy/generator/plan"

// DepartmentSum adds up a department's own quotas (not its teams') over the
// flavors of selects, each in u.
func DepartmentSum(p *plan.Agreement, d *plan.Department, u Units, of Of) Sum {
	var s Sum
	for _, f := range p.Flavors {
		if of != nil && !of(f) {
			continue
		}
		q := d.Quota(f.Name)
		s.Guaranteed += u(f.Resource, q.Guaranteed)
		s.Lendable += u(f.Resource, q.Lendable)
		s.Borrow += u(f.Resource, q.Borrow)
	}
	return s
}
