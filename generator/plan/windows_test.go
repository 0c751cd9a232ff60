package plan_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// TestBuildWindows: a window's schedule parsed and defaulted (every day,
// UTC), its quota spelled out per flavor with the team's values where it
// writes none.
func TestBuildWindows(t *testing.T) {
	src := twoFlavors + `[teams.inference.flavors.h100]
guaranteed = 8
borrow = 2
[teams.inference.flavors.a100]
guaranteed = 4
lendable = 1
[[teams.inference.windows]]
days = ["Fri", "Mon"]
from = "20:00"
to = "06:00"
timezone = "Europe/Berlin"
[teams.inference.windows.flavors.h100]
lendable = 6
[[teams.inference.windows]]
from = "12:00"
to = "13:00"
[teams.inference.windows.flavors.a100]
borrow = 3
[teams.research.flavors.h100]
guaranteed = 8
`
	p := plan.Build(sourcetest.Decode(t, src))
	if !p.HasWindows() {
		t.Fatal("HasWindows = false")
	}
	got := p.Teams[0].Windows
	want := []plan.Window{
		{
			Schedule: windows.Spec{Days: []time.Weekday{time.Monday, time.Friday}, From: 20 * 60, To: 6 * 60, Zone: "Europe/Berlin"},
			Quotas:   []plan.Quota{{Flavor: "h100", Guaranteed: 8, Lendable: 6, Borrow: 2}, {Flavor: "a100", Guaranteed: 4, Lendable: 1}},
		},
		{
			Schedule: windows.Spec{Days: windows.EveryDay, From: 12 * 60, To: 13 * 60, Zone: "UTC"},
			Quotas:   []plan.Quota{{Flavor: "h100", Guaranteed: 8, Borrow: 2}, {Flavor: "a100", Guaranteed: 4, Lendable: 1, Borrow: 3}},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreTypes(diag.Origin{}, plan.QuotaOrigin{})); diff != "" {
		t.Errorf("windows (-want,+got):\n%s", diff)
	}
	if o := got[0].Quotas[0].Origin.Lendable; o.Pos.Line != 19 {
		t.Errorf("the window's lendable is at line %d, want 19", o.Pos.Line)
	}
	if len(p.Teams[1].Windows) != 0 {
		t.Errorf("research has windows: %v", p.Teams[1].Windows)
	}
}
