package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// writeGitHub writes one GitHub Actions workflow command per diagnostic,
// ::error or ::warning, with the file, line and column it has, so the
// pull request shows it on the line that causes it:
//
//	::error file=tenancy.toml,line=7,col=1,title=tenancy check::teams.training.lendible: unknown key ...
func writeGitHub(w io.Writer, diags diag.List, cols columns) {
	for _, d := range diags {
		command := "error"
		if d.Severity == diag.Warning {
			command = "warning"
		}
		var props []string
		if f := annotationFile(d.File); f != "" {
			props = append(props, "file="+escapeProperty(f))
		}
		if d.Pos.Line > 0 {
			props = append(props, "line="+strconv.Itoa(d.Pos.Line))
			if d.Pos.Column > 0 {
				props = append(props, "col="+strconv.Itoa(cols.at(d)))
			}
		}
		props = append(props, "title="+escapeProperty("tenancy check"))
		msg := d.Message
		if f := d.Field(); f != "" {
			msg = f + ": " + msg
		}
		fmt.Fprintf(w, "::%s %s::%s\n", command, strings.Join(props, ","), escapeData(msg))
	}
}

// The escapes of GitHub's toolkit (@actions/core, command.ts): a message
// may hold anything but its line breaks and %, a property also not the :
// and , that end it.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
