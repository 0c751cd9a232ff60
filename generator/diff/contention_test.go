package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// TestContentionChanges: the teams a change touches, and those whose
// numbers in the file stay but whose outcome moves, each in the window
// state where it moves.
func TestContentionChanges(t *testing.T) {
	night := plan.Window{Schedule: windows.Spec{Days: windows.EveryDay, From: 20 * 60, To: 6 * 60, Zone: "UTC"},
		Quotas: []plan.Quota{plantest.Quota("h100", 8, 8, 0)}}
	// inference guarantees 8 of 24 and lends them at night; research (8,
	// lends 8, may borrow 8) takes them alone.
	pool := func(teams ...plan.Team) *generator.Result {
		inference := plantest.Team("inference", plantest.Quota("h100", 8, 0, 0))
		inference.Windows = []plan.Window{night}
		research := plantest.Team("research", plantest.Quota("h100", 8, 8, 8))
		p := plantest.Pool([]plan.Flavor{plantest.H100(24)}, append([]plan.Team{inference, research}, teams...)...)
		return &generator.Result{Plan: p, Backend: generator.Kueue}
	}
	type line struct {
		when, team, alone, allBusy string
		quota                      bool
	}
	cases := map[string]struct {
		old, new *generator.Result
		want     []line
	}{
		// A new team, training (8, lends 0, may borrow 8): alone it takes
		// research's 8 (16) at any hour; all busy, nobody lends. At
		// night inference's 8 are there too, but its borrow caps it at 16.
		"a new team that borrows": {
			old: pool(), new: pool(plantest.Team("training", plantest.Quota("h100", 8, 0, 8))),
			want: []line{{"", "training", "– → 16", "– → 8", true}},
		},
		// training lends 4 of its 8 instead of 8: research, untouched in
		// the file, alone now borrows 4 where it borrowed 8 outside the
		// window (16 → 12); at night inference's 8 still fill its borrow.
		"a lendable cut elsewhere": {
			old: pool(plantest.Team("training", plantest.Quota("h100", 8, 8, 0))), new: pool(plantest.Team("training", plantest.Quota("h100", 8, 4, 0))),
			want: []line{
				{"", "research", "16 → 12", "8", false},
				{"", "training", "8", "8", true},
			},
		},
		"nothing changes": {old: pool(), new: pool()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := compareContention(tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			var lines []line
			for _, c := range got {
				lines = append(lines, line{c.When, c.Team, c.Alone.String(), c.AllBusy.String(), c.QuotaChanged})
			}
			if d := cmp.Diff(tc.want, lines, cmp.AllowUnexported(line{})); d != "" {
				t.Errorf("(-want,+got)\n%s", d)
			}
			for _, c := range got {
				if want := c.Team == "research"; c.Less() != want {
					t.Errorf("%s: Less() = %v, want %v", c.Team, c.Less(), want)
				}
			}
		})
	}
}
