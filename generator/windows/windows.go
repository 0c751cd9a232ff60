// Package windows is the vocabulary of lending windows: a weekly schedule of
// local wall-clock intervals in one IANA time zone (days the window opens,
// from, to, possibly past midnight), parsed from the agreement's strings, and
// its arithmetic on instants. The clock is always a parameter: nothing here
// reads time.Now, so the same agreement and instant give the same answer.
//
// The time zone database is embedded (time/tzdata), so a binary running in
// an image without /usr/share/zoneinfo resolves every zone the check
// accepted.
package windows

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the image has no /usr/share/zoneinfo
)

// ControllerNamespace holds the windows controller that applies the
// windows at their edges (render/windowctl renders it there), so validation
// keeps it from any team.
const ControllerNamespace = "tenancy-system"

// DefaultZone is the zone of a window that names none.
const DefaultZone = "UTC"

// Days of the week as the agreement writes them, Monday first.
var DayNames = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// ParseDay returns the weekday named by one of DayNames, in any case
// ("mon", "MON" and "Mon" are Monday): the case of a day's name says
// nothing, and refusing "mon" with "write Mon" only made a person retype
// it. Everything the agreement's days become (the plan's schedule, the
// messages) names the day by DayNames, so the case never reaches a render.
func ParseDay(s string) (time.Weekday, bool) {
	for i, n := range DayNames {
		if strings.EqualFold(n, s) {
			return time.Weekday((i + 1) % 7), true
		}
	}
	return 0, false
}

// DayName is the agreement's name of a weekday.
func DayName(d time.Weekday) string { return DayNames[(int(d)+6)%7] }

// Clock is a local wall-clock time of day in minutes since midnight.
type Clock int

// ParseClock reads "HH:MM", 00:00 to 23:59, two digits each.
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a time of day: write HH:MM, e.g. \"20:00\"", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || h[0] == '+' || m[0] == '+' || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("%q is not a time of day: write HH:MM from 00:00 to 23:59", s)
	}
	return Clock(hh*60 + mm), nil
}

// String writes the clock as HH:MM.
func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

var zones sync.Map // name -> *time.Location

// LoadZone resolves an IANA zone name (cached: the controller asks often).
// Local is refused: a window must mean the same instant on every machine.
func LoadZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q: name an IANA zone such as \"Europe/Berlin\" or \"UTC\"", name)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: name an IANA zone such as \"Europe/Berlin\" or \"UTC\"", name)
	}
	zones.Store(name, l)
	return l, nil
}

// Spec is one window's schedule: it opens on each of Days at From, local
// time in Zone, and closes at the next To (the same day when To is after
// From, the next day otherwise).
type Spec struct {
	Days []time.Weekday // sorted Monday first; never empty
	From Clock
	To   Clock
	Zone string
}

// Wraps reports whether the window closes on the day after it opens.
func (s Spec) Wraps() bool { return s.To <= s.From }

// Length is the window's length in wall-clock minutes.
func (s Spec) Length() int {
	if s.Wraps() {
		return int(s.To) + 24*60 - int(s.From)
	}
	return int(s.To - s.From)
}

func (s Spec) opensOn(d time.Weekday) bool {
	for _, x := range s.Days {
		if x == d {
			return true
		}
	}
	return false
}

// Interval is one occurrence of a window: open from Start (included) to End
// (excluded).
type Interval struct {
	Start, End time.Time
}

// Contains reports whether t is inside the interval.
func (i Interval) Contains(t time.Time) bool { return !t.Before(i.Start) && t.Before(i.End) }

// reach is the first instant at which the local wall clock of date (y, m, d)
// in loc reaches c. On a day when the clocks spring forward past c (02:30 in
// Berlin on the last Sunday of March), that is the end of the gap (03:00
// CEST); on a day when they fall back over c, its first occurrence.
func reach(y int, m time.Month, d int, c Clock, loc *time.Location) time.Time {
	wall := time.Date(y, m, d, int(c)/60, int(c)%60, 0, 0, time.UTC)
	var best time.Time
	// The instants whose wall clock is wall, one per offset in effect
	// around it.
	for _, probe := range []time.Duration{-26 * time.Hour, 26 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		u := wall.Add(-time.Duration(off) * time.Second)
		lu := u.In(loc)
		if lu.Year() == y && lu.Month() == m && lu.Day() == d && lu.Hour() == int(c)/60 && lu.Minute() == int(c)%60 {
			if best.IsZero() || u.Before(best) {
				best = u
			}
		}
	}
	if !best.IsZero() {
		return best
	}
	// In a gap: the transition instant, the first whose wall clock is past c.
	_, off := wall.Add(-26 * time.Hour).In(loc).Zone()
	after := wall.Add(-time.Duration(off) * time.Second).In(loc)
	start, _ := after.ZoneBounds()
	if start.IsZero() {
		return after
	}
	return start
}

