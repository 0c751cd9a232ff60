package windows

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
var everyDay = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

func TestOpenAt(t *testing.T) {
	night := Spec{Days: weekdays, From: 20 * 60, To: 6 * 60, Zone: "Europe/Berlin"}
	friNight := Spec{Days: []time.Weekday{time.Friday}, From: 20 * 60, To: 6 * 60, Zone: "UTC"}
	dstSpring := Spec{Days: everyDay, From: 2*60 + 30, To: 5 * 60, Zone: "Europe/Berlin"}
	gapOnly := Spec{Days: []time.Weekday{time.Sunday}, From: 2*60 + 10, To: 2*60 + 50, Zone: "Europe/Berlin"}
	cases := map[string]struct {
		spec       Spec
		at         string
		open       bool
		start, end string // of the open occurrence
	}{
		"weekday night, Monday 21:00 Berlin":                {night, "2026-12-07T21:00:00+01:00", true, "2026-12-07T20:00:00+01:00", "2026-12-08T06:00:00+01:00"},
		"weekday night, after midnight":                     {night, "2026-12-08T05:59:59+01:00", true, "2026-12-07T20:00:00+01:00", "2026-12-08T06:00:00+01:00"},
		"closing edge is excluded":                          {night, "2026-12-08T06:00:00+01:00", false, "", ""},
		"opening edge is included":                          {night, "2026-12-07T20:00:00+01:00", true, "2026-12-07T20:00:00+01:00", "2026-12-08T06:00:00+01:00"},
		"Monday before 06:00 closed (Sunday is not listed)": {night, "2026-12-07T03:00:00+01:00", false, "", ""},
		"Saturday 03:00 open from Friday's window":          {night, "2026-12-12T03:00:00+01:00", true, "2026-12-11T20:00:00+01:00", "2026-12-12T06:00:00+01:00"},
		"Saturday 21:00 closed":                             {night, "2026-12-12T21:00:00+01:00", false, "", ""},
		"zone is honoured: 19:30 UTC is 20:30 Berlin":       {night, "2026-12-07T19:30:00Z", true, "2026-12-07T20:00:00+01:00", "2026-12-08T06:00:00+01:00"},
		"Fri 20:00-06:00 UTC open Sat 03:00":                {friNight, "2026-12-12T03:00:00Z", true, "2026-12-11T20:00:00Z", "2026-12-12T06:00:00Z"},
		"Fri window closed Thu 23:00":                       {friNight, "2026-12-10T23:00:00Z", false, "", ""},
		// 2026-03-29: Berlin springs forward at 02:00 CET to 03:00 CEST;
		// 02:30 does not exist, the window opens at the end of the gap.
		"spring forward: 02:30 opens at 03:00 CEST":    {dstSpring, "2026-03-29T03:00:00+02:00", true, "2026-03-29T03:00:00+02:00", "2026-03-29T05:00:00+02:00"},
		"spring forward: 01:59 CET closed":             {dstSpring, "2026-03-29T01:59:00+01:00", false, "", ""},
		"spring forward: the window is two hours long": {dstSpring, "2026-03-29T04:59:00+02:00", true, "2026-03-29T03:00:00+02:00", "2026-03-29T05:00:00+02:00"},
		// 2026-10-25: Berlin falls back at 03:00 CEST to 02:00 CET; 02:30
		// happens twice, the window opens at the first.
		"fall back: opens at the first 02:30 (CEST)":      {dstSpring, "2026-10-25T02:30:00+02:00", true, "2026-10-25T02:30:00+02:00", "2026-10-25T05:00:00+01:00"},
		"fall back: still open at the second 02:30 (CET)": {dstSpring, "2026-10-25T02:30:00+01:00", true, "2026-10-25T02:30:00+02:00", "2026-10-25T05:00:00+01:00"},
		"fall back: closed before":                        {dstSpring, "2026-10-25T02:29:00+02:00", false, "", ""},
		"a window inside the gap is empty that day":       {gapOnly, "2026-03-29T03:00:00+02:00", false, "", ""},
		"the same window opens a week later":              {gapOnly, "2026-04-05T02:20:00+02:00", true, "2026-04-05T02:10:00+02:00", "2026-04-05T02:50:00+02:00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			iv, open, err := tc.spec.OpenAt(windowstest.At(t, tc.at))
			if err != nil {
				t.Fatal(err)
			}
			if open != tc.open {
				t.Fatalf("open = %v, want %v", open, tc.open)
			}
			if !open {
				return
			}
			if !iv.Start.Equal(windowstest.At(t, tc.start)) || !iv.End.Equal(windowstest.At(t, tc.end)) {
				t.Errorf("occurrence %s to %s, want %s to %s", iv.Start, iv.End, tc.start, tc.end)
			}
		})
	}
}

