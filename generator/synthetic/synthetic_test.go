package synthetic_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

// The benchmarks need valid agreements under the 1 MiB cap at every size
// they use, up to 10,000 teams.
func TestAgreementIsValidAndUnderTheCap(t *testing.T) {
	for _, teams := range []int{3, 100, 1000, 10000} {
		t.Run(fmt.Sprintf("teams=%d", teams), func(t *testing.T) {
			data := synthetic.Agreement(teams)
			if len(data) > generator.MaxAgreementSize {
				t.Fatalf("%d bytes, over the %d-byte cap", len(data), generator.MaxAgreementSize)
			}
			p, warnings, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: data}, generator.Options{})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", warnings)
			}
			if len(p.Teams) != teams {
				t.Errorf("%d teams in the plan, want %d", len(p.Teams), teams)
			}
		})
	}
}

// examples/large is committed (the golden tests render it); it must be what
// its generator writes, so nobody edits one and not the other.
func TestLargeExampleIsGenerated(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "examples", "large", "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, synthetic.Large(synthetic.LargeTeams)) {
		t.Error("examples/large/tenancy.toml differs from synthetic.Large: run `cd examples && go run large/generate.go`")
	}
}
