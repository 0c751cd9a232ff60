package main

import (
	"fmt"
	"slices"

	"github.com/tenancy-dev/tenancy/generator"
)

func runCheck(e *env, args []string) int {
	fs := newFlagSet(e, "check", "check [--backend kueue|kai] [--kueue-api v1beta2|v1beta1] [--cluster NAME] [FILE]", `
Check the agreement in FILE (default ./tenancy.toml; - reads it from stdin)
exactly as render does, without writing manifests: an agreement check accepts
renders, and one it refuses fails render with the same messages. Every
problem is reported at once on stderr as file:line:col: field: message, the
file named <stdin> for stdin.

Without --backend, the checks are those of every backend the agreement's
backend key names, or of Kueue when it has none: what render renders by
default. When the key names both, every message that only one backend gives
starts with its name ("kueue: " or "kai: "), as it does in render's output,
and the agreement is valid only if both accept it. With --backend, the
checks are those of that backend's render; a backend the key does not name
is refused at the key.

--output github writes every problem on stdout as a GitHub Actions workflow
command (::error or ::warning with its file, line and column), so a pull
request shows it on the line that causes it; --output sarif writes a SARIF
2.1.0 log on stdout, for code scanning. The verdict stays on stderr.

Exit status 0 when the agreement is valid (warnings may still be printed),
1 when it is not, 2 on a usage error, whatever the output.

Examples:
  tenancy check                      # ./tenancy.toml, for the backends it names
  tenancy check --backend kai clusters/prod/tenancy.toml
  git show main:tenancy.toml | tenancy check -   # the agreement on main
  tenancy check --output github      # in a GitHub Actions step: annotations
  tenancy check --output sarif > tenancy.sarif   # for upload-sarif
  tenancy check --cluster east examples/fleet/tenancy.toml   # one part of a fleet

An agreement with [clusters] is a fleet: without --cluster, check checks
every part (the manager for Kueue, the workers for every backend), as each
cluster's render will be; with it, that part.`)
	backend := fs.String("backend", "", "scheduler to check for: kueue or kai (default: every one the agreement's backend key names; kueue without it)")
	kueueAPI := fs.String("kueue-api", "v1beta2", "Kueue API version: v1beta2 (Kueue >= 0.16) or v1beta1 (Kueue <= 0.15)")
	cluster := fs.String("cluster", "", clusterUsage)
	output := fs.String("output", "text", "text (on stderr), github (workflow commands on stdout) or sarif (SARIF 2.1.0 on stdout)")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	if !slices.Contains(checkOutputs, *output) {
		fmt.Fprintf(e.stderr, "tenancy check: --output %q: want text, github or sarif\nRun 'tenancy check --help' for usage.\n", *output)
		return exitUsage
	}
	path, ok := agreementPath(e, "check", positional)
	if !ok {
		return exitUsage
	}
	opts, err := backendOptions(*backend, *kueueAPI)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy check: %v\n", err)
		return exitUsage
	}
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitFailure
	}
	_, diags, err := generator.CheckAll(src, withCluster(opts, *cluster))
	if *output != "text" {
		return writeCheckReport(e, *output, src, diags, err)
	}
	if err != nil {
		return reportError(e, err)
	}
	printDiagnostics(e, diags)
	fmt.Fprintf(e.stderr, "%s: valid\n", agreementName(path))
	return exitOK
}
