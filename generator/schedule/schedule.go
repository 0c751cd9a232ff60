// Package schedule computes, from a plan and an instant, what the lending
// windows make of the agreement at that instant: which windows are open,
// each team's effective lendable and borrow per flavor, and when that next
// changes. It is pure: the instant is a parameter, so the controller, explain,
// report and tests ask the same question and get the same answer.
package schedule

import (
	"time"

	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// Open is one window open at the instant asked about.
type Open struct {
	Team     string
	Index    int // the window's place among its team's, in the file's order
	Window   *plan.Window
	Interval windows.Interval // the occurrence that is open
}

// State is the agreement at one instant.
type State struct {
	At   time.Time
	Open []Open // by team, then index
	// Quotas is every team's quota per flavor at At, in flavor order: a
	// window's where one is open, the team's otherwise.
	Quotas map[string][]plan.Quota
	// NextEdge is the first instant after At at which a window opens or
	// closes; zero when the agreement has no windows.
	NextEdge time.Time
}

// At returns the state of the agreement at t. The plan is a validated one:
// windows of one team do not overlap, so at most one per team is open.
func At(p *plan.Agreement, t time.Time) (State, error) {
	s := State{At: t, Quotas: map[string][]plan.Quota{}}
	for i := range p.Teams {
		team := &p.Teams[i]
		s.Quotas[team.Name] = team.Quotas
		for j := range team.Windows {
			w := &team.Windows[j]
			iv, open, err := w.Schedule.OpenAt(t)
			if err != nil {
				return State{}, err
			}
			if open {
				s.Open = append(s.Open, Open{Team: team.Name, Index: j, Window: w, Interval: iv})
				s.Quotas[team.Name] = w.Quotas
			}
			next, err := w.Schedule.NextEdge(t)
			if err != nil {
				return State{}, err
			}
			if !next.IsZero() && (s.NextEdge.IsZero() || next.Before(s.NextEdge)) {
				s.NextEdge = next
			}
		}
	}
	return s, nil
}

// Quota is the team's quota of flavor at the state's instant.
func (s State) Quota(team, flavor string) plan.Quota {
	for _, q := range s.Quotas[team] {
		if q.Flavor == flavor {
			return q
		}
	}
	return plan.Quota{Flavor: flavor}
}

// IsOpen reports whether the team's window (by index) is open.
func (s State) IsOpen(team string, index int) bool {
	for _, o := range s.Open {
		if o.Team == team && o.Index == index {
			return true
		}
	}
	return false
}

// Apply returns a copy of the plan whose teams have the state's quotas:
// what a backend renders for the agreement at the state's instant. The
// windows are kept, so the copy still says which teams have them.
func Apply(p *plan.Agreement, s State) *plan.Agreement {
	out := *p
	out.Teams = make([]plan.Team, len(p.Teams))
	for i, t := range p.Teams {
		if q, ok := s.Quotas[t.Name]; ok {
			t.Quotas = q
		}
		out.Teams[i] = t
	}
	return &out
}
