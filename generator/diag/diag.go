// Package diag holds the problems found in an agreement: each tied to a file,
// a position and a field path, so one run can report all of them at once.
//
// Field paths are apimachinery's field.Path, the type Kueue's webhooks and
// the API server build their errors with; Key is the one way tenancy adds a
// TOML key to one, so every step names a field alike.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Severity says whether a diagnostic stops rendering.
type Severity string

const (
	// Error diagnostics make the agreement unusable: nothing is rendered.
	Error Severity = "error"
	// Warning diagnostics are reported but the manifests are still rendered.
	Warning Severity = "warning"
)

// Pos is a 1-based line and column; the zero Pos means "no position".
// File is set for a position in a file the agreement includes (include =
// [...]), and names it as diagnostics do; "" is the agreement's own file.
// A position so carries its file through every step, and a Reporter puts
// a diagnostic in the file its position is in.
type Pos struct {
	Line, Column int
	File         string
}

// LineFrom says where p is for a message located at at: "line 12" when
// both are in one file, else "line 12 of teams/ml.toml", so a message in
// one file of a split agreement does not send its reader to a line of
// another. root names the agreement's own file, whose positions have no
// File.
func (p Pos) LineFrom(at Pos, root string) string {
	if p.File == at.File {
		return fmt.Sprintf("line %d", p.Line)
	}
	file := p.File
	if file == "" {
		file = root
	}
	return fmt.Sprintf("line %d of %s", p.Line, file)
}

// IsZero reports whether the position is unknown.
func (p Pos) IsZero() bool { return p.Line == 0 }

// Before reports whether p comes before q: in the agreement's own file
// before any included one, then by file name, then by line and column.
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	return p.Line < q.Line || p.Line == q.Line && p.Column < q.Column
}

// Origin is where a value of the agreement was written, kept beside values
// derived from it so a later step can report a located problem without the
// file.
type Origin struct {
	Pos  Pos
	Path *field.Path
}

// Diagnostic is one problem in an agreement file.
type Diagnostic struct {
	Severity Severity
	// Type says what kind of problem it is, in apimachinery's vocabulary
	// (Required, Invalid, NotSupported, Duplicate, ...), so tests and
	// tools can tell problems apart without reading the message.
	Type    field.ErrorType
	File    string      // path of the agreement as the user named it
	Pos     Pos         // where the problem is; zero when it has no single position
	Path    *field.Path // e.g. teams.training.lendable; nil for file-level problems
	Message string
	// Suggestion is TOML the user can write to fix the problem, where
	// Message says: a document that parses on its own (a test parses every
	// one), with the agreement's own names in it where they are known.
	// TOML lives here and nowhere in Message, so a message never shows a
	// snippet that would not parse. "" when the fix is not a piece of TOML.
	Suggestion string
}

// Field returns the field path as text, or "" for file-level problems.
func (d Diagnostic) Field() string {
	if d.Path == nil {
		return ""
	}
	return d.Path.String()
}

// String formats the diagnostic the way compilers do, so editors and CI
// annotators can jump to it: file:line:col: [warning: ]field: message. A
// suggestion follows on lines of its own, indented, as compilers print
// their help, so the first line stays the one an editor matches.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d", d.Pos.Line)
		if d.Pos.Column > 0 {
			fmt.Fprintf(&b, ":%d", d.Pos.Column)
		}
	}
	b.WriteString(": ")
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if f := d.Field(); f != "" {
		b.WriteString(f)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	if d.Suggestion != "" {
		for line := range strings.Lines(d.Suggestion) {
			b.WriteString("\n" + SuggestionIndent)
			b.WriteString(strings.TrimSuffix(line, "\n"))
		}
	}
	return b.String()
}

// SuggestionIndent starts each line of a suggestion in String.
const SuggestionIndent = "    "

// TOMLKey writes key as TOML needs it in a suggestion: bare when TOML
// allows, else a basic string with TOML's escapes (not Go's, whose \x and
// \a TOML does not read).
func TOMLKey(key string) string {
	if bare(key) {
		return key
	}
	return TOMLString(key)
}

// TOMLString writes s as a TOML basic string.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Key returns path with a TOML key appended: as a child (.key) when the key
// is a bare TOML key, as a map key ([key]) when it needs quoting in TOML,
// e.g. a node label such as nvidia.com/gpu.product. A path so built reads as
// the user wrote the file and never parses two ways.
func Key(path *field.Path, key string) *field.Path {
	if bare(key) {
		if path == nil {
			return field.NewPath(key)
		}
		return path.Child(key)
	}
	if path == nil {
		// A quoted key at the root has no parent to index; name it as
		// TOML would.
		return field.NewPath(fmt.Sprintf("%q", key))
	}
	return path.Key(key)
}

// bare reports whether TOML allows key unquoted.
func bare(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Reporter collects diagnostics for one file.
type Reporter struct {
	File string
	List List
}

// Errorf reports an error of the given type at pos.
func (r *Reporter) Errorf(typ field.ErrorType, pos Pos, path *field.Path, format string, args ...any) {
	r.add(Error, typ, pos, path, format, args...)
}

// Warnf reports a warning of the given type at pos.
func (r *Reporter) Warnf(typ field.ErrorType, pos Pos, path *field.Path, format string, args ...any) {
	r.add(Warning, typ, pos, path, format, args...)
}

// Suggest attaches toml, the TOML that fixes it, to the diagnostic reported
// last.
func (r *Reporter) Suggest(toml string) {
	r.List[len(r.List)-1].Suggestion = toml
}

func (r *Reporter) add(sev Severity, typ field.ErrorType, pos Pos, path *field.Path, format string, args ...any) {
	file := r.File
	if pos.File != "" {
		file, pos.File = pos.File, ""
	}
	r.List = append(r.List, Diagnostic{
		Severity: sev, Type: typ, File: file, Pos: pos, Path: path,
		Message: fmt.Sprintf(format, args...),
	})
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
		if a.Pos != b.Pos {
			return a.Pos.Before(b.Pos)
		}
		if fa, fb := a.Field(), b.Field(); fa != fb {
			return fa < fb
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
