// Package diagtest helps tests compare diagnostics the way Kueue's tests
// compare field errors: by severity, type, file, position and field path,
// not by wording, so rewording a message (ours or apimachinery's) breaks
// only the few tests about wording.
package diagtest

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Paths compares field paths by their text, so an expected path can be
// written as it prints.
var Paths = cmp.Transformer("fieldPath", func(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
})

// Opts compares diagnostics without their messages and suggestions, which
// are wording; Diff checks the suggestions apart.
var Opts = cmp.Options{cmpopts.IgnoreFields(diag.Diagnostic{}, "Message", "Suggestion"), Paths}

// Diff compares diagnostics as Opts does, returning cmp.Diff's text, and
// fails t for every got diagnostic that TOML checks refuses, so each table
// test of a rule also proves the rule's suggestions parse.
func Diff(t testing.TB, want, got diag.List) string {
	t.Helper()
	for _, d := range got {
		if err := TOML(d); err != nil {
			t.Errorf("%s\n%v", d, err)
		}
	}
	return cmp.Diff(want, got, Opts)
}

// assignment is a key = value in a message: TOML to write, which belongs
// in the suggestion.
var assignment = regexp.MustCompile(`(^|[\s({,])[A-Za-z0-9_."-]+ = `)

// header is a [table] or [[array]] header named in a message, such as
// [topology] or [[teams.serving.windows]]; a field path's index
// (windows[0]) is not one, as no blank or parenthesis precedes it.
var header = regexp.MustCompile(`(^|[\s(])(\[\[?[^\]\s]+\]\]?)`)

// TOML says what is wrong with the TOML of d: a suggestion that does not
// parse (go-toml/v2, a TOML 1.0 parser), a key = value written in the
// message instead of the suggestion, or a table header in the message that
// would not parse if copied. nil when there is nothing wrong.
func TOML(d diag.Diagnostic) error {
	if d.Suggestion != "" {
		var v map[string]any
		if err := toml.Unmarshal([]byte(d.Suggestion), &v); err != nil {
			return fmt.Errorf("suggestion %q is not TOML: %w", d.Suggestion, err)
		}
	}
	if m := assignment.FindString(d.Message); m != "" {
		return fmt.Errorf("message writes TOML (%q): put it in Suggestion", m)
	}
	for _, m := range header.FindAllStringSubmatch(d.Message, -1) {
		var v map[string]any
		if err := toml.Unmarshal([]byte(m[2]), &v); err != nil {
			return fmt.Errorf("message names header %s, which is not TOML: %w", m[2], err)
		}
	}
	return nil
}

// Error is the expected error diagnostic at file:line:col on path ("" for
// none).
func Error(file string, line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	d := diag.Diagnostic{Severity: diag.Error, Type: typ, File: file, Pos: diag.Pos{Line: line, Column: col}}
	if path != "" {
		d.Path = field.NewPath(path)
	}
	return d
}

// Warning is Error with severity Warning.
func Warning(file string, line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	d := Error(file, line, col, path, typ)
	d.Severity = diag.Warning
	return d
}
