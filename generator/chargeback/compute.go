package chargeback

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// Series is one result series of a Query: its labels and its values at
// every step of the range where Prometheus had a sample (a step without one
// is a gap).
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one value at one step.
type Point struct {
	T time.Time
	V float64
}

// Result is one Query's series.
type Result struct {
	Query  Query
	Series []Series
}

// Row is one line of the statement: a team and flavor's GPU-hours over the
// range, in the flavor's units (see Flavor.Capacity).
type Row struct {
	Team string `json:"team"`
	// Department is the team's department; on a department's row (Team
	// "*") the department whose teams it sums. Empty without departments.
	Department string  `json:"department,omitempty"`
	Flavor     string  `json:"flavor"`
	Guaranteed float64 `json:"guaranteed_gpu_hours"`
	Allocated  float64 `json:"allocated_gpu_hours"`
	Borrowed   float64 `json:"borrowed_gpu_hours"`
	Idle       float64 `json:"idle_gpu_hours"`
	Lent       float64 `json:"lent_gpu_hours"`
	// Utilization is the mean utilisation (0 to 1) of the team's GPUs of
	// the flavor, weighted by device-time; nil without DCGM series.
	Utilization *float64 `json:"utilization"`
	Cost        float64  `json:"cost"`
}

// add adds o's GPU-hours and cost to r, as a total or a department's row
// sums them; not Utilization, a mean that each sum weighs itself.
func (r *Row) add(o Row) {
	r.Guaranteed += o.Guaranteed
	r.Allocated += o.Allocated
	r.Borrowed += o.Borrowed
	r.Idle += o.Idle
	r.Lent += o.Lent
	r.Cost += o.Cost
}

// Period says what a statement is of: the pool, whose metrics, the range
// and step, and the currency of its costs.
type Period struct {
	Pool     string      `json:"pool"`
	Backend  gpu.Backend `json:"backend"`
	From     time.Time   `json:"from"`
	To       time.Time   `json:"to"`
	Step     string      `json:"step"`
	Currency string      `json:"currency"`
}

// same reports whether two statements are of the same period, so that
// their GPU-hours add up.
func (p Period) same(o Period) bool {
	return p.Pool == o.Pool && p.Backend == o.Backend && p.From.Equal(o.From) && p.To.Equal(o.To) && p.Step == o.Step && p.Currency == o.Currency
}

// Statement is the chargeback of a range.
type Statement struct {
	Period
	Rows []Row `json:"rows"`
	// Departments holds a row per department and flavor, its teams' rows
	// summed (Team "*"), sorted; absent without departments.
	Departments []Row `json:"departments,omitempty"`
	Total       Row   `json:"total"`
	// Coverage is the fraction of the range's steps at which the scheduler
	// reported allocations; gaps are charged nothing (never guessed).
	Coverage float64 `json:"coverage"`
	// devices is, per team row with a Utilization, how many device
	// samples its mean weighs: a fleet's sum (SumFleet) weighs each
	// cluster's mean by them, as a statement's total does its rows'.
	devices map[key]float64
}

// ErrNoSeries is returned when the range holds no scheduler series at all.
var ErrNoSeries = errors.New("no scheduler series in the range")

// UnknownTeamError is returned when the data names a team the agreement
// does not have (a ClusterQueue in the pool's cohort that it does not
// render): the agreement and the cluster disagree, and a statement that
// left the team out would not add up.
type UnknownTeamError struct {
	Team  string
	Query string
}

func (e *UnknownTeamError) Error() string {
	return fmt.Sprintf("the metrics name team %q, which the agreement does not have (query %s)", e.Team, e.Query)
}

type key struct{ team, flavor string }

// acct is one account's series, a value per step, and its utilisation sums.
type acct struct {
	alloc, guar        []float64
	seen               []bool
	utilSum, utilCount float64
}

