package kai

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
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
func departmentQueues(tr tree) []any {
	p := tr.p
	var out []any
	for i := range p.Departments {
		d := &p.Departments[i]
		if !tr.holdsDepartment(d) {
			continue
		}
		s := gpu.DepartmentSum(p, d, gpu.InGPUs, nil)
		out = append(out, tr.queue(tr.name(d.Name), tr.root()+SharedSuffix, "", queueResources(s.Guaranteed, s.MostUsable(), d.Weight)))
		for j := range p.Teams {
			t := &p.Teams[j]
			if t.Department != d.Name || !tr.holds(t) {
				continue
			}
			ts := gpu.TeamSum(p, t, gpu.InGPUs, nil)
			out = append(out, tr.queue(tr.name(t.Name), tr.name(d.Name), t.Name, queueResources(ts.Guaranteed, ts.MostUsable(), t.Weight)))
		}
	}
	return out
}

// departmentChecks: department names that take a queue name of the pool's
// tree, and what KAI cannot say of a department: a lending limit (KAI lends
// every idle guaranteed GPU and reclaims it), and a never-lending team of a
// department, which cannot be kept out of others' reach as the reserved
// subtree keeps a team without a department.
func departmentChecks(tr tree, r *diag.Reporter, claims queueClaims) {
	p := tr.p
	var lends poolWarning
	for i := range p.Departments {
		d := &p.Departments[i]
		if !tr.holdsDepartment(d) {
			continue
		}
		if tr.pool == nil {
			for _, suffix := range []string{SharedSuffix, ReservedSuffix} {
				if d.Name == p.Name+suffix {
					r.Errorf(field.ErrorTypeDuplicate, d.Origin.Pos, d.Origin.Path,
						"kai: department %q has the name of the pool's %s subtree queue (pool name %q at line %d): rename the department", d.Name, suffix[1:], p.Name, p.NameOrigin.Pos.Line)
				}
			}
		} else {
			claims.claim(r, tr.name(d.Name), "department "+d.Name+tr.in(), d.Origin)
		}
		// A department holding several counted flavors makes them pools
		// (Pools): each tree's department queue is one flavor's.
		s := gpu.DepartmentSum(p, d, gpu.InGPUs, nil)
		if s.Guaranteed > 0 && s.Lendable < s.Guaranteed {
			o := d.Origin
			for _, f := range p.Flavors {
				if q := d.Quota(f.Name); gpu.Counted(f.Resource) && q.Lendable > 0 {
					o = q.Origin.Lendable
					break
				}
			}
			lends.add(o, fmt.Sprintf("%s all %d, not only %d", d.Name, s.Guaranteed, s.Lendable))
			if tr.pool == nil {
				r.Warnf(field.ErrorTypeNotSupported, o.Pos, o.Path,
					"kai: KAI has no lending limit: all %d idle guaranteed GPUs of department %s may be used outside it, not only %d; they are reclaimed when its teams need them, and its surplus goes to its own teams first (%s)",
					s.Guaranteed, d.Name, s.Lendable, fairShareSource)
			}
		}
	}
	var neverLends poolWarning
	for i := range p.Teams {
		t := &p.Teams[i]
		if t.Department == "" || !tr.holds(t) {
			continue
		}
		if s := gpu.TeamSum(p, t, gpu.InGPUs, nil); s.NeverLends() {
			neverLends.add(t.Origin, fmt.Sprintf("%s %d of department %s", t.Name, s.Guaranteed, t.Department))
			if tr.pool == nil {
				r.Warnf(field.ErrorTypeNotSupported, t.Origin.Pos, t.Origin.Path,
					"kai: team %s never lends, but sits under its department %s's queue, not in the %s%s subtree: KAI may lend its %d idle guaranteed GPUs to other queues and reclaims them when the team needs them",
					t.Name, t.Department, tr.root(), ReservedSuffix, s.Guaranteed)
			}
		}
	}
	if tr.pool == nil {
		return
	}
	lends.warn(r, "kai: KAI has no lending limit in node pool %s: a department's idle guaranteed GPUs may all be used outside it, not only its lendable ones; they are reclaimed when its teams need them, and its surplus goes to its own teams first (%s) (%%s)", tr.pool.Name, fairShareSource)
	neverLends.warn(r, "kai: in node pool %s, a team that never lends sits under its department's queue, not in the %s%s subtree: KAI may lend its idle guaranteed GPUs to other queues and reclaims them when the team needs them (%%s)", tr.pool.Name, tr.root(), ReservedSuffix)
}
