package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/review"
)

// today is the date check judges review_by against: the clock's, unless a
// test fixed env.now.
func (e *env) today() time.Time {
	if e.now != nil {
		return e.now().UTC()
	}
	return time.Now().UTC()
}

// withReviews adds a warning for every review_by today is past to check's
// warnings, in the order every diagnostic is in. Only check and explain
// read the date: a render, the KRM function and the Argo CD plugin never
// do, so the date passing changes no sync.
func withReviews(warnings []generator.Diagnostic, p *plan.Agreement, today time.Time) []generator.Diagnostic {
	due := review.Warnings(p, today)
	if len(due) == 0 {
		return warnings
	}
	all := append(diag.List(append([]generator.Diagnostic(nil), warnings...)), due...)
	all.Sort()
	return all
}

// explainReviews lists every review_by of the agreement and whether it is
// due at the instant explain shows (--at).
func explainReviews(w io.Writer, p *plan.Agreement, at time.Time) {
	items := review.Items(p, at)
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "\nReviews (at %s):\n", at.Format(time.DateOnly))
	tw := tableWriter(w)
	tableRow(tw, "PART", "REVIEW BY", "STATUS", "OWNERS")
	for _, it := range items {
		status := "due in " + review.Days(int(it.Date.Sub(dayOf(at)).Hours()/24))
		switch {
		case it.Overdue:
			status = "OVERDUE by " + review.Days(it.DaysOver)
		case it.Date.Equal(dayOf(at)):
			status = "due today"
		}
		owners := strings.Join(it.Owners, " ")
		if owners == "" {
			owners = "-"
		}
		tableRow(tw, it.Part, it.Date.Format(time.DateOnly), status, owners)
	}
	tw.Flush()
}

// dayOf is midnight UTC of t's date.
func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
