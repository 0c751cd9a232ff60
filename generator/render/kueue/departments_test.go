package kueue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

func cohorts(t *testing.T, objs []render.Object) map[string]*kueuev1beta2.Cohort {
	t.Helper()
	return byName[kueuev1beta2.Cohort](t, objs, "Cohort")
}

// TestDepartmentCohorts: a department is a Cohort under the pool's, its
// nominalQuota the surplus over its teams' guarantees, its lendable and
// borrow the Cohort's limits, per flavor; its teams' ClusterQueues are in
// it, a team without a department stays in the pool's.
func TestDepartmentCohorts(t *testing.T) {
	genomics := plantest.Team("genomics", plantest.Quota("h100", 16, 8, 16))
	genomics.Department = "science"
	physics := plantest.Team("physics", plantest.Quota("h100", 10, 0, 0), plantest.Quota("a100-mig", 7, 0, 0))
	physics.Department = "science"
	ops := plantest.Team("ops", plantest.Quota("h100", 4, 0, 0))
	p := plantest.Pool([]plan.Flavor{plantest.H100(64), plantest.MIG(56)}, genomics, ops, physics)
	p.Departments = []plan.Department{{
		Name: "science", Weight: 3, Teams: []string{"genomics", "physics"},
		Quotas: []plan.Quota{plantest.Quota("h100", 40, 8, 6), plantest.Quota("a100-mig", 7, 0, 14)},
	}}
	objs := renderV1beta2(t, p)
	cs := cohorts(t, objs)
	if got := cs["gpu-pool"]; got == nil || got.Spec.ParentName != "" || got.Spec.ResourceGroups != nil {
		t.Errorf("pool Cohort: %+v, want a root with no quota", got)
	}
	q := func(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
	rq := func(name string, nominal, borrow, lend int64) kueuev1beta2.ResourceQuota {
		return kueuev1beta2.ResourceQuota{Name: corev1.ResourceName(name), NominalQuota: *q(nominal), BorrowingLimit: q(borrow), LendingLimit: q(lend)}
	}
	want := kueuev1beta2.CohortSpec{
		ParentName: "gpu-pool",
		ResourceGroups: []kueuev1beta2.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"},
			Flavors: []kueuev1beta2.FlavorQuotas{
				{Name: "h100", Resources: []kueuev1beta2.ResourceQuota{rq("nvidia.com/gpu", 40-16-10, 6, 8), rq("nvidia.com/mig-1g.10gb", 0, 0, 0)}},
				{Name: "a100-mig", Resources: []kueuev1beta2.ResourceQuota{rq("nvidia.com/gpu", 0, 0, 0), rq("nvidia.com/mig-1g.10gb", 0, 14, 0)}},
			},
		}},
		FairSharing: &kueuev1beta2.FairSharing{Weight: q(3)},
	}
	if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, cs["science"].Spec)); diff != "" {
		t.Errorf("science Cohort (-want,+got):\n%s", diff)
	}
	got := map[string]kueuev1beta2.CohortReference{}
	for name, cq := range clusterQueues(t, objs) {
		got[name] = cq.Spec.CohortName
	}
	if diff := cmp.Diff(map[string]kueuev1beta2.CohortReference{"genomics": "science", "physics": "science", "ops": "gpu-pool"}, got); diff != "" {
		t.Errorf("ClusterQueues' cohorts (-want,+got):\n%s", diff)
	}
}
