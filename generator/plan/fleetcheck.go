package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// CheckFleet reports what a fleet's split makes of the agreement (nothing
// without a fleet): a worker whose guarantees (departments', and teams'
// outside any department) exceed its GPUs of a flavor, a department whose
// teams are guaranteed more in a worker than its share there, and, as a
// warning, a guarantee split so that no cluster holds it whole: a job runs
// in one cluster, so the largest gang it admits is its largest share.
func CheckFleet(p *Agreement) diag.List {
	if p.Fleet == nil {
		return nil
	}
	r := &diag.Reporter{File: p.File}
	for wi, w := range p.Fleet.Workers {
		for fi, f := range p.Flavors {
			var sum int64
			var held []string
			add := func(name string, q Quota) {
				if g := q.Shares[wi].Guaranteed; g > 0 {
					sum += g
					held = append(held, fmt.Sprintf("%s %d", name, g))
				}
			}
			for _, d := range p.Departments {
				add("department "+d.Name, d.Quotas[fi])
			}
			for _, t := range p.Teams {
				if t.Department == "" {
					add(t.Name, t.Quotas[fi])
				}
			}
			if c := w.Capacity[fi]; sum > c.GPUs {
				r.Errorf(field.ErrorTypeInvalid, c.Origin.Pos, c.Origin.Path, "cluster %s has %d GPUs of flavor %s but is guaranteed %d of them (%s): say where the guarantees sit with each one's clusters key", w.Name, c.GPUs, f.Name, sum, strings.Join(held, ", "))
			}
		}
	}
	for _, d := range p.Departments {
		for fi, f := range p.Flavors {
			for wi, w := range p.Fleet.Workers {
				var teams int64
				for _, t := range p.Teams {
					if t.Department == d.Name {
						teams += t.Quotas[fi].Shares[wi].Guaranteed
					}
				}
				if s := d.Quotas[fi].Shares[wi]; teams > s.Guaranteed {
					r.Errorf(field.ErrorTypeInvalid, d.Origin.Pos, d.Origin.Path, "in cluster %s, the teams of department %s are guaranteed %d GPUs of flavor %s, more than the department's %d there: give the department's and its teams' shares with their clusters keys", w.Name, d.Name, teams, f.Name, s.Guaranteed)
				}
			}
		}
	}
	for _, t := range p.Teams {
		for _, q := range t.Quotas {
			var largest, sum int64
			for _, s := range q.Shares {
				largest = max(largest, s.Guaranteed)
				sum += s.Guaranteed
			}
			// Shares that do not add up are refused (validate): no
			// warning about a split that is not one.
			if q.Guaranteed > 0 && sum == q.Guaranteed && largest < q.Guaranteed {
				o := q.Origin.Guaranteed
				r.Warnf(field.ErrorTypeInvalid, o.Pos, o.Path, "team %s's guarantee of %d GPUs of flavor %s is split over clusters (%s): a job runs in one cluster, so its largest gang on the guarantee is %d; put the guarantee in one cluster with its clusters key if it runs larger jobs", t.Name, q.Guaranteed, q.Flavor, sharesText(q), largest)
			}
		}
	}
	return r.List
}

// sharesText lists a quota's guaranteed shares, for messages.
func sharesText(q Quota) string {
	var out []string
	for _, s := range q.Shares {
		out = append(out, fmt.Sprintf("%s %d", s.Cluster, s.Guaranteed))
	}
	return strings.Join(out, ", ")
}
