package monitoring_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The scenario: a week from Monday 2026-11-02 00:00 UTC, scraped every 2
// minutes. By day (08:00 to 20:00 UTC) research uses its 12 guaranteed
// GPUs and training its 12; at night research is idle and training borrows
// 12 more: 4 from the capacity no team is guaranteed and 8 lent by
// research. Inference holds its 4 all week at 5% utilisation.
var (
	weekStart = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	weekEnd   = weekStart.Add(7 * 24 * time.Hour)
	scrape    = 2 * time.Minute
)

func daytime(t time.Time) bool { return t.Hour() >= 8 && t.Hour() < 20 }

// allocation is each team's allocated GPUs at t.
func allocation(t time.Time) map[string]float64 {
	if daytime(t) {
		return map[string]float64{"training": 12, "research": 12, "inference": 4}
	}
	return map[string]float64{"training": 24, "research": 0, "inference": 4}
}

var guarantee = map[string]float64{"training": 12, "research": 12, "inference": 4}

// utilisation of each team's devices (dcgm-exporter writes percent); two
// devices per team stand for all of them, which changes no mean.
var utilisation = map[string]float64{"training": 90, "research": 50, "inference": 5}

// want is the statement of the scenario: 84 day hours and 84 night hours.
// Cost is guaranteed plus borrowed at 2.5 a GPU-hour.
var want = map[string]map[string]float64{
	"training":  {"guaranteed_gpu_hours": 2016, "allocated_gpu_hours": 3024, "borrowed_gpu_hours": 1008, "idle_gpu_hours": 0, "lent_gpu_hours": 0, "utilization": 0.9, "cost": 7560},
	"research":  {"guaranteed_gpu_hours": 2016, "allocated_gpu_hours": 1008, "borrowed_gpu_hours": 0, "idle_gpu_hours": 1008, "lent_gpu_hours": 672, "utilization": 0.5, "cost": 5040},
	"inference": {"guaranteed_gpu_hours": 672, "allocated_gpu_hours": 672, "borrowed_gpu_hours": 0, "idle_gpu_hours": 0, "lent_gpu_hours": 0, "utilization": 0.05, "cost": 1680},
}

// writeScenario writes the week as OpenMetrics, one metric family at a time
// as the format requires, both backends' metrics side by side.
func writeScenario(t *testing.T, path string) {
	t.Helper()
	writeOpenMetrics(t, path, writeWeek)
}

