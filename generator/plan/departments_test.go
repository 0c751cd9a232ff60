package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// twoFlavors is the pool both planning tests start from: 32 H100s and 8
// A100s, in that order of preference.
const twoFlavors = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 8
`

// TestBuildDepartments: departments sorted, each with its quota for every
// flavor, its weight's default, its teams; teams know their department.
func TestBuildDepartments(t *testing.T) {
	src := twoFlavors + `[departments.science.flavors.h100]
guaranteed = 20
lendable = 4
borrow = 6
[departments.arts]
weight = 3
[teams.physics]
department = "science"
[teams.physics.flavors.h100]
guaranteed = 8
[teams.genomics]
department = "science"
[teams.ops.flavors.a100]
guaranteed = 2
`
	p := plan.Build(sourcetest.Decode(t, src))
	want := []plan.Department{
		{Name: "arts", Weight: 3, Quotas: []plan.Quota{{Flavor: "h100"}, {Flavor: "a100"}},
			Origin: diag.Origin{Pos: diag.Pos{Line: 11, Column: 14}}, WeightOrigin: diag.Origin{Pos: diag.Pos{Line: 12, Column: 10}}},
		{Name: "science", Weight: 1, Teams: []string{"genomics", "physics"},
			Quotas: []plan.Quota{{Flavor: "h100", Guaranteed: 20, Lendable: 4, Borrow: 6, Origin: plan.QuotaOrigin{
				Guaranteed: diag.Origin{Pos: diag.Pos{Line: 8, Column: 14}},
				Lendable:   diag.Origin{Pos: diag.Pos{Line: 9, Column: 12}},
				Borrow:     diag.Origin{Pos: diag.Pos{Line: 10, Column: 10}},
			}}, {Flavor: "a100"}},
			Origin: diag.Origin{Pos: diag.Pos{Line: 7, Column: 14}}},
	}
	ignorePaths := cmpopts.IgnoreFields(diag.Origin{}, "Path")
	if d := cmp.Diff(want, p.Departments, ignorePaths); d != "" {
		t.Errorf("departments (-want,+got):\n%s", d)
	}
	got := map[string]string{}
	for _, team := range p.Teams {
		got[team.Name] = team.Department
	}
	if d := cmp.Diff(map[string]string{"genomics": "science", "ops": "", "physics": "science"}, got); d != "" {
		t.Errorf("teams' departments (-want,+got):\n%s", d)
	}
	if s := p.Surplus(p.Department("science"), "h100"); s != 12 {
		t.Errorf("surplus of science in h100: %d, want 12", s)
	}
	if o := p.Departments[1].Quotas[0].Origin.Guaranteed.Path.String(); o != "departments.science.flavors.h100.guaranteed" {
		t.Errorf("origin path %s", o)
	}
}
