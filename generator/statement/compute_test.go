package statement_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/statement"
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

func model(t *testing.T, b statement.Backend) *statement.Model {
	t.Helper()
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(pool)})
	if err != nil {
		t.Fatal(err)
	}
	m, err := statement.NewModel(p, b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gauge is a series holding v at every step of [from, from+n*step).
func gauge(labels map[string]string, from time.Time, step time.Duration, vals ...float64) statement.Series {
	s := statement.Series{Labels: labels}
	for i, v := range vals {
		s.Points = append(s.Points, statement.Point{T: from.Add(time.Duration(i) * step), V: v})
	}
	return s
}

func TestCompute(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Hour
	to := from.Add(4 * step)
	m := model(t, statement.Kueue)
	q := func(k statement.Kind) statement.Query {
		return statement.Query{Kind: k, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	}
	cq := func(team string) map[string]string { return map[string]string{"cluster_queue": team, "flavor": "h100"} }
	// Four hours: research uses its 12 in the first two and nothing after;
	// training uses 12, then 24 once research is idle (4 from the
	// unassigned capacity, 8 lent by research); the third hour has no
	// scheduler data at all (a gap); inference idles.
	results := []statement.Result{
		{Query: q(statement.Allocated), Series: []statement.Series{
			gauge(cq("training"), from, step, 12, 12),
			{Labels: cq("training"), Points: []statement.Point{{T: from.Add(3 * step), V: 24}}},
			gauge(cq("research"), from, step, 12, 12),
			{Labels: cq("research"), Points: []statement.Point{{T: from.Add(3 * step), V: 0}}},
			gauge(cq("inference"), from, step, 0, 0),
			{Labels: cq("inference"), Points: []statement.Point{{T: from.Add(3 * step), V: 0}}},
		}},
		{Query: q(statement.Guaranteed), Series: []statement.Series{
			gauge(cq("training"), from, step, 12, 12, 12, 12),
			gauge(cq("research"), from, step, 12, 12, 12, 12),
			gauge(cq("inference"), from, step, 4, 4, 4, 4),
		}},
		{Query: statement.Query{Kind: statement.UtilSum, Flavor: "h100", TeamLabel: "namespace"}, Series: []statement.Series{
			gauge(map[string]string{"namespace": "research"}, from, step, 6, 6),
			gauge(map[string]string{"namespace": "notebooks"}, from, step, 0, 0),
			gauge(map[string]string{"namespace": "elsewhere"}, from, step, 9, 9),
		}},
		{Query: statement.Query{Kind: statement.UtilCount, Flavor: "h100", TeamLabel: "namespace"}, Series: []statement.Series{
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
	want := []statement.Row{
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
	m := model(t, statement.Kueue)
	alloc := statement.Query{Kind: statement.Allocated, TeamLabel: "cluster_queue", FlavorLabel: "flavor"}
	var unknown *statement.UnknownTeamError
	_, err := m.Compute([]statement.Result{{Query: alloc, Series: []statement.Series{
		gauge(map[string]string{"cluster_queue": "ghosts", "flavor": "h100"}, from, step, 1)}}}, from, from.Add(step), step)
	if !errors.As(err, &unknown) || unknown.Team != "ghosts" {
		t.Errorf("unknown team: got %v, want an UnknownTeamError for ghosts", err)
	}
	if _, err := m.Compute([]statement.Result{{Query: alloc}}, from, from.Add(step), step); !errors.Is(err, statement.ErrNoSeries) {
		t.Errorf("no series: got %v, want ErrNoSeries", err)
	}
}

func TestKAIModelCountsAcrossFlavors(t *testing.T) {
	m := model(t, statement.KAI)
	if len(m.Flavors) != 1 || m.Flavors[0].Name != "h100" || m.Flavors[0].Unassigned != 4 {
		t.Errorf("KAI model flavors %+v, want h100 with 4 unassigned", m.Flavors)
	}
}
