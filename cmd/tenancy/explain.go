package main

import "fmt"

func runExplain(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "tenancy explain: not implemented yet")
	return exitFailure
}
