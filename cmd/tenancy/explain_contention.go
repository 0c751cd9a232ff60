package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// contentionJSON is explain --contention --output json: the agreement and
// one report per backend (contention.Report's fields, documented in
// README, "Contention").
type contentionJSON struct {
	File    string               `json:"file"`
	Pool    string               `json:"pool"`
	Reports []*contention.Report `json:"reports"`
}

// contentionUsage says what is wrong with explain's contention flags; empty
// when nothing is.
func contentionUsage(on, busySet bool, busy []string, output string) string {
	switch {
	case output != "text" && output != "json":
		return fmt.Sprintf("--output %q: want text or json", output)
	case !on && output != "text":
		return "--output json is for --contention; the agreement's tables are text"
	case !on && busySet:
		return "--busy needs --contention"
	case busySet && (len(busy) == 0 || slices.Contains(busy, "")):
		return "--busy: name one or more teams or departments, comma-separated"
	}
	return ""
}

// explainContention writes explain --contention's output to out, or says on
// stderr what is wrong and returns the exit code.
func explainContention(e *env, out io.Writer, file string, p *plan.Agreement, opts generator.Options, busy []string, at time.Time, output string) int {
	q := contention.Query{Busy: busy}
	if p.HasWindows() {
		q.At = at
	}
	reports, err := generator.Contention(p, opts, q)
	if errors.Is(err, contention.ErrUnknownTeam) {
		fmt.Fprintf(e.stderr, "tenancy explain: --busy: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy explain: %v\n", err)
		return exitFailure
	}
	if output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(contentionJSON{File: file, Pool: p.Name, Reports: reports}); err != nil {
			fmt.Fprintf(e.stderr, "tenancy explain: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(out)
		}
		writeContention(out, file, p, r)
	}
	return exitOK
}

// writeContention writes one backend's report as tables.
func writeContention(w io.Writer, file string, p *plan.Agreement, r *contention.Report) {
	fmt.Fprintf(w, "%s: the GPU pool %q under contention, on %s\n", file, p.Name, r.Backend)
	if r.At != nil {
		fmt.Fprintf(w, "Lending windows as at %s.\n", r.At.Format(time.RFC3339))
	}
	if r.Busy != nil {
		fmt.Fprintf(w, "Busy: %s; every other team idle.\n", strings.Join(r.Busy, ", "))
	}
	ranges := false
	for _, f := range r.Flavors {
		fmt.Fprintf(w, "\n%s (%s, capacity %d): what each team runs\n", f.Flavor, f.Resource, f.Capacity)
		tw := tableWriter(w)
		head := []string{"TEAM"}
		if len(p.Departments) > 0 {
			head = append(head, "DEPARTMENT")
		}
		head = append(head, "GUARANTEED", "ALONE", "ALL BUSY")
		if r.Busy != nil {
			head = append(head, "BUSY")
		}
		tableRow(tw, head...)
		var notes []string
		for _, o := range f.Teams {
			cells := []string{o.Team}
			if len(p.Departments) > 0 {
				dept := o.Department
				if dept == "" {
					dept = "-"
				}
				cells = append(cells, dept)
			}
			cells = append(cells, formatInt(o.Guaranteed), o.Alone.String(), o.AllBusy.String())
			ranges = ranges || !o.Alone.Decided() || !o.AllBusy.Decided()
			if o.Busy != nil {
				b := o.Busy.String()
				if !slices.Contains(r.Busy, o.Team) {
					b += " (idle)"
				}
				ranges = ranges || !o.Busy.Decided()
				cells = append(cells, b)
			}
			tableRow(tw, cells...)
			if o.Note != "" {
				notes = append(notes, o.Team+": "+o.Note)
			}
		}
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if ranges {
		fmt.Fprintln(w, "\nA range (8-16) is the least and the most the team runs: the order in which work arrives decides.")
	}
	fmt.Fprintf(w, "\nHow %s divides what is left to borrow (sources in %s)\n", r.Backend, r.Source)
	for _, rule := range r.Rules {
		writeWrapped(w, "  - ", "    ", strings.TrimPrefix(rule, string(r.Backend)+": "))
	}
}

// writeWrapped writes text in lines of at most about 100 columns, the first
// after first, the others after rest.
func writeWrapped(w io.Writer, first, rest, text string) {
	const width = 100
	line := first
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	fmt.Fprintln(w, line)
}
