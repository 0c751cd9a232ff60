package kai_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// TestDepartmentQueues: a department's Queue sits under the shared subtree
// with quota its guarantee, limit guarantee + borrow and its weight; its
// teams' Queues under it, a never-lending one too; a team without a
// department keeps its place.
func TestDepartmentQueues(t *testing.T) {
	a := plantest.Team("a", plantest.Quota("h100", 8, 4, 8))
	a.Department = "science"
	b := plantest.Team("b", plantest.Quota("h100", 4, 0, 2))
	b.Department = "science"
	ops := plantest.Team("ops", plantest.Quota("h100", 4, 0, 0))
	p := plantest.Pool([]plan.Flavor{plantest.H100(32)}, a, b, ops)
	p.Departments = []plan.Department{{Name: "science", Weight: 3, Teams: []string{"a", "b"}, Quotas: []plan.Quota{plantest.Quota("h100", 20, 4, 6)}}}
	want := map[string]queue{
		"gpu-pool":          {Quota: 24, Limit: 32, Weight: 1},
		"gpu-pool-shared":   {Parent: "gpu-pool", Quota: 20, Limit: 28, Weight: 1},
		"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 4, Limit: 4, Weight: 0},
		"science":           {Parent: "gpu-pool-shared", Quota: 20, Limit: 26, Weight: 3},
		"a":                 {Parent: "science", Quota: 8, Limit: 16, Weight: 1},
		"b":                 {Parent: "science", Quota: 4, Limit: 6, Weight: 1},
		"ops":               {Parent: "gpu-pool-reserved", Quota: 4, Limit: 4, Weight: 1},
	}
	if diff := cmp.Diff(want, queues(t, p)); diff != "" {
		t.Errorf("queues (-want,+got):\n%s", diff)
	}
}

// TestDepartmentRules: what KAI cannot say of a department is a warning at
// the value, a department named like the pool's subtree queues an error.
func TestDepartmentRules(t *testing.T) {
	tests := map[string]ruleCase{
		"a department that lends all it has: nothing to say": {
			src: pool + "[departments.science]\nguaranteed = 8\nlendable = 8\n[teams.a]\ndepartment = \"science\"\nguaranteed = 8\nlendable = 8\n",
		},
		"a department's lending limit": {
			src:  pool + "[departments.science]\nguaranteed = 8\nlendable = 2\n[teams.a]\ndepartment = \"science\"\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(7, 12, "departments.science.lendable")},
		},
		"a department that lends nothing, and its team that lends nothing": {
			src:  pool + "[departments.science]\nguaranteed = 8\n[teams.a]\ndepartment = \"science\"\nguaranteed = 8\n",
			want: diag.List{warn(5, 14, "departments.science"), warn(7, 8, "teams.a")},
		},
		"a department with several flavors: a pool each, nothing to say": {
			src: pool + "[flavors.a100]\ncapacity = 8\n[departments.science.flavors.h100]\nguaranteed = 8\nlendable = 8\n[departments.science.flavors.a100]\nguaranteed = 4\nlendable = 4\n" +
				"[teams.a]\ndepartment = \"science\"\n[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n",
		},
		"a department's lending limit in a pool: said with the pool's numbers": {
			src: pool + "[flavors.a100]\ncapacity = 8\n[departments.science.flavors.h100]\nguaranteed = 8\nlendable = 8\n[departments.science.flavors.a100]\nguaranteed = 4\nlendable = 1\n" +
				"[teams.a]\ndepartment = \"science\"\n[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(12, 12, "departments.science.flavors.a100.lendable")},
		},
		"a department named like the shared subtree": {
			src:  pool + "[departments.gpu-pool-shared]\nguaranteed = 8\nlendable = 8\n[teams.a]\ndepartment = \"gpu-pool-shared\"\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 5, 14, "departments.gpu-pool-shared", field.ErrorTypeDuplicate)},
		},
	}
	checkRules(t, tests)
	got := rules(t, pool+"[departments.gpu-pool-reserved]\nguaranteed = 8\nlendable = 8\n[teams.a]\ndepartment = \"gpu-pool-reserved\"\nguaranteed = 8\nlendable = 8\n").String()
	want := `tenancy.toml:5:14: departments.gpu-pool-reserved: kai: department "gpu-pool-reserved" has the name of the pool's reserved subtree queue (pool name "gpu-pool" at line 2): rename the department`
	if got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}
