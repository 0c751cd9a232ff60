package chargeback

import (
	"slices"
	"sort"
)

// departmentRows sums the team rows of each department, per flavor: what the
// department's teams were guaranteed, used, borrowed, left idle and lent, and
// what they pay. Utilisation is weighted by device-time, as the total's. A
// department's surplus over its teams' guarantees is in no team's guarantee,
// so no row charges it. nil without departments. Rows are sorted by
// department, then flavor in the order of flavors.
func departmentRows(rows []Row, accts map[key]*acct, flavors []Flavor) []Row {
	type sum struct {
		row                Row
		utilSum, utilCount float64
	}
	sums := map[[2]string]*sum{}
	for _, r := range rows {
		if r.Department == "" {
			continue
		}
		k := [2]string{r.Department, r.Flavor}
		s := sums[k]
		if s == nil {
			s = &sum{row: Row{Team: "*", Department: r.Department, Flavor: r.Flavor}}
			sums[k] = s
		}
		s.row.add(r)
		if a := accts[key{r.Team, r.Flavor}]; a != nil {
			s.utilSum += a.utilSum
			s.utilCount += a.utilCount
		}
	}
	if len(sums) == 0 {
		return nil
	}
	out := make([]Row, 0, len(sums))
	for _, s := range sums {
		if s.utilCount > 0 {
			u := s.utilSum / s.utilCount
			s.row.Utilization = &u
		}
		out = append(out, s.row)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Department != out[j].Department {
			return out[i].Department < out[j].Department
		}
		return flavorIndex(flavors, out[i].Flavor) < flavorIndex(flavors, out[j].Flavor)
	})
	return out
}

// HasDepartments reports whether the statement's agreement has departments,
// whose column and rows a report then shows.
func (st *Statement) HasDepartments() bool {
	return len(st.Departments) > 0 || slices.ContainsFunc(st.Rows, func(r Row) bool { return r.Department != "" })
}
