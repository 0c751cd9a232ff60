package main

import (
	"fmt"

	"github.com/tenancy-dev/tenancy/generator"
)

func runCheck(e *env, args []string) int {
	fs := newFlagSet(e, "check", "check [FILE]", `
Validate the agreement in FILE (default ./tenancy.toml) without rendering it;
a FILE of - reads it from stdin. Every problem is reported at once on stderr
as file:line:col: field: message, the file named <stdin> for stdin.
Exit status 0 when the agreement is valid (warnings may still be printed),
1 when it is not, 2 on a usage error.

Examples:
  tenancy check                      # ./tenancy.toml
  tenancy check clusters/prod/tenancy.toml
  git show main:tenancy.toml | tenancy check -   # the agreement on main`)
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	path, ok := agreementPath(e, "check", positional)
	if !ok {
		return exitUsage
	}
	p, warnings, code := checkFile(e, path, generator.Options{})
	if p == nil {
		return code
	}
	printDiagnostics(e, warnings)
	fmt.Fprintf(e.stderr, "%s: valid\n", agreementName(path))
	return exitOK
}
