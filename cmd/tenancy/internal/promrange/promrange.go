// Package promrange is the one piece of tenancy report that talks to
// Prometheus: query_range over any range, in chunks Prometheus accepts, each
// series handed back whole for the chargeback model (generator/chargeback),
// which computes the statement from series alone. The HTTP API itself (POST
// with a GET fallback, the response envelope, error types) is
// client_golang's.
package promrange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	statement "github.com/tenancy-dev/tenancy/generator/chargeback"
)

// Client runs range queries against one Prometheus.
type Client struct {
	base string
	api  promv1.API
}

// MaxPoints is the most points Prometheus returns per series in one
// query_range (it refuses more than 11,000); longer ranges are split.
const MaxPoints = 10000

// maxResponseSize caps one response body: a statement's series over 10,000
// steps are a few MiB, so anything near this is not a Prometheus answering
// the query asked.
const maxResponseSize = 1 << 30

// New returns a client of the Prometheus at raw, an http(s) base URL; the
// error names --prometheus, the flag that gives it.
func New(raw string) (*Client, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus %q: want an http(s) URL such as http://prometheus.monitoring:9090", raw)
	}
	c, err := api.NewClient(api.Config{
		Address: raw,
		Client:  &http.Client{Timeout: 2 * time.Minute, Transport: capBody{api.DefaultRoundTripper}},
	})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %q: %v", raw, err)
	}
	return &Client{base: u.String(), api: promv1.NewAPI(c)}, nil
}

// QueryRange runs one query_range over [from, to) at step, in chunks of at
// most MaxPoints steps, calling progress after each chunk.
func (c *Client) QueryRange(ctx context.Context, q statement.Query, from, to time.Time, step time.Duration, progress func()) ([]statement.Series, error) {
	bySig := map[string]*statement.Series{}
	var order []string
	chunk := step * MaxPoints
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
		v, _, err := c.api.QueryRange(ctx, q.Expr, promv1.Range{Start: start, End: end, Step: step})
		if err != nil {
			return nil, c.explain(q, err)
		}
		matrix, ok := v.(model.Matrix)
		if !ok {
			return nil, fmt.Errorf("prometheus %s: %s: result type %q, want matrix", c.base, q.Expr, v.Type())
		}
		for _, r := range matrix {
			sig := r.Metric.String() // labels sorted and quoted: one key per series
			s := bySig[sig]
			if s == nil {
				s = &statement.Series{Labels: labels(r.Metric)}
				bySig[sig] = s
				order = append(order, sig)
			}
			for _, p := range r.Values {
				s.Points = append(s.Points, statement.Point{T: p.Timestamp.Time().UTC(), V: float64(p.Value)})
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

// explain words a failed query for the person who ran the report: the
// server, and the query or what came back instead of an API response.
func (c *Client) explain(q statement.Query, err error) error {
	var apiErr *promv1.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("prometheus %s: %w", c.base, err)
	}
	switch apiErr.Type {
	case promv1.ErrClient, promv1.ErrServer, promv1.ErrBadResponse:
		// An HTTP status or body that is not the API's: a wrong URL, a proxy
		// page. Say what came back, briefly.
		msg := fmt.Sprintf("prometheus %s: /api/v1/query_range: not a Prometheus API response (%.200s)", c.base, apiErr.Msg)
		if apiErr.Detail != "" {
			msg += fmt.Sprintf(": %.200s", apiErr.Detail)
		}
		return errors.New(msg)
	}
	return fmt.Errorf("prometheus %s: %s: %s: %s", c.base, q.Expr, apiErr.Type, apiErr.Msg)
}

func labels(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}

// capBody is a RoundTripper that fails a response body past maxResponseSize
// instead of reading it whole into memory.
type capBody struct{ next http.RoundTripper }

func (c capBody) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	res.Body = &cappedBody{ReadCloser: res.Body, left: maxResponseSize}
	return res, nil
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("response exceeds %d MiB", maxResponseSize>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
