package main

import "fmt"

// runDiff is being written; see the issue for the diff command.
func runDiff(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "tenancy diff: not implemented yet")
	return exitFailure
}