// occurrence is the window's occurrence opening on local date (y, m, d),
// which must be one of its days.
func (s Spec) occurrence(y int, m time.Month, d int, loc *time.Location) Interval {
	start := reach(y, m, d, s.From, loc)
	ed := d
	if s.Wraps() {
		ed++
	}
	end := reach(y, m, ed, s.To, loc)
	return Interval{Start: start, End: end}
}

// Around returns the window's occurrences opening on the local dates from
// two days before t to days after it, in order; an occurrence emptied by a
// clock change (it would open and close in the same gap) is left out.
func (s Spec) Around(t time.Time, days int) ([]Interval, error) {
	loc, err := LoadZone(s.Zone)
	if err != nil {
		return nil, err
	}
	lt := t.In(loc)
	var out []Interval
	for i := -2; i <= days; i++ {
		day := time.Date(lt.Year(), lt.Month(), lt.Day()+i, 12, 0, 0, 0, time.UTC)
		if !s.opensOn(day.Weekday()) {
			continue
		}
		iv := s.occurrence(day.Year(), day.Month(), day.Day(), loc)
		if iv.End.After(iv.Start) {
			out = append(out, iv)
		}
	}
	return out, nil
}

// OpenAt returns the occurrence of the window that contains t, if any.
func (s Spec) OpenAt(t time.Time) (Interval, bool, error) {
	ivs, err := s.Around(t, 0)
	if err != nil {
		return Interval{}, false, err
	}
	for _, iv := range ivs {
		if iv.Contains(t) {
			return iv, true, nil
		}
	}
	return Interval{}, false, nil
}

// NextEdge is the first instant after t at which the window opens or
// closes.
func (s Spec) NextEdge(t time.Time) (time.Time, error) {
	ivs, err := s.Around(t, 8)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	for _, iv := range ivs {
		for _, e := range []time.Time{iv.Start, iv.End} {
			if e.After(t) && (next.IsZero() || e.Before(next)) {
				next = e
			}
		}
	}
	return next, nil
}

// weekMinutes is the window's occurrences as wall-clock minutes of a week
// from Monday 00:00, each [start, end) with end possibly past the week's
// end (Sunday's occurrence that wraps).
func (s Spec) weekMinutes() [][2]int {
	var out [][2]int
	for _, d := range s.Days {
		start := ((int(d)+6)%7)*24*60 + int(s.From)
		out = append(out, [2]int{start, start + s.Length()})
	}
	return out
}

// Overlap returns the first day (the day a's occurrence opens) on which
// windows a and b of one zone are open at the same wall-clock time, if
// any. Comparing wall-clock minutes is exact within one zone: the instant
// a wall-clock time is first reached never decreases as the wall clock
// advances, so wall-clock intervals that do not meet give instants that do
// not meet. Windows in different zones are not compared here (see the
// check, which refuses them for one team).
func Overlap(a, b Spec) (time.Weekday, bool) {
	const week = 7 * 24 * 60
	for _, x := range a.weekMinutes() {
		for _, y := range b.weekMinutes() {
			for _, shift := range []int{-week, 0, week} {
				if x[0] < y[1]+shift && y[0]+shift < x[1] {
					return time.Weekday((x[0]/(24*60) + 1) % 7), true
				}
			}
		}
	}
	return 0, false
}

// Describe writes the schedule for people: "20:00 to 06:00 Europe/Berlin
// on Mon-Fri", "... every day".
func (s Spec) Describe() string {
	days := DescribeDays(s.Days)
	if len(s.Days) != 7 {
		days = "on " + days
	}
	return fmt.Sprintf("%s to %s %s %s", s.From, s.To, s.Zone, days)
}

// DescribeDays writes a day list with runs collapsed: "Mon-Fri", "Sat, Sun",
// "every day".
func DescribeDays(days []time.Weekday) string {
	if len(days) == 7 {
		return "every day"
	}
	idx := make([]int, len(days))
	for i, d := range days {
		idx[i] = (int(d) + 6) % 7
	}
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, DayNames[idx[i]]+"-"+DayNames[idx[j]])
		case j == i:
			parts = append(parts, DayNames[idx[i]])
		default:
			parts = append(parts, DayNames[idx[i]], DayNames[idx[j]])
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// EveryDay is the days of a window that lists none, Monday first.
var EveryDay = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

// SortDays lists the days of a set Monday first.
func SortDays(set map[time.Weekday]bool) []time.Weekday {
	var out []time.Weekday
	for _, d := range EveryDay {
		if set[d] {
			out = append(out, d)
		}
	}
	return out
}
