package diff

import (
	"fmt"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// windowSentences says what a window of team t does, per flavor it changes:
// "inference lends 6 of its 8 h100 from 20:00 to 06:00 Europe/Berlin on
// Mon-Fri (outside: 0)".
func windowSentences(t *plan.Team, w *plan.Window) []string {
	var out []string
	when := "from " + w.Schedule.Describe()
	for _, q := range w.Quotas {
		outside := t.Quota(q.Flavor)
		var parts []string
		if q.Lendable != outside.Lendable {
			parts = append(parts, fmt.Sprintf("lends %d of its %d %s (outside: %d)", q.Lendable, q.Guaranteed, q.Flavor, outside.Lendable))
		}
		if q.Borrow != outside.Borrow {
			parts = append(parts, fmt.Sprintf("may borrow %d %s (outside: %d)", q.Borrow, q.Flavor, outside.Borrow))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s %s %s", t.Name, strings.Join(parts, " and "), when))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%s has a window %s that changes nothing", t.Name, when))
	}
	return out
}

func teamWindows(a *plan.Agreement) map[string][]string {
	out := map[string][]string{}
	for i := range a.Teams {
		t := &a.Teams[i]
		for j := range t.Windows {
			out[t.Name] = append(out[t.Name], windowSentences(t, &t.Windows[j])...)
		}
	}
	return out
}

// compareWindows says in words which lending windows a change adds and
// removes (a changed window is one removed and one added), team by team in
// the new side's order; nil when no window changes, so reports of
// agreements without windows are unchanged.
func compareWindows(old, new *plan.Agreement) []string {
	o, n := teamWindows(old), teamWindows(new)
	var names []string
	seen := map[string]bool{}
	for _, a := range []*plan.Agreement{new, old} {
		for _, t := range a.Teams {
			if !seen[t.Name] {
				seen[t.Name] = true
				names = append(names, t.Name)
			}
		}
	}
	var out []string
	for _, name := range names {
		before := map[string]bool{}
		for _, s := range o[name] {
			before[s] = true
		}
		after := map[string]bool{}
		for _, s := range n[name] {
			after[s] = true
		}
		for _, s := range o[name] {
			if !after[s] {
				out = append(out, "no longer: "+s)
			}
		}
		for _, s := range n[name] {
			if !before[s] {
				out = append(out, "new window: "+s)
			}
		}
	}
	return out
}
