// Package diagtest helps tests compare diagnostics the way Kueue's tests
// compare field errors: by severity, type, file, position and field path,
// not by wording, so rewording a message (ours or apimachinery's) breaks
// only the few tests about wording.
package diagtest

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// Opts compares diagnostics without their messages.
var Opts = cmp.Options{cmpopts.IgnoreFields(diag.Diagnostic{}, "Message"), Paths}

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
