package main

import "fmt"

// runKustomize is being written; see the issue for the kustomize command.
func runKustomize(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "tenancy kustomize: not implemented yet")
	return exitFailure
}
