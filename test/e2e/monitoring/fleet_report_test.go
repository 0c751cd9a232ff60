package monitoring_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"
)

// The fleet's scenario: examples/fleet for one day from Monday 2026-11-02,
// scraped every 2 minutes, one Prometheus holding every cluster's series
// with the cluster's name in the label cluster (as Thanos or federation
// with external labels would). In east, training uses its 16 by day; at
// night it uses 8 and research borrows the other 8 there. In west,
// research uses its 8 by day and none at night; inference uses its 8 all
// day. The manager hub reports the fleet-wide ClusterQueues, its usage the
// workers' summed: a report that counted it would charge every GPU-hour
// twice.
var (
	fleetStart = weekStart
	fleetEnd   = weekStart.Add(24 * time.Hour)
)

// fleetAllocation is each team's allocated GPUs in cluster at t.
func fleetAllocation(cluster string, t time.Time) map[string]float64 {
	day := daytime(t)
	switch cluster {
	case "east":
		if day {
			return map[string]float64{"training": 16, "research": 0, "inference": 0}
		}
		return map[string]float64{"training": 8, "research": 8, "inference": 0}
	case "west":
		if day {
			return map[string]float64{"training": 0, "research": 8, "inference": 8}
		}
		return map[string]float64{"training": 0, "research": 0, "inference": 8}
	}
	east, west := fleetAllocation("east", t), fleetAllocation("west", t)
	return map[string]float64{"training": east["training"] + west["training"], "research": east["research"] + west["research"], "inference": east["inference"] + west["inference"]}
}

// fleetGuarantee is each team's guarantee per cluster, as examples/fleet
// splits it (the manager's are the fleet-wide numbers).
var fleetGuarantee = map[string]map[string]float64{
	"hub":  {"training": 16, "research": 8, "inference": 8},
	"east": {"training": 16, "research": 0, "inference": 0},
	"west": {"training": 0, "research": 8, "inference": 8},
}

// fleetWant is the fleet's statement: 12 day hours and 12 night hours.
// East: training idles 8 at night, lent to research, which borrows them
// (east has no capacity no team is guaranteed). West: research idles 8 at
// night, which no one borrows. examples/fleet has no prices: cost 0.
var fleetWant = map[string]map[string]float64{
	"training":  {"guaranteed_gpu_hours": 384, "allocated_gpu_hours": 288, "borrowed_gpu_hours": 0, "idle_gpu_hours": 96, "lent_gpu_hours": 96, "cost": 0},
	"research":  {"guaranteed_gpu_hours": 192, "allocated_gpu_hours": 192, "borrowed_gpu_hours": 96, "idle_gpu_hours": 96, "lent_gpu_hours": 0, "cost": 0},
	"inference": {"guaranteed_gpu_hours": 192, "allocated_gpu_hours": 192, "borrowed_gpu_hours": 0, "idle_gpu_hours": 0, "lent_gpu_hours": 0, "cost": 0},
}

// writeFleetScenario writes the day as OpenMetrics, every cluster's series
// of a family together, both backends' metrics side by side.
func writeFleetScenario(t *testing.T, path string) {
	t.Helper()
	writeOpenMetrics(t, path, writeFleetDay)
}

// writeFleetDay writes the fleet's day.
func writeFleetDay(w *bufio.Writer) {
	family := func(name string, labels func(cluster, team string) string, value func(cluster, team string, ts time.Time) float64) {
		fmt.Fprintf(w, "# TYPE %s gauge\n", name)
		for _, cluster := range []string{"hub", "east", "west"} {
			for _, team := range []string{"training", "research", "inference"} {
				l := labels(cluster, team)
				for ts := fleetStart; ts.Before(fleetEnd); ts = ts.Add(scrape) {
					fmt.Fprintf(w, "%s{%s} %v %d\n", name, l, value(cluster, team, ts), ts.Unix())
				}
			}
		}
	}
	cq := func(cluster, team string) string {
		return fmt.Sprintf(`cluster=%q,cohort="gpu-pool",cluster_queue=%q,flavor="h100",resource="nvidia.com/gpu",replica_role="leader"`, cluster, team)
	}
	kai := func(cluster, team string) string { return fmt.Sprintf("cluster=%q,queue_name=%q", cluster, team) }
	alloc := func(cluster, team string, ts time.Time) float64 { return fleetAllocation(cluster, ts)[team] }
	guar := func(cluster, team string, _ time.Time) float64 { return fleetGuarantee[cluster][team] }
	family("kueue_cluster_queue_resource_usage", cq, alloc)
	family("kueue_cluster_queue_nominal_quota", cq, guar)
	family("kai_queue_allocated_gpus", kai, alloc)
	family("kai_queue_deserved_gpus", kai, guar)
}

// TestFleetReport runs tenancy report on examples/fleet against a real
// Prometheus holding the three clusters' series: each worker charged from
// its own, the manager's left out, the fleet's rows their sum, within 1%,
// for Kueue's and KAI's metrics.
func TestFleetReport(t *testing.T) {
	began := time.Now()
	dir := t.TempDir()
	om := filepath.Join(dir, "day.om")
	writeFleetScenario(t, om)
	data := filepath.Join(dir, "data")
	run(t, tools.promtool, "tsdb", "create-blocks-from", "openmetrics", om, data)
	prom := startPrometheus(t, data)
	t.Logf("backfilled a fleet's day and started Prometheus in %s", time.Since(began).Round(time.Millisecond))
	for _, backend := range []string{"kueue", "kai"} {
		t.Run(backend, func(t *testing.T) {
			out := tenancy(t, "report", "--backend", backend, "--prometheus", prom.url,
				"--from", fleetStart.Format(time.RFC3339), "--to", fleetEnd.Format(time.RFC3339), "--output", "json", "examples/fleet/tenancy.toml")
			var st struct {
				Coverage float64
				Clusters []struct {
					Cluster string
					Rows    []map[string]any
				}
				Rows []map[string]any
			}
			if err := json.Unmarshal(out, &st); err != nil {
				t.Fatalf("report JSON: %v\n%s", err, out)
			}
			if st.Coverage < 0.999 {
				t.Errorf("coverage %v, want 1: the day has no gaps", st.Coverage)
			}
			var clusters []string
			for _, c := range st.Clusters {
				clusters = append(clusters, c.Cluster)
			}
			if fmt.Sprint(clusters) != "[east west]" {
				t.Errorf("clusters %v, want [east west]: the workers, not the manager", clusters)
			}
			if len(st.Rows) != len(fleetWant) {
				t.Fatalf("%d fleet rows, want %d:\n%s", len(st.Rows), len(fleetWant), out)
			}
			for _, row := range st.Rows {
				team := row["team"].(string)
				for col, w := range fleetWant[team] {
					got, ok := row[col].(float64)
					if !ok || math.Abs(got-w) > 0.01*math.Max(math.Abs(w), 1) {
						t.Errorf("fleet %s %s = %v, want %v (within 1%%)", team, col, row[col], w)
					}
				}
			}
		})
	}
}
