package main

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange/promrangetest"
)

// a second, as a usage error.
func TestReportStep(t *testing.T) {
	for _, step := range []string{"1.5m", "500ms", "1x"} {
		stdout, stderr, code := runIn(".", "report", "--prometheus", "http://127.0.0.1:1", "--from", "-1h", "--step", step)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--step") {
			t.Errorf("--step %s: exit %d, stdout %q, stderr %q; want exit 2 naming --step", step, code, stdout, stderr)
		}
	}
}

// TestReportAgainstFakePrometheus runs tenancy report end to end against the
// fake: two hours in which every team uses exactly its guarantee.
func TestReportAgainstFakePrometheus(t *testing.T) {
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	teams := []struct {
		name string
		gpus int
	}{{"training", 12}, {"research", 12}, {"inference", 4}}
	fake := &promrangetest.Fake{Handle: func(r promrangetest.Request) (int, string) {
		if !strings.Contains(r.Query, "kueue_cluster_queue_resource_usage") && !strings.Contains(r.Query, "kueue_cluster_queue_nominal_quota") {
			return promrangetest.Matrix(r, nil)
		}
		var labelSets []string
		for _, tm := range teams {
			labelSets = append(labelSets, fmt.Sprintf(`{"cluster_queue":%q,"flavor":"h100"}`, tm.name))
		}
		return promrangetest.Matrix(r, func(i int, _ float64) string { return strconv.Itoa(teams[i].gpus) }, labelSets...)
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	stdout, stderr, code := runIn(".", "report", "../../generator/testdata/monitoring/tenancy.toml", "--prometheus", srv.URL,
		"--from", from.Format(time.RFC3339), "--to", from.Add(2*time.Hour).Format(time.RFC3339), "--output", "csv")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"training,h100,24.00,24.00,0.00,0.00,0.00,,60.00\n",
		"inference,h100,8.00,8.00,0.00,0.00,0.00,,20.00\n",
		"total,*,56.00,56.00,0.00,0.00,0.00,,140.00\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("statement lacks %q:\n%s", want, stdout)
		}
	}
}
