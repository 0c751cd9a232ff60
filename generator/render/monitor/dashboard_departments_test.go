package monitor_test

import (
	"strings"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/render/monitor"
)

// TestDashboardGroupsByDepartment: with departments the dashboard has a
// row summing each department's teams; without, it has none.
func TestDashboardGroupsByDepartment(t *testing.T) {
	src := `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[departments.science]
guaranteed = 16
lendable = 16
[teams.genomics]
department = "science"
guaranteed = 8
lendable = 8
[teams.physics]
department = "science"
guaranteed = 8
lendable = 8
[teams.ops]
guaranteed = 8
lendable = 8
[monitoring]
enabled = true
`
	for name, tc := range map[string]struct {
		src  string
		want bool
	}{"departments": {src, true}, "none": {strings.NewReplacer("[departments.science]\nguaranteed = 16\nlendable = 16\n", "", "department = \"science\"\n", "").Replace(src), false}} {
		t.Run(name, func(t *testing.T) {
			p, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}, generator.Options{Backend: generator.Kueue})
			if err != nil {
				t.Fatal(err)
			}
			m, err := chargeback.NewModel(p, gpu.Kueue)
			if err != nil {
				t.Fatal(err)
			}
			js, err := monitor.DashboardJSON(p, m)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(string(js), "Departments: guaranteed vs allocated")
			if got != tc.want {
				t.Errorf("department panel: %v, want %v", got, tc.want)
			}
			if tc.want && !strings.Contains(string(js), `sum by (flavor) (tenancy:gpu_allocated:sum{team=~\"genomics|physics\"})`) {
				t.Errorf("the department panel does not sum science's teams:\n%s", js)
			}
		})
	}
}