// writeOpenMetrics writes path with write, then OpenMetrics' closing line.
func writeOpenMetrics(t *testing.T, path string, write func(*bufio.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	write(w)
	fmt.Fprintln(w, "# EOF")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// writeWeek writes the week's series.
func writeWeek(w *bufio.Writer) {
	teams := []string{"training", "research", "inference"}
	each := func(fn func(ts time.Time)) {
		for ts := weekStart; ts.Before(weekEnd); ts = ts.Add(scrape) {
			fn(ts)
		}
	}
	family := func(name string, series func(team string) string, value func(team string, ts time.Time) (float64, bool)) {
		fmt.Fprintf(w, "# TYPE %s gauge\n", name)
		for _, team := range teams {
			labels := series(team)
			each(func(ts time.Time) {
				if v, ok := value(team, ts); ok {
					fmt.Fprintf(w, "%s{%s} %v %d\n", name, labels, v, ts.Unix())
				}
			})
		}
	}
	cq := func(team string) string {
		return fmt.Sprintf(`cohort="gpu-pool",cluster_queue=%q,flavor="h100",resource="nvidia.com/gpu",replica_role="leader"`, team)
	}
	kai := func(team string) string { return fmt.Sprintf("queue_name=%q", team) }
	alloc := func(team string, ts time.Time) (float64, bool) { return allocation(ts)[team], true }
	guar := func(team string, _ time.Time) (float64, bool) { return guarantee[team], true }
	family("kueue_cluster_queue_resource_usage", cq, alloc)
	family("kueue_cluster_queue_nominal_quota", cq, guar)
	family("kai_queue_allocated_gpus", kai, alloc)
	family("kai_queue_deserved_gpus", kai, guar)
	fmt.Fprintf(w, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for _, team := range teams {
		for dev := range 2 {
			labels := fmt.Sprintf(`gpu="%d",UUID="GPU-%s-%d",Hostname="node-%s",namespace=%q,pod="%s-%d",container="main"`, dev, team, dev, team, team, team, dev)
			each(func(ts time.Time) {
				if allocation(ts)[team] > 0 {
					fmt.Fprintf(w, "DCGM_FI_DEV_GPU_UTIL{%s} %v %d\n", labels, utilisation[team], ts.Unix())
				}
			})
		}
	}
}

// prometheusServer is a Prometheus server on loopback over a data directory.
type prometheusServer struct {
	url string
	cmd *exec.Cmd
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPrometheus starts the server over data and waits until it is ready.
// Retention is long: the scenario lies in the past.
func startPrometheus(t *testing.T, data string) *prometheusServer {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	logf, err := os.Create(filepath.Join(t.TempDir(), "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tools.prometheus, "--config.file="+cfg, "--storage.tsdb.path="+data,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &prometheusServer{url: "http://" + addr, cmd: cmd}
	t.Cleanup(s.stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(s.url + "/-/ready")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus not ready after 30s:\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *prometheusServer) stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
	}
}

// backfilled is the week's TSDB, built once for the tests that read it.
func backfilled(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	om := filepath.Join(dir, "week.om")
	writeScenario(t, om)
	data := filepath.Join(dir, "data")
	run(t, tools.promtool, "tsdb", "create-blocks-from", "openmetrics", om, data)
	return data
}

// TestReport runs tenancy report against a real Prometheus over the
// backfilled week, for both backends' metrics: every number within 1% of
// the scenario's.
func TestReport(t *testing.T) {
	began := time.Now()
	data := backfilled(t)
	prom := startPrometheus(t, data)
	t.Logf("backfilled a week and started Prometheus in %s", time.Since(began).Round(time.Millisecond))
	for _, backend := range []string{"kueue", "kai"} {
		t.Run(backend, func(t *testing.T) {
			out := tenancy(t, "report", "--backend", backend, "--prometheus", prom.url,
				"--from", weekStart.Format(time.RFC3339), "--to", weekEnd.Format(time.RFC3339), "--output", "json", example)
			var st struct {
				Coverage float64
				Rows     []map[string]any
			}
			if err := json.Unmarshal(out, &st); err != nil {
				t.Fatalf("report JSON: %v\n%s", err, out)
			}
			if st.Coverage < 0.999 {
				t.Errorf("coverage %v, want 1: the week has no gaps", st.Coverage)
			}
			if len(st.Rows) != len(want) {
				t.Fatalf("%d rows, want %d:\n%s", len(st.Rows), len(want), out)
			}
			for _, row := range st.Rows {
				team := row["team"].(string)
				for col, w := range want[team] {
					got, ok := row[col].(float64)
					if !ok {
						t.Errorf("%s %s: %v, want %v", team, col, row[col], w)
						continue
					}
					if math.Abs(got-w) > 0.01*math.Max(math.Abs(w), 1) {
						t.Errorf("%s %s = %v, want %v (within 1%%)", team, col, got, w)
					}
				}
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		cmd := exec.Command(tools.tenancy, "report", "--prometheus", "http://127.0.0.1:1", "--from", "-1d", example)
		cmd.Dir = tools.root
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("report against no Prometheus succeeded:\n%s", out)
		}
		cmd = exec.Command(tools.tenancy, "report", "--prometheus", prom.url, "--from", "2020-01-01T00:00:00Z", "--to", "2020-01-02T00:00:00Z", example)
		cmd.Dir = tools.root
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("report over a range without series succeeded:\n%s", out)
		}
		// The agreement without inference: Kueue's metrics name a
		// ClusterQueue of the pool's cohort the agreement does not have.
		src, err := os.ReadFile(filepath.Join(tools.root, example))
		if err != nil {
			t.Fatal(err)
		}
		before, after, ok := strings.Cut(string(src), "[teams.inference]\nreclaim = \"wait\"\nguaranteed = 4\n")
		if !ok {
			t.Fatal("the example's inference team is not where the test expects it")
		}
		smaller := filepath.Join(t.TempDir(), "tenancy.toml")
		if err := os.WriteFile(smaller, []byte(before+after), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(tools.tenancy, "report", "--prometheus", prom.url,
			"--from", weekStart.Format(time.RFC3339), "--to", weekStart.Add(time.Hour).Format(time.RFC3339), smaller)
		out, err = cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), `team "inference"`) {
			t.Errorf("report with a team missing from the agreement: %v, want an error naming inference:\n%s", err, out)
		}
	})
}