// Compute integrates the results over [from, to) sampled every step.
//
// Integration: a gauge's value at a step holds for the step (Prometheus
// evaluates each step with its lookback, so a value stands for at most the
// lookback after its last scrape). A step with no value is a gap and counts
// as nothing: a scheduler that was down is not assumed to have allocated
// anything, and Coverage says how much of the range was seen. A restart of
// the scheduler or exporter makes a new series or a short gap; gauges have
// no resets to correct for.
//
// Lending attribution: at each step and per flavor, borrowers first use
// the capacity no team is guaranteed (Flavor.Unassigned); what they borrow
// beyond it is lent by the teams with idle lendable GPUs (idle guarantee up
// to their lendable), in proportion to those idle lendable GPUs.
//
// Cost is what a team pays: its guarantee and what it borrowed, at the
// flavor's price. Lending earns no credit; lenders see what they lent.
func (m *Model) Compute(results []Result, from, to time.Time, step time.Duration) (*Statement, error) {
	if step <= 0 || !to.After(from) {
		return nil, fmt.Errorf("statement: empty range %s to %s (step %s)", from, to, step)
	}
	steps := int(to.Sub(from) / step)
	if steps == 0 {
		steps = 1
	}
	idx := func(t time.Time) int {
		i := int(t.Sub(from) / step)
		if i < 0 || i >= steps {
			return -1
		}
		return i
	}
	accts := map[key]*acct{}
	get := func(k key) *acct {
		a := accts[k]
		if a == nil {
			a = &acct{alloc: make([]float64, steps), guar: make([]float64, steps), seen: make([]bool, steps)}
			accts[k] = a
		}
		return a
	}
	nsTeam := map[string]string{}
	for _, t := range m.Teams {
		for _, ns := range t.Namespaces {
			nsTeam[ns] = t.Name
		}
	}
	sawAllocated := false
	for _, r := range results {
		q := r.Query
		for _, s := range r.Series {
			name := s.Labels[q.TeamLabel]
			team := name
			if q.TeamLabel == "namespace" {
				team = nsTeam[name]
			}
			if m.Team(team) == nil {
				if q.Kind == UtilSum || q.Kind == UtilCount {
					continue // a namespace of no team: not ours to charge
				}
				return nil, &UnknownTeamError{Team: name, Query: q.Expr}
			}
			flavor := q.Flavor
			if q.FlavorLabel != "" {
				flavor = s.Labels[q.FlavorLabel]
			}
			if m.Flavor(flavor) == nil {
				continue // a flavor of another resource group: not the agreement's
			}
			a := get(key{team, flavor})
			for _, p := range s.Points {
				i := idx(p.T)
				if i < 0 || math.IsNaN(p.V) {
					continue
				}
				switch q.Kind {
				case Allocated:
					a.alloc[i] += p.V
					a.seen[i] = true
					sawAllocated = true
				case Guaranteed:
					a.guar[i] += p.V
				case UtilSum:
					a.utilSum += p.V
				case UtilCount:
					a.utilCount += p.V
				}
			}
		}
	}
	if !sawAllocated {
		return nil, ErrNoSeries
	}

	hours := step.Hours()
	rows := map[key]*Row{}
	seenSteps := 0
	for _, t := range m.Teams {
		for _, f := range m.Flavors {
			rows[key{t.Name, f.Name}] = &Row{Team: t.Name, Department: t.Department, Flavor: f.Name}
		}
	}
	for i := 0; i < steps; i++ {
		seen := false
		for _, f := range m.Flavors {
			var borrowed, idleLendable float64
			il := map[string]float64{}
			for _, t := range m.Teams {
				a := accts[key{t.Name, f.Name}]
				if a == nil || !a.seen[i] {
					continue
				}
				seen = true
				g, al := a.guar[i], a.alloc[i]
				r := rows[key{t.Name, f.Name}]
				b, idle := math.Max(al-g, 0), math.Max(g-al, 0)
				r.Guaranteed += g * hours
				r.Allocated += al * hours
				r.Borrowed += b * hours
				r.Idle += idle * hours
				borrowed += b
				l := math.Min(idle, m.lendable(t, f.Name, from.Add(time.Duration(i)*step)))
				il[t.Name] = l
				idleLendable += l
			}
			fromLenders := math.Max(borrowed-float64(f.Unassigned), 0)
			if idleLendable > 0 && fromLenders > 0 {
				share := math.Min(fromLenders/idleLendable, 1)
				for team, l := range il {
					rows[key{team, f.Name}].Lent += l * share * hours
				}
			}
		}
		if seen {
			seenSteps++
		}
	}

	st := &Statement{Period: Period{Pool: m.Pool, Backend: m.Backend, From: from, To: to, Step: step.String(), Currency: m.Currency},
		Coverage: float64(seenSteps) / float64(steps), devices: map[key]float64{}}
	var utilSum, utilCount float64
	for _, r := range rows {
		f := m.Flavor(r.Flavor)
		r.Cost = (r.Guaranteed + r.Borrowed) * f.Price
		if a := accts[key{r.Team, r.Flavor}]; a != nil && a.utilCount > 0 {
			u := a.utilSum / a.utilCount
			r.Utilization = &u
			st.devices[key{r.Team, r.Flavor}] = a.utilCount
			utilSum += a.utilSum
			utilCount += a.utilCount
		}
		st.Rows = append(st.Rows, *r)
	}
	sort.Slice(st.Rows, func(i, j int) bool {
		if st.Rows[i].Team != st.Rows[j].Team {
			return st.Rows[i].Team < st.Rows[j].Team
		}
		return flavorIndex(m.Flavors, st.Rows[i].Flavor) < flavorIndex(m.Flavors, st.Rows[j].Flavor)
	})
	st.Total = Row{Team: "total", Flavor: "*"}
	for _, r := range st.Rows {
		st.Total.add(r)
	}
	if utilCount > 0 {
		u := utilSum / utilCount
		st.Total.Utilization = &u
	}
	st.Departments = departmentRows(st.Rows, accts, m.Flavors)
	return st, nil
}

func flavorIndex(flavors []Flavor, name string) int {
	return slices.IndexFunc(flavors, func(f Flavor) bool { return f.Name == name })
}
