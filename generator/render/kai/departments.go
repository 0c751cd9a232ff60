package kai

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// fairShareSource is the KAI code the department queues rely on: the
// proportion plugin divides the GPUs among the top queues, then each
// queue's fair share among its children, so a department's surplus (its
// quota beyond its teams') goes to its own teams before any other queue.
const fairShareSource = "KAI v0.17.0 pkg/scheduler/plugins/proportion/proportion.go, setFairShareForQueues"

// departmentQueues returns each department's Queue, under the shared
// subtree, and its teams' Queues under it: quota the department's
// guarantee, limit guarantee + borrow (which caps the whole subtree),
// over-quota weight its weight. A team of a department sits under it even
// when it never lends: KAI has no lending limit, which Check says.
func departmentQueues(p *plan.Agreement) []any {
	var out []any
	for i := range p.Departments {
		d := &p.Departments[i]
		s := gpu.DepartmentSum(p, d, gpu.InGPUs, nil)
		out = append(out, queue(p, d.Name, p.Name+SharedSuffix, "", queueResources(s.Guaranteed, s.MostUsable(), d.Weight)))
		for j := range p.Teams {
			t := &p.Teams[j]
			if t.Department != d.Name {
				continue
			}
			ts := gpu.TeamSum(p, t, gpu.InGPUs, nil)
			out = append(out, queue(p, t.Name, d.Name, t.Name, queueResources(ts.Guaranteed, ts.MostUsable(), t.Weight)))
		}
	}
	return out
}

// departmentChecks: department names that take a queue name of the pool's
// tree, and what KAI cannot say of a department: a lending limit (KAI lends
// every idle guaranteed GPU and reclaims it), and a never-lending team of a
// department, which cannot be kept out of others' reach as the reserved
// subtree keeps a team without a department.
func departmentChecks(p *plan.Agreement, r *diag.Reporter) {
	for i := range p.Departments {
		d := &p.Departments[i]
		for _, suffix := range []string{SharedSuffix, ReservedSuffix} {
			if d.Name == p.Name+suffix {
				r.Errorf(field.ErrorTypeDuplicate, d.Origin.Pos, d.Origin.Path,
					"kai: department %q has the name of the pool's %s subtree queue (pool name %q at %s): rename the department", d.Name, suffix[1:], p.Name, p.NameOrigin.Pos.LineFrom(d.Origin.Pos, r.File))
			}
		}
		s := gpu.DepartmentSum(p, d, gpu.InGPUs, nil)
		var flavors []string
		for _, f := range p.Flavors {
			if q := d.Quota(f.Name); gpu.Counted(f.Resource) && q.Guaranteed+q.Borrow > 0 {
				flavors = append(flavors, f.Name)
			}
		}
		if len(flavors) > 1 {
			r.Warnf(field.ErrorTypeNotSupported, d.Origin.Pos, d.Origin.Path,
				"kai: KAI keeps one GPU quota per queue, not one per flavor: department %s gets quota %d and limit %d GPUs, summed over %s, and its teams may meet it with any of them",
				d.Name, s.Guaranteed, s.MostUsable(), strings.Join(flavors, ", "))
		}
		if s.Guaranteed > 0 && s.Lendable < s.Guaranteed {
			o := d.Origin
			for _, f := range p.Flavors {
				if q := d.Quota(f.Name); gpu.Counted(f.Resource) && q.Lendable > 0 {
					o = q.Origin.Lendable
					break
				}
			}
			r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
				"kai: KAI has no lending limit: all %d idle guaranteed GPUs of department %s may be used outside it, not only %d; they are reclaimed when its teams need them, and its surplus goes to its own teams first (%s)",
				s.Guaranteed, d.Name, s.Lendable, fairShareSource)
		}
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		if t.Department == "" {
			continue
		}
		if s := gpu.TeamSum(p, t, gpu.InGPUs, nil); s.NeverLends() {
			r.Warnf(field.ErrorTypeNotSupported, t.Origin.Pos, t.Origin.Path,
				"kai: team %s never lends, but sits under its department %s's queue, not in the %s%s subtree: KAI may lend its %d idle guaranteed GPUs to other queues and reclaims them when the team needs them",
				t.Name, t.Department, p.Name, ReservedSuffix, s.Guaranteed)
		}
	}
}
