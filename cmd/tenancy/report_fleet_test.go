package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange/promrangetest"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
)

func TestParsePrometheus(t *testing.T) {
	for name, tc := range map[string]struct {
		values      []string
		wantURLs    map[string]string
		wantCluster bool
		wantErr     string
	}{
		"one URL":                {values: []string{"http://thanos:9090"}, wantURLs: map[string]string{"": "http://thanos:9090"}},
		"a URL with =":           {values: []string{"https://mimir/prometheus?tenant=gpu"}, wantURLs: map[string]string{"": "https://mimir/prometheus?tenant=gpu"}},
		"one per cluster":        {values: []string{"east=http://e:9090", "west=http://w:9090"}, wantURLs: map[string]string{"east": "http://e:9090", "west": "http://w:9090"}, wantCluster: true},
		"two URLs":               {values: []string{"http://a", "http://b"}, wantErr: "not two URLs"},
		"a URL and a cluster":    {values: []string{"http://a", "east=http://e"}, wantErr: "nor both"},
		"a cluster and a URL":    {values: []string{"east=http://e", "http://a"}, wantErr: "nor both"},
		"a cluster twice":        {values: []string{"east=http://e", "east=http://f"}, wantErr: "cluster east is given twice"},
		"no name":                {values: []string{"=http://e"}, wantErr: "CLUSTER=URL"},
		"a cluster without URL":  {values: []string{"east=e:9090"}, wantErr: "want an http(s) URL"},
		"neither URL nor naming": {values: []string{"localhost:9090"}, wantErr: "want an http(s) URL"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parsePrometheus(tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantURLs, got.urls); d != "" {
				t.Errorf("URLs (-want,+got):\n%s", d)
			}
			if (got.perCluster != nil) != tc.wantCluster {
				t.Errorf("per cluster = %v, want %v", got.perCluster != nil, tc.wantCluster)
			}
		})
	}
}

// TestReportFleetUsage: a CLUSTER=URL on an agreement without [clusters],
// and a label that is no label name, are usage errors.
func TestReportFleetUsage(t *testing.T) {
	for name, tc := range map[string]struct {
		args     []string
		inStderr string
	}{
		"cluster on a single cluster": {args: []string{"report", "--prometheus", "east=http://127.0.0.1:1", "--from", "-1h", "../../generator/testdata/monitoring/tenancy.toml"}, inStderr: "has no [clusters]"},
		"bad label":                   {args: []string{"report", "--prometheus", "http://127.0.0.1:1", "--cluster-label", "k8s-cluster", "--from", "-1h"}, inStderr: "--cluster-label"},
		"--cluster on a single":       {args: []string{"report", "--prometheus", "http://127.0.0.1:1", "--cluster", "east", "--from", "-1h", "../../generator/testdata/monitoring/tenancy.toml"}, inStderr: `--cluster "east"`},
	} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(".", tc.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr naming %q", code, stdout, stderr, tc.inStderr)
			}
		})
	}
}

