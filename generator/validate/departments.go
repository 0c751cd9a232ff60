package validate

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// departments checks the [departments.NAME] tables and the teams' department
// keys: names that resolve and do not collide, counts as for teams, and
// guarantees that cover the department's teams. The capacity of each flavor
// counts department guarantees in place of their teams' (capacity).
func (v *validator) departments() {
	teams := map[string]*agreement.Team{}
	for _, t := range v.a.Teams {
		teams[t.Name] = t
	}
	for _, d := range v.a.Departments {
		v.dnsLabel(d.Pos, d.Path, d.Name)
		if n := v.a.Name; n.IsSet() && n.Value == d.Name {
			v.errorf(field.ErrorTypeDuplicate, d.Pos, d.Path, "department %q has the pool's name (name, %s): the pool and the department would be one Kueue Cohort and one KAI queue", d.Name, n.Pos.LineFrom(d.Pos, v.r.File))
		}
		if t := teams[d.Name]; t != nil {
			// At the later of the two tables, naming the other's line.
			if t.Pos.Before(d.Pos) {
				v.errorf(field.ErrorTypeDuplicate, d.Pos, d.Path, "department %q has the name of team %q (%s): a department and a team cannot share a name (KAI queues are one namespace)", d.Name, t.Name, t.Pos.LineFrom(d.Pos, v.r.File))
			} else {
				v.errorf(field.ErrorTypeDuplicate, t.Pos, t.Path, "team %q has the name of department %q (%s): a department and a team cannot share a name (KAI queues are one namespace)", t.Name, d.Name, d.Pos.LineFrom(t.Pos, v.r.File))
			}
		}
		v.weight(d.Weight, "department")
		v.quotaTables("department", "departments."+diag.TOMLKey(d.Name), v.teamFlavor(nil), d.Shorthand, d.Flavors)
	}

	members := map[*agreement.Department][]*agreement.Team{}
	for _, t := range v.a.Teams {
		if !t.Department.IsSet() {
			continue
		}
		d := v.a.Department(t.Department.Value)
		if d == nil {
			v.unknownDepartment(t)
			continue
		}
		members[d] = append(members[d], t)
	}
	for _, d := range v.a.Departments {
		if len(members[d]) == 0 {
			v.warnf(field.ErrorTypeInvalid, d.Pos, d.Path, "department %q has no team: name it in a team's table, or remove it; its guarantee holds GPUs nobody can use but by borrowing", d.Name)
			v.suggest("department = %s", diag.TOMLString(d.Name))
			continue
		}
		v.departmentCoverage(d, members[d])
	}
}

// unknownDepartment reports a team's department that names no table, with
// the closest department's name when one is close, or, when the agreement
// has none, the department's table with the team's guarantee as its own.
func (v *validator) unknownDepartment(t *agreement.Team) {
	s := t.Department
	names := make([]string, len(v.a.Departments))
	for i, d := range v.a.Departments {
		names[i] = d.Name
	}
	msg := fmt.Sprintf("unknown department %q", s.Value)
	switch sug := agreement.Suggest(s.Value, names); {
	case sug != "":
		msg += fmt.Sprintf(" (did you mean %q?)", sug)
	case len(names) == 0:
		msg += ": the agreement has no departments; add its table, with a guarantee that covers its teams'"
	default:
		msg += fmt.Sprintf(" (departments: %s)", strings.Join(sortedCopy(names), ", "))
	}
	v.errorf(field.ErrorTypeNotFound, s.Pos, s.Path, "%s", msg)
	if len(names) == 0 {
		flavor := v.teamFlavor(t)
		var g int64
		if q := t.ByFlavor[flavor]; q != nil {
			g = max(q.Guaranteed.Value, 0)
		}
		v.suggest("[%s]\nguaranteed = %d", v.quotaTable("departments."+diag.TOMLKey(s.Value), flavor), g)
	}
}

// departmentCoverage reports, per flavor, a department whose teams are
// guaranteed more than the department: at the department's guaranteed for
// that flavor (its table, or the department's, when it is not written).
func (v *validator) departmentCoverage(d *agreement.Department, teams []*agreement.Team) {
	for _, f := range v.a.Flavors {
		var sum int64
		var parts []string
		for _, t := range teams {
			if q := t.ByFlavor[f.Name]; q != nil && q.Guaranteed.Value > 0 {
				sum = addCapped(sum, q.Guaranteed.Value)
				parts = append(parts, fmt.Sprintf("%s %d", t.Name, q.Guaranteed.Value))
			}
		}
		dq := d.ByFlavor[f.Name]
		var have int64
		if dq != nil {
			have = dq.Guaranteed.Value
		}
		if sum <= have || have < 0 {
			continue
		}
		pos, path := d.Pos, d.Path.Child("guaranteed")
		if len(v.a.Flavors) > 1 {
			path = diag.Key(d.Path.Child("flavors"), f.Name).Child("guaranteed")
		}
		if dq != nil {
			pos, path = dq.Pos, dq.Guaranteed.Path
			if dq.Guaranteed.State != agreement.Unset {
				pos = dq.Guaranteed.Pos
			}
		}
		v.errorf(field.ErrorTypeInvalid, pos, path, "the teams of department %s are guaranteed %d GPUs of flavor %s (%s) but the department is guaranteed %d: a department's guarantee must cover its teams'", d.Name, sum, f.Name, strings.Join(parts, ", "), have)
	}
}

// departmentOf is the team's department; nil when it has none or names an
// unknown one (reported by departments).
func (v *validator) departmentOf(t *agreement.Team) *agreement.Department {
	if !t.Department.IsSet() {
		return nil
	}
	return v.a.Department(t.Department.Value)
}

// surplus is what department d is guaranteed of flavor beyond its teams'
// guarantees, never below zero: what its teams borrow first.
func (v *validator) surplus(d *agreement.Department, flavor string) int64 {
	dq := d.ByFlavor[flavor]
	if dq == nil || dq.Guaranteed.Value <= 0 {
		return 0
	}
	left := dq.Guaranteed.Value
	for _, t := range v.a.Teams {
		if v.departmentOf(t) != d {
			continue
		}
		if q := t.ByFlavor[flavor]; q != nil && q.Guaranteed.Value > 0 {
			left -= q.Guaranteed.Value
		}
	}
	return max(left, 0)
}

// borrowOf is a department quota's borrow; 0 when absent or negative.
func borrowOf(q *agreement.Quota) int64 {
	if q == nil {
		return 0
	}
	return max(q.Borrow.Value, 0)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
