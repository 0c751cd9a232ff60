package main

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"unicode/utf8"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// checkOutputs are the formats of check --output; text is the default and
// writes nothing on stdout but, with --capacity or --lose, what each team
// runs there.
var checkOutputs = []string{"text", "github", "sarif"}

// writeCheckReport writes check's verdict in a CI format: the diagnostics on
// stdout (GitHub workflow commands or a SARIF log) and the verdict line on
// stderr, with the exit status text gives. An error that is no verdict on
// the agreement (it could not be read) is reported as text mode reports it,
// with nothing on stdout. valid is the verdict of an agreement that is.
func writeCheckReport(e *env, format string, src generator.Source, diags diag.List, err error, valid verdict) int {
	var ae *generator.AgreementError
	switch {
	case err == nil:
	case errors.As(err, &ae):
		diags = ae.Diagnostics
	default:
		return reportError(e, err)
	}
	cols := columns{data: src.Data, file: agreementName(src.Path)}
	var out bytes.Buffer
	switch format {
	case "github":
		writeGitHub(&out, diags, cols)
	case "sarif":
		if werr := writeSARIF(&out, diags, cols); werr != nil {
			fmt.Fprintf(e.stderr, "tenancy check: %v\n", werr)
			return exitFailure
		}
	}
	if _, werr := e.stdout.Write(out.Bytes()); werr != nil {
		fmt.Fprintf(e.stderr, "tenancy check: write output: %v\n", werr)
		return exitFailure
	}
	// The annotations are the messages in GitHub's log; SARIF is read by
	// tools, so the log keeps the text lines too.
	if format != "github" {
		printDiagnostics(e, diags)
	}
	if ae != nil {
		fmt.Fprintln(e.stderr, invalidSummary(ae))
		return exitFailure
	}
	fmt.Fprintln(e.stderr, valid.line)
	return valid.code
}

// columns converts the diagnostics' columns, which count bytes as go-toml
// does, to the characters (Unicode code points) annotation viewers count, so
// that a key after a non-ASCII string on its line is still pointed at
// exactly.
type columns struct {
	data []byte
	file string // the file data is; "" for any
}

// at is d's column in characters. A diagnostic in a file the agreement
// includes keeps its byte column: data is the agreement's own file.
func (c columns) at(d diag.Diagnostic) int {
	if c.file != "" && d.File != c.file {
		return d.Pos.Column
	}
	return c.of(d.Pos)
}

func (c columns) of(p diag.Pos) int {
	if p.Line < 1 || p.Column < 1 {
		return p.Column
	}
	start := 0
	for line := 1; line < p.Line; line++ {
		i := bytes.IndexByte(c.data[start:], '\n')
		if i < 0 {
			return p.Column
		}
		start += i + 1
	}
	end := min(start+p.Column-1, len(c.data))
	return utf8.RuneCount(c.data[start:end]) + 1
}

// annotationFile is the path an annotation names: the agreement's path as
// given, cleaned and with forward slashes, which is how GitHub names a file
// of the repository when check runs at its root; "" for stdin, which no
// annotation can point into.
func annotationFile(file string) string {
	if file == "" || file == generator.StdinName {
		return ""
	}
	return path.Clean(filepath.ToSlash(file))
}
