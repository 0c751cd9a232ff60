package chargeback_test

import (
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// TestComputeLendingWindows: the GPUs research borrows from inference are
// charged to inference as lent only in the hours inside inference's window
// (its lendable is 0 outside, 6 inside).
func TestComputeLendingWindows(t *testing.T) {
	const src = `version = 1
name = "pool"
[flavors.h100]
capacity = 16
[teams.inference]
guaranteed = 8
[[teams.inference.windows]]
from = "20:00"
to = "22:00"
lendable = 6
[teams.research]
guaranteed = 8
borrow = 6
`
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := chargeback.NewModel(p, gpu.Kueue)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	step := time.Hour
	to := from.Add(5 * step) // 18:00 to 23:00; the window is 20:00-22:00
	q := func(k chargeback.Kind) chargeback.Query {
		return chargeback.Query{Kind: k, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	}
	cq := func(team string) map[string]string { return map[string]string{"cluster_queue": team, "flavor": "h100"} }
	results := []chargeback.Result{
		{Query: q(chargeback.Allocated), Series: []chargeback.Series{
			gauge(cq("research"), from, step, 14, 14, 14, 14, 14),
			gauge(cq("inference"), from, step, 0, 0, 0, 0, 0),
		}},
		{Query: q(chargeback.Guaranteed), Series: []chargeback.Series{
			gauge(cq("research"), from, step, 8, 8, 8, 8, 8),
			gauge(cq("inference"), from, step, 8, 8, 8, 8, 8),
		}},
	}
	st, err := m.Compute(results, from, to, step)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Rows {
		if r.Team == "inference" && r.Lent != 12 {
			t.Errorf("inference lent %v GPU-hours, want 12 (6 in each of the window's two hours)", r.Lent)
		}
		if r.Team == "research" && r.Borrowed != 30 {
			t.Errorf("research borrowed %v GPU-hours, want 30", r.Borrowed)
		}
	}
}
