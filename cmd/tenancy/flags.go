package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tenancy-dev/tenancy/generator"
)

// newFlagSet returns a FlagSet that reports errors instead of exiting, with a
// usage text naming the command. pflag parses flags wherever they appear
// among the arguments, as kubectl does (tenancy render FILE --backend kai); a
// lone "-" is an argument (stdin) and "--" ends the flags.
func newFlagSet(e *env, name, synopsis, description string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.stderr
		fmt.Fprintf(w, "Usage:\n  tenancy %s\n\n%s\n", synopsis, strings.TrimSpace(description))
		printFlags(w, fs)
	}
	return fs
}

// printFlags lists the flags the way kubectl does, with two dashes, one flag
// and its value name on a line and the usage below it, which is how the
// README and the help texts write them.
func printFlags(w io.Writer, fs *pflag.FlagSet) {
	first := true
	fs.VisitAll(func(f *pflag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		name, usage := pflag.UnquoteUsage(f)
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

// parseArgs parses the command line; it prints help on -h and returns
// (nil, exitOK), or the usage error and exitUsage. ok is true when the
// command should go on.
func parseArgs(e *env, fs *pflag.FlagSet, args []string) (positional []string, code int, ok bool) {
	// pflag calls Usage itself on -h, while e.stderr is still stderr;
	// silence that and print the usage once, below.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, pflag.ErrHelp) {
		fs.SetOutput(e.stdout)
		w := e.stderr
		e.stderr = e.stdout
		fs.Usage()
		e.stderr = w
		return nil, exitOK, false
	}
	if err != nil {
		if hint := singleDash(fs, args); hint != "" {
			err = errors.New(hint)
		}
		fmt.Fprintf(e.stderr, "tenancy %s: %v\nRun 'tenancy %s --help' for usage.\n", fs.Name(), err, fs.Name())
		return nil, exitUsage, false
	}
	return fs.Args(), exitOK, true
}

// singleDash explains the error pflag gives for a long flag written with one
// dash, as Go's flag package allowed (-backend kai): pflag reads it as the
// shorthands b, a, c... and says "unknown shorthand flag: 'b' in -backend".
func singleDash(fs *pflag.FlagSet, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && fs.Lookup(name) != nil {
			return fmt.Sprintf("%s: flags take two dashes: --%s", a, strings.TrimPrefix(a, "-"))
		}
	}
	return ""
}

// backendFlags are the rendering options every rendering command accepts.
type backendFlags struct {
	backend  string
	kueueAPI string
}

func (b *backendFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&b.backend, "backend", "", backendUsage("render for"))
	fs.StringVar(&b.kueueAPI, "kueue-api", "v1beta2", "Kueue API version: v1beta2 (Kueue >= 0.16) or v1beta1 (Kueue <= 0.15)")
}

// backendUsage is the --backend flag's usage for a command that does what.
func backendUsage(what string) string {
	return "scheduler to " + what + ": kueue or kai (default: the agreement's backend key, its first when it names both; kueue without it)"
}

func (b *backendFlags) options() (generator.Options, error) {
	return backendOptions(b.backend, b.kueueAPI)
}

// backendOptions are the options of --backend and --kueue-api; a backend
// the agreement does not name is refused at its backend key, as asked for
// by --backend.
func backendOptions(backend, kueueAPI string) (generator.Options, error) {
	o := generator.Options{Backend: generator.Backend(backend), KueueAPI: kueueAPI}
	if backend != "" {
		o.BackendFrom = "--backend"
	}
	return o.Normalize()
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

// noArguments reports a command's positional arguments, which it takes none
// of, saying why (what it reads instead), and returns false when there were
// any.
func noArguments(e *env, cmd string, positional []string, why string) bool {
	if len(positional) == 0 {
		return true
	}
	if why != "" {
		why = ": " + why
	}
	fmt.Fprintf(e.stderr, "tenancy %s: unexpected argument %q%s\nRun 'tenancy %s --help' for usage.\n", cmd, positional[0], why, cmd)
	return false
}

// clusterUsage is the --cluster flag's usage, for the commands that take it.
const clusterUsage = "the part of a fleet agreement (one with [clusters]) to work on: its manager's name or a worker cluster's; required by render for such an agreement, refused for any other"

// withCluster sets the part --cluster names in opts; the flag is named as
// where the cluster comes from even when absent, so the refusal of a fleet
// without it says what to add.
func withCluster(opts generator.Options, cluster string) generator.Options {
	opts.Cluster, opts.ClusterFrom = cluster, "--cluster"
	return opts
}
