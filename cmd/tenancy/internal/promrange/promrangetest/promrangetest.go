// Package promrangetest is a stand-in for Prometheus's query_range API, for
// the tests of promrange and of tenancy report.
package promrangetest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Request is one query_range's parameters as the server received them.
type Request struct {
	Method, Path, Query string
	Start, End, Step    float64
}

// Fake records each query_range's parameters and answers with Handle's
// status and body.
type Fake struct {
	Handle func(r Request) (status int, body string)

	mu       sync.Mutex
	requests []Request
}

// Requests returns the requests received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	num := func(k string) float64 { v, _ := strconv.ParseFloat(r.Form.Get(k), 64); return v }
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.Form.Get("query"), Start: num("start"), End: num("end"), Step: num("step")}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	status, body := f.Handle(req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// Matrix answers a range request with one series per label set (a JSON
// object), a point at every step from start to end, valued by value.
func Matrix(r Request, value func(series int, ts float64) string, labelSets ...string) (int, string) {
	var series []string
	for i, ls := range labelSets {
		var values []string
		for ts := r.Start; ts <= r.End; ts += r.Step {
			values = append(values, fmt.Sprintf(`[%s,"%s"]`, strconv.FormatFloat(ts, 'f', -1, 64), value(i, ts)))
		}
		series = append(series, fmt.Sprintf(`{"metric":%s,"values":[%s]}`, ls, strings.Join(values, ",")))
	}
	return http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join(series, ",") + `]}}`
}
