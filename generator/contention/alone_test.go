package contention

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
)

// The alone columns are computed in closed form, one team at a time, so
// that 10,000 teams do not build 10,000 scenarios; they must equal the
// scenario with that one team busy, on every agreement in the repository
// that has teams to compare.
func TestAloneIsTheScenarioOfOneTeam(t *testing.T) {
	for _, path := range []string{"tenancy.toml", "examples/departments/tenancy.toml", "examples/multi-flavor/tenancy.toml", "examples/topology/tenancy.toml", "examples/large/tenancy.toml"} {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "..", path))
			if err != nil {
				t.Fatal(err)
			}
			p := sourcetest.Plan(t, string(src))
			busy := make([]bool, len(p.Teams))
			for _, f := range p.Flavors {
				k := newKueueFlavor(p, f.Name)
				for i := range p.Teams {
					busy[i] = true
					if diff := cmp.Diff(k.scenario(busy).share(i), k.alone(i)); diff != "" {
						t.Errorf("kueue %s %s (-scenario,+alone)\n%s", f.Name, p.Teams[i].Name, diff)
					}
					busy[i] = false
				}
			}
			for _, tr := range kaiTrees(p, p) {
				root := tr.root
				capacity := float64(gpu.Capacity(tr.p, gpu.InGPUs, nil))
				alone := kaiAlone(root, capacity, len(p.Teams))
				for i := range p.Teams {
					busy[i] = true
					got := kaiScenarioOf(root, capacity, busy).shares(root, capacity)[i]
					if diff := cmp.Diff(got, alone[i]); diff != "" {
						t.Errorf("kai %s (-scenario,+alone)\n%s", root.name+"/"+p.Teams[i].Name, diff)
					}
					busy[i] = false
				}
			}
		})
	}
}
