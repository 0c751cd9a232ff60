package diff

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// TestWindowLines: a window added, changed and removed, in words; none when
// no window changes.
func TestWindowLines(t *testing.T) {
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	night := plan.Window{Schedule: windows.Spec{Days: weekdays, From: 20 * 60, To: 6 * 60, Zone: "Europe/Berlin"}, Quotas: []plan.Quota{plantest.Quota("h100", 8, 6, 0)}}
	weekend := plan.Window{Schedule: windows.Spec{Days: []time.Weekday{time.Saturday, time.Sunday}, From: 0, To: 23*60 + 59, Zone: "Europe/Berlin"}, Quotas: []plan.Quota{plantest.Quota("h100", 8, 8, 2)}}
	team := func(ws ...plan.Window) *plan.Agreement {
		tm := plantest.Team("inference", plantest.Quota("h100", 8, 0, 0))
		tm.Windows = ws
		return &plan.Agreement{Name: "gpu-pool", Flavors: []plan.Flavor{plantest.H100(16)}, Teams: []plan.Team{tm}}
	}
	cases := map[string]struct {
		old, new *plan.Agreement
		want     []string
	}{
		"the issue's window is added": {team(), team(night), []string{
			"new window: inference lends 6 of its 8 h100 (outside: 0) from 20:00 to 06:00 Europe/Berlin on Mon-Fri",
		}},
		"a window is removed, another added": {team(night), team(weekend), []string{
			"no longer: inference lends 6 of its 8 h100 (outside: 0) from 20:00 to 06:00 Europe/Berlin on Mon-Fri",
			"new window: inference lends 8 of its 8 h100 (outside: 0) and may borrow 2 h100 (outside: 0) from 00:00 to 23:59 Europe/Berlin on Sat, Sun",
		}},
		"unchanged windows say nothing": {team(night), team(night), nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := summarize(tc.old, tc.new, nil, nil)
			if d := cmp.Diff(tc.want, s.Windows); d != "" {
				t.Errorf("window lines (-want,+got):\n%s", d)
			}
			if changed := s.changed(); changed != (tc.want != nil) {
				t.Errorf("changed() = %v", changed)
			}
		})
	}
}
