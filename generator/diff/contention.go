package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/schedule"
)

// ContentionChange is one team's outcome under contention in one flavor,
// before → after (package contention): what it runs alone and with every
// team busy. A team is listed when the change touches its quota of the
// flavor or its outcome, so a team whose numbers in the file did not change
// but which gets less (a new borrower beside it, a lendable cut elsewhere)
// is there too.
type ContentionChange struct {
	// When is the state of the lending windows: empty outside every
	// window, else the windows of one schedule open ("while inference's
	// window (20:00 to 06:00 UTC every day) is open").
	When       string                  `json:"when,omitempty"`
	Flavor     string                  `json:"flavor"`
	Team       string                  `json:"team"`
	Guaranteed Value[int64]            `json:"guaranteed"`
	Alone      Value[contention.Share] `json:"alone"`
	AllBusy    Value[contention.Share] `json:"allBusy"`
	// QuotaChanged is true when the team's quota of the flavor changes;
	// false for a team listed for its outcome alone.
	QuotaChanged bool `json:"quotaChanged"`
}

// Less reports whether the team runs less after the change in a scenario
// the change touches: what its owners must hear about.
func (c ContentionChange) Less() bool {
	less := func(v Value[contention.Share]) bool {
		return v.Old != nil && (v.New == nil || v.New.Max < v.Old.Max || v.New.Min < v.Old.Min)
	}
	return less(c.Alone) || less(c.AllBusy)
}

// windowState is one state of the lending windows diff compares in: none
// open (the zero value), or every window of one schedule open, the way
// they open together on the clock. One state per distinct schedule keeps
// the cost to a few computations however many teams have windows.
type windowState struct {
	schedule string // the windows' Describe(); empty: none open
	label    string
}

// windowStates are the states contention is compared in: outside every
// window, then each schedule of either side's windows open.
func windowStates(old, new *plan.Agreement) []windowState {
	var schedules []string
	teams := map[string][]string{}
	for _, p := range []*plan.Agreement{new, old} {
		for i := range p.Teams {
			t := &p.Teams[i]
			for j := range t.Windows {
				d := t.Windows[j].Schedule.Describe()
				if _, ok := teams[d]; !ok {
					schedules = append(schedules, d)
				}
				if !slices.Contains(teams[d], t.Name) {
					teams[d] = append(teams[d], t.Name)
				}
			}
		}
	}
	out := []windowState{{}}
	for _, d := range schedules {
		who := teams[d]
		slices.Sort(who)
		label := fmt.Sprintf("while %s's window (%s) is open", who[0], d)
		switch {
		case len(who) > 3:
			label = fmt.Sprintf("while the windows of %d teams (%s) are open", len(who), d)
		case len(who) > 1:
			label = fmt.Sprintf("while the windows of %s (%s) are open", strings.Join(who, ", "), d)
		}
		out = append(out, windowState{schedule: d, label: label})
	}
	return out
}

// query is the contention query of a state on one side: the windows of
// that schedule the side has, open.
func (w windowState) query(p *plan.Agreement) contention.Query {
	s := &schedule.State{Quotas: map[string][]plan.Quota{}}
	if w.schedule != "" {
		for i := range p.Teams {
			t := &p.Teams[i]
			for j := range t.Windows {
				if t.Windows[j].Schedule.Describe() == w.schedule {
					s.Quotas[t.Name] = t.Windows[j].Quotas
					break
				}
			}
		}
	}
	return contention.Query{Windows: s}
}

