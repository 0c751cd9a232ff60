package kai_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

// TestPools: a pool per flavor that KAI counts and someone holds, only when
// there are two or more; the pool's name is the flavor's, its value the
// flavor's node_pool; QueueName suffixes names only then.
func TestPools(t *testing.T) {
	product := plantest.A100(8)
	product.NodePool = "NVIDIA-A100-SXM4-80GB"
	amd := plan.Flavor{Name: "mi300", Resource: "amd.com/gpu", Capacity: 8, NodePool: "mi300"}
	tests := map[string]struct {
		p         *plan.Agreement
		want      []string // name=value
		wantQueue string   // QueueName(p, "training", first flavor)
	}{
		"one flavor: unsharded": {
			p:         plantest.Pool([]plan.Flavor{plantest.H100(16)}, plantest.Team("training", plantest.Quota("h100", 8, 8, 0))),
			wantQueue: "training",
		},
		"two flavors, one held: unsharded": {
			p:         plantest.Pool([]plan.Flavor{plantest.H100(16), plantest.A100(8)}, plantest.Team("training", plantest.Quota("h100", 8, 8, 0))),
			wantQueue: "training",
		},
		"two flavors held, one only by a borrow limit: two pools": {
			p: plantest.Pool([]plan.Flavor{plantest.H100(16), product},
				plantest.Team("training", plantest.Quota("h100", 8, 8, 0)), plantest.Team("research", plantest.Quota("a100", 0, 0, 4))),
			want:      []string{"h100=h100", "a100=NVIDIA-A100-SXM4-80GB"},
			wantQueue: "training-h100",
		},
		"a flavor KAI does not count is no pool": {
			p: plantest.Pool([]plan.Flavor{plantest.H100(16), amd},
				plantest.Team("training", plantest.Quota("h100", 8, 8, 0), plantest.Quota("mi300", 8, 8, 0))),
			wantQueue: "training",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, pool := range kai.Pools(tc.p) {
				if pool.Flavor.Name != pool.Name {
					t.Errorf("pool %s is flavor %s's", pool.Name, pool.Flavor.Name)
				}
				got = append(got, pool.Name+"="+pool.Value)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pools (-want,+got):\n%s", diff)
			}
			if q := kai.QueueName(tc.p, "training", &tc.p.Flavors[0]); q != tc.wantQueue {
				t.Errorf("QueueName = %q, want %q", q, tc.wantQueue)
			}
		})
	}
}
