package diff

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// TestDepartmentLines: a department added, removed or changed, and a team
// moving between departments or to the pool, each said in its own words.
func TestDepartmentLines(t *testing.T) {
	pool := func(depts []plan.Department, teams ...plan.Team) *plan.Agreement {
		return &plan.Agreement{Name: "gpu-pool", Flavors: []plan.Flavor{plantest.H100(64)}, Teams: teams, Departments: depts}
	}
	in := func(tm plan.Team, d string) plan.Team { tm.Department = d; return tm }
	a := plantest.Team("a", plantest.Quota("h100", 8, 0, 0))
	b := plantest.Team("b", plantest.Quota("h100", 8, 0, 0))
	science := plan.Department{Name: "science", Weight: 1, Quotas: []plan.Quota{plantest.Quota("h100", 20, 4, 4)}}
	arts := plan.Department{Name: "arts", Weight: 1, Quotas: []plan.Quota{plantest.Quota("h100", 8, 0, 0)}}
	science2 := science
	science2.Quotas = []plan.Quota{plantest.Quota("h100", 24, 4, 0)}

	old := pool([]plan.Department{science}, in(a, "science"), in(b, "science"))
	new := pool([]plan.Department{arts, science2}, in(a, "arts"), b)
	s := summarize(old, new, nil, nil)
	want := []string{
		"department arts is added: h100 guaranteed 8 (surplus 0 over its teams), lendable 0, borrow 0; weight 1",
		"department science changes: h100 guaranteed 20 → 24, surplus over its teams 4 → 24, borrow for all its teams 4 → 0",
		"team a moves from department science to department arts: its guarantee now counts against arts's, and it borrows arts's surplus first",
		"team b leaves department science for the pool: its guarantee counts against the pool's capacity directly, and the department's surplus and borrow no longer apply to it",
	}
	if d := cmp.Diff(want, departmentLines(s)); d != "" {
		t.Errorf("lines (-want,+got):\n%s", d)
	}
	if !s.changed() {
		t.Error("a change of departments only is not a change")
	}

	s = summarize(new, pool(nil, a, b), nil, nil)
	want = []string{
		"department arts is removed (it had h100 guaranteed 8 (surplus 0 over its teams), lendable 0, borrow 0): its Kueue Cohort and KAI queue are deleted",
		"department science is removed (it had h100 guaranteed 24 (surplus 24 over its teams), lendable 4, borrow 0): its Kueue Cohort and KAI queue are deleted",
		"team a leaves department arts for the pool: its guarantee counts against the pool's capacity directly, and the department's surplus and borrow no longer apply to it",
	}
	if d := cmp.Diff(want, departmentLines(s)); d != "" {
		t.Errorf("lines (-want,+got):\n%s", d)
	}

	if s := summarize(pool(nil, a), pool(nil, a), nil, nil); s.Departments != nil || s.Moves != nil {
		t.Errorf("without departments: %+v, %+v; want nothing", s.Departments, s.Moves)
	}
}

// TestTeamsTableDepartments: with departments on either side the teams
// table names each team's department and that department's surplus of the
// flavor, before → after; without, it keeps its columns.
func TestTeamsTableDepartments(t *testing.T) {
	pool := func(depts []plan.Department, teams ...plan.Team) *plan.Agreement {
		return &plan.Agreement{Name: "gpu-pool", Flavors: []plan.Flavor{plantest.H100(64)}, Teams: teams, Departments: depts}
	}
	in := func(tm plan.Team, d string) plan.Team { tm.Department = d; return tm }
	a := plantest.Team("a", plantest.Quota("h100", 8, 0, 0))
	b := plantest.Team("b", plantest.Quota("h100", 8, 0, 0))
	c := plantest.Team("c", plantest.Quota("h100", 4, 0, 0))
	science := plan.Department{Name: "science", Weight: 1, Quotas: []plan.Quota{plantest.Quota("h100", 20, 0, 0)}}
	science2 := science
	science2.Quotas = []plan.Quota{plantest.Quota("h100", 24, 0, 0)}
	arts := plan.Department{Name: "arts", Weight: 1, Quotas: []plan.Quota{plantest.Quota("h100", 8, 0, 0)}}

	s := summarize(pool([]plan.Department{science}, in(a, "science"), in(b, "science"), c),
		pool([]plan.Department{arts, science2}, in(a, "arts"), in(b, "science"), c), nil, nil)
	if d := cmp.Diff([]string{"", "Team", "Department", "Flavor", "Guaranteed", "Lendable", "Borrow", "Dept surplus", "Weight", "Reclaim"}, teamColumns(s)); d != "" {
		t.Errorf("columns (-want,+got):\n%s", d)
	}
	var got [][]string
	for _, r := range teamRows(s) {
		got = append(got, append([]string{string(r.op)}, r.cells...))
	}
	want := [][]string{
		// a moves: science's surplus was 20-16, arts's is 8-8.
		{"changed", "~", "a", "science → arts", "h100", "8", "0", "0", "4 → 0", "1", "preempt"},
		// b stays: science grows to 24 and loses a, so its surplus is 16.
		{"changed", "~", "b", "science", "h100", "8", "0", "0", "4 → 16", "1", "preempt"},
		{"unchanged", " ", "c", "–", "h100", "4", "0", "0", "–", "1", "preempt"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want,+got):\n%s", d)
	}
	md := string(Markdown(&Report{Old: "old", New: "new", Changed: true, Summary: s, Objects: []ObjectChange{}}, 0))
	for _, line := range []string{
		"| | Team | Department | Flavor | Guaranteed | Lendable | Borrow | Dept surplus | Weight | Reclaim |\n|:-:|---|---|---|--:|--:|--:|--:|--:|---|\n",
		"| ~ changed | a | science → arts | h100 | 8 | 0 | 0 | **4 → 0** | 1 | preempt |\n",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("Markdown lacks %q:\n%s", line, md)
		}
	}

	s = summarize(pool(nil, a), pool(nil, a), nil, nil)
	if d := cmp.Diff([]string{"", "Team", "Flavor", "Guaranteed", "Lendable", "Borrow", "Weight", "Reclaim"}, teamColumns(s)); d != "" {
		t.Errorf("columns without departments (-want,+got):\n%s", d)
	}
	if s.Teams[0].Department.Changed() || s.Teams[0].Quotas[0].DepartmentSurplus.Changed() {
		t.Errorf("a team without department on either side: %+v", s.Teams[0])
	}
}
