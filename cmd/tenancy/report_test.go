package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		"RFC 3339":        {in: "2026-11-01T00:00:00Z", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		"RFC 3339 offset": {in: "2026-11-01T02:00:00+02:00", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		"now":             {in: "now", want: now},
		"-30d":            {in: "-30d", want: now.Add(-30 * 24 * time.Hour)},
		"-12h":            {in: "-12h", want: now.Add(-12 * time.Hour)},
		"-2w":             {in: "-2w", want: now.Add(-14 * 24 * time.Hour)},
		"-1d12h":          {in: "-1d12h", want: now.Add(-36 * time.Hour)},
		"unknown unit":    {in: "-30x", wantErr: true},
		"fraction":        {in: "-1.5h", wantErr: true},
		"empty":           {in: "", wantErr: true},
		"a date only":     {in: "2026-11-01", wantErr: true},
		"future relative": {in: "+3d", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseTime(tc.in, now)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseTime(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			}
			if !tc.wantErr && !got.Equal(tc.want) {
				t.Errorf("parseTime(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestReportUsage: bad flags exit 2 with a message naming the flag, and
// nothing on stdout; no Prometheus exits 1.
func TestReportUsage(t *testing.T) {
	tests := map[string]struct {
		args     []string
		code     int
		inStderr string
	}{
		"no --prometheus":   {args: []string{"report", "--from", "-1d"}, code: exitUsage, inStderr: "--prometheus"},
		"no --from":         {args: []string{"report", "--prometheus", "http://127.0.0.1:1"}, code: exitUsage, inStderr: "--from"},
		"bad output":        {args: []string{"report", "--prometheus", "http://x", "--from", "-1d", "--output", "xml"}, code: exitUsage, inStderr: "--output"},
		"to before from":    {args: []string{"report", "--prometheus", "http://x", "--from", "-1d", "--to", "-2d"}, code: exitUsage, inStderr: "--to"},
		"not a URL":         {args: []string{"report", "--prometheus", "localhost:9090", "--from", "-1d"}, code: exitUsage, inStderr: "--prometheus"},
		"no Prometheus":     {args: []string{"report", "--prometheus", "http://127.0.0.1:1", "--from", "-1h", "../../generator/testdata/monitoring/tenancy.toml"}, code: exitFailure, inStderr: "127.0.0.1:1"},
		"missing agreement": {args: []string{"report", "--prometheus", "http://127.0.0.1:1", "--from", "-1h", "nope.toml"}, code: exitFailure, inStderr: "nope.toml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(".", tc.args...)
			if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr naming %q", code, stdout, stderr, tc.code, tc.inStderr)
			}
		})
	}
}

func TestWriteStatementCSV(t *testing.T) {
	u := 0.5
	st := &chargeback.Statement{Rows: []chargeback.Row{{Team: "research", Flavor: "h100", Guaranteed: 12, Allocated: 6, Idle: 6, Lent: 2, Utilization: &u, Cost: 24}},
		Total: chargeback.Row{Team: "total", Flavor: "*", Guaranteed: 12, Allocated: 6, Idle: 6, Lent: 2, Cost: 24}}
	var b bytes.Buffer
	if err := writeStatement(&b, st, "csv"); err != nil {
		t.Fatal(err)
	}
	want := "team,flavor,guaranteed_gpu_hours,allocated_gpu_hours,borrowed_gpu_hours,idle_gpu_hours,lent_gpu_hours,utilization,cost\n" +
		"research,h100,12.00,6.00,0.00,6.00,2.00,0.500,24.00\n" +
		"total,*,12.00,6.00,0.00,6.00,2.00,,24.00\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("CSV (-want,+got):\n%s", diff)
	}
}

// TestWriteStatementFormats: the table and Markdown forms carry the same
// columns and a total row; JSON the field names.
func TestWriteStatementFormats(t *testing.T) {
	st := &chargeback.Statement{Period: chargeback.Period{Pool: "gpu-pool", Currency: "EUR"}, Coverage: 1,
		Rows:  []chargeback.Row{{Team: "research", Flavor: "h100", Guaranteed: 12}},
		Total: chargeback.Row{Team: "total", Flavor: "*", Guaranteed: 12}}
	for _, format := range []string{"table", "markdown", "json"} {
		var b bytes.Buffer
		if err := writeStatement(&b, st, format); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"guaranteed_gpu_hours", "lent_gpu_hours", "research", "total"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, b.String())
			}
		}
	}
}

// TestWriteStatementDepartments: with departments, a department column after
// team and a row per department (team "*") before the total; JSON names the
// department on each row and lists the department rows.
func TestWriteStatementDepartments(t *testing.T) {
	st := &chargeback.Statement{
		Rows: []chargeback.Row{
			{Team: "genomics", Department: "science", Flavor: "h100", Guaranteed: 8, Cost: 8},
			{Team: "ops", Flavor: "h100", Guaranteed: 4, Cost: 4},
			{Team: "physics", Department: "science", Flavor: "h100", Guaranteed: 8, Cost: 8},
		},
		Departments: []chargeback.Row{{Team: "*", Department: "science", Flavor: "h100", Guaranteed: 16, Cost: 16}},
		Total:       chargeback.Row{Team: "total", Flavor: "*", Guaranteed: 20, Cost: 20}}
	var b bytes.Buffer
	if err := writeStatement(&b, st, "csv"); err != nil {
		t.Fatal(err)
	}
	want := "team,department,flavor,guaranteed_gpu_hours,allocated_gpu_hours,borrowed_gpu_hours,idle_gpu_hours,lent_gpu_hours,utilization,cost\n" +
		"genomics,science,h100,8.00,0.00,0.00,0.00,0.00,,8.00\n" +
		"ops,,h100,4.00,0.00,0.00,0.00,0.00,,4.00\n" +
		"physics,science,h100,8.00,0.00,0.00,0.00,0.00,,8.00\n" +
		"*,science,h100,16.00,0.00,0.00,0.00,0.00,,16.00\n" +
		"total,,*,20.00,0.00,0.00,0.00,0.00,,20.00\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("CSV (-want,+got):\n%s", diff)
	}
	b.Reset()
	if err := writeStatement(&b, st, "json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"department": "science"`, `"departments": [`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
}
