// Package review says which parts of an agreement (the pool, a department,
// a team) are due for review: their review_by date against today. It is
// pure, today handed in, so tests fix the date; and it only ever warns, as
// a date passing must never break a sync.
package review

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Item is one review_by of the agreement.
type Item struct {
	// Part names what is reviewed: "the pool", "department NAME" or
	// "team NAME".
	Part   string
	Owners []string
	Date   time.Time
	Origin diag.Origin
	// Overdue is true once today is after Date; DaysOver counts the days
	// since (0 when not overdue).
	Overdue  bool
	DaysOver int
}

// Items lists every review_by of the agreement, the pool first, then the
// departments and the teams (each sorted by name), judged at today (a date;
// its time of day is ignored).
func Items(p *plan.Agreement, today time.Time) []Item {
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	var out []Item
	add := func(part string, s plan.Stewardship) {
		if s.ReviewBy.IsZero() {
			return
		}
		it := Item{Part: part, Owners: s.Owners, Date: s.ReviewBy, Origin: s.ReviewByOrigin}
		if day.After(s.ReviewBy) {
			it.Overdue = true
			it.DaysOver = int(day.Sub(s.ReviewBy).Hours() / 24)
		}
		out = append(out, it)
	}
	add("the pool", p.Stewardship)
	for i := range p.Departments {
		add("department "+p.Departments[i].Name, p.Departments[i].Stewardship)
	}
	for i := range p.Teams {
		add("team "+p.Teams[i].Name, p.Teams[i].Stewardship)
	}
	return out
}

// Warnings returns a warning at each review_by that today is past.
func Warnings(p *plan.Agreement, today time.Time) diag.List {
	r := &diag.Reporter{File: p.File}
	for _, it := range Items(p, today) {
		if it.Overdue {
			r.Warnf(field.ErrorTypeInvalid, it.Origin.Pos, it.Origin.Path, "%s was due for review on %s (%s ago): review it with its teams, then set the next date", it.Part, it.Date.Format(time.DateOnly), Days(it.DaysOver))
		}
	}
	return r.List
}

// Days says n days in words: "1 day", "12 days".
func Days(n int) string {
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}
