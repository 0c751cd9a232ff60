package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	statement "github.com/tenancy-dev/tenancy/generator/chargeback"
)

// promClient is the thin Prometheus HTTP API client tenancy report needs:
// /api/v1/query_range, nothing else.
type promClient struct {
	base *url.URL
	http *http.Client
}

// maxPoints is the most points Prometheus returns per series in one
// query_range (it refuses more than 11,000); longer ranges are split.
const maxPoints = 10000

func newPromClient(raw string) (*promClient, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus %q: want an http(s) URL such as http://prometheus.monitoring:9090", raw)
	}
	return &promClient{base: u, http: &http.Client{Timeout: 2 * time.Minute}}, nil
}

type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// queryRange runs one query_range over [from, to) at step, in chunks of at
// most maxPoints steps, calling progress after each chunk.
func (c *promClient) queryRange(ctx context.Context, q statement.Query, from, to time.Time, step time.Duration, progress func()) ([]statement.Series, error) {
	bySig := map[string]*statement.Series{}
	var order []string
	chunk := step * maxPoints
	for start := from; start.Before(to); start = start.Add(chunk) {
		// query_range includes its end; the last step before the next
		// chunk's start is start+chunk-step.
		end := start.Add(chunk - step)
		if last := to.Add(-step); end.After(last) {
			end = last
		}
		if end.Before(start) {
			end = start
		}
		form := url.Values{
			"query": {q.Expr},
			"start": {strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)},
			"end":   {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
			"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
		}
		resp, err := c.post(ctx, "/api/v1/query_range", form)
		if err != nil {
			return nil, err
		}
		for _, r := range resp.Data.Result {
			sig := signature(r.Metric)
			s := bySig[sig]
			if s == nil {
				s = &statement.Series{Labels: r.Metric}
				bySig[sig] = s
				order = append(order, sig)
			}
			for _, v := range r.Values {
				p, err := point(v)
				if err != nil {
					return nil, fmt.Errorf("query %s: %w", q.Expr, err)
				}
				s.Points = append(s.Points, p)
			}
		}
		if progress != nil {
			progress()
		}
	}
	out := make([]statement.Series, 0, len(order))
	for _, sig := range order {
		out = append(out, *bySig[sig])
	}
	return out, nil
}

func (c *promClient) post(ctx context.Context, path string, form url.Values) (*apiResponse, error) {
	u := c.base.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", c.base, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: read response: %w", c.base, err)
	}
	var out apiResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("prometheus %s: %s: not a Prometheus API response (HTTP %d): %.200s", c.base, path, res.StatusCode, body)
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("prometheus %s: %s: %s: %s", c.base, form.Get("query"), out.ErrorType, out.Error)
	}
	if out.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("prometheus %s: %s: result type %q, want matrix", c.base, form.Get("query"), out.Data.ResultType)
	}
	return &out, nil
}

func point(v [2]any) (statement.Point, error) {
	ts, ok := v[0].(float64)
	s, ok2 := v[1].(string)
	if !ok || !ok2 {
		return statement.Point{}, fmt.Errorf("malformed sample %v", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return statement.Point{}, fmt.Errorf("malformed sample value %q: %w", s, err)
	}
	return statement.Point{T: time.UnixMilli(int64(ts*1000 + 0.5)).UTC(), V: f}, nil
}

func signature(m map[string]string) string {
	b, _ := json.Marshal(m) // map keys are sorted
	return string(b)
}
