package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// TestPriorities: a change of priorities lists them all with which backend
// lets their work borrow; no change lists none.
func TestPriorities(t *testing.T) {
	withPriorities := func(prs ...plan.Priority) *plan.Agreement {
		return &plan.Agreement{Name: "gpu-pool", Priorities: prs}
	}
	critical := plan.Priority{Name: "critical", Value: 1000, Preemptible: true}
	fixed := plan.Priority{Name: "critical", Value: 1000}
	scavenger := plan.Priority{Name: "scavenger", Value: 10, Preemptible: true}
	tests := map[string]struct {
		old, new *plan.Agreement
		want     [][]string
	}{
		"unchanged: nothing listed": {
			old: withPriorities(critical, scavenger), new: withPriorities(critical, scavenger),
		},
		"critical made non-preemptible: it no longer borrows under KAI, and keeps its value there": {
			old: withPriorities(critical, scavenger), new: withPriorities(fixed, scavenger),
			want: [][]string{
				{"~", "critical", "1000", "yes → no", "yes", "yes → no", "99 → 1000"},
				{" ", "scavenger", "10", "yes", "yes", "yes", "98 → 10"},
			},
		},
		"a priority added": {
			old: withPriorities(scavenger), new: withPriorities(critical, scavenger),
			want: [][]string{
				{"+", "critical", "1000", "yes", "yes", "yes", "99"},
				{" ", "scavenger", "10", "yes", "yes", "yes", "10 → 98"},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := summarize(tc.old, tc.new, nil, nil)
			var got [][]string
			for _, r := range priorityRows(s) {
				got = append(got, r.cells)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("priority rows (-want,+got):\n%s", diff)
			}
			if changed := len(tc.want) > 0; s.changed() != changed {
				t.Errorf("changed() = %v, want %v", s.changed(), changed)
			}
			text := string(Text(&Report{Summary: s, Changed: s.changed()}, false))
			if strings.Contains(text, "MAY BORROW (KAI)") != (len(tc.want) > 0) {
				t.Errorf("text output shows the priorities table when it should not, or the reverse:\n%s", text)
			}
		})
	}
}
