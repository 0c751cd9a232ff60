// Package synthetic writes agreements with any number of teams, for the
// benchmarks and the linearity test. It is not internal so the
// whole-process benchmark under test/bench can use it too.
package synthetic

import (
	"fmt"
	"strings"
)

// Agreement returns a valid agreement with n teams sharing one flavor, in
// the one-flavor shorthand, without warnings from two teams on. The teams
// vary the way examples/large does (every third reclaims with "wait", every
// fifth limits VMs, lendable cycles through 0, 4 and 8, each may borrow 4)
// so every branch of the renderers runs.
//
// It is smaller per team than examples/large (two flavors, two namespaces
// per team): at 10,000 teams that shape is about 2 MB, over the 1 MiB cap on
// agreement files, while this one stays near 700 KB.
func Agreement(n int) []byte {
	var b strings.Builder
	b.Grow(128 + 72*n)
	fmt.Fprintf(&b, "# A synthetic agreement with %d teams.\nversion = 1\nname = \"gpu-pool\"\n\n", n)
	fmt.Fprintf(&b, "[flavors.h100]\ncapacity = %d\n\n", 8*n)
	b.WriteString("[priorities]\ncritical = 1000\nstandard = 100\nscavenger = 10\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n[teams.team-%05d]\nguaranteed = 8\nlendable = %d\nborrow = 4\n", i, 4*(i%3))
		if i%3 == 0 {
			b.WriteString("reclaim = \"wait\"\n")
		}
		if i%5 == 0 {
			b.WriteString("vms = 2\n")
		}
	}
	return []byte(b.String())
}