// TestWriteFleetStatement: CSV has the cluster first, each cluster's lines
// then the fleet's (cluster *); the table a section per cluster and the
// fleet's last.
func TestWriteFleetStatement(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	st := func(g float64) *chargeback.Statement {
		return &chargeback.Statement{Period: chargeback.Period{Pool: "gpu-pool", Backend: "kueue", From: from, To: from.Add(time.Hour), Step: "1h0m0s", Currency: "EUR"}, Coverage: 1,
			Rows:  []chargeback.Row{{Team: "training", Flavor: "h100", Guaranteed: g, Cost: g}},
			Total: chargeback.Row{Team: "total", Flavor: "*", Guaranteed: g, Cost: g}}
	}
	fleet, err := chargeback.SumFleet([]chargeback.ClusterStatement{{Cluster: "east", Statement: st(12)}, {Cluster: "west", Statement: st(4)}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeFleetStatement(&b, fleet, "csv"); err != nil {
		t.Fatal(err)
	}
	want := "cluster,team,flavor,guaranteed_gpu_hours,allocated_gpu_hours,borrowed_gpu_hours,idle_gpu_hours,lent_gpu_hours,utilization,cost\n" +
		"east,training,h100,12.00,0.00,0.00,0.00,0.00,,12.00\n" +
		"east,total,*,12.00,0.00,0.00,0.00,0.00,,12.00\n" +
		"west,training,h100,4.00,0.00,0.00,0.00,0.00,,4.00\n" +
		"west,total,*,4.00,0.00,0.00,0.00,0.00,,4.00\n" +
		"*,training,h100,16.00,0.00,0.00,0.00,0.00,,16.00\n" +
		"*,total,*,16.00,0.00,0.00,0.00,0.00,,16.00\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("CSV (-want,+got):\n%s", d)
	}
	b.Reset()
	if err := writeFleetStatement(&b, fleet, "table"); err != nil {
		t.Fatal(err)
	}
	want = "GPU statement of gpu-pool (kueue), a fleet of 2 worker clusters (east, west), 2026-11-01T00:00:00Z to 2026-11-01T01:00:00Z, cost in EUR, 100.0% of the range covered\n" +
		"\nCluster east, 100.0% of the range covered\n" +
		"team      flavor  guaranteed_gpu_hours  allocated_gpu_hours  borrowed_gpu_hours  idle_gpu_hours  lent_gpu_hours  utilization  cost\n" +
		"training  h100    12.00                 0.00                 0.00                0.00            0.00                         12.00\n" +
		"total     *       12.00                 0.00                 0.00                0.00            0.00                         12.00\n" +
		"\nCluster west, 100.0% of the range covered\n" +
		"team      flavor  guaranteed_gpu_hours  allocated_gpu_hours  borrowed_gpu_hours  idle_gpu_hours  lent_gpu_hours  utilization  cost\n" +
		"training  h100    4.00                  0.00                 0.00                0.00            0.00                         4.00\n" +
		"total     *       4.00                  0.00                 0.00                0.00            0.00                         4.00\n" +
		"\nFleet, the 2 clusters summed\n" +
		"team      flavor  guaranteed_gpu_hours  allocated_gpu_hours  borrowed_gpu_hours  idle_gpu_hours  lent_gpu_hours  utilization  cost\n" +
		"training  h100    16.00                 0.00                 0.00                0.00            0.00                         16.00\n" +
		"total     *       16.00                 0.00                 0.00                0.00            0.00                         16.00\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("table (-want,+got):\n%s", d)
	}
	b.Reset()
	if err := writeFleetStatement(&b, fleet, "json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"clusters": [`, `"cluster": "east"`, `"total": {`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
}

// fleetFake answers for examples/fleet's workers over two hours: east's
// training uses its 16, west's research its 8 and inference 4 of its 8.
// cluster picks the worker from the query (one Prometheus for the fleet),
// or is fixed (each worker's own Prometheus).
func fleetFake(t *testing.T, cluster func(query string) string) *httptest.Server {
	t.Helper()
	type gpus struct{ used, quota int }
	teams := map[string]map[string]gpus{
		"east": {"training": {16, 16}, "research": {0, 0}, "inference": {0, 0}},
		"west": {"training": {0, 0}, "research": {8, 8}, "inference": {4, 8}},
	}
	names := []string{"inference", "research", "training"}
	fake := &promrangetest.Fake{Handle: func(r promrangetest.Request) (int, string) {
		used := strings.Contains(r.Query, "kueue_cluster_queue_resource_usage")
		if !used && !strings.Contains(r.Query, "kueue_cluster_queue_nominal_quota") {
			return promrangetest.Matrix(r, nil)
		}
		c := teams[cluster(r.Query)]
		if c == nil {
			return promrangetest.Matrix(r, nil)
		}
		var labelSets []string
		for _, n := range names {
			labelSets = append(labelSets, fmt.Sprintf(`{"cluster_queue":%q,"flavor":"h100"}`, n))
		}
		return promrangetest.Matrix(r, func(i int, _ float64) string {
			g := c[names[i]]
			if used {
				return strconv.Itoa(g.used)
			}
			return strconv.Itoa(g.quota)
		}, labelSets...)
	}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return srv
}

// TestReportFleet charges examples/fleet's workers, from one Prometheus
// whose series carry the cluster label and from one Prometheus per worker:
// the same statement, each cluster's lines and the fleet's summed.
func TestReportFleet(t *testing.T) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	labelled := regexp.MustCompile(`cluster="(east|west|hub)"`)
	one := fleetFake(t, func(q string) string {
		if m := labelled.FindStringSubmatch(q); m != nil {
			return m[1]
		}
		return "" // a query without the matcher would mix the clusters
	})
	east := fleetFake(t, func(string) string { return "east" })
	west := fleetFake(t, func(string) string { return "west" })
	want := "cluster,team,flavor,guaranteed_gpu_hours,allocated_gpu_hours,borrowed_gpu_hours,idle_gpu_hours,lent_gpu_hours,utilization,cost\n" +
		"east,inference,h100,0.00,0.00,0.00,0.00,0.00,,0.00\n" +
		"east,research,h100,0.00,0.00,0.00,0.00,0.00,,0.00\n" +
		"east,training,h100,32.00,32.00,0.00,0.00,0.00,,0.00\n" +
		"east,total,*,32.00,32.00,0.00,0.00,0.00,,0.00\n" +
		"west,inference,h100,16.00,8.00,0.00,8.00,0.00,,0.00\n" +
		"west,research,h100,16.00,16.00,0.00,0.00,0.00,,0.00\n" +
		"west,training,h100,0.00,0.00,0.00,0.00,0.00,,0.00\n" +
		"west,total,*,32.00,24.00,0.00,8.00,0.00,,0.00\n" +
		"*,inference,h100,16.00,8.00,0.00,8.00,0.00,,0.00\n" +
		"*,research,h100,16.00,16.00,0.00,0.00,0.00,,0.00\n" +
		"*,training,h100,32.00,32.00,0.00,0.00,0.00,,0.00\n" +
		"*,total,*,64.00,56.00,0.00,8.00,0.00,,0.00\n"
	for name, prom := range map[string][]string{
		"one Prometheus, labelled":   {"--prometheus", one.URL},
		"one Prometheus per cluster": {"--prometheus", "west=" + west.URL, "--prometheus", "east=" + east.URL},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"report", "../../examples/fleet/tenancy.toml", "--from", from.Format(time.RFC3339),
				"--to", from.Add(2 * time.Hour).Format(time.RFC3339), "--output", "csv"}, prom...)
			stdout, stderr, code := runIn(".", args...)
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if d := cmp.Diff(want, stdout); d != "" {
				t.Errorf("statement (-want,+got):\n%s", d)
			}
		})
	}
}

