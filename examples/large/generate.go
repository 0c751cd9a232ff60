//go:build ignore

// Generate writes large/tenancy.toml: an agreement with many teams, for the
// golden tests and benchmarks. Run from examples/: go run large/generate.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

func main() {
	teams := flag.Int("teams", synthetic.LargeTeams, "number of teams")
	out := flag.String("o", "large/tenancy.toml", "output file")
	flag.Parse()
	if err := os.WriteFile(*out, synthetic.Large(*teams), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