// compareContention computes both sides' contention on the backend each
// rendered for, in every window state, and keeps the teams the change
// touches; nil when the agreement is added or removed (every team is).
func compareContention(old, new *generator.Result) ([]ContentionChange, error) {
	if old == nil || new == nil || old.Plan == nil || new.Plan == nil {
		return nil, nil
	}
	var out []ContentionChange
	// A window state lists a team only where it differs from outside the
	// windows: the same added team, or the same move, is said once.
	type key struct{ flavor, team string }
	type shares struct{ alone, allBusy Value[contention.Share] }
	same := func(a, b Value[contention.Share]) bool {
		return (a.Old == nil) == (b.Old == nil) && (a.New == nil) == (b.New == nil) &&
			(a.Old == nil || *a.Old == *b.Old) && (a.New == nil || *a.New == *b.New)
	}
	outside := map[key]shares{}
	for _, w := range windowStates(old.Plan, new.Plan) {
		before, err := contention.Compute(old.Plan, old.Backend, w.query(old.Plan))
		if err != nil {
			return nil, err
		}
		after, err := contention.Compute(new.Plan, new.Backend, w.query(new.Plan))
		if err != nil {
			return nil, err
		}
		for _, c := range contentionChanges(w.label, old.Plan, new.Plan, before, after) {
			k := key{c.Flavor, c.Team}
			if w.schedule == "" {
				outside[k] = shares{c.Alone, c.AllBusy}
			} else if o, ok := outside[k]; ok && same(o.alone, c.Alone) && same(o.allBusy, c.AllBusy) {
				continue
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// contentionChanges lists the teams of one window state whose quota or
// outcome differs, flavor by flavor in the new side's order, teams by name.
func contentionChanges(when string, oldPlan, newPlan *plan.Agreement, before, after *contention.Report) []ContentionChange {
	type key struct{ flavor, team string }
	oldTeams, newTeams := byName(oldPlan), byName(newPlan)
	olds := map[key]*contention.Outcome{}
	for i := range before.Flavors {
		f := &before.Flavors[i]
		for j := range f.Teams {
			olds[key{f.Flavor, f.Teams[j].Team}] = &f.Teams[j]
		}
	}
	var out []ContentionChange
	add := func(flavor string, o, n *contention.Outcome) {
		name := ""
		c := ContentionChange{When: when, Flavor: flavor}
		if o != nil {
			name = o.Team
			c.Guaranteed.Old, c.Alone.Old, c.AllBusy.Old = &o.Guaranteed, &o.Alone, &o.AllBusy
		}
		if n != nil {
			name = n.Team
			c.Guaranteed.New, c.Alone.New, c.AllBusy.New = &n.Guaranteed, &n.Alone, &n.AllBusy
		}
		c.Team = name
		c.QuotaChanged = teamNumbers(oldTeams, name, flavor) != teamNumbers(newTeams, name, flavor)
		// A team whose quota changes is listed outside the windows
		// whatever its outcome; in a window state only where it moves.
		if (c.QuotaChanged && when == "") || c.Alone.Changed() || c.AllBusy.Changed() {
			out = append(out, c)
		}
	}
	for i := range after.Flavors {
		f := &after.Flavors[i]
		for j := range f.Teams {
			k := key{f.Flavor, f.Teams[j].Team}
			add(f.Flavor, olds[k], &f.Teams[j])
			delete(olds, k)
		}
	}
	for i := range before.Flavors {
		f := &before.Flavors[i]
		for j := range f.Teams {
			if o, ok := olds[key{f.Flavor, f.Teams[j].Team}]; ok {
				add(f.Flavor, o, nil)
			}
		}
	}
	return out
}

// teamNumbers is a team's guaranteed, lendable and borrow of a flavor,
// zero when absent; teams indexes a plan's teams by name (byName), so
// 10,000 teams are not 10,000 scans.
func teamNumbers(teams map[string]*plan.Team, team, flavor string) [3]int64 {
	if t := teams[team]; t != nil {
		q := t.Quota(flavor)
		return [3]int64{q.Guaranteed, q.Lendable, q.Borrow}
	}
	return [3]int64{}
}

func byName(p *plan.Agreement) map[string]*plan.Team {
	out := make(map[string]*plan.Team, len(p.Teams))
	for i := range p.Teams {
		out[p.Teams[i].Name] = &p.Teams[i]
	}
	return out
}

// contentionTable is the text and Markdown table: its header and rows
// (when, flavor, team, guaranteed, alone, all busy, and why the team is
// listed); the when column only when a lending window moves an outcome.
func contentionTable(s Summary) (header []string, rows []row) {
	windowed := false
	for _, c := range s.Contention {
		windowed = windowed || c.When != ""
	}
	header = []string{"", "FLAVOR", "TEAM", "GUARANTEED", "ALONE", "ALL BUSY", "WHY"}
	if windowed {
		header = slices.Insert(header, 1, "WHEN")
	}
	for _, c := range s.Contention {
		op := Changed
		switch {
		case c.Alone.Old == nil:
			op = Added
		case c.Alone.New == nil:
			op = Removed
		}
		why := "quota changed"
		if !c.QuotaChanged {
			why = "outcome only"
		}
		cells := []string{marker(op), c.Flavor, c.Team, c.Guaranteed.String(), c.Alone.String(), c.AllBusy.String(), why}
		if windowed {
			when := c.When
			if when == "" {
				when = "outside every window"
			}
			cells = slices.Insert(cells, 1, when)
		}
		rows = append(rows, row{op, cells})
	}
	return header, rows
}
