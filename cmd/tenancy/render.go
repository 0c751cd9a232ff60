package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

func runRender(e *env, args []string) int {
	fs := newFlagSet(e, "render", "render [--backend kueue|kai] [--kueue-api v1beta2|v1beta1] [--cluster NAME] [FILE]", `
Render the agreement in FILE (default ./tenancy.toml; - reads it from stdin)
and print its manifests as one YAML stream on stdout, objects separated by
"---". The output is byte-identical on every run: objects in a stable order,
keys sorted, quantities canonical and server defaults written out, so Argo CD
never sees phantom drift.

Warnings (for example what KAI cannot express exactly) go to stderr. On any
error the exit status is 1 and nothing is written to stdout; usage errors
exit 2.

Examples:
  tenancy render                                   # ./tenancy.toml, for the backend it names
  tenancy render --backend kai clusters/prod/tenancy.toml
  tenancy render --kueue-api v1beta1 | kubectl apply --server-side -f -
  git show main:tenancy.toml | tenancy render -   # the agreement on main
  tenancy render --cluster east examples/fleet/tenancy.toml   # one cluster of a fleet

An agreement with [clusters] is a fleet: render each part with --cluster,
the manager's name (MultiKueue's objects and the fleet-wide quotas) or a
worker's (its share); without --cluster it is a usage error naming the
parts.`)
	var bf backendFlags
	bf.register(fs)
	cluster := fs.String("cluster", "", clusterUsage)
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	path, ok := agreementPath(e, "render", positional)
	if !ok {
		return exitUsage
	}
	opts, err := bf.options()
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy render: %v\n", err)
		return exitUsage
	}
	res, code := renderFile(e, path, withCluster(opts, *cluster))
	if res == nil {
		return code
	}
	printDiagnostics(e, res.Warnings)
	if _, err := e.stdout.Write(res.Manifests); err != nil {
		fmt.Fprintf(e.stderr, "tenancy render: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// stdinPath is the FILE argument that means standard input, as with kubectl
// -f - and cat -: git show main:tenancy.toml | tenancy check -
const stdinPath = "-"

// agreementName is what messages call the agreement at path: <stdin> for -,
// otherwise the path as the user wrote it.
func agreementName(path string) string {
	if path == stdinPath {
		return generator.StdinName
	}
	return path
}

// readAgreement reads the agreement for every command that takes a FILE. A
// path of "-" is standard input, named <stdin>; any other path is read
// relative to the command's working directory and keeps the path as the user
// wrote it for messages. Stdin is read even when it is a terminal, as cat
// does: the command waits for end of input rather than second-guess the user.
func readAgreement(e *env, path string) (generator.Source, error) {
	if path == stdinPath {
		return generator.Read(generator.StdinName, e.stdin)
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(e.dir, path)
	}
	src, err := generator.ReadFile(full)
	if err != nil {
		// Name the file as the user wrote it, not as we resolved it.
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe):
			pe.Path = path
			err = withInitHint(err, path)
		case errors.Is(err, generator.ErrTooLarge):
			err = fmt.Errorf("%s: %w", path, generator.ErrTooLarge)
		}
		return src, err
	}
	src.Path = path
	return src, nil
}

// renderFile reads and renders; on failure it reports on stderr and returns
// a nil result with the exit code.
func renderFile(e *env, path string, opts generator.Options) (*generator.Result, int) {
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return nil, exitFailure
	}
	res, err := generator.Render(src, opts)
	if err != nil {
		return nil, reportError(e, err)
	}
	return res, exitOK
}

// checkFile reads the agreement and runs check on it (generator.Check:
// every check render runs for opts; generator.CheckAll: for every backend
// the agreement names); on failure it reports on stderr and returns a nil
// plan with the exit code.
func checkFile(e *env, path string, opts generator.Options, check func(generator.Source, generator.Options) (*plan.Agreement, []generator.Diagnostic, error)) (*plan.Agreement, []generator.Diagnostic, int) {
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return nil, nil, exitFailure
	}
	p, warnings, err := check(src, opts)
	if err != nil {
		return nil, nil, reportError(e, err)
	}
	return p, warnings, exitOK
}

// reportError prints every diagnostic of an invalid agreement, or the error.
func reportError(e *env, err error) int {
	var ae *generator.AgreementError
	if errors.As(err, &ae) {
		printDiagnostics(e, ae.Diagnostics)
		fmt.Fprintln(e.stderr, invalidSummary(ae))
		return exitFailure
	}
	if errors.Is(err, generator.ErrOptions) {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
	return exitFailure
}

// invalidSummary is the line that ends the report of an invalid agreement.
func invalidSummary(ae *generator.AgreementError) string {
	return fmt.Sprintf("tenancy: %s is invalid: %d error(s)", firstFile(ae), len(ae.Diagnostics.Errors()))
}

func firstFile(ae *generator.AgreementError) string {
	for _, d := range ae.Diagnostics {
		if d.File != "" {
			return d.File
		}
	}
	return "agreement"
}

func printDiagnostics(e *env, ds []generator.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintln(e.stderr, d.String())
	}
}
