package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// pooledAgreement has two node pools under KAI: h100, shared by fraction,
// and a100 (MIG slices) labelled a100-mig; research holds no A100s.
const pooledAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
gpu_sharing = "fraction"
[flavors.a100]
resource = "nvidia.com/mig-1g.10gb"
capacity = 56
node_pool = "a100-mig"
[teams.training.flavors.h100]
guaranteed = 16
[teams.training.flavors.a100]
guaranteed = 14
[teams.research.flavors.h100]
guaranteed = 8
`

// TestExplainPools: rendered for KAI, explain lists each node pool with
// its label value, sharing and team queues, or, on one queue tree, the
// flavors that share by fraction; otherwise it says nothing.
func TestExplainPools(t *testing.T) {
	single := strings.Replace(pooledAgreement, "[teams.training.flavors.a100]\nguaranteed = 14\n", "", 1)
	tests := map[string]struct {
		src     string
		backend generator.Backend
		want    string
	}{
		"two pools": {pooledAgreement, generator.KAI, `
KAI node pools (one SchedulingShard and queue tree per flavor; GPU work names its team's queue of a pool
  and carries the pool's label kai.scheduler/node-pool, on the workload or its pod template)
  POOL  LABEL VALUE  RESOURCE                GPU SHARING  TEAM QUEUES
  h100  h100         nvidia.com/gpu          fraction     research-h100, training-h100
  a100  a100-mig     nvidia.com/mig-1g.10gb  none         training-a100
  The guardrails refuse GPU work without the pool label, with another pool's label than its queue's, asking for
  a resource its pool does not hold, or asking for part of a GPU in a pool that does not share. Nodes are not
  labelled by tenancy: see docs/kai.md.
`},
		"one queue tree that shares": {single, generator.KAI, `
KAI: pods may ask for part of a GPU of h100 (annotation gpu-fraction or gpu-memory, on the team's queue);
  the guardrails refuse fractions of any other flavor.
`},
		"on Kueue": {pooledAgreement, generator.Kueue, ""},
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
