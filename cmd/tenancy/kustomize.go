package main

import (
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/tenancy-dev/tenancy/kustomize"
)

// runKustomize is the KRM function. kustomize execs the binary with no
// arguments (main routes that here) in the kustomization's directory, with a
// ResourceList on stdin. stdout gets one ResourceList, items only when all
// went well; stderr gets every warning and error, because kustomize shows
// the function's stderr but not its results.
func runKustomize(e *env, args []string) int {
	fs := newFlagSet(e, "kustomize", "kustomize < resourcelist.yaml", `
Run as a kustomize KRM function: read a ResourceList whose functionConfig is a
`+kustomize.APIVersion+` `+kustomize.Kind+` from stdin, render the agreement it
names and write a ResourceList holding the manifests to stdout.

spec.file is read relative to the working directory, which kustomize sets to
the kustomization's directory; paths leaving it are refused. spec.agreement
holds the TOML inline instead. spec.backend and spec.kueueAPI are as
--backend and --kueue-api of render.

The binary does this too when run with no arguments and stdin is not a
terminal, which is how kustomize execs it:

  apiVersion: `+kustomize.APIVersion+`
  kind: `+kustomize.Kind+`
  metadata:
    name: gpu-tenancy
    annotations:
      config.kubernetes.io/function: |
        exec:
          path: tenancy
  spec:
    file: tenancy.toml

On any error the ResourceList has results and no items, the problems are
printed on stderr and the exit status is 1.`)
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	if !noArguments(e, "kustomize", positional, "the ResourceList is read from stdin") {
		return exitUsage
	}
	if e.stdinIsTerminal {
		fmt.Fprintln(e.stderr, "tenancy kustomize: expects a ResourceList on stdin, which is a terminal\nRun 'tenancy kustomize --help' for usage.")
		return exitUsage
	}

	results, err := kustomize.Run(e.dir, e.stdin, e.stdout)
	for _, r := range results {
		fmt.Fprintln(e.stderr, r.Message)
	}
	if err == nil {
		return exitOK
	}
	var rs framework.Results
	if !errors.As(err, &rs) {
		fmt.Fprintf(e.stderr, "tenancy kustomize: %v\n", err)
	}
	// The directory tells which kustomization failed when an overlay pulls
	// in several bases, each with its own tenancy.toml.
	fmt.Fprintf(e.stderr, "tenancy kustomize: failed in %s; no resources were generated\n", e.dir)
	return exitFailure
}
