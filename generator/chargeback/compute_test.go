package chargeback_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

const pool = `version = 1
name = "pool"
[flavors.h100]
capacity = 32
[teams.training]
guaranteed = 12
lendable = 4
borrow = 12
[teams.research]
namespaces = ["research", "notebooks"]
guaranteed = 12
lendable = 12
[teams.inference]
guaranteed = 4
[monitoring]
enabled = true
[monitoring.prices]
h100 = 2.0
`

func model(t *testing.T, b gpu.Backend) *chargeback.Model {
	t.Helper()
	return modelOf(t, pool, b)
}

// modelOf checks src, which must be valid, and builds the chargeback model
// of its plan for b.
func modelOf(t *testing.T, src string, b gpu.Backend) *chargeback.Model {
	t.Helper()
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := chargeback.NewModel(p, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gauge is a series holding v at every step of [from, from+n*step).
func gauge(labels map[string]string, from time.Time, step time.Duration, vals ...float64) chargeback.Series {
	s := chargeback.Series{Labels: labels}
	for i, v := range vals {
		s.Points = append(s.Points, chargeback.Point{T: from.Add(time.Duration(i) * step), V: v})
	}
	return s
}

func TestCompute(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Hour
	to := from.Add(4 * step)
	m := model(t, gpu.Kueue)
	q := func(k chargeback.Kind) chargeback.Query {
		return chargeback.Query{Kind: k, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	}
	cq := func(team string) map[string]string { return map[string]string{"cluster_queue": team, "flavor": "h100"} }
	// Four hours: research uses its 12 in the first two and nothing after;
	// training uses 12, then 24 once research is idle (4 from the
	// unassigned capacity, 8 lent by research); the third hour has no
	// scheduler data at all (a gap); inference idles.
	results := []chargeback.Result{
		{Query: q(chargeback.Allocated), Series: []chargeback.Series{
			gauge(cq("training"), from, step, 12, 12),
			{Labels: cq("training"), Points: []chargeback.Point{{T: from.Add(3 * step), V: 24}}},
			gauge(cq("research"), from, step, 12, 12),
			{Labels: cq("research"), Points: []chargeback.Point{{T: from.Add(3 * step), V: 0}}},
			gauge(cq("inference"), from, step, 0, 0),
			{Labels: cq("inference"), Points: []chargeback.Point{{T: from.Add(3 * step), V: 0}}},
		}},
		{Query: q(chargeback.Guaranteed), Series: []chargeback.Series{
			gauge(cq("training"), from, step, 12, 12, 12, 12),
			gauge(cq("research"), from, step, 12, 12, 12, 12),
			gauge(cq("inference"), from, step, 4, 4, 4, 4),
		}},
		{Query: chargeback.Query{Kind: chargeback.UtilSum, Flavor: "h100", TeamLabel: "namespace"}, Series: []chargeback.Series{
			gauge(map[string]string{"namespace": "research"}, from, step, 6, 6),
			gauge(map[string]string{"namespace": "notebooks"}, from, step, 0, 0),
			gauge(map[string]string{"namespace": "elsewhere"}, from, step, 9, 9),
		}},
		{Query: chargeback.Query{Kind: chargeback.UtilCount, Flavor: "h100", TeamLabel: "namespace"}, Series: []chargeback.Series{
			gauge(map[string]string{"namespace": "research"}, from, step, 8, 8),
			gauge(map[string]string{"namespace": "notebooks"}, from, step, 4, 4),
			gauge(map[string]string{"namespace": "elsewhere"}, from, step, 9, 9),
		}},
	}
	got, err := m.Compute(results, from, to, step)
	if err != nil {
		t.Fatal(err)
	}
	half := 0.5
	want := []chargeback.Row{
		{Team: "inference", Flavor: "h100", Guaranteed: 12, Idle: 12, Cost: 24},
		{Team: "research", Flavor: "h100", Guaranteed: 36, Allocated: 24, Idle: 12, Lent: 8, Utilization: &half, Cost: 72},
		{Team: "training", Flavor: "h100", Guaranteed: 36, Allocated: 48, Borrowed: 12, Cost: 96},
	}
	if diff := cmp.Diff(want, got.Rows, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("rows (-want,+got):\n%s", diff)
	}
	if got.Coverage != 0.75 {
		t.Errorf("coverage %v, want 0.75 (one hour of four without data)", got.Coverage)
	}
	if got.Total.Cost != 192 || got.Total.Lent != 8 {
		t.Errorf("totals: cost %v lent %v, want 192 and 8", got.Total.Cost, got.Total.Lent)
	}
}

func TestComputeErrors(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Hour
	m := model(t, gpu.Kueue)
	alloc := chargeback.Query{Kind: chargeback.Allocated, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	var unknown *chargeback.UnknownTeamError
	_, err := m.Compute([]chargeback.Result{{Query: alloc, Series: []chargeback.Series{
		gauge(map[string]string{"cluster_queue": "ghosts", "flavor": "h100"}, from, step, 1)}}}, from, from.Add(step), step)
	if !errors.As(err, &unknown) || unknown.Team != "ghosts" {
		t.Errorf("unknown team: got %v, want an UnknownTeamError for ghosts", err)
	}
	if _, err := m.Compute([]chargeback.Result{{Query: alloc}}, from, from.Add(step), step); !errors.Is(err, chargeback.ErrNoSeries) {
		t.Errorf("no series: got %v, want ErrNoSeries", err)
	}
}

func TestKAIModelCountsAcrossFlavors(t *testing.T) {
	m := model(t, gpu.KAI)
	if len(m.Flavors) != 1 || m.Flavors[0].Name != "h100" || m.Flavors[0].Unassigned != 4 {
		t.Errorf("KAI model flavors %+v, want h100 with 4 unassigned", m.Flavors)
	}
}