// TestReportFleetOneCluster: --cluster charges one worker, printed as a
// single cluster's statement, its own Prometheus alone needed.
func TestReportFleetOneCluster(t *testing.T) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	west := fleetFake(t, func(string) string { return "west" })
	stdout, stderr, code := runIn(".", "report", "../../examples/fleet/tenancy.toml", "--cluster", "west", "--prometheus", "west="+west.URL,
		"--from", from.Format(time.RFC3339), "--to", from.Add(2*time.Hour).Format(time.RFC3339), "--output", "csv")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := "team,flavor,guaranteed_gpu_hours,allocated_gpu_hours,borrowed_gpu_hours,idle_gpu_hours,lent_gpu_hours,utilization,cost\n" +
		"inference,h100,16.00,8.00,0.00,8.00,0.00,,0.00\n" +
		"research,h100,16.00,16.00,0.00,0.00,0.00,,0.00\n" +
		"training,h100,0.00,0.00,0.00,0.00,0.00,,0.00\n" +
		"total,*,32.00,24.00,0.00,8.00,0.00,,0.00\n"
	if d := cmp.Diff(want, stdout); d != "" {
		t.Errorf("statement (-want,+got):\n%s", d)
	}
}

// TestReportFleetNamesTheWorkers: per-cluster Prometheus for the manager,
// for a cluster the fleet does not have, or for too few workers are usage
// errors naming the workers; an agreement without [clusters] refuses them.
func TestReportFleetNamesTheWorkers(t *testing.T) {
	for name, tc := range map[string]struct {
		prom     []string
		cluster  string
		inStderr string
	}{
		"the manager":            {prom: []string{"east=http://e", "west=http://w", "hub=http://h"}, inStderr: "hub is the fleet's manager, which runs no workloads"},
		"an unknown one":         {prom: []string{"east=http://e", "north=http://n"}, inStderr: "no worker cluster north; its workers are east, west"},
		"one missing":            {prom: []string{"east=http://e"}, inStderr: "no west=URL"},
		"--cluster, the manager": {prom: []string{"http://p"}, cluster: "hub", inStderr: "--cluster hub: hub is the fleet's manager"},
		"--cluster, no worker":   {prom: []string{"http://p"}, cluster: "north", inStderr: "--cluster north: the fleet has no worker cluster north"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"report", "../../examples/fleet/tenancy.toml", "--from", "-1h"}
			if tc.cluster != "" {
				args = append(args, "--cluster", tc.cluster)
			}
			for _, p := range tc.prom {
				args = append(args, "--prometheus", p)
			}
			stdout, stderr, code := runIn(".", args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming %q", code, stdout, stderr, tc.inStderr)
			}
		})
	}
}
