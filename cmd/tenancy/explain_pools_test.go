package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// sharedAgreement is one queue tree whose flavor shares by fraction.
const sharedAgreement = `version = 1
name = "gpu-pool"
[kai]
gpu_sharing = "fraction"
[flavors.h100]
capacity = 8
[teams.training]
guaranteed = 8
`

// TestExplainPools: rendered for KAI, explain says on one queue tree which
// flavors share by fraction; rendered for Kueue, nothing. The node pools'
// table is in the multi-flavor example's golden.
func TestExplainPools(t *testing.T) {
	tests := map[string]struct {
		src     string
		backend generator.Backend
		want    string
	}{
		"one queue tree that shares": {sharedAgreement, generator.KAI, `
KAI: pods may ask for part of a GPU of h100 (annotation gpu-fraction or gpu-memory, on the team's queue);
  the guardrails refuse fractions of any other flavor.
`},
		"on Kueue": {sharedAgreement, generator.Kueue, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, _, err := generator.Check(generator.Source{Data: []byte(tc.src)}, generator.Options{Backend: generator.Kueue})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			explainPools(&b, p, generator.Options{Backend: tc.backend})
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("explain (-want,+got):\n%s", diff)
			}
		})
	}
}
