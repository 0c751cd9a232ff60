package chargeback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// TestDepartmentRows: each team row names its department, and a row per
// department sums its teams' rows; a team without a department is in none.
func TestDepartmentRows(t *testing.T) {
	src := `version = 1
name = "pool"
[flavors.h100]
capacity = 32
[departments.science]
guaranteed = 20
lendable = 4
[teams.genomics]
department = "science"
guaranteed = 8
lendable = 4
[teams.physics]
department = "science"
guaranteed = 8
lendable = 8
[teams.ops]
guaranteed = 4
[monitoring]
enabled = true
[monitoring.prices]
h100 = 1.0
`
	m := modelOf(t, src, gpu.Kueue)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Hour
	cq := func(team string) map[string]string { return map[string]string{"cluster_queue": team, "flavor": "h100"} }
	q := func(k chargeback.Kind) chargeback.Query {
		return chargeback.Query{Kind: k, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	}
	results := []chargeback.Result{
		{Query: q(chargeback.Allocated), Series: []chargeback.Series{
			gauge(cq("genomics"), from, step, 10, 10), gauge(cq("physics"), from, step, 2, 2), gauge(cq("ops"), from, step, 4, 4),
		}},
		{Query: q(chargeback.Guaranteed), Series: []chargeback.Series{
			gauge(cq("genomics"), from, step, 8, 8), gauge(cq("physics"), from, step, 8, 8), gauge(cq("ops"), from, step, 4, 4),
		}},
	}
	st, err := m.Compute(results, from, from.Add(2*step), step)
	if err != nil {
		t.Fatal(err)
	}
	depts := map[string]string{}
	for _, r := range st.Rows {
		depts[r.Team] = r.Department
	}
	if d := cmp.Diff(map[string]string{"genomics": "science", "physics": "science", "ops": ""}, depts); d != "" {
		t.Errorf("rows' departments (-want,+got):\n%s", d)
	}
	want := []chargeback.Row{{Team: "*", Department: "science", Flavor: "h100", Guaranteed: 32, Allocated: 24, Borrowed: 4, Idle: 12, Cost: 36}}
	if d := cmp.Diff(want, st.Departments, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("department rows (-want,+got):\n%s", d)
	}
	if !st.HasDepartments() {
		t.Error("HasDepartments: false")
	}
	// Kueue's metrics name the ClusterQueue's own Cohort: the department's.
	if expr := m.Sources()[0].Expr; !strings.Contains(expr, "cohort=~`pool|science`") {
		t.Errorf("Kueue source %s does not select the department's Cohort", expr)
	}
}
