package kueue

import (
	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// departmentCohort is a department's Cohort, a child of the pool's (Kueue's
// hierarchical cohorts). Its nominalQuota is the department's surplus over
// its teams' guarantees: the teams' ClusterQueues, in this Cohort, bring
// their own, so the subtree's quota is the department's guarantee, and a team
// borrows the surplus (and what its department's other teams lend) before
// the subtree borrows from the pool. lendingLimit caps what leaves the
// subtree, borrowingLimit what it takes from the rest of the pool.
//
// The Cohort covers the GPU resources only: cpu and memory are covered by
// each ClusterQueue with lendingLimit and borrowingLimit 0, so there is none
// to lend or borrow at any level.
func departmentCohort(p *plan.Agreement, d plan.Department) *kueue.Cohort {
	var covered []corev1.ResourceName
	for _, r := range coveredResources(p) {
		if r != corev1.ResourceCPU && r != corev1.ResourceMemory {
			covered = append(covered, r)
		}
	}
	group := kueue.ResourceGroup{CoveredResources: covered}
	for _, f := range p.Flavors {
		q := d.Quota(f.Name)
		fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(f.Name)}
		for _, r := range covered {
			rq := kueue.ResourceQuota{Name: r, NominalQuota: *quantity(0), BorrowingLimit: quantity(0), LendingLimit: quantity(0)}
			if string(r) == f.Resource {
				rq.NominalQuota = *quantity(p.Surplus(&d, f.Name))
				rq.BorrowingLimit = quantity(q.Borrow)
				rq.LendingLimit = quantity(q.Lendable)
			}
			fq.Resources = append(fq.Resources, rq)
		}
		group.Flavors = append(group.Flavors, fq)
	}
	return &kueue.Cohort{
		TypeMeta:   typeMeta("Cohort"),
		ObjectMeta: meta(p, "", d.Name, ""),
		Spec: kueue.CohortSpec{
			ParentName:     kueue.CohortReference(p.Name),
			ResourceGroups: []kueue.ResourceGroup{group},
			FairSharing:    &kueue.FairSharing{Weight: quantity(d.Weight)},
		},
	}
}

// cohortOf is the Cohort a team's ClusterQueue joins: its department's, or
// the pool's.
func cohortOf(p *plan.Agreement, t plan.Team) kueue.CohortReference {
	if t.Department != "" {
		return kueue.CohortReference(t.Department)
	}
	return kueue.CohortReference(p.Name)
}
