package kai

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/contentioncheck"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
)

// The reference agreement: training (16, borrows 8) and research (8,
// borrows 8) lend into gpu-pool-shared, whose limit is 24; inference's 8
// are never lent (gpu-pool-reserved). Alone 24, 16 and 8; every team busy,
// each its guarantee.
func TestKAIContentionReference(t *testing.T) {
	begin(t)
	prove(t, "tenancy.toml", []string{"training", "research"}, []string{"training", "inference"})
}

// examples/departments: 64 H100s; science (40, weight 2: genomics 16,
// physics 16, a surplus of 8, borrows 8) and product (16: search 8, ads
// 8) with platform (8) beside them. Every team busy, science's surplus is
// split between its two teams; --busy science names a department.
func TestKAIContentionDepartments(t *testing.T) {
	begin(t)
	prove(t, "examples/departments/tenancy.toml", []string{"science"}, []string{"genomics", "search", "platform"})
}

// testdata/kai-contention-weights.toml: three teams of 8 lending all, the
// rest split by weight 1 : 3 : 2, speech capped at 10 so that its share
// beyond goes to the others in a second round. Every pair is a set, since
// each splits the surplus by other weights.
func TestKAIContentionWeights(t *testing.T) {
	begin(t)
	prove(t, filepath.Join("test", "e2e", "testdata", "kai-contention-weights.toml"),
		[]string{"vision", "speech"}, []string{"vision", "robotics"}, []string{"speech", "robotics"})
}

// prove makes file the cluster's agreement on its capacity of 8-GPU
// Nodes, then runs each team alone, every team busy and each of sets busy,
// one after the other (each scenario's outcome is KAI's whatever came
// before it, so the order only saves time: a team idle in the next
// scenario is emptied, a busy one keeps its pods), and holds KAI's bound
// pods to explain's numbers in each.
func prove(t *testing.T, file string, sets ...[]string) {
	t.Helper()
	all := explain(t, file, nil)
	objs := env.Render(t, file)
	env.UseNodes(t, kaiwork.H100Nodes(int(poolGPUs(t, objs)/8)))
	var teams []team
	for _, o := range objs {
		if name := o.GetLabels()["tenancy.dev/team"]; o.GetKind() == "Namespace" && name != "" {
			teams = append(teams, team{name: name, ns: o.GetName()})
			if !slices.Contains(env.Namespaces, o.GetName()) {
				env.Namespaces = append(env.Namespaces, o.GetName())
			}
		}
	}
	slices.SortFunc(teams, func(a, b team) int { return strings.Compare(a.name, b.name) })
	if len(teams) != len(all.Flavors[0].Teams) {
		t.Fatalf("the render has %d team namespaces, explain %d teams", len(teams), len(all.Flavors[0].Teams))
	}
	env.UseAgreement(t, objs)

	scenarios := contentioncheck.Scenarios(all)
	for _, set := range sets {
		sc, err := contentioncheck.BusyScenario(explain(t, file, set), set)
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, sc)
	}
	f := flood{teams: teams, flavor: all.Flavors[0].Flavor, most: map[string]int64{}}
	for _, o := range all.Flavors[0].Teams {
		f.most[o.Team] = o.Alone.Max
	}
	for _, sc := range scenarios {
		for k, w := range sc.Want {
			if !w.Decided() {
				// The proof compares what KAI decides whatever the arrival
				// order; a range would pass on any count inside it.
				t.Fatalf("%s: explain gives %s a range (%d-%d); choose scenarios KAI decides", sc.Name, k, w.Min, w.Max)
			}
		}
		f.run(t, sc)
	}
}

// explain is explain --contention --backend kai -o json's report of file
// with busy's teams busy (none: alone and all busy).
func explain(t *testing.T, file string, busy []string) *contentioncheck.Report {
	t.Helper()
	r, err := contentioncheck.Explain(kaiwork.Ctx(t), env.Tenancy, env.RepoRoot, file, "kai", busy)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Flavors) != 1 {
		t.Fatalf("explain --backend kai on %s: %d flavors, want one (KAI has one GPU count per queue)", file, len(r.Flavors))
	}
	return r
}

// poolGPUs is the GPUs of the render's pool: its top Queue's GPU limit,
// which render/kai sets to the agreement's capacity.
func poolGPUs(t *testing.T, objs []*unstructured.Unstructured) int64 {
	t.Helper()
	for _, o := range objs {
		if _, child, _ := unstructured.NestedString(o.Object, "spec", "parentQueue"); o.GetKind() != "Queue" || child {
			continue
		}
		limit, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "resources", "gpu", "limit")
		var n int64
		if _, err := fmt.Sscan(fmt.Sprint(limit), &n); ok && err == nil && n > 0 && n%8 == 0 {
			return n
		}
		t.Fatalf("the pool's Queue %s has GPU limit %v: not a whole number of 8-GPU Nodes", o.GetName(), limit)
	}
	t.Fatal("the render has no pool Queue")
	return 0
}
