package chargeback_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// mixed has two whole-GPU flavors and a MIG flavor.
const mixed = `version = 1
name = "pool"
[flavors.h100]
capacity = 16
[flavors.a100]
capacity = 8
[flavors.mig]
resource = "nvidia.com/mig-3g.40gb"
capacity = 14
[teams.a.flavors.h100]
guaranteed = 8
[teams.a.flavors.mig]
guaranteed = 7
lendable = 7
[teams.b.flavors.a100]
guaranteed = 8
[monitoring]
enabled = true
[monitoring.prices]
h100 = 4
a100 = 2
mig = 1
`

func mixedModel(t *testing.T, b gpu.Backend) *chargeback.Model {
	t.Helper()
	return modelOf(t, mixed, b)
}

func TestModel(t *testing.T) {
	type flavor struct {
		Name                 string
		Capacity, Unassigned int64
		Price                float64
	}
	tests := map[string]struct {
		backend gpu.Backend
		want    []flavor
		quotaA  map[string]chargeback.Quota
	}{
		// Kueue: one account per flavor, in units of its resource.
		"kueue": {
			backend: gpu.Kueue,
			want:    []flavor{{"h100", 16, 8, 4}, {"a100", 8, 0, 2}, {"mig", 14, 7, 1}},
			quotaA:  map[string]chargeback.Quota{"h100": {Guaranteed: 8}, "a100": {}, "mig": {Guaranteed: 7, Lendable: 7}},
		},
		// KAI: a node pool per flavor the teams hold, each an account, in
		// KAI's GPUs (a 3g slice is 3).
		"kai": {
			backend: gpu.KAI,
			want:    []flavor{{"h100", 16, 8, 4}, {"a100", 8, 0, 2}, {"mig", 42, 21, 1}},
			quotaA:  map[string]chargeback.Quota{"h100": {Guaranteed: 8}, "a100": {}, "mig": {Guaranteed: 21, Lendable: 21}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := mixedModel(t, tc.backend)
			var got []flavor
			for _, f := range m.Flavors {
				got = append(got, flavor{f.Name, f.Capacity, f.Unassigned, f.Price})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("flavors (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.quotaA, m.Team("a").Quotas); diff != "" {
				t.Errorf("team a's quotas (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestUtilization: two whole-GPU flavors cannot be told apart in
// dcgm-exporter's series, a MIG flavor can, by GPU_I_PROFILE.
func TestUtilization(t *testing.T) {
	m := mixedModel(t, gpu.Kueue)
	got := map[string]string{}
	for _, f := range m.Flavors {
		got[f.Name] = m.Utilization(f, "ns")
	}
	want := map[string]string{
		"h100": "",
		"a100": "",
		"mig":  "DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace=~`ns`, pod!=\"\", GPU_I_PROFILE=~`3g\\.40gb`}",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("utilisation queries (-want,+got):\n%s", diff)
	}
}

// TestKAIPoolSources: on KAI's node pools, each pool's team Queues are read
// as that pool's flavor, the pool's suffix taken off the queue name so the
// series name the team; a team with no Queue in a pool is not asked for.
func TestKAIPoolSources(t *testing.T) {
	m := mixedModel(t, gpu.KAI)
	var got []string
	for _, q := range m.Sources() {
		if q.Kind == chargeback.Allocated {
			got = append(got, q.Flavor+" "+q.TeamLabel+" "+q.Expr)
		}
	}
	want := []string{
		"h100 queue_name label_replace(sum by (queue_name) (kai_queue_allocated_gpus{queue_name=~`a-h100`}), \"queue_name\", \"$1\", \"queue_name\", `(.+)-h100`)",
		"a100 queue_name label_replace(sum by (queue_name) (kai_queue_allocated_gpus{queue_name=~`b-a100`}), \"queue_name\", \"$1\", \"queue_name\", `(.+)-a100`)",
		"mig queue_name label_replace(sum by (queue_name) (kai_queue_allocated_gpus{queue_name=~`a-mig`}), \"queue_name\", \"$1\", \"queue_name\", `(.+)-mig`)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allocated queries (-want,+got):\n%s", diff)
	}
}
