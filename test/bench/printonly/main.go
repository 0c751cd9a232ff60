// Command printonly writes a file to stdout and does nothing else. The
// whole-process benchmark compares `tenancy render` with it: the cost of
// starting a Go process, reading an input and writing the same bytes, with
// no rendering at all. Built with -tags apifloor it also links the API
// packages the render path builds on (apifloor.go).
package main

import "os"

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: printonly FILE\n")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(data); err != nil {
		os.Exit(1)
	}
}
