package capacity_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/capacity"
)

const src = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 16
gpus_per_node = 4
[departments.science]
flavors.h100.guaranteed = 16
[teams.a]
department = "science"
flavors.h100 = { guaranteed = 12, lendable = 2 }
[teams.b]
flavors.h100 = { guaranteed = 16, lendable = 16 }
flavors.a100 = { guaranteed = 16 }
`

func TestCheck(t *testing.T) {
	p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := capacity.Check(p, map[string]int64{"h100": 8})
	want := []capacity.Finding{{
		Flavor: "h100", Was: 32, Now: 8,
		// The department's guarantee counts, not its teams' inside it.
		Guaranteed: 32, Short: 24, Guarantees: []capacity.Share{{Name: "department science", GPUs: 16}, {Name: "team b", GPUs: 16}},
		NeverLent: 10, OverPromised: 2, Kept: []capacity.Share{{Name: "team a", GPUs: 10}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check (-want,+got):\n%s", diff)
	}

	// One node: 8 GPUs of h100 (the default), 4 of a100 (gpus_per_node).
	var lost []string
	for _, f := range capacity.NodeLost(p) {
		lost = append(lost, f.Flavor)
		if f.Was-f.Now != map[string]int64{"h100": 8, "a100": 4}[f.Flavor] || !f.Breaks() {
			t.Errorf("NodeLost %s: %d → %d, breaks %v; want one node fewer, breaking the guarantees", f.Flavor, f.Was, f.Now, f.Breaks())
		}
	}
	if diff := cmp.Diff([]string{"h100", "a100"}, lost); diff != "" {
		t.Errorf("NodeLost's flavors (-want,+got):\n%s", diff)
	}
}
