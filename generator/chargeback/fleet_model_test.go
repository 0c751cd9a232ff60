package chargeback_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// TestWorkerModels: a fleet's worker is charged from its part of the plan,
// each team at its share there, for both backends.
func TestWorkerModels(t *testing.T) {
	data, err := os.ReadFile("../../examples/fleet/tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := generator.Source{Path: "examples/fleet/tenancy.toml", Data: data}
	want := map[string]map[string]int64{
		"east": {"training": 16, "research": 0, "inference": 0},
		"west": {"training": 0, "research": 8, "inference": 8},
	}
	for _, b := range []gpu.Backend{gpu.Kueue, gpu.KAI} {
		for cluster, guaranteed := range want {
			p, _, err := generator.Check(src, generator.Options{Backend: b, Cluster: cluster})
			if err != nil {
				t.Fatalf("%s %s: %v", b, cluster, err)
			}
			m, err := chargeback.NewModel(p, b)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, team := range m.Teams {
				got[team.Name] = team.Quotas["h100"].Guaranteed
			}
			if d := cmp.Diff(guaranteed, got); d != "" {
				t.Errorf("%s %s: guarantees (-want,+got):\n%s", b, cluster, d)
			}
			if c := m.Flavor("h100").Capacity; c != 16 {
				t.Errorf("%s %s: capacity %d, want the worker's 16", b, cluster, c)
			}
		}
	}
}
