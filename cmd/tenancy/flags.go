package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
)

// newFlagSet returns a FlagSet that reports errors instead of exiting, with a
// usage text naming the command.
func newFlagSet(e *env, name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.stderr
		fmt.Fprintf(w, "Usage:\n  tenancy %s\n\n%s\n", synopsis, strings.TrimSpace(description))
		printFlags(w, fs)
	}
	return fs
}

// printFlags lists the flags the way kubectl does, with two dashes, which is
// how the README and the help texts write them (Go's PrintDefaults uses one).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if name != "" {
			fmt.Fprintf(w, " %s", name)
		}
		fmt.Fprintf(w, "\n      %s", usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments, as kubectl does (tenancy render FILE --backend kai). A lone "--"
// ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parseArgs parses the command line; it prints help on -h and returns
// (nil, exitOK), or the usage error and exitUsage. ok is true when the
// command should go on.
func parseArgs(e *env, fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	// The flag package calls Usage itself on -h and on a bad flag, while
	// e.stderr is still stderr; silence that and print the usage once, below.
	usage := fs.Usage
	fs.Usage = func() {}
	positional, err := parseInterspersed(fs, args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		w := e.stderr
		e.stderr = e.stdout
		fs.Usage()
		e.stderr = w
		return nil, exitOK, false
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy %s: %v\nRun 'tenancy %s --help' for usage.\n", fs.Name(), err, fs.Name())
		return nil, exitUsage, false
	}
	return positional, exitOK, true
}

// backendFlags are the rendering options every rendering command accepts.
type backendFlags struct {
	backend  string
	kueueAPI string
}

func (b *backendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.backend, "backend", "kueue", "scheduler to render for: kueue or kai")
	fs.StringVar(&b.kueueAPI, "kueue-api", "v1beta2", "Kueue API version: v1beta2 (Kueue >= 0.16) or v1beta1 (Kueue <= 0.15)")
}

func (b *backendFlags) options() (generator.Options, error) {
	return generator.Options{Backend: generator.Backend(b.backend), KueueAPI: b.kueueAPI}.Normalize()
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// agreementPath returns the single optional FILE argument, tenancy.toml by default.
func agreementPath(e *env, cmd string, positional []string) (string, bool) {
	switch len(positional) {
	case 0:
		return "tenancy.toml", true
	case 1:
		return positional[0], true
	}
	fmt.Fprintf(e.stderr, "tenancy %s: expected at most one FILE, got %d\nRun 'tenancy %s --help' for usage.\n", cmd, len(positional), cmd)
	return "", false
}
