package plan

import (
	"sort"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Build normalizes a validated agreement (whose defaults decoding applied):
// every team given a quota for every flavor, the policies' defaults filled,
// and all lists sorted so renderings do not depend on the order of the file.
func Build(a *agreement.Agreement) *Agreement {
	out := &Agreement{File: a.File, Name: a.Name.Value}
	for _, f := range a.Flavors {
		pf := Flavor{Name: f.Name, Resource: f.Resource.Value, Capacity: f.Capacity.Value, Origin: diag.Origin{Pos: f.Pos, Path: f.Path}}
		if len(f.NodeLabels) > 0 {
			pf.NodeLabels = map[string]string{}
			for _, l := range f.NodeLabels {
				pf.NodeLabels[l.Key] = l.Value.Value
			}
		}
		for _, t := range f.Tolerations {
			pf.Tolerations = append(pf.Tolerations, Toleration{Key: t.Key.Value, Operator: t.Operator.Value, Value: t.Value.Value, Effect: t.Effect.Value})
		}
		out.Flavors = append(out.Flavors, pf)
	}
	// Flavors keep the file's order: Kueue tries a ClusterQueue's flavors in
	// order, so the order is the agreement's preference.

	for _, p := range a.Priorities {
		out.Priorities = append(out.Priorities, Priority{Name: p.Name, Value: int32(p.Value.Value), Preemptible: p.Preemptible.Value, Origin: diag.Origin{Pos: p.Value.Pos, Path: p.Value.Path}})
	}
	sort.Slice(out.Priorities, func(i, j int) bool {
		pi, pj := out.Priorities[i], out.Priorities[j]
		if pi.Value != pj.Value {
			return pi.Value > pj.Value
		}
		return pi.Name < pj.Name
	})

	for _, t := range a.Teams {
		pt := Team{Name: t.Name, Reclaim: ReclaimPreempt, Weight: 1, Origin: diag.Origin{Pos: t.Pos, Path: t.Path}}
		if t.Reclaim.IsSet() {
			pt.Reclaim = ReclaimPolicy(t.Reclaim.Value)
		}
		if t.Weight.IsSet() {
			pt.Weight = t.Weight.Value
		}
		pt.Retiring = t.Retiring.Value
		if t.VMs.IsSet() {
			vms := t.VMs.Value
			pt.VMs = &vms
		}
		for _, ns := range t.Namespaces {
			pt.Namespaces = append(pt.Namespaces, ns.Value)
		}
		sort.Strings(pt.Namespaces)
		for _, f := range out.Flavors {
			q := Quota{Flavor: f.Name}
			if aq := t.ByFlavor[f.Name]; aq != nil {
				q.Guaranteed, q.Lendable, q.Borrow = aq.Guaranteed.Value, aq.Lendable.Value, aq.Borrow.Value
			}
			pt.Quotas = append(pt.Quotas, q)
		}
		out.Teams = append(out.Teams, pt)
	}
	sort.Slice(out.Teams, func(i, j int) bool { return out.Teams[i].Name < out.Teams[j].Name })

	if a.Guardrails != nil {
		out.Guardrails = buildGuardrails(a.Guardrails)
	}
	out.Monitoring = buildMonitoring(a.Monitoring)
	if a.Topology != nil {
		top := &Topology{Name: a.Name.Value}
		for _, l := range a.Topology.Levels {
			top.Levels = append(top.Levels, l.Value)
		}
		out.Topology = top
	}
	return out
}
