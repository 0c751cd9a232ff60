package plan

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Build normalizes a decoded agreement (whose defaults decoding applied):
// every team given a quota for every flavor, the policies' defaults filled,
// and all lists sorted so renderings do not depend on the order of the file.
// It also plans an agreement that failed validation, so the families' checks
// report in the same run as the agreement's own rules; a value that failed
// to decode is its zero value there, and such a plan is never rendered.
func Build(a *agreement.Agreement) *Agreement {
	out := &Agreement{File: a.File, Name: a.Name.Value, NameOrigin: origin(a.Name.Pos, a.Name.Path),
		Stewardship: buildStewardship(a.Stewardship, diag.Pos{})}
	// A key that failed to decode is left out, as if absent: its error is
	// reported, and such a plan is never rendered.
	if a.Backend.IsSet() {
		out.Backend = &BackendKey{Origin: origin(a.Backend.Pos, a.Backend.Path)}
		for _, n := range a.Backend.Value {
			out.Backend.Names = append(out.Backend.Names, n.Value)
			out.Backend.Origins = append(out.Backend.Origins, origin(n.Pos, n.Path))
		}
	}
	for _, f := range a.Flavors {
		pf := Flavor{Name: f.Name, Resource: f.Resource.Value, Capacity: f.Capacity.Value, GPUsPerNode: f.GPUsPerNode.Value, Origin: origin(f.Pos, f.Path),
			ResourceOrigin: origin(f.Resource.Pos, f.Resource.Path), CapacityOrigin: origin(f.Capacity.Pos, f.Capacity.Path)}
		if len(f.NodeLabels) > 0 {
			pf.NodeLabels = map[string]string{}
			for _, l := range f.NodeLabels {
				pf.NodeLabels[l.Key] = l.Value.Value
				pf.NodeLabelOrigins = append(pf.NodeLabelOrigins, origin(l.Value.Pos, l.Value.Path))
			}
		}
		pf.NodePool, pf.NodePoolOrigin = f.NodePool.Value, origin(f.NodePool.Pos, f.NodePool.Path)
		pf.GPUSharing, pf.GPUSharingOrigin = f.GPUSharing.Value, origin(f.GPUSharing.Pos, f.GPUSharing.Path)
		if pf.NodePool == "" { // failed to decode: reported; never rendered
			pf.NodePool = f.Name
		}
		if pf.GPUSharing == "" {
			pf.GPUSharing = GPUSharingNone
		}
		for _, t := range f.Tolerations {
			pf.Tolerations = append(pf.Tolerations, Toleration{Key: t.Key.Value, Operator: t.Operator.Value, Value: t.Value.Value, Effect: t.Effect.Value, Origin: origin(t.Pos, t.Path)})
		}
		out.Flavors = append(out.Flavors, pf)
	}
	out.NodePoolLabel = agreement.DefaultNodePoolLabel
	if k := a.KAI; k != nil {
		if k.NodePoolLabel.Value != "" {
			out.NodePoolLabel = k.NodePoolLabel.Value
		}
		out.NodePoolLabelOrigin = origin(k.NodePoolLabel.Pos, k.NodePoolLabel.Path)
	}
	// Flavors keep the file's order: Kueue tries a ClusterQueue's flavors in
	// order, so the order is the agreement's preference.

	for _, p := range a.Priorities {
		// At the value, as ever; at the key when a table omits it.
		o := origin(p.Value.Pos, p.Value.Path)
		if p.Value.State == agreement.Unset {
			o = origin(p.Pos, p.Path)
		}
		out.Priorities = append(out.Priorities, Priority{Name: p.Name, Value: int32(p.Value.Value), Preemptible: p.Preemptible.Value, Origin: o})
	}
	sort.Slice(out.Priorities, func(i, j int) bool {
		pi, pj := out.Priorities[i], out.Priorities[j]
		if pi.Value != pj.Value {
			return pi.Value > pj.Value
		}
		return pi.Name < pj.Name
	})

	for _, t := range a.Teams {
		pt := Team{Name: t.Name, Reclaim: ReclaimPreempt, Weight: 1, Origin: origin(t.Pos, t.Path), Stewardship: buildStewardship(t.Stewardship, t.Pos)}
		if t.Reclaim.IsSet() {
			pt.Reclaim = ReclaimPolicy(t.Reclaim.Value)
			pt.ReclaimOrigin = origin(t.Reclaim.Pos, t.Reclaim.Path)
		}
		if t.Retiring.IsSet() {
			pt.RetiringOrigin = origin(t.Retiring.Pos, t.Retiring.Path)
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
		if t.Department.IsSet() && a.Department(t.Department.Value) != nil {
			pt.Department = t.Department.Value
		}
		pt.Quotas = quotas(out.Flavors, t.ByFlavor)
		pt.Windows = buildWindows(t, pt.Quotas)
		out.Teams = append(out.Teams, pt)
	}
	sort.Slice(out.Teams, func(i, j int) bool { return out.Teams[i].Name < out.Teams[j].Name })
	out.Departments = buildDepartments(a, out)
	out.Fleet = buildFleet(a, out)

	if a.Guardrails != nil {
		out.Guardrails = buildGuardrails(a.Guardrails)
	}
	out.Monitoring = buildMonitoring(a.Monitoring)
	if a.Topology != nil {
		top := &Topology{Name: a.Name.Value}
		for _, l := range a.Topology.Levels {
			top.Levels = append(top.Levels, l.Value)
			top.LevelOrigins = append(top.LevelOrigins, origin(l.Pos, l.Path))
		}
		out.Topology = top
	}
	return out
}

// quotas spells out a team's or a department's quota for every flavor, in
// flavor order.
func quotas(flavors []Flavor, byFlavor map[string]*agreement.Quota) []Quota {
	out := make([]Quota, 0, len(flavors))
	for _, f := range flavors {
		q := Quota{Flavor: f.Name}
		if aq := byFlavor[f.Name]; aq != nil {
			q.Guaranteed, q.Lendable, q.Borrow = aq.Guaranteed.Value, aq.Lendable.Value, aq.Borrow.Value
			q.Origin = QuotaOrigin{
				Guaranteed: origin(aq.Guaranteed.Pos, aq.Guaranteed.Path),
				Lendable:   origin(aq.Lendable.Pos, aq.Lendable.Path),
				Borrow:     origin(aq.Borrow.Pos, aq.Borrow.Path),
			}
		}
		out = append(out, q)
	}
	return out
}

// origin is where a decoded value was written.
func origin(pos diag.Pos, path *field.Path) diag.Origin { return diag.Origin{Pos: pos, Path: path} }