func TestNextEdge(t *testing.T) {
	night := Spec{Days: weekdays, From: 20 * 60, To: 6 * 60, Zone: "Europe/Berlin"}
	cases := map[string]struct {
		spec Spec
		at   string
		want string
	}{
		"Monday noon: opens at 20:00":           {night, "2026-12-07T12:00:00+01:00", "2026-12-07T20:00:00+01:00"},
		"Monday 20:00 exactly: closes next":     {night, "2026-12-07T20:00:00+01:00", "2026-12-08T06:00:00+01:00"},
		"Saturday 07:00: opens Monday":          {night, "2026-12-12T07:00:00+01:00", "2026-12-14T20:00:00+01:00"},
		"before spring forward, in UTC offsets": {Spec{Days: everyDay, From: 2*60 + 30, To: 5 * 60, Zone: "Europe/Berlin"}, "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.spec.NextEdge(windowstest.At(t, tc.at))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(windowstest.At(t, tc.want)) {
				t.Errorf("next edge %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOverlap(t *testing.T) {
	cases := map[string]struct {
		a, b Spec
		day  time.Weekday
		over bool
	}{
		"disjoint same day":           {Spec{Days: everyDay, From: 0, To: 60}, Spec{Days: everyDay, From: 60, To: 120}, 0, false},
		"touching is not overlapping": {Spec{Days: weekdays, From: 20 * 60, To: 6 * 60}, Spec{Days: weekdays, From: 6 * 60, To: 8 * 60}, 0, false},
		"wrap into the next day":      {Spec{Days: []time.Weekday{time.Monday}, From: 22 * 60, To: 2 * 60}, Spec{Days: []time.Weekday{time.Tuesday}, From: 60, To: 3 * 60}, time.Monday, true},
		"wrap into a day not listed":  {Spec{Days: []time.Weekday{time.Monday}, From: 22 * 60, To: 2 * 60}, Spec{Days: []time.Weekday{time.Wednesday}, From: 60, To: 3 * 60}, 0, false},
		"Sunday wraps into Monday":    {Spec{Days: []time.Weekday{time.Sunday}, From: 23 * 60, To: 60}, Spec{Days: []time.Weekday{time.Monday}, From: 0, To: 30}, time.Sunday, true},
		"different days":              {Spec{Days: []time.Weekday{time.Saturday}, From: 0, To: 600}, Spec{Days: []time.Weekday{time.Sunday}, From: 0, To: 600}, 0, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			day, over := Overlap(tc.a, tc.b)
			if over != tc.over || (over && day != tc.day) {
				t.Errorf("Overlap = %v %v, want %v %v", DayName(day), over, DayName(tc.day), tc.over)
			}
			if _, back := Overlap(tc.b, tc.a); back != tc.over {
				t.Errorf("Overlap is not symmetric")
			}
		})
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]Clock{"00:00": 0, "06:00": 360, "23:59": 1439} {
		got, err := ParseClock(s)
		if err != nil || got != want {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", s, got, err, want)
		}
		if got.String() != s {
			t.Errorf("String() = %q, want %q", got.String(), s)
		}
	}
	for _, s := range []string{"24:00", "6:00", "06:60", "0600", "-1:00", "+1:00", "ab:cd", ""} {
		if _, err := ParseClock(s); err == nil {
			t.Errorf("ParseClock(%q) accepted", s)
		}
	}
	for _, s := range []string{"Mars/Olympus", "Local", "", "berlin"} {
		if _, err := LoadZone(s); err == nil {
			t.Errorf("LoadZone(%q) accepted", s)
		}
	}
	mustZone(t, "America/New_York")
	if d, ok := ParseDay("Sun"); !ok || d != time.Sunday {
		t.Errorf("ParseDay(Sun) = %v %v", d, ok)
	}
	for _, s := range []string{"mon", "MON", "Mon", "mOn"} {
		if d, ok := ParseDay(s); !ok || d != time.Monday {
			t.Errorf("ParseDay(%q) = %v %v, want Monday", s, d, ok)
		}
	}
	for _, s := range []string{"Monday", "mo", "", "Mon "} {
		if _, ok := ParseDay(s); ok {
			t.Errorf("ParseDay(%q) accepted", s)
		}
	}
	got := []string{DescribeDays(weekdays), DescribeDays(everyDay), DescribeDays([]time.Weekday{time.Saturday, time.Sunday}), DescribeDays([]time.Weekday{time.Monday, time.Wednesday, time.Thursday, time.Friday})}
	want := []string{"Mon-Fri", "every day", "Sat, Sun", "Mon, Wed-Fri"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DescribeDays (-want,+got):\n%s", diff)
	}
}
