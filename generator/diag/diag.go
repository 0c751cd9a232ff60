// Package diag holds the problems found in an agreement: each tied to a file,
// a position and a field path, so one run can report all of them at once.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic stops rendering.
type Severity string

const (
	// Error diagnostics make the agreement unusable: nothing is rendered.
	Error Severity = "error"
	// Warning diagnostics are reported but the manifests are still rendered.
	Warning Severity = "warning"
)

// Diagnostic is one problem in an agreement file.
type Diagnostic struct {
	Severity Severity
	File     string // path of the agreement as the user named it
	Line     int    // 1-based; 0 when the problem has no single position
	Column   int    // 1-based; 0 when unknown
	Field    string // field path such as teams.training.lendable; empty for file-level problems
	Message  string
}

// String formats the diagnostic the way compilers do, so editors and CI
// annotators can jump to it: file:line:col: [warning: ]field: message.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d", d.Line)
		if d.Column > 0 {
			fmt.Fprintf(&b, ":%d", d.Column)
		}
	}
	b.WriteString(": ")
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// List is an ordered collection of diagnostics.
type List []Diagnostic

// Errors returns the diagnostics of severity Error.
func (l List) Errors() List { return l.filter(Error) }

// Warnings returns the diagnostics of severity Warning.
func (l List) Warnings() List { return l.filter(Warning) }

func (l List) filter(s Severity) List {
	var out List
	for _, d := range l {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders diagnostics by position, then field, so output is stable
// whatever order the checks ran in.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Message < b.Message
	})
}

// String joins the diagnostics one per line.
func (l List) String() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// AgreementError is the error returned when an agreement has problems. It
// carries every diagnostic, warnings included, so callers can report them
// in their own format (KRM results, Argo CD messages, PR comments).
type AgreementError struct {
	Diagnostics List
}

func (e *AgreementError) Error() string {
	errs := e.Diagnostics.Errors()
	switch len(errs) {
	case 0:
		return "invalid agreement"
	case 1:
		return errs[0].String()
	}
	return fmt.Sprintf("%d problems:\n%s", len(errs), errs.String())
}
