package chargeback

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// A fleet agreement (one with [clusters]) is charged where its GPUs are: in
// each worker cluster, whose model is built from that cluster's part of the
// plan (its shares of every team), and whose series say what its scheduler
// admitted there. The manager is not charged: it holds no GPUs, and what it
// admits is what the workers run, so adding it would count every GPU-hour
// twice. The fleet's statement is the workers' statements summed.

// ClusterStatement is one worker cluster's statement in a fleet's.
type ClusterStatement struct {
	Cluster string `json:"cluster"`
	*Statement
}

// FleetStatement is the chargeback of a fleet over a range: each worker
// cluster's statement, and the fleet's, whose rows are every team's rows
// summed across the clusters.
type FleetStatement struct {
	Period
	Clusters []ClusterStatement `json:"clusters"`
	// Rows, Departments and Total are the clusters' summed: a team that
	// borrows in one cluster while its share idles in another is charged
	// both, as each cluster's statement charges them, since each cluster's
	// GPUs were held or idle there.
	Rows        []Row `json:"rows"`
	Departments []Row `json:"departments,omitempty"`
	Total       Row   `json:"total"`
	// Coverage is the clusters' mean coverage: the fraction of every
	// cluster's steps at which its scheduler reported allocations.
	Coverage float64 `json:"coverage"`
}

// HasDepartments reports whether the fleet's agreement has departments.
func (f *FleetStatement) HasDepartments() bool {
	return slices.ContainsFunc(f.Clusters, func(c ClusterStatement) bool { return c.HasDepartments() })
}

// SumFleet sums the worker clusters' statements, computed over the same
// range and step for the same pool and backend, into the fleet's.
// Utilisation is weighted by device-time across clusters, as a statement's
// total weighs its rows.
func SumFleet(clusters []ClusterStatement) (*FleetStatement, error) {
	if len(clusters) == 0 {
		return nil, fmt.Errorf("statement: a fleet of no clusters")
	}
	first := clusters[0].Statement
	fs := &FleetStatement{Period: first.Period, Clusters: clusters}
	var flavors []Flavor // in the order the clusters name them
	rows := map[key]*Row{}
	accts := map[key]*acct{} // the utilisation sums, for departmentRows
	var coverage float64
	for _, c := range clusters {
		st := c.Statement
		if !st.same(first.Period) {
			return nil, fmt.Errorf("statement: cluster %s's statement is of %s (%s) from %s to %s step %s in %s, cluster %s's of %s (%s) from %s to %s step %s in %s",
				c.Cluster, st.Pool, st.Backend, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.Step, st.Currency,
				clusters[0].Cluster, first.Pool, first.Backend, first.From.Format(time.RFC3339), first.To.Format(time.RFC3339), first.Step, first.Currency)
		}
		coverage += st.Coverage
		for _, r := range st.Rows {
			if flavorIndex(flavors, r.Flavor) < 0 {
				flavors = append(flavors, Flavor{Name: r.Flavor})
			}
			k := key{r.Team, r.Flavor}
			sum := rows[k]
			if sum == nil {
				sum = &Row{Team: r.Team, Department: r.Department, Flavor: r.Flavor}
				rows[k], accts[k] = sum, &acct{}
			}
			sum.add(r)
			if w := st.devices[k]; r.Utilization != nil && w > 0 {
				accts[k].utilSum += *r.Utilization * w
				accts[k].utilCount += w
			}
		}
	}
	fs.Coverage = coverage / float64(len(clusters))
	for k, r := range rows {
		if a := accts[k]; a.utilCount > 0 {
			u := a.utilSum / a.utilCount
			r.Utilization = &u
		}
		fs.Rows = append(fs.Rows, *r)
	}
	sort.Slice(fs.Rows, func(i, j int) bool {
		if fs.Rows[i].Team != fs.Rows[j].Team {
			return fs.Rows[i].Team < fs.Rows[j].Team
		}
		return flavorIndex(flavors, fs.Rows[i].Flavor) < flavorIndex(flavors, fs.Rows[j].Flavor)
	})
	// Summed in the rows' order, so reruns give the same last digits.
	fs.Total = Row{Team: "total", Flavor: "*"}
	var utilSum, utilCount float64
	for _, r := range fs.Rows {
		fs.Total.add(r)
		a := accts[key{r.Team, r.Flavor}]
		utilSum += a.utilSum
		utilCount += a.utilCount
	}
	if utilCount > 0 {
		u := utilSum / utilCount
		fs.Total.Utilization = &u
	}
	fs.Departments = departmentRows(fs.Rows, accts, flavors)
	return fs, nil
}
