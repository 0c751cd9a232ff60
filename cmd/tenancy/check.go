package main

import (
	"fmt"
	"slices"

	"github.com/tenancy-dev/tenancy/generator"
)

func runCheck(e *env, args []string) int {
	fs := newFlagSet(e, "check", "check [--backend kueue|kai] [--kueue-api v1beta2|v1beta1] [--cluster NAME] [--capacity FLAVOR=GPUS]... [--lose FLAVOR=GPUS]... [--strict] [FILE]", `
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

--capacity h100=24 (or --lose h100=8) checks the agreement against less
hardware than it claims, as after losing a node: a warning at the flavor's
capacity when the guarantees no longer all fit (by how much, and whose) and
when the never-lent GPUs are over-promised. Both repeat, one flavor each; a
flavor the agreement lacks is a usage error. With --strict such a warning
fails the check with status 3, so a pipeline can ask "does this agreement
survive losing one node?". With text output, stdout then says per backend
what each team runs alone and with every team busy on the GPUs left,
before → after: KAI divides those GPUs, and neither scheduler admits less
than its quotas for want of nodes, so the GPUs admitted beyond them wait,
any team's (a range).

A review_by date in the past is a warning at its key, never a failure.

Exit status 0 when the agreement is valid (warnings may still be printed),
1 when it is not, 2 on a usage error, 3 with --strict when it is valid but
breaks a promise at the capacity --capacity or --lose gives; whatever the
output.

Examples:
  tenancy check                      # ./tenancy.toml, for the backends it names
  tenancy check --backend kai clusters/prod/tenancy.toml
  git show main:tenancy.toml | tenancy check -   # the agreement on main
  tenancy check --output github      # in a GitHub Actions step: annotations
  tenancy check --output sarif > tenancy.sarif   # for upload-sarif
  tenancy check --cluster east examples/fleet/tenancy.toml   # one part of a fleet
  tenancy check --lose h100=8 --strict   # fails (3) unless it survives losing a node

An agreement with [clusters] is a fleet: without --cluster, check checks
every part (the manager for Kueue, the workers for every backend), as each
cluster's render will be; with it, that part.`)
	backend := fs.String("backend", "", "scheduler to check for: kueue or kai (default: every one the agreement's backend key names; kueue without it)")
	kueueAPI := fs.String("kueue-api", "v1beta2", "Kueue API version: v1beta2 (Kueue >= 0.16) or v1beta1 (Kueue <= 0.15)")
	cluster := fs.String("cluster", "", clusterUsage)
	output := fs.String("output", "text", "text (on stderr), github (workflow commands on stdout) or sarif (SARIF 2.1.0 on stdout)")
	capacityFlags := fs.StringArray("capacity", nil, "FLAVOR=GPUS: check against this capacity of the flavor instead of the agreement's (repeatable)")
	loseFlags := fs.StringArray("lose", nil, "FLAVOR=GPUS: check against the flavor's capacity less this many (repeatable)")
	strict := fs.Bool("strict", false, "exit 3 when --capacity or --lose breaks a guarantee or over-promises never-lent GPUs")
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
	cuts, err := parseCuts(*capacityFlags, *loseFlags)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy check: %v\nRun 'tenancy check --help' for usage.\n", err)
		return exitUsage
	}
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitFailure
	}
	opts = withCluster(opts, *cluster)
	p, diags, err := generator.CheckAll(src, opts)
	broken := 0
	var outcomes []byte // what each team runs at the capacity given
	if err == nil {
		diags = withReviews(diags, p, e.today())
		caps, given, cerr := capacities(p, cuts)
		if cerr != nil {
			fmt.Fprintf(e.stderr, "tenancy check: %v\nRun 'tenancy check --help' for usage.\n", cerr)
			return exitUsage
		}
		diags, broken = withCapacity(diags, p, caps, given)
		if len(cuts) > 0 && *output == "text" {
			if outcomes, err = capacityOutcomes(agreementName(path), p, opts, caps, cuts); err != nil {
				fmt.Fprintf(e.stderr, "tenancy check: %v\n", err)
				return exitFailure
			}
		}
	}
	// The last line is the verdict: "valid", unless --strict fails the
	// agreement at the capacity given, which it then says instead.
	v := verdict{line: agreementName(path) + ": valid", code: exitOK}
	if *strict && broken > 0 {
		v = verdict{line: fmt.Sprintf("tenancy check: %s breaks %s at the capacity given (--strict)", agreementName(path), plural(broken, "promise")), code: exitCapacity}
	}
	if *output != "text" {
		return writeCheckReport(e, *output, src, diags, err, v)
	}
	if err != nil {
		return reportError(e, err)
	}
	if _, err := e.stdout.Write(outcomes); err != nil {
		fmt.Fprintf(e.stderr, "tenancy check: write output: %v\n", err)
		return exitFailure
	}
	printDiagnostics(e, diags)
	fmt.Fprintln(e.stderr, v.line)
	return v.code
}

// verdict is the line check ends with when the agreement is valid, and
// its exit status.
type verdict struct {
	line string
	code int
}
