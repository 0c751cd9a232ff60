package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetCollector holds each command's collector: 400% for every command
// but diff, off below diffMemoryLimit for diff, and the operator's GOGC or
// (for diff) GOMEMLIMIT left to the runtime.
func TestSetCollector(t *testing.T) {
	type collector struct {
		Percent int
		Limit   int64
	}
	const untouched = 123 // the percent set before each case
	tests := map[string]struct {
		args []string
		env  map[string]string
		want collector
	}{
		"render":                   {args: []string{"render", "tenancy.toml"}, want: collector{400, math.MaxInt64}},
		"no command (KRM)":         {want: collector{400, math.MaxInt64}},
		"diff":                     {args: []string{"diff", "a.toml", "b.toml"}, want: collector{-1, diffMemoryLimit}},
		"diff with GOGC":           {args: []string{"diff"}, env: map[string]string{"GOGC": "100"}, want: collector{untouched, math.MaxInt64}},
		"diff with GOMEMLIMIT":     {args: []string{"diff"}, env: map[string]string{"GOMEMLIMIT": "2GiB"}, want: collector{400, math.MaxInt64}},
		"render with GOGC":         {args: []string{"render"}, env: map[string]string{"GOGC": "off"}, want: collector{untouched, math.MaxInt64}},
		"a file named diff, later": {args: []string{"render", "diff"}, want: collector{400, math.MaxInt64}},
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			debug.SetGCPercent(untouched)
			debug.SetMemoryLimit(math.MaxInt64)
			setCollector(tc.args, func(k string) string { return tc.env[k] })
			got := collector{Percent: debug.SetGCPercent(untouched), Limit: debug.SetMemoryLimit(math.MaxInt64)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("collector (-want,+got):\n%s", diff)
			}
		})
	}
}
