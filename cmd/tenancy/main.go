// Command tenancy renders a GPU-sharing agreement (tenancy.toml) into Kueue or
// KAI Scheduler manifests, checks it, explains it, and diffs two versions of
// it. The same binary is the kustomize KRM function and the Argo CD plugin.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tenancy-dev/tenancy/internal/version"
)

// Exit codes. CI scripts branch on them, so they are part of the interface.
const (
	exitOK      = 0
	exitFailure = 1 // a bad agreement, or changes with diff --exit-code
	exitUsage   = 2 // bad flags or arguments
)

// env is what a command may touch of the outside world. Tests build one with
// buffers; main builds it from the process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// environ lists the environment as KEY=VALUE, for commands that scan
	// prefixes such as ARGOCD_ENV_.
	environ func() []string
	// dir is the working directory relative paths are read from.
	dir string
	// stdinIsTerminal is true when a person, not a pipe, is on stdin.
	stdinIsTerminal bool
	// now is the clock check reads review_by dates against; nil is the
	// system's. Tests fix it.
	now func() time.Time
}

type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

// commands lists the subcommands; help prints them in this order.
var commands []command

func init() {
	commands = []command{
		{"init", "write a commented agreement to start from (./tenancy.toml, or - for stdout)", runInit},
		{"render", "print the agreement's manifests as one YAML stream", runRender},
		{"check", "run render's checks without output (for the agreement's backends); exit 0 when valid, 1 when not", runCheck},
		{"explain", "print the agreement as a table a person reads", runExplain},
		{"diff", "show what a change to the agreement does to teams and manifests", runDiff},
		{"owners", "print a CODEOWNERS block: who answers for the agreement's files", runOwners},
		{"kustomize", "run as a kustomize KRM function (ResourceList on stdin)", runKustomize},
		{"argocd", "run as an Argo CD Config Management Plugin (argocd generate); argocd ignore-differences for windows", runArgoCD},
		{"report", "print the GPU-hours and cost statement of a range, from Prometheus", runReport},
		{"windows", "run the lending-windows controller (applies each window's limits at its edges)", runWindows},
	}
}

func main() {
	setCollector(os.Args[1:], os.Getenv)
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenancy:", err)
		os.Exit(exitFailure)
	}
	e := &env{
		stdin:           os.Stdin,
		stdout:          os.Stdout,
		stderr:          os.Stderr,
		getenv:          os.Getenv,
		environ:         os.Environ,
		dir:             wd,
		stdinIsTerminal: isTerminal(os.Stdin),
	}
	os.Exit(run(e, os.Args[1:]))
}

// diffMemoryLimit is the heap tenancy diff grows to before its collector
// runs: two renderings of 10,000 teams, which diff holds until it has
// compared them, stay under it (a peak RSS of about 850 MB).
const diffMemoryLimit = 1 << 30

// setCollector tunes the garbage collector for the command args run. A run
// is short and keeps nearly all it allocates until it writes, so the
// default collector only re-marks a growing heap: at 10,000 teams a quarter
// of the CPU for no lower peak memory. So it collects at 400% instead of
// 100%, and diff, whose two renderings are all live until compared, not
// at all below diffMemoryLimit (at 10,000 teams 0.4 s less CPU than at
// 400%, for 850 instead of 700 MB). An explicit GOGC wins, and for diff
// an explicit GOMEMLIMIT too.
func setCollector(args []string, getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	if len(args) > 0 && args[0] == "diff" && getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(diffMemoryLimit)
		return
	}
	debug.SetGCPercent(400)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// run dispatches to a subcommand and returns the exit code.
func run(e *env, args []string) int {
	if len(args) == 0 {
		// kustomize execs a function with no arguments and a ResourceList on
		// stdin; a person at a terminal gets the help instead.
		if !e.stdinIsTerminal {
			return runKustomize(e, nil)
		}
		usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		usage(e.stdout)
		return exitOK
	case "help":
		return runHelp(e, args[1:])
	case "--version", "version":
		fmt.Fprintln(e.stdout, "tenancy", version.Version)
		return exitOK
	}
	if c := lookupCommand(name); c != nil {
		return c.run(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "tenancy: %s\n\n", unknownCommand(name))
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString(`tenancy renders a GPU-sharing agreement (tenancy.toml) into scheduler manifests.

Usage:
  tenancy <command> [flags] [args]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Run 'tenancy help <command>' or 'tenancy <command> --help' for a command's
flags and examples.

Exit codes: 0 success, 1 invalid agreement (or changes with diff --exit-code),
2 usage error, 3 check --strict: valid but not at the capacity --capacity or
--lose gives, 4 diff --exit-code: changes that need owners' approval. On any
error nothing is written to stdout.
`)
	io.WriteString(w, b.String())
}
