package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	statement "github.com/tenancy-dev/tenancy/generator/chargeback"
)

// fakePrometheus stands in for Prometheus's HTTP API: it records each
// query_range's parameters and answers with handle's body and status.
type fakePrometheus struct {
	mu       sync.Mutex
	requests []rangeRequest
	handle   func(r rangeRequest) (status int, body string)
}

type rangeRequest struct {
	method, path, query string
	start, end, step    float64
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	num := func(k string) float64 { v, _ := strconv.ParseFloat(r.Form.Get(k), 64); return v }
	req := rangeRequest{method: r.Method, path: r.URL.Path, query: r.Form.Get("query"), start: num("start"), end: num("end"), step: num("step")}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	status, body := f.handle(req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// matrixOf answers a range request with one series per label set, a point at
// every step from start to end, valued by the step's index since t0.
func matrixOf(t0 float64, labelSets ...string) func(r rangeRequest) (int, string) {
	return func(r rangeRequest) (int, string) {
		var series []string
		for _, ls := range labelSets {
			var values []string
			for ts := r.start; ts <= r.end; ts += r.step {
				values = append(values, fmt.Sprintf(`[%s,"%v"]`, strconv.FormatFloat(ts, 'f', -1, 64), (ts-t0)/r.step))
			}
			series = append(series, fmt.Sprintf(`{"metric":%s,"values":[%s]}`, ls, strings.Join(values, ",")))
		}
		return http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join(series, ",") + `]}}`
	}
}

// TestQueryRangeChunks: a range longer than maxPoints steps is fetched in
// chunks that neither overlap nor leave a step out, and each series comes
// back whole, with its labels, in the order Prometheus first returned it.
func TestQueryRangeChunks(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Minute
	steps := 2*maxPoints + 500
	to := from.Add(time.Duration(steps) * step)
	t0 := float64(from.Unix())
	fake := &fakePrometheus{handle: matrixOf(t0, `{"cluster_queue":"training","flavor":"h100"}`, `{"cluster_queue":"research","flavor":"h100"}`)}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	c, err := newPromClient(srv.URL + "/prom/")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := c.queryRange(context.Background(), statement.Query{Expr: "kueue_cluster_queue_resource_usage"}, from, to, step, func() { calls++ })
	if err != nil {
		t.Fatal(err)
	}

	wantRequests := []rangeRequest{
		{method: http.MethodPost, path: "/prom/api/v1/query_range", query: "kueue_cluster_queue_resource_usage", start: t0, end: t0 + 60*(maxPoints-1), step: 60},
		{method: http.MethodPost, path: "/prom/api/v1/query_range", query: "kueue_cluster_queue_resource_usage", start: t0 + 60*maxPoints, end: t0 + 60*(2*maxPoints-1), step: 60},
		{method: http.MethodPost, path: "/prom/api/v1/query_range", query: "kueue_cluster_queue_resource_usage", start: t0 + 60*2*maxPoints, end: t0 + 60*float64(steps-1), step: 60},
	}
	if diff := cmp.Diff(wantRequests, fake.requests, cmp.AllowUnexported(rangeRequest{})); diff != "" {
		t.Errorf("requests (-want,+got):\n%s", diff)
	}
	if calls != 3 {
		t.Errorf("progress called %d times, want once per chunk (3)", calls)
	}
	if len(got) != 2 {
		t.Fatalf("got %d series, want 2", len(got))
	}
	if diff := cmp.Diff(map[string]string{"cluster_queue": "training", "flavor": "h100"}, got[0].Labels); diff != "" {
		t.Errorf("first series' labels (-want,+got):\n%s", diff)
	}
	if got[1].Labels["cluster_queue"] != "research" {
		t.Errorf("second series is %v, want research: the order Prometheus returned", got[1].Labels)
	}
	for _, s := range got {
		if len(s.Points) != steps {
			t.Fatalf("series %v has %d points, want %d", s.Labels, len(s.Points), steps)
		}
		for i, p := range s.Points {
			if want := from.Add(time.Duration(i) * step); !p.T.Equal(want) || p.V != float64(i) || p.T.Location() != time.UTC {
				t.Fatalf("series %v point %d = %v %v, want %v %v", s.Labels, i, p.T, p.V, want, float64(i))
			}
		}
	}
}

// TestQueryRangeErrors: each way Prometheus can fail names the server and
// says what went wrong.
func TestQueryRangeErrors(t *testing.T) {
	tests := map[string]struct {
		status int
		body   string
		want   []string
	}{
		"API error": {
			status: http.StatusBadRequest,
			body:   `{"status":"error","errorType":"bad_data","error":"parse error at char 5"}`,
			want:   []string{"kueue_cluster_queue_resource_usage", "bad_data", "parse error at char 5"},
		},
		"not the API": {
			status: http.StatusNotFound,
			body:   `<html>404 page not found</html>`,
			want:   []string{"/api/v1/query_range: not a Prometheus API response", "404", "<html>404 page not found"},
		},
		"not JSON": {
			status: http.StatusOK,
			body:   `hello`,
			want:   []string{"not a Prometheus API response"},
		},
		"a vector": {
			status: http.StatusOK,
			body:   `{"status":"success","data":{"resultType":"vector","result":[]}}`,
			want:   []string{`result type "vector", want matrix`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(&fakePrometheus{handle: func(rangeRequest) (int, string) { return tc.status, tc.body }})
			defer srv.Close()
			c, err := newPromClient(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			_, err = c.queryRange(context.Background(), statement.Query{Expr: "kueue_cluster_queue_resource_usage"}, from, from.Add(time.Hour), time.Minute, nil)
			if err == nil {
				t.Fatal("queryRange succeeded, want an error")
			}
			for _, w := range append(tc.want, srv.URL) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestReportStep: --step takes Prometheus durations and refuses steps under
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
	fake := &fakePrometheus{handle: func(r rangeRequest) (int, string) {
		if !strings.Contains(r.query, "kueue_cluster_queue_resource_usage") && !strings.Contains(r.query, "kueue_cluster_queue_nominal_quota") {
			return http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[]}}`
		}
		var series []string
		for _, tm := range teams {
			var values []string
			for ts := r.start; ts <= r.end; ts += r.step {
				values = append(values, fmt.Sprintf(`[%s,"%d"]`, strconv.FormatFloat(ts, 'f', -1, 64), tm.gpus))
			}
			series = append(series, fmt.Sprintf(`{"metric":{"cluster_queue":%q,"flavor":"h100"},"values":[%s]}`, tm.name, strings.Join(values, ",")))
		}
		return http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join(series, ",") + `]}}`
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
