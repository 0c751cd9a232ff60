package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// TestExplainAtTakesReportsInstants: --at reads what report's --from and
// --to read (parseTime): RFC 3339, now, and durations before now; the
// instant is shown in UTC, as report shows its range.
func TestExplainAtTakesReportsInstants(t *testing.T) {
	dir := writeAgreement(t, windowstest.Agreement)
	atLine := regexp.MustCompile(`\(applied by the tenancy windows controller; at (\S+)\)`)
	tests := map[string]struct {
		at   string
		want func(now time.Time) time.Time
	}{
		"RFC 3339 with an offset": {"2026-12-07T21:00:00+01:00", func(time.Time) time.Time { return time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC) }},
		"now":                     {"now", func(now time.Time) time.Time { return now }},
		"12 hours ago":            {"-12h", func(now time.Time) time.Time { return now.Add(-12 * time.Hour) }},
		"a week and a day ago":    {"-1w1d", func(now time.Time) time.Time { return now.Add(-8 * 24 * time.Hour) }},
		"the default":             {"", func(now time.Time) time.Time { return now }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{"explain"}
			if tc.at != "" {
				args = append(args, "--at", tc.at)
			}
			now := time.Now().UTC()
			stdout, stderr, code := runIn(dir, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			m := atLine.FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("no lending windows line:\n%s", stdout)
			}
			got, err := time.Parse(time.RFC3339, m[1])
			if err != nil {
				t.Fatal(err)
			}
			if got.Location() != time.UTC {
				t.Errorf("at %s: want it in UTC", m[1])
			}
			if want := tc.want(now); got.Sub(want).Abs() > 5*time.Second {
				t.Errorf("at %s, want %s", got, want.Format(time.RFC3339))
			}
		})
	}
}
