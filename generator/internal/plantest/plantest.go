// Package plantest builds plans for backend tests, so cases read like the
// agreements they stand for: Team("training", Quota("h100", 16, 8, 8)).
package plantest

import "github.com/tenancy-dev/tenancy/generator/plan"

// H100 is a whole-GPU flavor named h100. The flavors are planned as the
// plan fills them: each its own node pool, named as the flavor, no sharing.
func H100(capacity int64) plan.Flavor {
	return plan.Flavor{Name: "h100", Resource: "nvidia.com/gpu", Capacity: capacity, NodePool: "h100", GPUSharing: plan.GPUSharingNone}
}

// A100 is a second whole-GPU flavor, named a100.
func A100(capacity int64) plan.Flavor {
	return plan.Flavor{Name: "a100", Resource: "nvidia.com/gpu", Capacity: capacity, NodePool: "a100", GPUSharing: plan.GPUSharingNone}
}

// MIG is a flavor of MIG 1g.10gb slices named a100-mig.
func MIG(capacity int64) plan.Flavor {
	return plan.Flavor{Name: "a100-mig", Resource: "nvidia.com/mig-1g.10gb", Capacity: capacity, NodePool: "a100-mig", GPUSharing: plan.GPUSharingNone}
}

// Quota is a team's share of one flavor.
func Quota(flavor string, guaranteed, lendable, borrow int64) plan.Quota {
	return plan.Quota{Flavor: flavor, Guaranteed: guaranteed, Lendable: lendable, Borrow: borrow}
}

// Team is a team with the defaults the plan applies: its own namespace,
// reclaim by preemption, weight 1.
func Team(name string, quotas ...plan.Quota) plan.Team {
	return plan.Team{Name: name, Namespaces: []string{name}, Reclaim: plan.ReclaimPreempt, Weight: 1, Quotas: quotas}
}

// Pool is the agreement gpu-pool with the flavors and teams given, each
// team's quotas listed for every flavor in order (zero where the team
// names none), as plan.Build lists them.
func Pool(flavors []plan.Flavor, teams ...plan.Team) *plan.Agreement {
	p := &plan.Agreement{Name: "gpu-pool", Flavors: flavors, NodePoolLabel: "kai.scheduler/node-pool"}
	for _, t := range teams {
		var qs []plan.Quota
		for _, f := range flavors {
			qs = append(qs, t.Quota(f.Name))
		}
		t.Quotas = qs
		p.Teams = append(p.Teams, t)
	}
	return p
}
