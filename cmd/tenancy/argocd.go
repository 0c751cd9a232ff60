package main

import "fmt"

// runArgoCD is being written; see the issue for the argocd command.
func runArgoCD(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "tenancy argocd: not implemented yet")
	return exitFailure
}
