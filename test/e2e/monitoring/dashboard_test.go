package monitoring_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ruleLevels splits the rendered recording rules by what they read: the
// raw series and constants first, then each level reading the one before.
// promtool's rule backfill evaluates rules against a server and so cannot
// see series recorded in the same run; each level is backfilled after the
// one it reads is loaded.
func ruleLevels(t *testing.T, backend string) [][]map[string]any {
	t.Helper()
	var spec struct {
		Groups []struct {
			Name  string
			Rules []map[string]any
		}
	}
	data, err := os.ReadFile(ruleFile(t, backend))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	level := map[string]int{
		"tenancy:gpu_borrowed:sum": 1, "tenancy:gpu_idle_guarantee:sum": 1,
		"tenancy:gpu_idle_lendable:sum": 2, "tenancy:gpu_lent:sum": 3,
	}
	levels := make([][]map[string]any, 4)
	for _, g := range spec.Groups {
		for _, r := range g.Rules {
			if rec, ok := r["record"].(string); ok {
				levels[level[rec]] = append(levels[level[rec]], r)
			}
		}
	}
	return levels
}

// panelExprs returns every PromQL expression of the rendered dashboard, by
// panel title, with Grafana's variables as Grafana would expand them for a
// range of rangeLen and every team.
func panelExprs(t *testing.T, rangeLen time.Duration) map[string][]string {
	t.Helper()
	cm := rendered(t, "kueue", "ConfigMap")[0]
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	for _, js := range cm["data"].(map[string]any) {
		if err := json.Unmarshal([]byte(js.(string)), &dash); err != nil {
			t.Fatal(err)
		}
	}
	r := strings.NewReplacer("$__range_s", fmt.Sprint(int(rangeLen.Seconds())), "$__range", fmt.Sprintf("%ds", int(rangeLen.Seconds())), "$team", ".+")
	out := map[string][]string{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], r.Replace(tg.Expr))
		}
	}
	return out
}

// TestDashboard loads the scenario and the recording rules backfilled over
// its last hours into a real Prometheus, then runs every dashboard panel's
// PromQL there: Prometheus' own parser must accept it, and it must return
// data. The alerts panel reads ALERTS, which only a rule evaluation writes
// (promtool backfills recording rules, not alerts): it must parse, and
// TestRules proves the alerts fire.
func TestDashboard(t *testing.T) {
	data := backfilled(t)
	start, end := weekEnd.Add(-3*time.Hour), weekEnd
	for i, rules := range ruleLevels(t, "kueue") {
		file := filepath.Join(t.TempDir(), fmt.Sprintf("level%d.yaml", i))
		js, err := json.Marshal(map[string]any{"groups": []any{map[string]any{"name": "level", "interval": "1m", "rules": rules}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, js, 0o644); err != nil {
			t.Fatal(err)
		}
		prom := startPrometheus(t, data)
		out := filepath.Join(t.TempDir(), "blocks")
		run(t, tools.promtool, "tsdb", "create-blocks-from", "rules", "--url", prom.url, "--output-dir", out,
			"--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339), "--eval-interval", "1m", file)
		prom.stop()
		blocks, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if err := os.Rename(filepath.Join(out, b.Name()), filepath.Join(data, b.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	prom := startPrometheus(t, data)
	at := end.Add(-time.Minute)
	exprs := panelExprs(t, 2*time.Hour)
	if len(exprs) < 6 {
		t.Fatalf("%d panels with queries, want at least 6", len(exprs))
	}
	titles := slices.Sorted(func(yield func(string) bool) {
		for k := range exprs {
			if !yield(k) {
				return
			}
		}
	})
	for _, title := range titles {
		for _, expr := range exprs[title] {
			res, err := http.PostForm(prom.url+"/api/v1/query", url.Values{"query": {expr}, "time": {fmt.Sprint(at.Unix())}})
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Status, Error string
				Data          struct{ Result []any }
			}
			err = json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if err != nil || body.Status != "success" {
				t.Errorf("panel %q: %s: Prometheus refuses it: %v %s", title, expr, err, body.Error)
				continue
			}
			if len(body.Data.Result) == 0 && !strings.HasPrefix(expr, "ALERTS") {
				t.Errorf("panel %q: %s: no data", title, expr)
			}
		}
	}
}
