package main

import (
	"fmt"
	"io"
	"time"

	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/schedule"
)

// explainWindows lists each team's lending windows in words, whether each is
// open at the instant, and the next edge. Nothing when no team has one.
func explainWindows(w io.Writer, p *plan.Agreement, at time.Time) {
	if !p.HasWindows() {
		return
	}
	s, err := schedule.At(p, at)
	if err != nil {
		fmt.Fprintf(w, "\nLending windows: %v\n", err)
		return
	}
	fmt.Fprintf(w, "\nLending windows (applied by the tenancy windows controller; at %s)\n", at.Format(time.RFC3339))
	for i := range p.Teams {
		t := &p.Teams[i]
		for j := range t.Windows {
			win := &t.Windows[j]
			state := "closed"
			if s.IsOpen(t.Name, j) {
				state = "open"
			}
			fmt.Fprintf(w, "  %s, window %d (%s): %s\n", t.Name, j, win.Schedule.Describe(), state)
			for _, q := range win.Quotas {
				out := t.Quota(q.Flavor)
				if q.Lendable == out.Lendable && q.Borrow == out.Borrow {
					continue
				}
				fmt.Fprintf(w, "    %s: %s\n", q.Flavor, windowChange(t.Name, out, q))
			}
		}
	}
	if !s.NextEdge.IsZero() {
		fmt.Fprintf(w, "  next edge: %s (in %s)\n", s.NextEdge.Format(time.RFC3339), s.NextEdge.Sub(at).Round(time.Second))
	}
}

// windowChange says what a window changes of a team's quota of one flavor:
// "lends 6 of its 8 (outside: 0), may borrow 2 (outside: 0)".
func windowChange(team string, out, in plan.Quota) string {
	var parts []string
	if in.Lendable != out.Lendable {
		parts = append(parts, fmt.Sprintf("lends %d of its %d (outside: %d)", in.Lendable, in.Guaranteed, out.Lendable))
	}
	if in.Borrow != out.Borrow {
		parts = append(parts, fmt.Sprintf("may borrow %d (outside: %d)", in.Borrow, out.Borrow))
	}
	s := team + " " + parts[0]
	for _, p := range parts[1:] {
		s += ", " + p
	}
	return s
}
