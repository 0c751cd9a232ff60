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

// clusterStatement computes one cluster's statement of the pool over two
// hours from each team's allocations per hour, its guarantee held, and
// research's utilisation: sum and count of device samples per hour.
func clusterStatement(t *testing.T, name string, from time.Time, alloc map[string][]float64, utilSum, utilCount float64) chargeback.ClusterStatement {
	t.Helper()
	step := time.Hour
	m := model(t, gpu.Kueue)
	cq := func(team string) map[string]string { return map[string]string{"cluster_queue": team, "flavor": "h100"} }
	q := func(k chargeback.Kind) chargeback.Query {
		return chargeback.Query{Kind: k, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	}
	var allocated, guaranteed []chargeback.Series
	for _, team := range m.Teams {
		allocated = append(allocated, gauge(cq(team.Name), from, step, alloc[team.Name]...))
		g := float64(team.Quotas["h100"].Guaranteed)
		guaranteed = append(guaranteed, gauge(cq(team.Name), from, step, g, g))
	}
	ns := map[string]string{"namespace": "research"}
	st, err := m.Compute([]chargeback.Result{
		{Query: q(chargeback.Allocated), Series: allocated},
		{Query: q(chargeback.Guaranteed), Series: guaranteed},
		{Query: chargeback.Query{Kind: chargeback.UtilSum, Flavor: "h100", TeamLabel: "namespace"}, Series: []chargeback.Series{gauge(ns, from, step, utilSum, utilSum)}},
		{Query: chargeback.Query{Kind: chargeback.UtilCount, Flavor: "h100", TeamLabel: "namespace"}, Series: []chargeback.Series{gauge(ns, from, step, utilCount, utilCount)}},
	}, from, from.Add(2*step), step)
	if err != nil {
		t.Fatal(err)
	}
	return chargeback.ClusterStatement{Cluster: name, Statement: st}
}

// TestSumFleet: in east every team uses its guarantee; in west training
// borrows 12 (4 unassigned, 8 lent by research, which uses 4 of its 12).
// The fleet's rows are the two clusters' summed, research's utilisation
// weighted by device samples (16 at 0.75 in east, 8 at 0.25 in west).
func TestSumFleet(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	east := clusterStatement(t, "east", from, map[string][]float64{"training": {12, 12}, "research": {12, 12}, "inference": {0, 0}}, 6, 8)
	west := clusterStatement(t, "west", from, map[string][]float64{"training": {24, 24}, "research": {4, 4}, "inference": {0, 0}}, 1, 4)
	fleet, err := chargeback.SumFleet([]chargeback.ClusterStatement{east, west})
	if err != nil {
		t.Fatal(err)
	}
	quarter, threeQuarters, weighted := 0.25, 0.75, 14.0/24
	wantWest := []chargeback.Row{
		{Team: "inference", Flavor: "h100", Guaranteed: 8, Idle: 8, Cost: 16},
		{Team: "research", Flavor: "h100", Guaranteed: 24, Allocated: 8, Idle: 16, Lent: 16, Utilization: &quarter, Cost: 48},
		{Team: "training", Flavor: "h100", Guaranteed: 24, Allocated: 48, Borrowed: 24, Cost: 96},
	}
	if d := cmp.Diff(wantWest, west.Rows, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("west's rows (-want,+got):\n%s", d)
	}
	want := []chargeback.Row{
		{Team: "inference", Flavor: "h100", Guaranteed: 16, Idle: 16, Cost: 32},
		{Team: "research", Flavor: "h100", Guaranteed: 48, Allocated: 32, Idle: 16, Lent: 16, Utilization: &weighted, Cost: 96},
		{Team: "training", Flavor: "h100", Guaranteed: 48, Allocated: 72, Borrowed: 24, Cost: 144},
	}
	if d := cmp.Diff(want, fleet.Rows, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("fleet's rows (-want,+got):\n%s", d)
	}
	wantTotal := chargeback.Row{Team: "total", Flavor: "*", Guaranteed: 112, Allocated: 104, Borrowed: 24, Idle: 32, Lent: 16, Utilization: &weighted, Cost: 272}
	if d := cmp.Diff(wantTotal, fleet.Total, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("fleet's total (-want,+got):\n%s", d)
	}
	if *east.Rows[1].Utilization != threeQuarters || fleet.Coverage != 1 || len(fleet.Clusters) != 2 || fleet.Pool != "pool" {
		t.Errorf("east's research utilisation %v, fleet coverage %v, %d clusters, pool %q; want 0.75, 1, 2, pool",
			*east.Rows[1].Utilization, fleet.Coverage, len(fleet.Clusters), fleet.Pool)
	}
}

func TestSumFleetRefusesDifferentRanges(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	alloc := map[string][]float64{"training": {1, 1}}
	east := clusterStatement(t, "east", from, alloc, 0, 0)
	west := clusterStatement(t, "west", from.Add(time.Hour), alloc, 0, 0)
	if _, err := chargeback.SumFleet([]chargeback.ClusterStatement{east, west}); err == nil || !strings.Contains(err.Error(), "cluster west") {
		t.Errorf("err = %v, want one naming cluster west", err)
	}
	if _, err := chargeback.SumFleet(nil); err == nil {
		t.Error("SumFleet of no clusters succeeded")
	}
}

// TestScope: a model with a Scope adds its matcher to every selector of
// every query, so one Prometheus answers for one cluster; without it the
// queries are those of a single cluster, unchanged.
func TestScope(t *testing.T) {
	for _, b := range []gpu.Backend{gpu.Kueue, gpu.KAI} {
		m := model(t, b)
		single := m.Sources()
		m.Scope = `cluster="east"`
		scoped := m.Sources()
		if len(scoped) != len(single) || len(single) == 0 {
			t.Fatalf("%s: %d scoped queries, %d unscoped", b, len(scoped), len(single))
		}
		for i, q := range scoped {
			if got, want := strings.Count(q.Expr, `, cluster="east"}`), strings.Count(single[i].Expr, "}"); got != want {
				t.Errorf("%s: %s: %d selectors scoped, want %d", b, q.Expr, got, want)
			}
			if got := strings.ReplaceAll(q.Expr, `, cluster="east"`, ""); got != single[i].Expr {
				t.Errorf("%s: scoped %s is not %s with the matcher", b, q.Expr, single[i].Expr)
			}
		}
	}
}
