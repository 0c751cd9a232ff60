package main

import (
	"fmt"

	"github.com/tenancy-dev/tenancy/generator"
)

func runCheck(e *env, args []string) int {
	fs := newFlagSet(e, "check", "check [FILE]", `
Validate the agreement in FILE (default ./tenancy.toml) without rendering it.
Every problem is reported at once on stderr as file:line:col: field: message.
Exit status 0 when the agreement is valid (warnings may still be printed),
1 when it is not.`)
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	path, ok := agreementPath(e, "check", positional)
	if !ok {
		return exitUsage
	}
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitFailure
	}
	_, warnings, err := generator.Check(src)
	if err != nil {
		return reportError(e, err)
	}
	printDiagnostics(e, warnings)
	fmt.Fprintf(e.stderr, "%s: valid\n", path)
	return exitOK
}
