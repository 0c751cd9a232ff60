package schedule_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/generator/schedule"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// issue is the issue's agreement: inference lends 6 of its 8 GPUs at night
// on weekdays, Berlin time, and one more window from 02:30 every Sunday, so
// the clock changes of 2026 (29 March, 25 October, both Sundays) fall in it.
const issue = windowstest.Head + windowstest.WeekdayNights + `[[teams.inference.windows]]
days = ["Sun"]
from = "02:30"
to = "05:00"
timezone = "Europe/Berlin"
lendable = 2
borrow = 1
` + windowstest.Research

func TestAt(t *testing.T) {
	p := sourcetest.Plan(t, issue)
	type want struct {
		lendable, borrow int64 // inference's h100
		open             []int // inference's open windows
		next             string
	}
	cases := map[string]struct {
		at   string
		want want
	}{
		"Monday afternoon: the rule outside every window":         {"2026-12-07T15:00:00+01:00", want{0, 0, nil, "2026-12-07T20:00:00+01:00"}},
		"Monday 20:00: the window opens":                          {"2026-12-07T20:00:00+01:00", want{6, 0, []int{0}, "2026-12-08T06:00:00+01:00"}},
		"Tuesday 05:59: still open":                               {"2026-12-08T05:59:00+01:00", want{6, 0, []int{0}, "2026-12-08T06:00:00+01:00"}},
		"Friday night wraps into Saturday 03:00":                  {"2026-12-12T03:00:00+01:00", want{6, 0, []int{0}, "2026-12-12T06:00:00+01:00"}},
		"Saturday 06:00: closed until Sunday 02:30":               {"2026-12-12T06:00:00+01:00", want{0, 0, nil, "2026-12-13T02:30:00+01:00"}},
		"Sunday 20:00: no weekday window on Sunday":               {"2026-12-13T20:00:00+01:00", want{0, 0, nil, "2026-12-14T20:00:00+01:00"}},
		"spring forward: Sunday's window opens at 03:00 CEST":     {"2026-03-29T03:00:00+02:00", want{2, 1, []int{1}, "2026-03-29T05:00:00+02:00"}},
		"spring forward: 01:59 CET, before it":                    {"2026-03-29T01:59:00+01:00", want{0, 0, nil, "2026-03-29T03:00:00+02:00"}},
		"fall back: the first 02:30 opens it":                     {"2026-10-25T02:30:00+02:00", want{2, 1, []int{1}, "2026-10-25T05:00:00+01:00"}},
		"fall back: the second 02:30 is inside":                   {"2026-10-25T02:30:00+01:00", want{2, 1, []int{1}, "2026-10-25T05:00:00+01:00"}},
		"Saturday before fall back: next edge is the first 02:30": {"2026-10-24T12:00:00+02:00", want{0, 0, nil, "2026-10-25T02:30:00+02:00"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := schedule.At(p, windowstest.At(t, tc.at))
			if err != nil {
				t.Fatal(err)
			}
			q := s.Quota("inference", "h100")
			var open []int
			for _, o := range s.Open {
				if o.Team == "inference" {
					open = append(open, o.Index)
				}
			}
			if !s.NextEdge.Equal(windowstest.At(t, tc.want.next)) {
				t.Errorf("next edge %s, want %s", s.NextEdge, tc.want.next)
			}
			got := want{q.Lendable, q.Borrow, open, tc.want.next}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("state (-want,+got):\n%s", diff)
			}
			if r := s.Quota("research", "h100"); r.Borrow != 6 || r.Lendable != 0 {
				t.Errorf("research changed: %+v", r)
			}
			if q.Guaranteed != 8 {
				t.Errorf("guaranteed changed inside a window: %d", q.Guaranteed)
			}
		})
	}
}

func TestAtWithoutWindows(t *testing.T) {
	p := sourcetest.Plan(t, "version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 8\n[teams.a]\nguaranteed = 8\nlendable = 2\n")
	s, err := schedule.At(p, windowstest.At(t, "2026-12-07T20:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.NextEdge.IsZero() || len(s.Open) != 0 || s.Quota("a", "h100").Lendable != 2 {
		t.Errorf("state without windows: %+v", s)
	}
}
