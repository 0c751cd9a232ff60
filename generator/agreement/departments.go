package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// departmentKeys are the keys of a [departments.NAME] table: a quota per
// flavor, as for a team, and the department's share of idle GPUs.
var departmentKeys = append([]string{"weight", "flavors"}, quotaKeys...)

// Department is a [departments.NAME] table: a share of the pool that its
// teams (those naming it in department) divide among themselves.
type Department struct {
	Name   string
	Pos    Pos
	Path   *field.Path
	Weight Int
	// Shorthand holds quota keys written on the department itself, allowed
	// when the agreement has one flavor; nil when none were written.
	Shorthand *Quota
	// Flavors holds [departments.NAME.flavors.FLAVOR] tables.
	Flavors []*Quota
	// ByFlavor is the department's quota per known flavor, the shorthand
	// resolved, as for a team.
	ByFlavor map[string]*Quota
}

// Department returns the named department, or nil.
func (a *Agreement) Department(name string) *Department {
	return named(a.Departments, name, func(d *Department) string { return d.Name })
}

func (d *decoder) department(name string, v *load.Value) *Department {
	path := diag.Key(field.NewPath("departments"), name)
	if d.table(v, path) == nil {
		return nil
	}
	dept := &Department{Name: name, Pos: v.KeyPos, Path: path}
	d.unknown(v.Table, path, departmentKeys)
	dept.Weight = d.int(v.Table.Get("weight"), path.Child("weight"))
	dept.Shorthand, dept.Flavors = d.quotas(v, path)
	return dept
}

// byFlavor resolves a team's or a department's quotas per known flavor.
func byFlavor(a *Agreement, shorthand *Quota, flavors []*Quota) map[string]*Quota {
	out := map[string]*Quota{}
	if shorthand != nil && len(a.Flavors) == 1 {
		out[a.Flavors[0].Name] = shorthand
	}
	for _, q := range flavors {
		if a.Flavor(q.Flavor) != nil {
			out[q.Flavor] = q
		}
	}
	return out
}
