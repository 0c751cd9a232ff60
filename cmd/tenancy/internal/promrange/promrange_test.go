package promrange_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange"
	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange/promrangetest"
	statement "github.com/tenancy-dev/tenancy/generator/chargeback"
)

// TestQueryRangeChunks: a range longer than promrange.MaxPoints steps is fetched in
// chunks that neither overlap nor leave a step out, and each series comes
// back whole, with its labels, in the order Prometheus first returned it.
func TestQueryRangeChunks(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := time.Minute
	steps := 2*promrange.MaxPoints + 500
	to := from.Add(time.Duration(steps) * step)
	t0 := float64(from.Unix())
	fake := &promrangetest.Fake{Handle: func(r promrangetest.Request) (int, string) {
		stepIndex := func(_ int, ts float64) string { return strconv.FormatFloat((ts-t0)/r.Step, 'f', -1, 64) }
		return promrangetest.Matrix(r, stepIndex, `{"cluster_queue":"training","flavor":"h100"}`, `{"cluster_queue":"research","flavor":"h100"}`)
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	c, err := promrange.New(srv.URL + "/prom/")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := c.QueryRange(context.Background(), statement.Query{Expr: "kueue_cluster_queue_resource_usage"}, from, to, step, func() { calls++ })
	if err != nil {
		t.Fatal(err)
	}

	wantRequests := []promrangetest.Request{
		{Method: http.MethodPost, Path: "/prom/api/v1/query_range", Query: "kueue_cluster_queue_resource_usage", Start: t0, End: t0 + 60*(promrange.MaxPoints-1), Step: 60},
		{Method: http.MethodPost, Path: "/prom/api/v1/query_range", Query: "kueue_cluster_queue_resource_usage", Start: t0 + 60*promrange.MaxPoints, End: t0 + 60*(2*promrange.MaxPoints-1), Step: 60},
		{Method: http.MethodPost, Path: "/prom/api/v1/query_range", Query: "kueue_cluster_queue_resource_usage", Start: t0 + 60*2*promrange.MaxPoints, End: t0 + 60*float64(steps-1), Step: 60},
	}
	if diff := cmp.Diff(wantRequests, fake.Requests()); diff != "" {
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
			srv := httptest.NewServer(&promrangetest.Fake{Handle: func(promrangetest.Request) (int, string) { return tc.status, tc.body }})
			defer srv.Close()
			c, err := promrange.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			_, err = c.QueryRange(context.Background(), statement.Query{Expr: "kueue_cluster_queue_resource_usage"}, from, from.Add(time.Hour), time.Minute, nil)
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
