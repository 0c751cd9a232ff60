package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// TestComparePools: on KAI, a change that splits the agreement into node
// pools renames the teams' queues, and a flavor's pool value and sharing
// are said in words; Kueue has no pools to speak of.
func TestComparePools(t *testing.T) {
	one := plantest.Pool([]plan.Flavor{plantest.H100(32), plantest.A100(16)},
		plantest.Team("training", plantest.Quota("h100", 16, 8, 8)),
		plantest.Team("research", plantest.Quota("h100", 8, 8, 8)))
	two := plantest.Pool([]plan.Flavor{plantest.H100(32), plantest.A100(16)},
		plantest.Team("training", plantest.Quota("h100", 16, 8, 8), plantest.Quota("a100", 8, 0, 0)),
		plantest.Team("research", plantest.Quota("h100", 8, 8, 8)))
	relabelled := plantest.Pool([]plan.Flavor{plantest.H100(32), plantest.A100(16)}, two.Teams...)
	relabelled.Flavors[0].NodePool = "NVIDIA-H100-80GB-HBM3"
	relabelled.Flavors[1].GPUSharing = plan.GPUSharingFraction
	tests := map[string]struct {
		old, new *plan.Agreement
		backend  generator.Backend
		want     []string
	}{
		"a second pool": {one, two, generator.KAI, []string{
			"team training's KAI queues: training-a100 (node pool a100), training-h100 (node pool h100), no longer training; KAI deletes training: work labelled with a deleted queue must name a new one and carry its pool's label kai.scheduler/node-pool",
			"team research's KAI queues: research-h100 (node pool h100), no longer research; KAI deletes research: work labelled with a deleted queue must name a new one and carry its pool's label kai.scheduler/node-pool",
		}},
		"back to one queue tree": {two, one, generator.KAI, []string{
			"team training's KAI queues: training, no longer training-a100 (node pool a100), training-h100 (node pool h100); KAI deletes training-a100, training-h100: work labelled with a deleted queue must name a new one",
			"team research's KAI queues: research, no longer research-h100 (node pool h100); KAI deletes research-h100: work labelled with a deleted queue must name a new one",
		}},
		"a pool value and sharing": {two, relabelled, generator.KAI, []string{
			"flavor h100: node pool label value NVIDIA-H100-80GB-HBM3, no longer h100: its Nodes and the work that runs on them need kai.scheduler/node-pool: NVIDIA-H100-80GB-HBM3",
			"flavor a100 now shares its GPUs by fraction: pods may ask for part of one (gpu-fraction, gpu-memory)",
		}},
		"on Kueue":  {one, two, generator.Kueue, nil},
		"no change": {two, two, generator.KAI, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, comparePools(tc.old, tc.new, tc.backend)); diff != "" {
				t.Errorf("pools (-want,+got):\n%s", diff)
			}
		})
	}
}
