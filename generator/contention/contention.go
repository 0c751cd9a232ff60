// Package contention computes, from a plan alone, what each team runs when
// teams compete for the pool's GPUs: its guarantee, what it runs alone
// (every other team idle), what it runs when every team is busy, and what it
// runs when a chosen set of teams is busy. "Busy" means the team floods its
// queue with 1-GPU work beyond every limit; "idle" means it runs nothing.
//
// Each backend divides what is left to borrow by its own rules, computed
// from the same numbers its renderer writes (kueue.go: Kueue's quota tree
// with lending and borrowing limits, first come among borrowers while fair
// sharing is off; kai.go: KAI's proportion plugin, deserved quota then the
// rest by over-quota weight). Where the scheduler's answer depends on the
// order in which work arrives, an Outcome is a range, never a guess.
//
// It reads a plan and nothing else, so a part of an agreement (one cluster
// of a fleet) is computed the same way: hand it that part's plan.
package contention

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/schedule"
)

// Query says which instant and which busy set to compute.
type Query struct {
	// At picks the lending windows open at that instant; zero computes the
	// agreement outside every window.
	At time.Time
	// Busy names the teams (or departments: all their teams) of the busy
	// scenario; empty computes no busy scenario.
	Busy []string
	// Windows, when set, is applied instead of At's: the lending windows
	// open in it (schedule.At's state, or one a caller builds, such as one
	// window open, as diff does).
	Windows *schedule.State
	// Nodes, when set, holds per flavor the GPUs the nodes have when that
	// is less than the agreement's capacity (check --capacity, --lose):
	// the queues stay as rendered, from the agreement. KAI divides the
	// GPUs there are over them; Kueue admits by quota, never by nodes
	// (kubernetes-sigs/kueue#2665), so what it admits beyond the nodes
	// waits for one, and which team's pods do is first come.
	Nodes map[string]int64
}

// Share is what a team runs in a scenario, in the backend's units: exactly
// Min when Min == Max; otherwise anywhere from Min to Max, as the order in
// which work arrives decides.
type Share struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// Decided reports whether the scheduler's answer does not depend on the
// order in which work arrives.
func (s Share) Decided() bool { return s.Min == s.Max }

// String is "24" or "16-24".
func (s Share) String() string {
	if s.Decided() {
		return fmt.Sprint(s.Min)
	}
	return fmt.Sprintf("%d-%d", s.Min, s.Max)
}

// Outcome is one team's numbers in one flavor.
type Outcome struct {
	Team       string `json:"team"`
	Department string `json:"department,omitempty"`
	Guaranteed int64  `json:"guaranteed"`
	// Alone is what the team runs while every other team is idle.
	Alone Share `json:"alone"`
	// AllBusy is what it runs while every team is busy.
	AllBusy Share `json:"allBusy"`
	// Busy is what it runs while the query's busy teams are busy (0 for
	// a team outside the set); nil without a busy set.
	Busy *Share `json:"busy,omitempty"`
	// Note says why a team runs less than its numbers say (a retiring
	// team's queue admits nothing on Kueue); empty for most teams.
	Note string `json:"note,omitempty"`
}

// Flavor is the outcomes of one flavor (on KAI: of the GPUs its queues
// count, named after the flavor that holds the quotas).
type Flavor struct {
	Flavor   string    `json:"flavor"`
	Resource string    `json:"resource"`
	Capacity int64     `json:"capacity"`
	Teams    []Outcome `json:"teams"` // teams with a guarantee or a borrow in the flavor, by name
}

// Report is the contention of an agreement on one backend.
type Report struct {
	Backend gpu.Backend `json:"backend"`
	// At is the instant whose lending windows were applied; nil outside
	// every window.
	At *time.Time `json:"at,omitempty"`
	// Busy is the busy set, teams sorted by name; empty without one.
	Busy    []string `json:"busy,omitempty"`
	Flavors []Flavor `json:"flavors"`
	// Rules says, in words and with the scheduler's source (file:line
	// under Source), how the backend divides what is left to borrow.
	Rules  []string `json:"rules"`
	Source string   `json:"source"`
}

// ErrUnknownTeam is returned for a busy name that is neither a team nor a
// department of the agreement.
var ErrUnknownTeam = errors.New("not a team or department of the agreement")

// Compute returns the contention of a checked plan on backend b.
func Compute(p *plan.Agreement, b gpu.Backend, q Query) (*Report, error) {
	busy, err := busySet(p, q.Busy)
	if err != nil {
		return nil, err
	}
	at := p
	r := &Report{Backend: b}
	if q.Windows != nil {
		at = schedule.Apply(p, *q.Windows)
	} else if !q.At.IsZero() {
		t := q.At.UTC()
		r.At = &t
		if p.HasWindows() {
			s, err := schedule.At(p, q.At)
			if err != nil {
				return nil, err
			}
			at = schedule.Apply(p, s)
		}
	}
	if q.Busy != nil {
		for i, t := range p.Teams {
			if busy[i] {
				r.Busy = append(r.Busy, t.Name)
			}
		}
	}
	var withBusy []bool
	if len(q.Busy) > 0 {
		withBusy = busy
	}
	if b == gpu.KAI {
		r.Flavors, r.Rules = kaiReport(p, at, withBusy, q.Nodes)
		r.Source = kaiSource
	} else {
		r.Flavors, r.Rules = kueueReport(at, withBusy, q.Nodes)
		r.Source = kueueSource
	}
	return r, nil
}

// withNodes is p with each flavor of nodes at that capacity.
func withNodes(p *plan.Agreement, nodes map[string]int64) *plan.Agreement {
	if len(nodes) == 0 {
		return p
	}
	out := *p
	out.Flavors = slices.Clone(p.Flavors)
	for i := range out.Flavors {
		if n, ok := nodes[out.Flavors[i].Name]; ok {
			out.Flavors[i].Capacity = n
		}
	}
	return &out
}

// onNodes is what a team Kueue admits share of runs on nodes of capacity
// GPUs, when the teams it admits together hold admitted GPUs: at most the
// nodes, and at least its share less every GPU admitted beyond them, all
// of which may be its own pods waiting.
func onNodes(share Share, admitted, capacity int64) Share {
	excess := max(0, admitted-capacity)
	return Share{Min: max(0, min(share.Min-excess, capacity)), Max: min(share.Max, capacity)}
}

// busySet marks the teams the names select: a team by its name, a
// department by all its teams.
func busySet(p *plan.Agreement, names []string) ([]bool, error) {
	busy := make([]bool, len(p.Teams))
	named := make(map[string]bool, len(names))
	for _, n := range names {
		named[n] = true
	}
	known := map[string]bool{}
	for i := range p.Teams {
		t := &p.Teams[i]
		if named[t.Name] || (t.Department != "" && named[t.Department]) {
			busy[i] = true
		}
		known[t.Name] = true
	}
	for i := range p.Departments {
		known[p.Departments[i].Name] = true
	}
	var unknown []string
	for _, n := range names {
		if !known[n] && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: %w", strings.Join(unknown, ", "), ErrUnknownTeam)
	}
	return busy, nil
}

// everyone is the all-busy set.
func everyone(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// holds reports whether a team takes part in a flavor: a guarantee or a
// borrow in it.
func holds(q plan.Quota) bool { return q.Guaranteed > 0 || q.Borrow > 0 }

// sortTeams keeps a flavor's outcomes in team order, whatever built them.
func sortTeams(f *Flavor) {
	slices.SortFunc(f.Teams, func(a, b Outcome) int { return strings.Compare(a.Team, b.Team) })
}
